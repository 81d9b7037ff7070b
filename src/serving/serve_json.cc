#include "serving/serve_json.h"

#include "boundary/json_fields.h"

namespace migserve::serving {
namespace {

// An LLM service's token figures, where the report has them.
Status ReadLlm(const JsonFields& f, ServiceServing* s) {
  if (!f.Has("llm")) return Status::Ok();
  MIGSERVE_ASSIGN_OR_RETURN(const nlohmann::json* object, f.Object("llm"));
  JsonFields l(*object, f.source(), f.Path("llm"));
  LlmServing llm;
  for (auto [key, value] : {std::pair{"ttft_slo_ms", &llm.ttft_slo_ms},
                            {"tpot_slo_ms", &llm.tpot_slo_ms},
                            {"ttft_p50_ms", &llm.ttft_p50_ms},
                            {"ttft_p99_ms", &llm.ttft_p99_ms},
                            {"tpot_p50_ms", &llm.tpot_p50_ms},
                            {"tpot_p99_ms", &llm.tpot_p99_ms}}) {
    MIGSERVE_RETURN_IF_ERROR(l.Get(key, true, value));
  }
  MIGSERVE_RETURN_IF_ERROR(l.Get("kv_occupancy", false, &llm.kv_occupancy));
  MIGSERVE_RETURN_IF_ERROR(
      l.Get("prefix_cache_hit_rate", false, &llm.prefix_cache_hit_rate));
  MIGSERVE_RETURN_IF_ERROR(l.Get("basis", false, &llm.basis));
  s->tokens = llm;
  return Status::Ok();
}

Status ReadService(const JsonFields& f, ServiceServing* s) {
  MIGSERVE_RETURN_IF_ERROR(f.Get("service", true, &s->service));
  MIGSERVE_RETURN_IF_ERROR(f.Get("p50_ms", true, &s->p50_ms));
  MIGSERVE_RETURN_IF_ERROR(f.Get("p90_ms", true, &s->p90_ms));
  MIGSERVE_RETURN_IF_ERROR(f.Get("p99_ms", true, &s->p99_ms));
  MIGSERVE_RETURN_IF_ERROR(f.Get("slo_ms", true, &s->slo_ms));
  MIGSERVE_RETURN_IF_ERROR(f.Get("within_slo", true, &s->within_slo));
  for (auto [key, value] : {std::pair{"required", &s->required},
                            {"offered", &s->offered},
                            {"achieved", &s->achieved},
                            {"mean_ms", &s->mean_ms},
                            {"saturation", &s->saturation},
                            {"utilization", &s->utilization}}) {
    MIGSERVE_RETURN_IF_ERROR(f.Get(key, false, value));
  }
  for (auto [key, value] : {std::pair{"arrived", &s->arrived},
                            {"served", &s->served},
                            {"requests", &s->requests}}) {
    MIGSERVE_RETURN_IF_ERROR(f.Get(key, false, value));
  }
  MIGSERVE_RETURN_IF_ERROR(f.Get("replicas", false, &s->replicas));
  MIGSERVE_RETURN_IF_ERROR(ReadLlm(f, s));
  return f.Get("stable", false, &s->stable);
}

// Every figure of `s` but an LLM's token figures.
nlohmann::ordered_json ServiceFiguresJson(const ServiceServing& s) {
  return {{"service", s.service},       {"slo_ms", s.slo_ms},
          {"required", s.required},     {"offered", s.offered},
          {"achieved", s.achieved},     {"replicas", s.replicas},
          {"arrived", s.arrived},       {"served", s.served},
          {"requests", s.requests},     {"mean_ms", s.mean_ms},
          {"p50_ms", s.p50_ms},         {"p90_ms", s.p90_ms},
          {"p99_ms", s.p99_ms},         {"within_slo", s.within_slo},
          {"saturation", s.saturation}, {"utilization", s.utilization},
          {"stable", s.stable},         {"ok", s.ok()}};
}

}  // namespace

nlohmann::ordered_json ServiceJson(const ServiceServing& s) {
  nlohmann::ordered_json j = ServiceFiguresJson(s);
  if (s.tokens) {
    const LlmServing& l = *s.tokens;
    j["llm"] = {{"ttft_slo_ms", l.ttft_slo_ms},
                {"tpot_slo_ms", l.tpot_slo_ms},
                {"ttft_p50_ms", l.ttft_p50_ms},
                {"ttft_p99_ms", l.ttft_p99_ms},
                {"tpot_p50_ms", l.tpot_p50_ms},
                {"tpot_p99_ms", l.tpot_p99_ms},
                {"kv_occupancy", l.kv_occupancy},
                {"prefix_cache_hit_rate", l.prefix_cache_hit_rate},
                {"basis", l.basis},
                {"modelled", l.basis.find("modelled") != std::string::npos}};
  }
  return j;
}

StatusOr<std::vector<ServiceServing>> ParseServeJson(
    const std::string& text, const std::string& source) {
  MIGSERVE_ASSIGN_OR_RETURN(nlohmann::json root, ParseJsonObject(text, source));
  std::vector<ServiceServing> services;
  MIGSERVE_RETURN_IF_ERROR(
      JsonFields(root, source, "").Objects("services", ReadService, &services));
  return services;
}

}  // namespace migserve::serving
