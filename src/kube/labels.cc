#include "kube/labels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "kube/kube_client.h"

namespace migserve::kube {
namespace {

template <typename Items, typename Key, typename Value>
void SetItem(Items* items, Key key, Value value) {
  auto at = std::find_if(items->begin(), items->end(),
                         [&](const auto& item) { return item.first == key; });
  if (at != items->end()) {
    at->second = std::move(value);
  } else {
    items->emplace_back(std::move(key), std::move(value));
  }
}

}  // namespace

StatusOr<LabelValue> ParseLabelValue(std::string_view text,
                                     std::string_view what) {
  StatusOr<LabelValue> value = LabelValue::Parse(text);
  if (value.ok()) return value;
  return Status::InvalidArgument(
      fmt::format("{}: {}", what, value.status().message()));
}

Labels& Labels::Set(LabelKey key, LabelValue value) {
  SetItem(&items_, key.str(), std::move(value));
  return *this;
}

nlohmann::ordered_json Labels::ToJson() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : items_) out[std::string(key)] = value.str();
  return out;
}

std::string IndexedKey(LabelKey key, int index) {
  std::string indexed = fmt::format("{}-{}", key.str(), index);
  if (index < 0 || !IsQualifiedName(indexed)) {
    std::fprintf(stderr, "migserve: %s is not a Kubernetes key\n",
                 indexed.c_str());
    std::abort();
  }
  return indexed;
}

Annotations& Annotations::Set(LabelKey key, std::string value) {
  SetItem(&items_, std::string(key.str()), std::move(value));
  return *this;
}

Annotations& Annotations::SetIndexed(LabelKey key, int index,
                                     std::string value) {
  SetItem(&items_, IndexedKey(key, index), std::move(value));
  return *this;
}

nlohmann::ordered_json Annotations::ToJson() const {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, value] : items_) out[key] = value;
  return out;
}

nlohmann::json Annotations::Patch() const {
  return {{"metadata", {{"annotations", nlohmann::json(ToJson())}}}};
}

LabelSelector::LabelSelector(const Labels& labels) {
  for (const auto& [key, value] : labels.items()) {
    Add(fmt::format("{}={}", key, value.str()));
  }
}

LabelSelector& LabelSelector::Has(LabelKey key) {
  Add(std::string(key.str()));
  return *this;
}

LabelSelector& LabelSelector::Lacks(LabelKey key) {
  Add(fmt::format("!{}", key.str()));
  return *this;
}

std::string LabelSelector::Query() const {
  return "labelSelector=" + KubeClient::Escape(text_);
}

void LabelSelector::Add(std::string term) {
  if (!text_.empty()) text_ += ',';
  text_ += term;
}

}  // namespace migserve::kube
