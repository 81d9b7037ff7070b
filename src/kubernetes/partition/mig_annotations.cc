#include "kubernetes/partition/mig_annotations.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "boundary/json_fields.h"
#include "kube/labels.h"
#include "kubernetes/cluster_model.h"
#include "mig/gpu_catalog.h"

namespace migserve::kubernetes {
namespace {

using AnnotationJson = nlohmann::json;

AnnotationJson Instances(const std::vector<mig::Instance>& instances,
                         const mig::GpuModel& gpu) {
  AnnotationJson out = AnnotationJson::array();
  for (const mig::Instance& i : instances) {
    out.push_back(
        {{"profile", gpu.profiles[i.profile].name}, {"start", i.start}});
  }
  return out;
}

StatusOr<std::vector<mig::Instance>> ParseInstances(const AnnotationJson& list,
                                                    const mig::GpuModel& gpu,
                                                    const std::string& where) {
  if (!list.is_array()) {
    return Status::InvalidArgument(where + ": want a list of instances");
  }
  std::vector<mig::Instance> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const AnnotationJson& i = list[k];
    std::string at = fmt::format("{}[{}]", where, k);
    std::optional<std::string> name =
        i.is_object() ? StringAt(i, "profile") : std::nullopt;
    std::optional<int> start = IntAt(i, "start");
    if (!name || !start) {
      return Status::InvalidArgument(at + ": want {profile, start}");
    }
    int profile = gpu.FindProfile(*name);
    if (profile < 0) {
      return Status::InvalidArgument(
          fmt::format("{}.profile: {} has no profile {}", at, gpu.name, *name));
    }
    if (*start < 0 || *start >= gpu.memory_slices) {
      return Status::InvalidArgument(
          fmt::format("{}.start: {} is not a slice of {} (0 to {})", at, *start,
                      gpu.name, gpu.memory_slices - 1));
    }
    out.push_back({profile, *start});
  }
  return out;
}

StatusOr<AnnotationJson> ParseObject(const std::string& text,
                                     const std::string& where) {
  AnnotationJson json = AnnotationJson::parse(text, nullptr, false);
  if (!json.is_object()) {
    return Status::InvalidArgument(where + ": not a JSON object");
  }
  return json;
}

}  // namespace

std::string RequestKey(int index) {
  return kube::IndexedKey(kAnnotationMigRequest, index);
}

std::string StatusKey(int index) {
  return kube::IndexedKey(kAnnotationMigStatus, index);
}

std::string FormatLayouts(const NodeLayouts& layouts) {
  AnnotationJson gpus = AnnotationJson::array();
  for (size_t i = 0; i < layouts.gpus.size(); ++i) {
    const GpuLayout& g = layouts.gpus[i];
    gpus.push_back({{"index", i},
                    {"gpu", g.model->name},
                    {"instances", Instances(g.layout.instances(), *g.model)}});
  }
  AnnotationJson out = {{"gpus", gpus}};
  if (!layouts.gpus.empty()) out["gpu"] = layouts.gpus.front().model->name;
  return out.dump();
}

std::string FormatRequest(const MigRequest& request, const mig::GpuModel& gpu) {
  AnnotationJson out = {{"nonce", request.nonce},
                        {"remove", Instances(request.change.remove, gpu)},
                        {"add", Instances(request.change.add, gpu)}};
  if (request.epoch > 0) out["epoch"] = request.epoch;
  return out.dump();
}

std::string FormatStatus(const MigStatus& status) {
  AnnotationJson out = {
      {"nonce", status.nonce}, {"ok", status.ok}, {"error", status.error}};
  if (status.epoch > 0) out["epoch"] = status.epoch;
  return out.dump();
}

StatusOr<NodeLayouts> ParseLayouts(const std::string& text,
                                   const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(AnnotationJson json, ParseObject(text, where));
  std::optional<std::string> node_gpu = StringAt(json, "gpu");
  auto gpus = json.find("gpus");
  if (gpus == json.end() || !gpus->is_array()) {
    return Status::InvalidArgument(where + ".gpus: want a list");
  }
  NodeLayouts out;
  for (size_t k = 0; k < gpus->size(); ++k) {
    const AnnotationJson& g = (*gpus)[k];
    std::string at = fmt::format("{}.gpus[{}]", where, k);
    auto index = g.is_object() ? g.find("index") : g.end();
    if (!g.is_object() || index == g.end() || !index->is_number_integer() ||
        index->get<int>() != static_cast<int>(k)) {
      return Status::InvalidArgument(at + ".index: want " + std::to_string(k));
    }
    std::optional<std::string> name = StringAt(g, "gpu");
    if (!name) name = node_gpu;
    if (!name) return Status::InvalidArgument(at + ".gpu: missing");
    auto model = mig::GpuCatalog::Default().Find(*name);
    if (!model.ok()) return model.status().WithPrefix(at + ".gpu");
    auto instances = g.find("instances");
    MIGSERVE_ASSIGN_OR_RETURN(
        std::vector<mig::Instance> list,
        ParseInstances(instances == g.end() ? AnnotationJson() : *instances,
                       **model, at + ".instances"));
    out.gpus.push_back({*model, mig::Layout(std::move(list))});
  }
  return out;
}

StatusOr<MigRequest> ParseRequest(const std::string& text,
                                  const mig::GpuModel& gpu,
                                  const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(AnnotationJson json, ParseObject(text, where));
  MigRequest out;
  out.nonce = StringAt(json, "nonce").value_or("");
  if (out.nonce.empty())
    return Status::InvalidArgument(where + ".nonce: missing");
  if (auto epoch = json.find("epoch"); epoch != json.end()) {
    if (!epoch->is_number_integer() || epoch->get<long>() < 0) {
      return Status::InvalidArgument(where +
                                     ".epoch: want a non-negative integer");
    }
    out.epoch = epoch->get<long>();
  }
  for (auto [key, list] : {std::pair{"remove", &out.change.remove},
                           std::pair{"add", &out.change.add}}) {
    auto it = json.find(key);
    MIGSERVE_ASSIGN_OR_RETURN(
        *list, ParseInstances(it == json.end() ? AnnotationJson() : *it, gpu,
                              fmt::format("{}.{}", where, key)));
  }
  return out;
}

StatusOr<MigStatus> ParseStatus(const std::string& text,
                                const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(AnnotationJson json, ParseObject(text, where));
  MigStatus out;
  out.nonce = StringAt(json, "nonce").value_or("");
  auto ok = json.find("ok");
  out.ok = ok != json.end() && ok->is_boolean() && ok->get<bool>();
  out.error = StringAt(json, "error").value_or("");
  auto epoch = json.find("epoch");
  if (epoch != json.end() && epoch->is_number_integer()) {
    out.epoch = std::max(0L, epoch->get<long>());
  }
  return out;
}

}  // namespace migserve::kubernetes
