// The Kubernetes end-to-end tests' cluster without a cluster or a GPU: the
// stand-in API server over HTTPS, node agents on in-memory NVML (or NVIDIA's
// DRA driver and the scheduler's allocation, played on the stand-in), a fake
// kubelet that marks a replica's instance in use while its pod runs, and
// the checks every transition there must pass (each service's ready and
// routed capacity at least its floor at every change of a pod, Service or
// HTTPRoute; the cluster, the GPUs' layouts and the routes at the target
// at the end).
#ifndef MIGSERVE_E2E_TESTING_KUBERNETES_E2E_FIXTURE_H_
#define MIGSERVE_E2E_TESTING_KUBERNETES_E2E_FIXTURE_H_

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/node_agent.h"
#include "agent/testing/fake_nvml.h"
#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "cluster/plan_json.h"
#include "cluster/routing.h"
#include "controller/controller.h"
#include "deployment/deployment_json.h"
#include "deployment/testing/shipped.h"
#include "kube/pod_ready.h"
#include "kube/serving_target.h"
#include "kube/testing/api_server_standin.h"
#include "kube/testing/fake_kubelet.h"
#include "kube/testing/test_certificate.h"
#include "kubernetes/kubernetes_backend.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/agent_driver.h"
#include "kubernetes/partition/dra_driver.h"
#include "kubernetes/partition/mig_annotations.h"
#include "kubernetes/routing/kubernetes_router.h"
#include "kubernetes/testing/dra_scheduler.h"
#include "manager/journal_pod_ledger.h"
#include "mig/testing/gpus.h"
#include "util/interrupt.h"
#include "util/test_util.h"

namespace migserve::e2e {

namespace k8s = kubernetes;
using Json = nlohmann::json;
using cli::Cli;
using cli::CliResult;

// The test's own token (a cluster administrator's), and those of the
// components: each runs as its service account in deploy/base/rbac.yaml, which
// the stand-in API server enforces.
constexpr char kToken[] = "e2e-token";
constexpr char kControllerToken[] = "e2e-controller";
constexpr char kAgentToken[] = "e2e-agent";
constexpr char kAutoscaleToken[] = "e2e-autoscale";
// The replicas' namespace, as deploy/ sets it.
constexpr char kNamespace[] = "migserve-replicas";
constexpr int kNodes = 3;
constexpr int kGpusPerNode = 8;
constexpr char kPods[] = "/api/v1/namespaces/migserve-replicas/pods";
constexpr char kRoutes[] =
    "/apis/gateway.networking.k8s.io/v1/namespaces/migserve-replicas/"
    "httproutes";
constexpr char kServices[] = "/api/v1/namespaces/migserve-replicas/services";
constexpr char kServingSpec[] =
    "routing:\n  gateway: {name: inference, namespace: gateways}\n";

// True if every label `selector` names has that value in `labels`.
inline bool Selects(const Json& selector, const Json& labels) {
  for (const auto& [key, value] : selector.items()) {
    if (!labels.contains(key) || labels[key] != value) return false;
  }
  return true;
}

using testing::A100;
using testing::H100;
using testing::ShippedDeployment;

inline std::string NodeName(int n) { return "node-" + std::to_string(n); }

// The text of data/deployments/<name>.json, as a ConfigMap holds it.
inline std::string DeploymentText(const std::string& name) {
  return ReadFile(testing::SourcePath("data/deployments/" + name + ".json"))
      .value();
}

class KubernetesE2eTest : public ::testing::Test {
 protected:
  KubernetesE2eTest()
      : tls_(
            kube::MakeTestCertificate(testing::TempDir() + "/e2e-tls").value()),
        server_({tls_.cert_file,
                 tls_.key_file,
                 kToken,
                 1,
                 {{kControllerToken,
                   kube::ServiceAccountUser("migserve", "migserve-controller")},
                  {kAgentToken,
                   kube::ServiceAccountUser("migserve", "migserve-agent")},
                  {kAutoscaleToken, kube::ServiceAccountUser(
                                        "migserve", "migserve-autoscale")}}}) {
    EXPECT_TRUE(server_.Start().ok());
    for (const char* manifest :
         {"deploy/base/crd.yaml", "deploy/base/rbac.yaml",
          "deploy/base/autoscale.yaml"}) {
      EXPECT_TRUE(
          server_
              .ApplyManifests(ReadFile(testing::SourcePath(manifest)).value(),
                              manifest)
              .ok());
    }
    config_.server = server_.url();
    config_.ca_pem = tls_.cert_pem;
    config_.token = kControllerToken;
    config_.namespace_ = kNamespace;
    kubeconfig_ = Kubeconfig("e2e-kubeconfig", kControllerToken);
    autoscale_kubeconfig_ =
        Kubeconfig("e2e-autoscale-kubeconfig", kAutoscaleToken);
    journal_ = testing::TempDir() + "/e2e-journal.db";
    std::remove(journal_.c_str());
    serving_ = testing::WriteTempFile("e2e-serving.yaml", kServingSpec);
  }

