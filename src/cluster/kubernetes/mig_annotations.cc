#include "cluster/kubernetes/mig_annotations.h"

#include <fmt/format.h>

namespace migserve::cluster::kubernetes {
namespace {

using Json = nlohmann::json;

Json Instances(const std::vector<mig::Instance>& instances,
               const mig::GpuModel& gpu) {
  Json out = Json::array();
  for (const mig::Instance& i : instances) {
    out.push_back(
        {{"profile", gpu.profiles[i.profile].name}, {"start", i.start}});
  }
  return out;
}

StatusOr<std::vector<mig::Instance>> ParseInstances(const Json& list,
                                                    const mig::GpuModel& gpu,
                                                    const std::string& where) {
  if (!list.is_array()) {
    return Status::InvalidArgument(where + ": want a list of instances");
  }
  std::vector<mig::Instance> out;
  for (size_t k = 0; k < list.size(); ++k) {
    const Json& i = list[k];
    std::string at = fmt::format("{}[{}]", where, k);
    if (!i.is_object() || !i.contains("profile") || !i["profile"].is_string() ||
        !i.contains("start") || !i["start"].is_number_integer()) {
      return Status::InvalidArgument(at + ": want {profile, start}");
    }
    int profile = gpu.FindProfile(i["profile"].get<std::string>());
    if (profile < 0) {
      return Status::InvalidArgument(
          fmt::format("{}.profile: {} has no profile {}", at, gpu.name,
                      i["profile"].get<std::string>()));
    }
    out.push_back({profile, i["start"].get<int>()});
  }
  return out;
}

StatusOr<Json> ParseObject(const std::string& text, const std::string& where) {
  Json json = Json::parse(text, nullptr, false);
  if (!json.is_object()) {
    return Status::InvalidArgument(where + ": not a JSON object");
  }
  return json;
}

}  // namespace

std::string RequestKey(int index) {
  return fmt::format("migserve.io/mig-request-{}", index);
}

std::string StatusKey(int index) {
  return fmt::format("migserve.io/mig-status-{}", index);
}

std::string FormatLayouts(const NodeLayouts& layouts,
                          const mig::GpuModel& gpu) {
  Json gpus = Json::array();
  for (size_t i = 0; i < layouts.layouts.size(); ++i) {
    gpus.push_back(
        {{"index", i},
         {"instances", Instances(layouts.layouts[i].instances(), gpu)}});
  }
  return Json{{"gpu", layouts.gpu}, {"gpus", gpus}}.dump();
}

std::string FormatRequest(const MigRequest& request, const mig::GpuModel& gpu) {
  return Json{{"nonce", request.nonce},
              {"remove", Instances(request.change.remove, gpu)},
              {"add", Instances(request.change.add, gpu)}}
      .dump();
}

std::string FormatStatus(const MigStatus& status) {
  return Json{
      {"nonce", status.nonce}, {"ok", status.ok}, {"error", status.error}}
      .dump();
}

StatusOr<NodeLayouts> ParseLayouts(const std::string& text,
                                   const mig::GpuModel& gpu,
                                   const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(Json json, ParseObject(text, where));
  NodeLayouts out;
  out.gpu = json.value("gpu", "");
  if (out.gpu != gpu.name) {
    return Status::InvalidArgument(
        fmt::format("{}.gpu: \"{}\", but the cluster runs {} (one GPU model "
                    "per cluster)",
                    where, out.gpu, gpu.name));
  }
  const Json& gpus = json.value("gpus", Json());
  if (!gpus.is_array())
    return Status::InvalidArgument(where + ".gpus: missing");
  for (size_t k = 0; k < gpus.size(); ++k) {
    std::string at = fmt::format("{}.gpus[{}]", where, k);
    if (!gpus[k].is_object() ||
        gpus[k].value("index", -1) != static_cast<int>(k)) {
      return Status::InvalidArgument(at + ".index: want " + std::to_string(k));
    }
    MIGSERVE_ASSIGN_OR_RETURN(std::vector<mig::Instance> instances,
                              ParseInstances(gpus[k].value("instances", Json()),
                                             gpu, at + ".instances"));
    out.layouts.push_back(mig::Layout(std::move(instances)));
  }
  return out;
}

StatusOr<MigRequest> ParseRequest(const std::string& text,
                                  const mig::GpuModel& gpu,
                                  const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(Json json, ParseObject(text, where));
  MigRequest out;
  out.nonce = json.value("nonce", "");
  if (out.nonce.empty())
    return Status::InvalidArgument(where + ".nonce: missing");
  MIGSERVE_ASSIGN_OR_RETURN(
      out.change.remove,
      ParseInstances(json.value("remove", Json()), gpu, where + ".remove"));
  MIGSERVE_ASSIGN_OR_RETURN(
      out.change.add,
      ParseInstances(json.value("add", Json()), gpu, where + ".add"));
  return out;
}

StatusOr<MigStatus> ParseStatus(const std::string& text,
                                const std::string& where) {
  MIGSERVE_ASSIGN_OR_RETURN(Json json, ParseObject(text, where));
  MigStatus out;
  out.nonce = json.value("nonce", "");
  out.ok = json.value("ok", false);
  out.error = json.value("error", "");
  return out;
}

std::string Annotation(const nlohmann::json& object, const std::string& key) {
  auto meta = object.find("metadata");
  if (meta == object.end()) return "";
  auto notes = meta->find("annotations");
  if (notes == meta->end() || !notes->is_object()) return "";
  auto it = notes->find(key);
  return it != notes->end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace migserve::cluster::kubernetes
