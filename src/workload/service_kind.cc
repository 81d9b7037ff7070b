#include "workload/service_kind.h"

#include "util/kind_registry.h"

namespace migserve::workload {
namespace {

KindRegistry<ServiceKindTraits>& Kinds() {
  static auto* registry =
      new KindRegistry<ServiceKindTraits>(  // never destroyed
          "service kind",
          {
              {"dnn", CreditSource::kProfileRows, Engine::kTriton},
              {"llm", CreditSource::kTokenModel, Engine::kVllm},
          });
  return *registry;
}

}  // namespace

ServiceKind::ServiceKind() = default;

const ServiceKindTraits& ServiceKind::traits() const {
  return Kinds().At(index_);
}

std::optional<ServiceKind> ParseServiceKind(std::string_view name) {
  int index = Kinds().Find(name);
  if (index < 0) return std::nullopt;
  return ServiceKind(index);
}

std::string ServiceKindChoices() {
  std::string choices = Kinds().Choices();
  // The first kind is the default.
  size_t first = choices.find_first_of(", ");
  std::string_view rest = first == std::string::npos
                              ? std::string_view()
                              : std::string_view(choices).substr(first);
  return std::string(ServiceKind().name()) + " (the default)" +
         std::string(rest);
}

StatusOr<ServiceKind> RegisterServiceKind(ServiceKindTraits traits) {
  if (traits.engine == Engine::kVllm &&
      traits.credit != CreditSource::kTokenModel) {
    return Status::InvalidArgument(
        "service kind '" + traits.name +
        "': vLLM's metrics give a p99 from TTFT and TPOT, which only a kind "
        "with token terms (credit from the token model) has");
  }
  MIGSERVE_ASSIGN_OR_RETURN(int index, Kinds().Add(std::move(traits)));
  return ServiceKind(index);
}

}  // namespace migserve::workload