  ~KubernetesE2eTest() override {
    stop_ = true;
    for (std::thread& t : agents_) t.join();
    // A test that stops its controller with SIGTERM leaves the process
    // interrupted; the next test's reads would stop at once.
    ClearInterrupt();
  }

  // The cluster administrator's view, for what happens to the cluster
  // (a node deleted, say) rather than what the components do.
  kube::KubeConfig AdminConfig() const {
    kube::KubeConfig admin = config_;
    admin.token = kToken;
    return admin;
  }

  // A kubeconfig file `name` for the stand-in with `token`, in the
  // replicas' namespace.
  std::string Kubeconfig(const std::string& name, const std::string& token) {
    return testing::WriteTempFile(name,
                                  server_.KubeconfigYaml(kNamespace, token));
  }

  // Puts `from` on the cluster: layouts through NVML, Ready pods, then
  // starts the agents and the kubelet and waits for every layout report.
  void Start(const deployment::Deployment& from) {
    cluster::ClusterState state =
        cluster::ClusterFromDeployment(from,
                                       {kGpusPerNode, Nodes() * kGpusPerNode})
            .value();
    for (int n = 0; n < Nodes(); ++n) AddNode(NodeName(n), &A100());
    for (const cluster::GpuState& g : state.gpus) {
      int n = nodes_.at(g.id.node), index = g.id.index;
      ASSERT_TRUE(drivers_[n]->Apply(index, {{}, g.layout().instances()}).ok());
      for (const cluster::Slot& s : g.slots) {
        if (!s.replica) continue;
        const mig::Profile& p = A100().profiles[s.instance.profile];
        std::string name = k8s::ReplicaName(s.replica->service, g.id.node,
                                            index, p, s.instance.start);
        Json pod = server_.Put(
            std::string(kPods) + "/" + name,
            {{"metadata",
              {{"labels",
                k8s::ReplicaLabels(*s.replica, {g.id, g.model, s.instance})
                    ->ToJson()},
               {"annotations", k8s::ReplicaAnnotations(*s.replica).ToJson()}}},
             {"status",
              {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}});
        // As if the controller had created it.
        if (seed_ledger_) {
          ASSERT_TRUE(Ledger()->Put(name, {"", pod["metadata"]["uid"]}).ok());
        }
        nvml_[n]->SetInUse(index, s.instance, true);
      }
    }
    kubelet_ = std::make_unique<kube::FakeKubelet>(
        &server_, ready_after_s_, [this](const Json& pod, bool running) {
          // A forged pod holds no MIG device: it only claims one.
          if (IsForged(pod)) return;
          const Json& l = pod["metadata"]["labels"];
          int n = nodes_.at(l[k8s::kLabelNode].get<std::string>());
          int index = std::stoi(l[k8s::kLabelGpu].get<std::string>());
          const mig::GpuModel& model = drivers_[n]->model(index);
          mig::Instance i{
              model.FindProfile(l[k8s::kLabelProfile].get<std::string>()),
              std::stoi(l[k8s::kLabelStart].get<std::string>())};
          nvml_[n]->SetInUse(index, i, running);
        });
    // The routes `from` had before the transition, as the router writes
    // them.
    kube::KubeClient client(config_);
    k8s::KubernetesRouter router(&client, RouterOptions(from));
    for (const auto& [service, route] : cluster::Routes(state)) {
      ASSERT_TRUE(router.SetRoute(route).ok());
    }
    CheckEveryChange();
    for (int n = 0; n < Nodes(); ++n) StartAgent(NodeName(n));
  }

  // An empty cluster whose GPUs NVIDIA's DRA driver partitions (DynamicMIG),
  // played by the DRA scheduler: no agents, the driver's DeviceClass, the
  // controller's DRA permissions (deploy/components/dra), and a kubelet. The
  // controller's DRA partition driver moves it (`--partitioner dra`).
  void StartDra() {
    std::map<std::string, std::pair<const mig::GpuModel*, int>> gpus;
    for (int n = 0; n < Nodes(); ++n) {
      server_.Put(
          "/api/v1/nodes/" + NodeName(n),
          {{"metadata", {{"labels", {{"nvidia.com/mig.capable", "true"}}}}}});
      gpus[NodeName(n)] = {&A100(), kGpusPerNode};
    }
    dra_ = std::make_unique<k8s::DraScheduler>(&server_, gpus);
    server_.Put("/apis/resource.k8s.io/v1/deviceclasses/mig.nvidia.com",
                {{"apiVersion", "resource.k8s.io/v1"},
                 {"kind", "DeviceClass"},
                 {"metadata", {{"name", "mig.nvidia.com"}}}});
    const char* rbac = "deploy/components/dra/rbac-dra.yaml";
    ASSERT_TRUE(
        server_
            .ApplyManifests(ReadFile(testing::SourcePath(rbac)).value(), rbac)
            .ok());
    kubelet_ =
        std::make_unique<kube::FakeKubelet>(&server_, ready_after_s_, nullptr);
    CheckEveryChange();
  }

  // Checks the floors and the routes at every change of a pod, Service or
  // HTTPRoute from now on (once Watch says what to check).
  void CheckEveryChange() {
    server_.AddObserver([this](const std::string&, const std::string& path,
                               const Json& object) {
      // A pod that holds a DRA claim serves nothing.
      bool holder = object.contains("metadata") &&
                    object["metadata"].contains("labels") &&
                    object["metadata"]["labels"].contains(k8s::kLabelInstance);
      bool pod = path.find("/pods/") != std::string::npos && !holder;
      if (pod) {
        Measure(path.substr(path.rfind('/') + 1),
                k8s::Label(object, k8s::kLabelService));
      }
      if (pod || path.find("/httproutes/") != std::string::npos ||
          path.find("/services/") != std::string::npos) {
        // A pod, group Service and HTTPRoute each carry their service's
        // label.
        CheckRoutes(pod ? path.substr(path.rfind('/') + 1) : path,
                    k8s::Label(object, k8s::kLabelService));
      }
      if (path.find("/httproutes/") != std::string::npos) {
        std::lock_guard lock(mu_);
        ++route_writes_;
        std::string spec = object.value("spec", Json::object()).dump();
        std::string& last = last_route_spec_[path];
        if (spec == last) ++repeated_route_writes_;
        last = spec;
      }
    });
  }

  // Creates the ServingTarget migserve-target, its spec the shipped
  // deployment `name`, as the cluster's administrator.
  bool CreateTarget(const std::string& name) {
    return kube::KubeClient(AdminConfig())
        .Create(kube::ServingTargetsPath(kNamespace),
                {{"apiVersion", "migserve.io/v1alpha1"},
                 {"kind", "ServingTarget"},
                 {"metadata", {{"name", "migserve-target"}}},
                 {"spec", Json::parse(DeploymentText(name))}})
        .ok();
  }

  // A `migserve controller` following the ServingTarget migserve-target
  // until SIGTERM, on a thread of its own, its result in `*result`.
  std::thread ControllerOnTheTarget(CliResult* result) {
    return std::thread([this, result] {
      *result =
          Cli({"controller", "--kubeconfig", kubeconfig_, "--target-resource",
               "migserve-target", "--journal", journal_, "--metrics-port", "0",
               "--poll-s", "0.01", "--resync-s", "1", "--serving", serving_});
    });
  }

  // Runs `command` in a shell: its exit status and what it printed, both
  // streams (a real kubectl's, say).
  static std::pair<int, std::string> Shell(const std::string& command) {
    return testing::RunShell(command);
  }

  // The pods a test forges are named forged-N.
  static bool IsForged(const Json& pod) {
    return pod["metadata"].value("name", "").rfind("forged-", 0) == 0;
  }

  // The A100 nodes Start makes.
  int Nodes() const { return kNodes * scale_; }

  // The backend as the controller command sets it up (the pods it made
  // recorded in the journal), polling fast.
  k8s::BackendOptions BackendOptions() {
    k8s::BackendOptions options;
    if (!agent_driver_) {
      agent_client_ = std::make_unique<kube::KubeClient>(config_);
      agent_driver_ = std::make_unique<k8s::AgentDriver>(agent_client_.get());
    }
    options.partition = agent_driver_.get();
    options.namespace_ = kNamespace;
    options.poll_s = 0.01;
    options.ledger = Ledger();
    return options;
  }

  // The journal's pod ledger, through a connection of the test's own.
  k8s::PodLedger* Ledger() {
    if (!ledger_) {
      ledger_journal_ = controller::Journal::Open(journal_).value();
      ledger_ =
          std::make_unique<manager::JournalPodLedger>(ledger_journal_.get());
    }
    return ledger_.get();
  }

  k8s::RouterOptions RouterOptions(const deployment::Deployment& d) {
    k8s::RouterOptions options;
    options.namespace_ = kNamespace;
    options.serving = k8s::ParseServingSpec(kServingSpec, "spec").value();
    for (const auto& s : d.services) options.models[s.name] = s.model;
    return options;
  }

  // What the checks read of a pod: its metadata (as `object`), whether it
  // has a status and whether it is Ready. The checks run at every change:
  // a copy of whole pods each time would cost more than the transition.
  struct PodView {
    Json object;
    bool status = false;
    bool ready = false;
  };
  std::vector<PodView> Pods() {
    std::vector<PodView> pods;
    server_.Visit(kPods, [&](const Json& pod) {
      pods.push_back({{{"metadata", pod["metadata"]}},
                      pod.contains("status"),
                      kube::PodReady(pod)});
    });
    return pods;
  }

  // What a gateway does with the live routes now: per service, the group
  // Services its HTTPRoute weighs, each spreading its share over the ready
  // pods it selects. Records each service whose routed capacity is below
  // its floor (some replica then gets more than its throughput), and
  // charges the controller with a change of `changed` (a pod's name, else
  // a route's or Service's path), of `changed_service`, that took that
  // service's routed capacity lower than it was and below its floor unless
  // the test made it (ByTheHarness): issue 91, the controller deleted the
  // rest of a group someone had thinned while its route still weighed it.
  void CheckRoutes(const std::string& changed,
                   const std::string& changed_service) {
    std::vector<PodView> pods = Pods();
    std::map<std::string, Json> services;
    for (const Json& s : server_.List(kServices)) {
      services[s["metadata"]["name"]] = s;
    }
    std::lock_guard lock(mu_);
    if (lowest_.empty()) return;  // not watching yet
    for (const Json& r : server_.List(kRoutes)) {
      std::string service = r["metadata"]["labels"][k8s::kLabelService];
      cluster::ServiceRoute route{service, {}};
      std::vector<std::string> backends;  // by group, for a report
      for (const Json& b :
           r["spec"]["rules"][0].value("backendRefs", Json::array())) {
        cluster::RouteGroup g;
        g.weight = b["weight"];
        g.credit = 1e300;
        auto it = services.find(b["name"]);
        for (const PodView& view : pods) {
          const Json& pod = view.object;
          if (it == services.end() || !view.ready ||
              !Selects(it->second["spec"]["selector"],
                       pod["metadata"]["labels"])) {
            continue;
          }
          ++g.replicas;
          auto replica = k8s::ReplicaFromMetadata(pod["metadata"]);
          g.credit = std::min(g.credit, replica->credit);
        }
        backends.push_back(b["name"]);
        route.groups.push_back(g);
      }
      double floor = goal_.Floor(service);
      double routed = cluster::RoutedCapacity(route);
      bool below = BelowFloor(routed, floor);
      if (below) {
        for (size_t i = 0; i < backends.size(); ++i) {
          backends[i] += fmt::format(" {}/{}", route.groups[i].weight,
                                     route.groups[i].replicas);
        }
        violations_.push_back(fmt::format(
            "{}: routed capacity {:.6g} below its floor {:.6g} at a change "
            "of {} (backends, weight/ready: {})",
            service, routed, floor, changed, fmt::join(backends, ", ")));
      }
      auto had = last_routed_.find(service);
      if (service == changed_service && below && had != last_routed_.end() &&
          routed < had->second - 1e-6 && harness_pods_.count(changed) == 0 &&
          Seeable()) {
        charged_.push_back(fmt::format(
            "{}: {} took its routed capacity from {:.6g} to {:.6g} req/s, "
            "below its floor {:.6g}",
            service, changed, had->second, routed, floor));
      }
      if (service == changed_service || had == last_routed_.end()) {
        last_routed_[service] = routed;
      }
    }
  }

  // Each service's live HTTPRoute weighs exactly its ready replicas.
  void ExpectRoutesMatchTheCluster(const cluster::ClusterState& end) {
    for (const auto& [service, route] : cluster::Routes(end)) {
      auto live =
          server_.Get(std::string(kRoutes) + "/" + k8s::RouteName(service));
      ASSERT_TRUE(live) << service;
      // By the group each backend's Service selects (its name is its
      // slot's, or the group's own while another holds the slot).
      std::map<std::string, long> weights;
      for (const Json& b : (*live)["spec"]["rules"][0]["backendRefs"]) {
        auto selected = server_.Get(std::string(kServices) + "/" +
                                    b["name"].get<std::string>());
        ASSERT_TRUE(selected) << b["name"];
        weights[(*selected)["spec"]["selector"][k8s::kLabelGroup]] =
            b["weight"];
      }
      std::map<std::string, long> want;
      for (const auto& g : route.groups) {
        want[k8s::GroupName(service, g)] = g.weight;
      }
      EXPECT_EQ(weights, want) << service;
    }
  }

  // A GPU node with `kGpusPerNode` GPUs of `model` (MIG on, no instances).
  void AddNode(const std::string& name, const mig::GpuModel* model) {
    server_.Put(
        "/api/v1/nodes/" + name,
        {{"metadata", {{"labels", {{"nvidia.com/mig.capable", "true"}}}}}});
    nodes_[name] = static_cast<int>(nvml_.size());
    nvml_.push_back(std::make_unique<agent::FakeNvml>(
        std::vector<agent::FakeGpu>(kGpusPerNode, model)));
    drivers_.push_back(
        agent::MigDriver::Open(nvml_.back().get(), mig::GpuCatalog::Default())
            .value());
    kube::KubeConfig agent = config_;
    agent.token = kAgentToken;
    clients_.push_back(std::make_unique<kube::KubeClient>(agent));
  }

  // Runs the agent of node `name` and waits for its first layout report.
  void StartAgent(const std::string& name) {
    int n = nodes_.at(name);
    agent::NodeAgentOptions options;
    options.node = name;
    options.watch_s = 1;
    agents_.emplace_back([this, n, options] {
      agent::NodeAgent a(clients_[n].get(), drivers_[n].get(), options);
      EXPECT_TRUE(a.Run(stop_).ok());
    });
    for (int tries = 0;
         tries < 1000 && k8s::Annotation(*server_.Get("/api/v1/nodes/" + name),
                                         k8s::kAnnotationLayouts)
                             .empty();
         ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  // Stops the agents, so that nothing else writes to the API server.
  void StopAgents() {
    stop_ = true;
    for (std::thread& t : agents_) t.join();
    agents_.clear();
  }

  // Every pod and node as the API server holds them now.
  Json Everything() {
    return {{"pods", server_.List(kPods)},
            {"nodes", server_.List("/api/v1/nodes")}};
  }

  // Records each service's ready capacity; the invariant is checked on the
  // lowest values seen. A change of pod `changed`, a replica of
  // `changed_service`, that takes that service lower than it was and below
  // its floor is charged to the controller unless the test made it
  // (ByTheHarness). Only the changed pod's service is charged: the state is
  // read after the change, and another pod's change (the harness's, say)
  // may already show in it.
  void Measure(const std::string& changed, const std::string& changed_service) {
    std::map<std::string, double> capacity;
    for (const PodView& pod : Pods()) {
      if (!pod.status || IsForged(pod.object)) continue;
      if (k8s::Annotation(pod.object, k8s::kAnnotationOwner) !=
          k8s::kDefaultOwner) {
        continue;  // not a replica of the controller's
      }
      auto replica = k8s::ReplicaFromMetadata(pod.object["metadata"]);
      if (replica) capacity[replica->service] += replica->credit;
    }
    std::lock_guard lock(mu_);
    for (auto& [service, low] : lowest_) {
      low = std::min(low, capacity[service]);
      double had = last_capacity_.count(service) ? last_capacity_[service]
                                                 : capacity[service];
      double floor = goal_.Floor(service);
      if (service == changed_service && harness_pods_.count(changed) == 0 &&
          Seeable() && capacity[service] < had - 1e-6 &&
          BelowFloor(capacity[service], floor)) {
        charged_.push_back(
            fmt::format("{}: pod {} took it from {:.6g} to {:.6g} req/s, "
                        "below its floor {:.6g}",
                        service, changed, had, capacity[service], floor));
      }
    }
    // Each service's "before" is what it had at the last change of one of
    // its own pods: a drop is weighed at the change that made it.
    for (const auto& [service, value] : capacity) {
      if (service == changed_service || !last_capacity_.count(service)) {
        last_capacity_[service] = value;
      }
    }
    if (!capacity.count(changed_service)) last_capacity_[changed_service] = 0;
  }

  // Whether `capacity` is below `floor`, beyond the routes' integer weights
  // and the credits' rounding.
  static bool BelowFloor(double capacity, double floor) {
    return capacity < floor * (1 - 1e-4) - 1e-6;
  }

  // Whether the controller could have seen the harness's last change by
  // now: a delete of its own sent within its watch's delay of someone
  // else's (kWatchDelay from the harness's request) was judged on a cluster
  // without it, as every controller that reads a watch judges
  // (docs/controller.md, "Under faults"); later changes are charged. Under
  // mu_.
  bool Seeable() const {
    return std::chrono::steady_clock::now() - harness_at_ > kWatchDelay;
  }
  static constexpr std::chrono::milliseconds kWatchDelay{50};

  // Pod `name` is removed by the test (a node's loss, someone else's
  // delete), not by the controller.
  void ByTheHarness(const std::string& name) {
    std::lock_guard lock(mu_);
    harness_pods_.insert(name);
    harness_at_ = std::chrono::steady_clock::now();
  }

  // Drops below a floor that the controller's own writes made.
  std::vector<std::string> Charged() {
    std::lock_guard lock(mu_);
    return charged_;
  }

  void Watch(const controller::TransitionGoal& goal) {
    std::lock_guard lock(mu_);
    goal_ = goal;
    for (const auto& [s, value] : goal.required_before) lowest_[s] = 1e300;
  }

  void ExpectInvariantAndTarget() {
    {
      std::lock_guard lock(mu_);
      for (const auto& [service, low] : lowest_) {
        EXPECT_GE(low, goal_.Floor(service) - 1e-6) << service;
      }
      EXPECT_EQ(violations_, std::vector<std::string>{});
    }
    cluster::ClusterState end = ObserveAsTheController();
    EXPECT_EQ(controller::EndStateProblems(end, goal_),
              std::vector<std::string>{});
    for (const cluster::GpuState& g : end.gpus) {
      if (dra_) {
        // What the scheduler allocated is what the controller reads.
        EXPECT_EQ(dra_->Layout(g.id.node, g.id.index), g.layout())
            << "GPU " << g.id;
        EXPECT_EQ(g.model, &A100());
        continue;
      }
      EXPECT_EQ(nvml_[nodes_.at(g.id.node)]->Layout(g.id.index), g.layout())
          << "GPU " << g.id;
      EXPECT_EQ(g.model, &drivers_[nodes_.at(g.id.node)]->model(g.id.index));
    }
    ExpectRoutesMatchTheCluster(end);
  }

  // The pods the controller has created (they carry a create's token).
  int PodsMade() {
    int n = 0;
    for (const Json& pod : server_.List(kPods)) {
      if (k8s::Annotation(pod, k8s::kAnnotationCreation) != "") ++n;
    }
    return n;
  }

  // The cluster as the controller sees it (through DRA's claims after
  // StartDra, else the agents' reports), counting the pods the journal
  // records as its own (or `ledger`, where given).
  cluster::ClusterState ObserveAsTheController(
      k8s::PodLedger* ledger = nullptr) {
    kube::KubeClient client(config_);
    k8s::BackendOptions options = BackendOptions();
    if (ledger != nullptr) options.ledger = ledger;
    std::unique_ptr<k8s::DraDriver> claims;
    if (dra_) {
      k8s::DraDriverOptions dra;
      dra.namespace_ = kNamespace;
      dra.watch_s = 1;
      claims = std::make_unique<k8s::DraDriver>(&client, std::move(dra));
      options.partition = claims.get();
    }
    k8s::KubernetesBackend backend(&client, options);
    return backend.Observe().value();
  }

  // `controller --once` toward day (with `extra` flags) from night, already
  // on the cluster and Watch()ed, while someone else deletes a Ready
  // replica once the controller has made ten pods: of the service with the
  // least room above its floor. Then no drop below a floor is the
  // controller's, and it ends at day (a second pass where the first says
  // why it could not).
  // Whom MoveToDayWhileAReplicaIsDeleted deletes: the replica whose
  // service has the least room above its floor, or one of a group that day
  // does not have (the controller deletes the rest of it later) with
  // another of the group still ready.
  enum class Victim { kLeastRoom, kOfALeavingGroup };

  // The name of a ready replica of the group that `day` does not route
  // with the most ready replicas, two at least; "" if there is none.
  std::string OfALeavingGroup(const deployment::Deployment& day) {
    std::set<std::string> staying;
    for (const auto& [service, route] :
         cluster::Routes(cluster::ClusterFromDeployment(day, {}).value())) {
      for (const cluster::RouteGroup& g : route.groups) {
        staying.insert(k8s::GroupName(service, g));
      }
    }
    std::map<std::string, std::vector<std::string>> leaving;
    for (const Json& pod : server_.List(kPods)) {
      std::string group = k8s::Label(pod, k8s::kLabelGroup);
      if (!group.empty() && kube::PodReady(pod) && !staying.count(group)) {
        leaving[group].push_back(pod["metadata"]["name"]);
      }
    }
    // The group with the most: the most deletes of the controller's to
    // follow.
    const std::vector<std::string>* most = nullptr;
    for (const auto& [group, pods] : leaving) {
      if (pods.size() >= 2 && (!most || pods.size() > most->size())) {
        most = &pods;
      }
    }
    return most ? most->front() : "";
  }

  void MoveToDayWhileAReplicaIsDeleted(const std::vector<std::string>& extra,
                                       Victim whom = Victim::kLeastRoom) {
    const int before = PodsMade();
    std::atomic<bool> done = false;
    std::thread deleter([&] {
      kube::KubeClient client(AdminConfig());
      for (int tries = 0; tries < 20000 && PodsMade() < before + 10 && !done;
           ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      std::string victim;
      if (whom == Victim::kOfALeavingGroup) {
        victim = OfALeavingGroup(ShippedDeployment("day"));
        ASSERT_FALSE(victim.empty()) << "no group leaving with two replicas";
        ByTheHarness(victim);
        EXPECT_TRUE(client.Delete(std::string(kPods) + "/" + victim).ok());
        return;
      }
      double least = 1e300;
      std::map<std::string, double> capacity;
      for (const Json& pod : server_.List(kPods)) {
        auto replica = k8s::ReplicaFromMetadata(pod["metadata"]);
        if (replica && kube::PodReady(pod)) {
          capacity[replica->service] += replica->credit;
        }
      }
      for (const Json& pod : server_.List(kPods)) {
        auto replica = k8s::ReplicaFromMetadata(pod["metadata"]);
        if (!replica || !kube::PodReady(pod)) continue;
        double room =
            capacity[replica->service] - goal_.Floor(replica->service);
        if (room < least) {
          least = room;
          victim = pod["metadata"]["name"];
        }
      }
      ASSERT_FALSE(victim.empty());
      ByTheHarness(victim);
      EXPECT_TRUE(client.Delete(std::string(kPods) + "/" + victim).ok());
    });
    const std::string day = testing::SourcePath("data/deployments/day.json");
    CliResult r = Controller(day, extra);
    done = true;
    deleter.join();
    EXPECT_EQ(Charged(), std::vector<std::string>{}) << r.err;
    if (r.code != 0) {
      EXPECT_FALSE(r.err.empty());
      r = Controller(day, extra);
    }
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(Charged(), std::vector<std::string>{});
    deployment::Deployment target = ShippedDeployment("day");
    EXPECT_EQ(
        controller::EndStateProblems(ObserveAsTheController(),
                                     controller::MakeGoal(target, target)),
        std::vector<std::string>{});
  }

  // A real `migserve controller` (with `extra` flags) moving night, on the
  // cluster and Watch()ed, to day is stopped (SIGSTOP) past its Lease once
  // it has made six pods; a second, with a journal of its own, takes over
  // and finishes; resumed (SIGCONT), the first writes nothing more, its
  // running actions' writes included, and exits non-zero saying it is
  // fenced (issue 72: it deleted and routed within 1 ms of resuming).
  void StopTheLeaderPastItsLeaseMovingToDay(
      const std::vector<std::string>& extra) {
    using Clock = std::chrono::steady_clock;
    std::vector<std::pair<std::string, Clock::time_point>> writes;
    server_.AddObserver(
        [&](const std::string& type, const std::string& path, const Json&) {
          // The kubelet's and the agents' writes are not the controller's.
          bool pod = path.find("/pods/") != std::string::npos;
          bool routing = path.find("/httproutes/") != std::string::npos ||
                         path.find("/services/") != std::string::npos;
          if ((pod && type != "MODIFIED") || routing) {
            std::lock_guard lock(mu_);
            writes.emplace_back(type + " " + path, Clock::now());
          }
        });
    const int before = PodsMade();
    std::string log = testing::TempDir() + "/stopped-leader.log";
    std::string target = testing::SourcePath("data/deployments/day.json");
    // Made before the fork: the child of a threaded process may call only
    // async-signal-safe functions until it execs.
    std::vector<std::string> args = {
        "migserve",  "controller",         "--once", "--kubeconfig",
        kubeconfig_, "--target",           target,   "--journal",
        journal_,    "--metrics-port",     "0",      "--poll-s",
        "0.01",      "--serving",          serving_, "--lease-identity",
        "first",     "--lease-duration-s", "2",      "--renew-deadline-s",
        "1",         "--retry-period-s",   "0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t first = fork();
    if (first == 0) {
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, STDERR_FILENO);
      execv(MIGSERVE_BINARY, argv.data());
      _exit(127);
    }
    ASSERT_GT(first, 0);
    for (int tries = 0; tries < 20000 && PodsMade() < before + 6; ++tries) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_EQ(kill(first, SIGSTOP), 0);
    // The second, with a journal of its own, adopts the first's pods once the
    // lease has gone unrenewed for its duration, and finishes the move.
    std::string second_journal = testing::TempDir() + "/second.db";
    std::remove(second_journal.c_str());
    std::vector<std::string> second_extra = {"--journal", second_journal,
                                             "--adopt"};
    second_extra.insert(second_extra.end(), extra.begin(), extra.end());
    CliResult second = SecondController(target, second_extra);
    EXPECT_EQ(second.code, 0) << second.err;
    Clock::time_point resumed = Clock::now();
    ASSERT_EQ(kill(first, SIGCONT), 0);
    int status = 0;
    pid_t ended = 0;
    for (int tries = 0; tries < 3000 && ended == 0; ++tries) {
      ended = waitpid(first, &status, WNOHANG);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (ended == 0) {
      kill(first, SIGKILL);
      waitpid(first, &status, 0);
      ADD_FAILURE() << "the resumed leader did not exit";
    }
    StatusOr<std::string> read = ReadFile(log);
    std::string said = read.ok() ? *read : "";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << said;
    EXPECT_NE(said.find("fenced: this process cannot prove it holds lease "
                        "migserve-replicas/migserve-controller"),
              std::string::npos)
        << said;
    {
      std::lock_guard lock(mu_);
      for (const auto& [what, at] : writes) {
        EXPECT_LT(at, resumed) << "the resumed leader wrote: " << what;
      }
    }
    EXPECT_EQ(Charged(), std::vector<std::string>{});
    {
      std::lock_guard lock(mu_);
      for (const auto& [service, low] : lowest_) {
        EXPECT_GE(low, goal_.Floor(service) - 1e-6) << service;
      }
    }
    // At day, counted as the second counts its pods (its own journal).
    auto journal = controller::Journal::Open(second_journal).value();
    manager::JournalPodLedger ledger(journal.get());
    EXPECT_EQ(
        controller::EndStateProblems(ObserveAsTheController(&ledger), goal_),
        std::vector<std::string>{});
  }

  // A controller that starts moving the cluster to `target` and dies after
  // 20 actions (asking `may_act` before each, if set), its plan unfinished
  // in the journal; returns that plan.
  cluster::TransitionPlan DieAfter20Actions(
      kube::KubeClient* client, const deployment::Deployment& target,
      const controller::TransitionGoal& goal, std::function<Status()> may_act) {
    k8s::KubernetesBackend backend(client, BackendOptions());
    k8s::KubernetesRouter router(client, RouterOptions(target));
    auto journal = controller::Journal::Open(journal_).value();
    controller::ControllerOptions options;
    options.stop_after = 20;
    options.router = &router;
    options.may_act = std::move(may_act);
    controller::Controller dying(&backend, journal.get(), options);
    EXPECT_EQ(dying.Transition(target, goal).code(), Status::Code::kAborted);
    return cluster::ParsePlan(journal->Current().value()->plan_json, "journal")
        .value();
  }

  // `controller --once` toward `target`, with `extra` flags.
  CliResult Controller(const std::string& target,
                       const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {
        "controller", "--once",    "--kubeconfig", kubeconfig_,      "--target",
        target,       "--journal", journal_,       "--metrics-port", "0",
        "--poll-s",   "0.01",      "--serving",    serving_};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  }

  // `controller --once` toward `target` as the Lease's candidate "second"
  // (a 2 s Lease renewed every 0.1 s), with `extra` flags (its journal
  // among them).
  CliResult SecondController(const std::string& target,
                             const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        "controller",         "--once", "--kubeconfig",       kubeconfig_,
        "--target",           target,   "--metrics-port",     "0",
        "--poll-s",           "0.01",   "--serving",          serving_,
        "--lease-identity",   "second", "--lease-duration-s", "2",
        "--renew-deadline-s", "1",      "--retry-period-s",   "0.1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  }

  // `controller --once` toward `target` (with `extra` flags) while node-2
  // is lost once three of the pods run there: the node deleted, and its
  // pods after it as the pod garbage collector deletes them, each marked as
  // the harness's (the drops they make are not the controller's).
  CliResult ControllerLosingNode2(const std::string& target,
                                  const std::vector<std::string>& extra = {}) {
    std::atomic<bool> done = false;
    std::thread deleter([&] {
      kube::KubeClient client(AdminConfig());  // the node's loss, not ours
      auto on_node2 = [&] {
        std::vector<std::string> names;
        for (const Json& pod : server_.List(kPods)) {
          if (pod["metadata"]["labels"].value(k8s::kLabelNode, "") ==
              "node-2") {
            names.push_back(pod["metadata"]["name"]);
          }
        }
        return names;
      };
      for (int tries = 0; tries < 20000 && on_node2().size() < 3; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      EXPECT_TRUE(client.Delete("/api/v1/nodes/node-2").ok());
      while (!done) {
        for (const std::string& name : on_node2()) {
          ByTheHarness(name);
          (void)client.Delete(std::string(kPods) + "/" + name);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    CliResult r = Controller(target, extra);
    done = true;
    deleter.join();
    return r;
  }

  kube::TestCertificate tls_;
  kube::ApiServerStandIn server_;
  kube::KubeConfig config_;           // the controller's (its service account)
  std::string kubeconfig_;            // the controller's
  std::string autoscale_kubeconfig_;  // the autoscaler's
  std::string journal_;
  std::unique_ptr<controller::Journal> ledger_journal_;
  std::unique_ptr<manager::JournalPodLedger> ledger_;
  std::string serving_;
  std::map<std::string, int> nodes_;  // name -> index of the vectors below
  std::vector<std::unique_ptr<agent::FakeNvml>> nvml_;
  std::vector<std::unique_ptr<agent::MigDriver>> drivers_;
  std::vector<std::unique_ptr<kube::KubeClient>> clients_;
  std::unique_ptr<kube::FakeKubelet> kubelet_;
  // The node agent's partition driver the test's own backends read through
  // (BackendOptions), with a client of its own.
  std::unique_ptr<kube::KubeClient> agent_client_;
  std::unique_ptr<k8s::AgentDriver> agent_driver_;
  std::unique_ptr<k8s::DraScheduler> dra_;  // StartDra's
  std::vector<std::thread> agents_;
  std::atomic<bool> stop_ = false;
  std::mutex mu_;
  controller::TransitionGoal goal_;
  std::map<std::string, double> lowest_;
  std::vector<std::string> violations_;
  // Per service, its capacity at the last change of one of its pods, and
  // its routed capacity at the last change of its pods or routes.
  std::map<std::string, double> last_capacity_;
  std::map<std::string, double> last_routed_;
  std::set<std::string> harness_pods_;
  // When the harness last said it changes a pod (ByTheHarness).
  std::chrono::steady_clock::time_point harness_at_;
  std::vector<std::string> charged_;
  int route_writes_ = 0;
  // Writes of an HTTPRoute that left its spec as it was, and each route's
  // last spec.
  int repeated_route_writes_ = 0;
  std::map<std::string, std::string> last_route_spec_;
  int scale_ = 1;  // copies of the three-node cluster Start makes
  // Whether Start records its pods as the controller's in the journal.
  bool seed_ledger_ = true;
  // Seconds from a pod's creation to its readiness (the fake kubelet's).
  double ready_after_s_ = 0.05;
};

}  // namespace migserve::e2e

#endif  // MIGSERVE_E2E_TESTING_KUBERNETES_E2E_FIXTURE_H_
