#include "profile/profile_table.h"

#include <set>

namespace migserve::profile {

bool ProfileTable::HasModel(const std::string& model,
                            const std::string& gpu) const {
  for (const ProfileRow& r : rows) {
    if (r.model == model && r.gpu == gpu) return true;
  }
  return false;
}

bool ProfileTable::Measures(const std::string& model, const std::string& gpu,
                            const std::string& profile) const {
  for (const ProfileRow& r : rows) {
    if (r.model == model && r.gpu == gpu && r.profile == profile) return true;
  }
  return false;
}

std::vector<std::string> ProfileTable::Models(const std::string& gpu) const {
  std::set<std::string> names;
  for (const ProfileRow& r : rows) {
    if (r.gpu == gpu) names.insert(r.model);
  }
  return {names.begin(), names.end()};
}

}  // namespace migserve::profile
