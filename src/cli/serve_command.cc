// migserve serve -d D -w W -p P [--load X] [--arrivals poisson|gamma --cv X]
//   [--routing proxy|gateway-api|random|weighted|round-robin|
//              least-outstanding] [--router-replicas N]
//   [--in-group round-robin|least-request]
//   [--batching greedy|timer --max-queue-delay MS] [--duration S]
//   [--warmup S] [--seed N] [--llm-balancing affinity|least-conn]
//   [--format table|json] [-o F]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "boundary/number.h"
#include "cli/command.h"
#include "cli/flag_checks.h"
#include "cli/inputs.h"
#include "cli/table.h"
#include "cluster/cluster_state.h"
#include "deployment/deployment_json.h"
#include "profile/profile_csv.h"
#include "serving/serve.h"
#include "serving/serve_json.h"
#include "workload/workload_yaml.h"

namespace migserve::cli {
namespace {

struct ServeFlags {
  std::string deployment;
  std::string workload;
  std::string profiles;
  std::string output;
  std::string format = "table";
  std::string arrivals;  // empty: the workload's arrival_cv
  double cv = 0;         // 0: the workload's arrival_cv
  std::string routing;   // empty: the deployment's router (then its name)
  std::string in_group = "round-robin";
  int router_replicas = 0;  // 0: the workload's
  std::string batching = "greedy";
  double max_queue_delay_ms = 1;
  std::string llm_balancing = "affinity";
  serving::ServeOptions options;
};

// The LLM services' token figures and the balancing their simulation
// assumed; "" without one.
std::string LlmTable(const serving::ServeReport& report,
                     const serving::ServeOptions& options) {
  TextTable tokens({"llm service", "ttft_slo", "ttft_p50", "ttft_p99",
                    "tpot_slo", "tpot_p50", "tpot_p99", "kv_used",
                    "prefix_hits", "ok", "basis"});
  bool any_llm = false;
  for (const serving::ServiceServing& s : report.services) {
    if (!s.tokens) continue;
    any_llm = true;
    const serving::LlmServing& l = *s.tokens;
    tokens.AddRow({s.service, fmt::format("{:.6g}", l.ttft_slo_ms),
                   fmt::format("{:.1f}", l.ttft_p50_ms),
                   fmt::format("{:.1f}", l.ttft_p99_ms),
                   fmt::format("{:.6g}", l.tpot_slo_ms),
                   fmt::format("{:.2f}", l.tpot_p50_ms),
                   fmt::format("{:.2f}", l.tpot_p99_ms),
                   fmt::format("{:.1f}%", 100 * l.kv_occupancy),
                   fmt::format("{:.1f}%", 100 * l.prefix_cache_hit_rate),
                   l.ok() ? "yes" : "NO", l.basis});
  }
  if (!any_llm) return "";
  std::ostringstream out;
  out << "\nLLM services at token level (ms; basis: docs/llm.md):\n";
  tokens.Print(out);
  // What the simulation assumes of the balancing (docs/llm.md, "serve
  // and validate").
  if (options.routing == serving::RoutingPolicy::kProxies) {
    out << fmt::format(
        "(the replicas simulated together behind the balancing the proxy "
        "runs for these services at each of {} proxies: {})\n",
        options.proxies,
        options.llm_balancing == llm::Balancing::kAffinity
            ? "where a service's credits count prefix-cache hits, each "
              "conversation to its replica while it has less than its "
              "batch in flight, else, and for the others, each request to "
              "the replica with the fewest requests in flight per credit; "
              "prefix_hits is what the prefix cache finds"
            : "each request to the replica with the fewest requests in "
              "flight per credit");
  } else {
    out << "(each replica simulated on its credit's share of the "
           "arrivals, a random split)\n";
  }
  return out.str();
}

std::string Table(const serving::ServeReport& report,
                  const serving::ServeOptions& options) {
  TextTable table({"service", "slo_ms", "offered", "achieved", "replicas",
                   "util", "p50_ms", "p90_ms", "p99_ms", "in_slo", "ok"});
  for (const serving::ServiceServing& s : report.services) {
    table.AddRow(
        {s.service, fmt::format("{:.6g}", s.slo_ms),
         fmt::format("{:.1f}", s.offered), fmt::format("{:.1f}", s.achieved),
         std::to_string(s.replicas),
         s.replicas ? fmt::format("{:.1f}%", 100 * s.utilization) : "-",
         fmt::format("{:.1f}", s.p50_ms), fmt::format("{:.1f}", s.p90_ms),
         fmt::format("{:.1f}", s.p99_ms),
         fmt::format("{:.2f}%", 100 * s.within_slo),
         s.ok() ? "yes" : (s.stable ? "NO" : "NO (unstable)")});
  }
  std::ostringstream out;
  table.Print(out);
  out << LlmTable(report, options);
  long ok =
      std::count_if(report.services.begin(), report.services.end(),
                    [](const serving::ServiceServing& s) { return s.ok(); });
  out << fmt::format("{} of {} services within their p99 SLO\n", ok,
                     report.services.size());
  return out.str();
}

std::string Json(const serving::ServeReport& report,
                 const serving::ServeOptions& o, const ServeFlags& flags) {
  nlohmann::ordered_json services = nlohmann::ordered_json::array();
  for (const serving::ServiceServing& s : report.services) {
    services.push_back(serving::ServiceJson(s));
  }
  bool poisson = o.arrivals.kind == queueing::ArrivalProcess::Kind::kPoisson;
  nlohmann::ordered_json j = {{"load", o.load},
                              {"arrivals", poisson ? "poisson" : "gamma"},
                              {"cv", o.arrivals.cv},
                              {"routing", flags.routing},
                              {"router_replicas", o.proxies},
                              {"in_group", flags.in_group},
                              {"batching", flags.batching},
                              {"max_queue_delay_ms", o.max_queue_delay_ms},
                              {"llm_balancing", flags.llm_balancing},
                              {"duration_s", o.duration_s},
                              {"warmup_s", o.warmup_s},
                              {"seed", o.seed},
                              {"ok", report.ok()},
                              {"services", services}};
  return j.dump(2) + "\n";
}

// The arrivals: the flags', else the workload's arrival_cv (1: Poisson).
Status ResolveArrivals(const ServeFlags& flags,
                       const workload::Workload& workload,
                       queueing::ArrivalProcess* arrivals) {
  arrivals->cv = flags.cv != 0 ? flags.cv : workload.arrival_cv;
  std::string kind = flags.arrivals;
  if (kind.empty()) kind = arrivals->cv == 1 ? "poisson" : "gamma";
  arrivals->kind = *queueing::ParseArrivalKind(kind);
  if (arrivals->kind == queueing::ArrivalProcess::Kind::kPoisson &&
      arrivals->cv != 1) {
    return Status::InvalidArgument(fmt::format(
        "--arrivals poisson has gaps of cv 1, but {} is {} (use --arrivals "
        "gamma, or leave --arrivals out)",
        flags.cv != 0 ? "--cv" : workload.source + ": arrival_cv",
        arrivals->cv));
  }
  return Status::Ok();
}

// The routing: the flag's, else the router the deployment's credits assume,
// else the workload's (its name then in flags->routing).
void ResolveRouting(const workload::Workload& workload,
                    const deployment::Deployment& deployment, ServeFlags* flags,
                    serving::ServeOptions* o) {
  if (flags->routing.empty()) {
    queueing::RouterKind router = workload.router;
    if (deployment.summary && deployment.summary->router) {
      router = *deployment.summary->router;
    }
    flags->routing = router.name();
  }
  o->routing = *serving::ParseRoutingPolicy(flags->routing);
  o->proxies = flags->router_replicas != 0 ? flags->router_replicas
                                           : workload.router_replicas;
  o->in_group = *serving::ParseInGroup(flags->in_group);
  o->llm_balancing = flags->llm_balancing == "affinity"
                         ? llm::Balancing::kAffinity
                         : llm::Balancing::kLeastOutstanding;
}

// Says, where the routing is one of the comparisons (weighted, round-robin,
// least-outstanding), that LLM services keep their credits' shares: their
// token-level simulation gives each replica its share behind the router
// the credits assume (docs/llm.md, "serve and validate").
void NoteLlmRouting(const workload::Workload& workload, const ServeFlags& flags,
                    std::ostream& err) {
  const serving::RoutingPolicy p = flags.options.routing;
  if (p != serving::RoutingPolicy::kWeighted &&
      p != serving::RoutingPolicy::kRoundRobin &&
      p != serving::RoutingPolicy::kLeastOutstanding) {
    return;
  }
  std::vector<std::string> llm;
  for (const workload::Service& s : workload.services) {
    // Those simulated token by token keep their shares (serve.h).
    if (s.kind.traits().credit == workload::CreditSource::kTokenModel) {
      llm.push_back(s.name);
    }
  }
  if (llm.empty()) return;
  err << fmt::format(
      "migserve: note: --routing {} applies to the other services; the LLM "
      "services ({}) are served at their replicas' credit shares "
      "(docs/llm.md)\n",
      flags.routing, fmt::join(llm, ", "));
}

Status RunServe(ServeFlags flags, CommandContext* context) {
  serving::ServeOptions& o = flags.options;
  o.max_queue_delay_ms =
      flags.batching == "timer" ? flags.max_queue_delay_ms : 0;
  if (flags.batching == "timer" && !(flags.max_queue_delay_ms > 0)) {
    return Status::InvalidArgument(fmt::format(
        "--max-queue-delay must be > 0 with --batching timer, got {}",
        flags.max_queue_delay_ms));
  }
  auto workload = workload::LoadWorkload(flags.workload);
  if (!workload.ok()) {
    return workload.status();
  }
  auto profiles = profile::LoadProfileCsv(flags.profiles);
  if (!profiles.ok()) {
    return profiles.status();
  }
  WarnMeasurementGaps(*workload, *profiles, context->err);
  auto deployment = deployment::LoadDeployment(flags.deployment);
  if (!deployment.ok()) {
    return deployment.status();
  }
  MIGSERVE_RETURN_IF_ERROR(ResolveArrivals(flags, *workload, &o.arrivals));
  ResolveRouting(*workload, *deployment, &flags, &o);
  NoteLlmRouting(*workload, flags, context->err);
  auto state = cluster::ClusterFromDeployment(*deployment, {});
  if (!state.ok()) {
    return state.status();
  }
  serving::ServeProgressSink progress;
  progress.report = [context, &o](const serving::ServeProgress& p) {
    if (p.done == nullptr) {
      context->Progress(fmt::format("serve: {}/{} {}: {:.0f} of {:g} s",
                                    p.index, p.total, p.service, p.simulated_s,
                                    o.duration_s));
      return;
    }
    context->Progress(fmt::format(
        "serve: {}/{} {}: {} requests, p99 {:.1f} ms (SLO {} ms)", p.index,
        p.total, p.service, p.done->arrived, p.done->p99_ms, p.done->slo_ms));
  };
  auto report = serving::Serve(*state, *workload, *profiles, o, progress);
  if (!report.ok()) {
    return report.status();
  }
  MIGSERVE_RETURN_IF_ERROR(context->Emit(
      flags.output,
      flags.format == "json" ? Json(*report, o, flags) : Table(*report, o)));
  if (!report->ok()) context->exit_code = kExitNo;
  return Status::Ok();
}

// The LLM services' options: the proxies' balancing (docs/llm.md, "Prefix
// affinity") and the what-ifs (docs/llm.md, "Margin").
void AddLlmOptions(CLI::App* app, ServeFlags* flags) {
  serving::ServeOptions* o = &flags->options;
  app->add_option("--llm-balancing", flags->llm_balancing,
                  "proxy: how the proxies spread the requests of an LLM "
                  "service whose credits count prefix-cache hits, affinity "
                  "or least-conn (router --llm-balancing)")
      ->check(OneOf({"affinity", "least-conn"}))
      ->default_val(flags->llm_balancing);
  app->add_option("--llm-step-scale", o->llm_step_scale,
                  "What-if: every LLM step's time x this (1.1: hardware 10% "
                  "slower than modelled); the credits stay")
      ->default_val(o->llm_step_scale);
  app->add_option("--llm-step-overhead-ms", o->llm_step_overhead_ms,
                  "What-if: this much more every LLM step, milliseconds")
      ->default_val(o->llm_step_overhead_ms);
}

}  // namespace

void SetupServe(CLI::App* app, CommandContext* context) {
  auto flags = std::make_shared<ServeFlags>();
  serving::ServeOptions& o = flags->options;
  app->add_option("-d,--deployment", flags->deployment, "Deployment JSON")
      ->required();
  app->add_option("-w,--workload", flags->workload,
                  "Workload YAML: required rates and SLOs")
      ->required();
  app->add_option("-p,--profiles", flags->profiles, "Profile CSV: batch times")
      ->required();
  app->add_option("-o,--output", flags->output,
                  "File to write the results to (default: stdout)");
  app->add_option("--format", flags->format, "table or json")
      ->check(OneOf({"table", "json"}))
      ->default_val(flags->format);
  app->add_option("--load", o.load, "Arrival rate x each required rate")
      ->default_val(o.load);
  app->add_option("--arrivals", flags->arrivals,
                  "poisson or gamma (default: the workload's arrival_cv, "
                  "Poisson at 1)")
      ->check(OneOf({"poisson", "gamma"}));
  app->add_option("--cv", flags->cv,
                  "gamma: coefficient of variation of the gaps (default: the "
                  "workload's arrival_cv)")
      ->check(Between(kArrivalCvRange.min, kArrivalCvRange.max));
  app->add_option(
         "--routing", flags->routing,
         fmt::format("{} (the routers a workload names), weighted (round "
                     "robin over the groups), round-robin or "
                     "least-outstanding (default: the router the deployment's "
                     "credits assume)",
                     queueing::RouterChoices()))
      ->check(OneOf(serving::RoutingPolicyNames()));
  app->add_option("--router-replicas", flags->router_replicas,
                  "proxy: independent proxies, each request to one at random "
                  "(default: the workload's router_replicas)")
      ->check(CLI::Range(1, 64));
  app->add_option("--in-group", flags->in_group,
                  "gateway-api: how a group spreads its share, round-robin or "
                  "least-request")
      ->check(OneOf({"round-robin", "least-request"}))
      ->default_val(flags->in_group);
  app->add_option("--batching", flags->batching,
                  "greedy (start a batch at once, Triton's default) or timer "
                  "(wait up to --max-queue-delay for a full batch)")
      ->check(OneOf({"greedy", "timer"}))
      ->default_val(flags->batching);
  app->add_option("--max-queue-delay", flags->max_queue_delay_ms,
                  "timer: Triton's max_queue_delay, milliseconds")
      ->default_val(flags->max_queue_delay_ms)
      ->check(Between(0, kLatencyMsRange.max));
  app->add_option("--duration", o.duration_s, "Simulated seconds of arrivals")
      ->default_val(o.duration_s);
  app->add_option("--warmup", o.warmup_s,
                  "Seconds at the start whose requests are not counted")
      ->default_val(o.warmup_s);
  app->add_option("--seed", o.seed, "Random seed")->default_val(o.seed);
  AddLlmOptions(app, flags.get());
  OnRun(app, context, [flags, context] { return RunServe(*flags, context); });
}

}  // namespace migserve::cli
