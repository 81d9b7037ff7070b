// The Kubernetes backend reads what it finds on the cluster, which anyone
// can write: random and malformed node annotations and pod labels must be
// reported and ignored, never crash it or count a replica somewhere else.
#include "kubernetes/kubernetes_backend.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "cluster/apply.h"
#include "kube/testing/api_server_standin.h"
#include "kubernetes/cluster_model.h"
#include "kubernetes/names.h"
#include "kubernetes/partition/agent_driver.h"
#include "kubernetes/partition/mig_annotations.h"
#include "kubernetes/replica_pod.h"
#include "kubernetes/testing/memory_partition_driver.h"
#include "kubernetes/testing/memory_pod_ledger.h"
#include "mig/gpu_catalog.h"
#include "mig/testing/gpus.h"

namespace migserve::kubernetes {
namespace {

using nlohmann::json;

constexpr char kPods[] = "/api/v1/namespaces/default/pods";
const json kMigCapable = {{"nvidia.com/mig.capable", "true"}};

using testing::A100;

// Returns one of many broken or odd JSON values.
json Junk(std::mt19937* rng) {
  switch ((*rng)() % 9) {
    case 0:
      return nullptr;
    case 1:
      return 5;
    case 2:
      return "text";
    case 3:
      return json::array({1, "x", nullptr});
    case 4:
      return {{"gpu", 5}};
    case 5:
      return {{"gpus", {{{"index", "0"}}}}};
    case 6:
      return {{"gpu", "A100-SXM4-80GB"},
              {"gpus", {{{"index", 0}, {"instances", {{{"profile", 7}}}}}}}};
    case 7:
      return {{"gpus", {{{"index", 0}, {"gpu", "T4"}, {"instances", {}}}}}};
    default:
      return -1.5;
  }
}

// A string that is sometimes a number, sometimes not.
std::string JunkText(std::mt19937* rng) {
  const char* texts[] = {"",    "0",       "5",       "-1",  "1e9",
                         "abc", "3g.40gb", "7g.80gb", "0x1", "99999999999"};
  return texts[(*rng)() % std::size(texts)];
}

const json kReady = {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}};

// A stand-in API server, a client of it and a backend that keeps its
// warnings; MIG nodes of one GPU holding one 7g.80gb instance, and Ready
// replica pods on them.
class KubernetesBackendTest : public ::testing::Test {
 protected:
  KubernetesBackendTest() : server_({"", "", "", 1}) {
    EXPECT_TRUE(server_.Start().ok());
    kube::KubeConfig config;
    config.server = server_.url();
    client_ = std::make_unique<kube::KubeClient>(config);
    agent_ = std::make_unique<AgentDriver>(client_.get());
    MakeBackend(nullptr);
  }

  // A new backend keeping the pods it creates in `ledger` (if not null).
  void MakeBackend(PodLedger* ledger) {
    BackendOptions options;
    options.warn = [this](const std::string& w) { warnings_.push_back(w); };
    options.ledger = ledger;
    options.partition = agent_.get();
    backend_ = std::make_unique<KubernetesBackend>(client_.get(), options);
  }

  // Node n with a Ready replica of svc (100 req/s) on its 7g, named
  // `*name`; returns the delete of that replica.
  Action DeleteOfOneReadyReplica(std::string* name) {
    PutNode("n");
    Action remove;
    remove.kind = ActionKind::kDelete;
    remove.at = InstanceRef{{"n", 0}, &A100(), seven_};
    remove.replica = Replica{"svc", 8, 1, 100, 10};
    *name = ReplicaName("svc", "n", 0, A100().profiles[seven_.profile],
                        seven_.start);
    PutReadyPod(*name, remove.replica, remove.at);
    return remove;
  }

  // Action `id`: a replica of svc (100 req/s) created on node n's 7g.
  Action CreateOnSeven(int id) {
    Action create;
    create.id = id;
    create.kind = ActionKind::kCreate;
    create.at = {{"n", 0}, &A100(), seven_};
    create.replica = {"svc", 8, 1, 100, 10};
    return create;
  }

  // A backend on node n (made here) through the agent's driver, with its
  // actions' timeout and poll period.
  std::unique_ptr<KubernetesBackend> BackendOnNode(double action_timeout_s,
                                                   double poll_s) {
    PutNode("n");
    BackendOptions options;
    options.partition = agent_.get();
    options.action_timeout_s = action_timeout_s;
    options.poll_s = poll_s;
    return std::make_unique<KubernetesBackend>(client_.get(), options);
  }

  // Marks pod `name` Ready, as its kubelet would.
  void MakeReady(const std::string& name) {
    server_.Update(std::string(kPods) + "/" + name,
                   [](json* pod) { (*pod)["status"] = kReady; });
  }

  // Node `node`, its GPU 0 holding `instance` (seven_ unless said).
  void PutNode(const std::string& node,
               std::optional<mig::Instance> instance = std::nullopt) {
    NodeLayouts layouts{{{&A100(), mig::Layout({instance.value_or(seven_)})}}};
    server_.Put(
        "/api/v1/nodes/" + node,
        {{"metadata",
          {{"labels", kMigCapable},
           {"annotations", {{kAnnotationLayouts, FormatLayouts(layouts)}}}}}});
  }

  // Pod `name`, Ready, running `r` at `at`.
  void PutReadyPod(const std::string& name, const Replica& r,
                   const InstanceRef& at) {
    server_.Put(std::string(kPods) + "/" + name,
                {{"metadata",
                  {{"labels", json(ReplicaLabels(r, at)->ToJson())},
                   {"annotations", json(ReplicaAnnotations(r).ToJson())}}},
                 {"status", kReady}});
  }

  const mig::Instance seven_{A100().FindProfile("7g.80gb"), 0};
  kube::ApiServerStandIn server_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<AgentDriver> agent_;  // the node agent's annotations
  std::vector<std::string> warnings_;
  std::unique_ptr<KubernetesBackend> backend_;
};

TEST_F(KubernetesBackendTest, MalformedAnnotationsAndLabelsAreIgnoredNotFatal) {
  // One good node with one GPU holding a 7g instance and one good replica.
  PutNode("good");
  Replica r{"svc", 8, 1, 100, 10};
  PutReadyPod("good", r, {{"good", 0}, &A100(), seven_});
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    json junk = Junk(&rng);
    std::string node = "junk-" + std::to_string(round % 7);
    json annotations = {
        {kAnnotationLayouts, rng() % 2 ? junk.dump() : JunkText(&rng)}};
    server_.Put("/api/v1/nodes/" + node,
                {{"metadata",
                  {{"labels", kMigCapable},
                   {"annotations", rng() % 5 ? annotations : junk}}}});
    json labels(ReplicaLabels(r, {{"good", 0}, &A100(), seven_})->ToJson());
    if (rng() % 2 == 0) labels[kLabelService] = JunkText(&rng);
    if (rng() % 3 == 0) labels[kLabelNode] = JunkText(&rng);
    labels[kLabelGpu] = rng() % 2 ? json(JunkText(&rng)) : Junk(&rng);
    labels[kLabelStart] = rng() % 2 ? json(JunkText(&rng)) : Junk(&rng);
    labels[kLabelProfile] = rng() % 2 ? json(JunkText(&rng)) : Junk(&rng);
    json notes(ReplicaAnnotations(r).ToJson());
    notes[kAnnotationThroughput] =
        rng() % 2 ? json(JunkText(&rng)) : Junk(&rng);
    server_.Put(std::string(kPods) + "/junk-" + std::to_string(round % 5),
                {{"metadata",
                  {{"labels", rng() % 4 ? labels : Junk(&rng)},
                   {"annotations", rng() % 4 ? notes : Junk(&rng)}}},
                 {"status", rng() % 3 ? kReady : Junk(&rng)}});
    StatusOr<ClusterState> state = backend_->Observe();
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    // The good node and its replica are always there; nothing else serves
    // more than the real replica's 100 req/s, and no junk pod lands on a
    // GPU that does not exist.
    const GpuState* g = state->FindGpu({"good", 0});
    ASSERT_NE(g, nullptr);
    ASSERT_EQ(g->slots.size(), 1u);
    ASSERT_TRUE(g->slots[0].replica.has_value());
    EXPECT_EQ(g->slots[0].replica->service, "svc");
    EXPECT_DOUBLE_EQ(state->Capacity()["svc"], 100);
    EXPECT_EQ(state->UsedGpus(), 1);
  }
  EXPECT_FALSE(warnings_.empty());
  // Each warning is reported once, and names what it ignored.
  std::set<std::string> distinct(warnings_.begin(), warnings_.end());
  EXPECT_EQ(distinct.size(), warnings_.size());
  bool named_node = false, named_pod = false;
  for (const std::string& w : warnings_) {
    named_node |= w.find("node junk-") != std::string::npos &&
                  w.find("; the node is left out") != std::string::npos;
    named_pod |= w.find("pod junk-") != std::string::npos;
  }
  EXPECT_TRUE(named_node);
  EXPECT_TRUE(named_pod);
}

// The backend reads layouts and changes them only through its partition
// driver: a node without the agent's annotation has the GPUs the driver
// reports; a repartition is the driver's change, written nowhere on the
// node, and ends, with the driver's reason prefixed by the action, when the
// driver says so.
TEST_F(KubernetesBackendTest,
       LayoutsAndRepartitionsGoThroughThePartitionDriver) {
  server_.Put("/api/v1/nodes/n", {{"metadata", {{"labels", kMigCapable}}}});
  MemoryPartitionDriver driver;
  driver.layouts["n"] = {{&A100(), mig::Layout({seven_})},
                         {&A100(), mig::Layout({seven_})}};
  BackendOptions options;
  options.partition = &driver;
  options.poll_s = 0.01;
  KubernetesBackend backend(client_.get(), options);
  StatusOr<ClusterState> state = backend.Observe();
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  ASSERT_EQ(state->gpus.size(), 2u);
  EXPECT_EQ(state->gpus[1].id, (GpuId{"n", 1}));

  Action repartition;
  repartition.id = 3;
  repartition.kind = ActionKind::kRepartition;
  repartition.at = {{"n", 1}, &A100(), seven_};
  repartition.remove = {seven_};
  repartition.add = {{A100().FindProfile("3g.40gb"), 4}};
  ASSERT_TRUE(backend.Start(repartition).ok());
  ASSERT_EQ(driver.started.size(), 1u);
  EXPECT_EQ(driver.started[0].first, (GpuId{"n", 1}));
  EXPECT_EQ(driver.started[0].second.add, repartition.add);
  EXPECT_FALSE(
      server_.Get("/api/v1/nodes/n")->at("metadata").contains("annotations"));
  driver.outcomes["ticket-1"] = Status::Unavailable("no room");
  StatusOr<ActionResult> result = backend.WaitAny();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->id, 3);
  EXPECT_EQ(result->status.code(), Status::Code::kUnavailable);
  EXPECT_EQ(result->status.message(), Describe(repartition) + ": no room");
}

// An action whose pod never becomes Ready fails once its timeout is due,
// woken by its deadline although nothing changes on the cluster.
TEST_F(KubernetesBackendTest, AnActionNotDoneInTimeFails) {
  // The deadline, not the quiet-spell poll, wakes it.
  std::unique_ptr<KubernetesBackend> owned = BackendOnNode(0.2, 60);
  KubernetesBackend& backend = *owned;
  ASSERT_TRUE(backend.Start(CreateOnSeven(7)).ok());
  StatusOr<ActionResult> result = backend.WaitAny();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->id, 7);
  EXPECT_EQ(result->status.code(), Status::Code::kDeadlineExceeded);
  EXPECT_NE(result->status.message().find("not done after 0.2 s"),
            std::string::npos)
      << result->status.message();
  EXPECT_TRUE(backend.Running().empty());
}

// The node agent's requests carry the leader's Lease epoch (issue 91), so
// that an agent can refuse a replaced leader's.
TEST_F(KubernetesBackendTest, AgentRequestsCarryTheLeaseEpoch) {
  PutNode("n");
  agent_->SetLeaseEpoch(7);
  StatusOr<std::string> nonce = agent_->Start({"n", 0}, A100(), {{seven_}, {}});
  ASSERT_TRUE(nonce.ok()) << nonce.status().ToString();
  MigRequest sent =
      ParseRequest(Annotation(*server_.Get("/api/v1/nodes/n"), RequestKey(0)),
                   A100(), "request")
          .value();
  EXPECT_EQ(sent.nonce, *nonce);
  EXPECT_EQ(sent.epoch, 7);
}

// A controller whose Lease lapses while it waits on an action stops
// waiting within a poll, fenced, not at the action's timeout (issue 91: a
// deposed leader waiting on a MIG request ran on for minutes); the fence
// is asked even though nothing is written.
TEST_F(KubernetesBackendTest, AWaitEndsFencedOnceTheLeaseIsLost) {
  std::unique_ptr<KubernetesBackend> owned = BackendOnNode(600, 0.05);
  KubernetesBackend& backend = *owned;
  ASSERT_TRUE(backend.Start(CreateOnSeven(3)).ok());
  const long writes = client_->writes();
  client_->SetFence(
      [] { return Status::FailedPrecondition("fenced: lease lost"); });
  const auto begin = std::chrono::steady_clock::now();
  StatusOr<ActionResult> result = backend.WaitAny();
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count(),
      5);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().message(), "fenced: lease lost");
  EXPECT_EQ(client_->writes(), writes);
  client_->SetFence({});
}

// A create whose pod is gone before the watch showed it (created, made
// Ready and deleted between two looks; here deleted where no watch sees
// it) fails within seconds (the cache's settling time), not after the
// action timeout (issue 91: it waited 900 s, the controller stuck), and
// the plan goes on.
TEST_F(KubernetesBackendTest, ACreateWhosePodVanishedUnseenFailsAtOnce) {
  std::unique_ptr<KubernetesBackend> owned = BackendOnNode(60, 0.05);
  KubernetesBackend& backend = *owned;
  ASSERT_TRUE(backend.Start(CreateOnSeven(4)).ok());
  const std::string name =
      ReplicaName("svc", "n", 0, A100().profiles[seven_.profile], 0);
  ASSERT_TRUE(server_.Get(std::string(kPods) + "/" + name));
  server_.Expire([&](std::map<std::string, json>* objects) {
    objects->erase(std::string(kPods) + "/" + name);
  });
  const auto begin = std::chrono::steady_clock::now();
  StatusOr<ActionResult> result = backend.WaitAny();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count(),
      10);
  EXPECT_EQ(result->id, 4);
  EXPECT_EQ(result->status.code(), Status::Code::kUnavailable);
  EXPECT_NE(result->status.message().find(
                "is gone (deleted before the watch showed it)"),
            std::string::npos)
      << result->status.message();
}

// A delete removes the pod the backend saw, by its uid: when another pod
// has taken the name since (here between the look the removal guard is
// asked on and the delete), the API server refuses and the other pod stays,
// even when the watch has brought the replacement into the cache before the
// delete is sent (the guard waits for it here; a slow machine did it alone).
TEST_F(KubernetesBackendTest, DeletesOnlyThePodItSaw) {
  std::string name;
  Action remove = DeleteOfOneReadyReplica(&name);
  const Replica& r = remove.replica;
  const InstanceRef& at = remove.at;
  ASSERT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);
  int asked = 0;
  backend_->SetRemovalGuard([&](const Action&, const ClusterState& seen,
                                const std::map<std::string, double>& capacity,
                                const std::vector<const Action*>&) {
    ++asked;
    EXPECT_EQ(seen.FindGpu({"n", 0})->slots.size(), 1u);
    EXPECT_DOUBLE_EQ(capacity.at("svc"), 100);
    PutReadyPod(name, r, at);  // deleted and made again: a new uid
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return Status::Ok();
  });
  Status s = backend_->Start(remove);
  EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("was replaced since it was seen; not deleted"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(server_.Get(std::string(kPods) + "/" + name).has_value());
  EXPECT_EQ(asked, 1);
}

// The removal guard is asked before a delete, on the books as they are
// then: a refusal is the Start's error, and the pod stays.
TEST_F(KubernetesBackendTest, ADeleteTheGuardRefusesIsNeverSent) {
  std::string name;
  Action remove = DeleteOfOneReadyReplica(&name);
  backend_->SetRemovalGuard([](const Action&, const ClusterState&,
                               const std::map<std::string, double>& capacity,
                               const std::vector<const Action*>& removing) {
    EXPECT_TRUE(removing.empty());
    return Status::Unavailable(fmt::format("held at {:g}", capacity.at("svc")));
  });
  Status s = backend_->Start(remove);
  EXPECT_EQ(s.ToString(), "unavailable: held at 100");
  EXPECT_TRUE(server_.Get(std::string(kPods) + "/" + name).has_value());
  EXPECT_TRUE(backend_->Running().empty());
}

// A copy of a replica's labels and annotations on another pod claims the
// same instance: neither pod is counted (issue 36: the copy's declared
// throughput was counted, and a service fell below its floor), and the
// conflict is named.
TEST_F(KubernetesBackendTest, TwoPodsOnOneInstanceAreAConflictNotCapacity) {
  PutNode("n");
  Replica r{"svc", 8, 1, 100, 10};
  InstanceRef at{{"n", 0}, &A100(), seven_};
  PutReadyPod("real", r, at);
  ASSERT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);
  Replica inflated = r;
  inflated.credit = 5000;
  PutReadyPod("forged", inflated, at);
  ClusterState state = backend_->Observe().value();
  EXPECT_DOUBLE_EQ(state.Capacity()["svc"], 0);
  EXPECT_FALSE(state.FindGpu({"n", 0})->slots[0].replica.has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0],
            "pods forged and real both claim instance 7g.80gb@0 on GPU n/0; "
            "neither is counted");
}

// Server-side ownership (issue 36): with a ledger, a pod is the
// controller's only if its uid is the one the API server gave the pod the
// backend created. Copied labels and annotations, owner included, count for
// nothing, on a free instance too; a name taken before the create is not
// taken over; a create whose answer was lost is found again by its token;
// a delete forgets the pod; --adopt records what the annotation claims.
// A label value cannot hold '+': a replica on 1g.10gb+me is labelled
// 1g.10gb.me, requests NVIDIA's nvidia.com/mig-1g.10gb.me and is counted
// on its profile again; a node whose name is no
// label value gets no pod (the API server would refuse it), said in words.
TEST_F(KubernetesBackendTest, AProfileWithAPlusIsLabelledAndReadBack) {
  mig::Instance me{A100().FindProfile("1g.10gb+me"), 3};
  ASSERT_GE(me.profile, 0);
  PutNode("n", me);
  Action create;
  create.kind = ActionKind::kCreate;
  create.at = InstanceRef{{"n", 0}, &A100(), me};
  create.replica = Replica{"svc", 1, 1, 25, 10};
  ASSERT_TRUE(backend_->Start(create).ok());
  std::string name =
      ReplicaName("svc", "n", 0, A100().profiles[me.profile], me.start);
  MakeReady(name);
  json pod = server_.Get(std::string(kPods) + "/" + name).value();
  EXPECT_EQ(pod["metadata"]["labels"][kLabelProfile], "1g.10gb.me");
  EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]
               ["nvidia.com/mig-1g.10gb.me"],
            1)
      << pod["spec"].dump();
  EXPECT_EQ(pod["metadata"]["labels"][kLabelStart], "3");
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 25);
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];

  std::string long_node(64, 'n');
  PutNode(long_node);
  create.at = InstanceRef{{long_node, 0}, &A100(), seven_};
  Status refused = backend_->Start(create);
  EXPECT_EQ(refused.code(), Status::Code::kInvalidArgument)
      << refused.ToString();
  EXPECT_EQ(refused.message().rfind(
                "node of GPU " + long_node + "/0: label value must be", 0),
            0u)
      << refused.message();
}

TEST_F(KubernetesBackendTest, ALedgerCountsOnlyThePodsTheBackendCreated) {
  MemoryPodLedger ledger;
  MakeBackend(&ledger);
  for (const char* node : {"n", "m", "k", "old"}) PutNode(node);
  Replica r{"svc", 8, 1, 100, 10};
  auto at = [&](const std::string& node) {
    return InstanceRef{{node, 0}, &A100(), seven_};
  };
  auto name = [&](const std::string& node) {
    return ReplicaName("svc", node, 0, A100().profiles[seven_.profile],
                       seven_.start);
  };
  Action create;
  create.kind = ActionKind::kCreate;
  create.at = at("n");
  create.replica = r;
  ASSERT_TRUE(backend_->Start(create).ok());
  MakeReady(name("n"));
  std::string uid = server_.Get(std::string(kPods) + "/" + name("n"))
                        .value()["metadata"]["uid"];
  EXPECT_EQ(ledger.entries.at(name("n")).uid, uid);
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);

  // A forged copy, owner annotation and all, on the free instance of m.
  Replica inflated = r;
  inflated.credit = 5000;
  PutReadyPod("forged", inflated, at("m"));
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0].substr(0, warnings_[0].find(" (uid")),
            "pod forged is annotated migserve.io/owner=migserve-controller "
            "but is not a pod this controller created");

  // A pod squatting the name of the replica the backend is to create.
  PutReadyPod(name("m"), inflated, at("m"));
  create.at = at("m");
  Status squatted = backend_->Start(create);
  EXPECT_EQ(squatted.code(), Status::Code::kFailedPrecondition)
      << squatted.ToString();
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);

  // A create announced (its token recorded) whose answer never came back.
  ledger.entries[name("k")] = {"token-k", ""};
  MakeBackend(&ledger);  // as after a restart
  json notes(ReplicaAnnotations(r).ToJson());
  notes[kAnnotationCreation] = "token-k";
  server_.Put(std::string(kPods) + "/" + name("k"),
              {{"metadata",
                {{"labels", json(ReplicaLabels(r, at("k"))->ToJson())},
                 {"annotations", notes}}},
               {"status", kReady}});
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 200);
  EXPECT_FALSE(ledger.entries.at(name("k")).uid.empty());

  // A delete forgets the pod.
  Action remove;
  remove.kind = ActionKind::kDelete;
  remove.at = at("n");
  remove.replica = r;
  ASSERT_TRUE(backend_->Start(remove).ok());
  EXPECT_EQ(ledger.entries.count(name("n")), 0u);

  // Adoption takes the annotated pods it does not hold, forged or not.
  PutReadyPod(name("old"), r, at("old"));
  // Seen once the backend warns that it is not its own (the watch brings
  // it).
  auto warned = [&] {
    for (const std::string& w : warnings_) {
      if (w.rfind("pod " + name("old") + " is annotated", 0) == 0) return true;
    }
    return false;
  };
  for (int tries = 0; tries < 2000 && !warned(); ++tries) {
    EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_TRUE(warned());
  std::vector<std::string> adopted = backend_->Adopt().value();
  EXPECT_EQ(adopted,
            (std::vector<std::string>{"forged", name("m"), name("old")}));
  EXPECT_EQ(ledger.entries.at(name("old")).token, "");
  // An adopted pod counts from the next look, though the pod did not
  // change: the backend's books judge it again.
  ClusterState after = backend_->Observe().value();
  EXPECT_TRUE(after.FindGpu({"old", 0})->slots[0].replica.has_value());
}

// A pod the backend deleted may still show in its watch as it was (the
// delete's answer outran the watch's event, or a grace period runs): it
// no longer counts, and it is no stranger either (a warning said "not a
// pod this controller created" of it, in a successor's resumed plan).
TEST_F(KubernetesBackendTest, APodItDeletedIsNoStrangerWhileTheWatchShowsIt) {
  MemoryPodLedger ledger;
  MakeBackend(&ledger);
  std::string name;
  Action remove = DeleteOfOneReadyReplica(&name);
  json pod = server_.Get(std::string(kPods) + "/" + name).value();
  ledger.entries[name] = {"", pod["metadata"]["uid"]};
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 100);
  ASSERT_TRUE(backend_->Start(remove).ok());
  EXPECT_EQ(ledger.entries.count(name), 0u);
  // As the lagging watch shows it: the same pod, uid and all.
  server_.Put(std::string(kPods) + "/" + name, pod);
  EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 0);
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
  // Another pod under its name is judged as any other.
  pod["metadata"].erase("uid");
  server_.Put(std::string(kPods) + "/" + name, pod);
  for (int tries = 0; tries < 2000 && warnings_.empty(); ++tries) {
    EXPECT_DOUBLE_EQ(backend_->Observe().value().Capacity()["svc"], 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0].substr(0, warnings_[0].find(" (uid")),
            "pod " + name +
                " is annotated migserve.io/owner=migserve-controller but is "
                "not a pod this controller created");
}

// The live view is kept change by change from the watches: after changes
// that only the watches bring (a replica added, one deleted, a node gone, a
// node added, a GPU repartitioned), it shows what a fresh backend's first
// look shows, capacity to the bit.
TEST_F(KubernetesBackendTest, TheLiveViewFollowsTheWatchesAsAFreshLookSeesIt) {
  for (const char* node : {"n", "m", "k"}) PutNode(node);
  Replica r{"svc", 8, 1, 100.1, 10};
  auto at = [&](const std::string& node) {
    return InstanceRef{{node, 0}, &A100(), seven_};
  };
  PutReadyPod("a", r, at("n"));
  PutReadyPod("b", r, at("m"));
  ASSERT_TRUE(backend_->Live().has_value());
  std::optional<LiveView> live = backend_->Live();  // starts the watches
  ASSERT_TRUE(live.has_value());
  int version = live->gpus_version;
  EXPECT_DOUBLE_EQ(live->capacity->at("svc"), 200.2);

  PutReadyPod("c", r, at("k"));
  ASSERT_TRUE(client_->Delete(std::string(kPods) + "/a").ok());
  ASSERT_TRUE(client_->Delete("/api/v1/nodes/n").ok());
  PutNode("new");
  const mig::Instance three_a{A100().FindProfile("3g.40gb"), 0};
  const mig::Instance three_b{A100().FindProfile("3g.40gb"), 4};
  NodeLayouts split{{{&A100(), mig::Layout({three_a, three_b})}}};
  server_.Update("/api/v1/nodes/m", [&](json* node) {
    (*node)["metadata"]["annotations"][kAnnotationLayouts] =
        FormatLayouts(split);
  });
  auto describe = [](const ClusterState& state) {
    std::string out;
    for (const GpuState& g : state.gpus) {
      out += g.id.ToString() + ":";
      for (const Slot& s : g.slots) {
        out += " " + std::to_string(s.instance.start) +
               (s.replica ? "=" + s.replica->service : "");
      }
      out += "\n";
    }
    return out;
  };
  BackendOptions options;
  options.partition = agent_.get();
  KubernetesBackend fresh(client_.get(), options);
  ClusterState want = fresh.Observe().value();
  ASSERT_EQ(describe(want), "k/0: 0=svc\nm/0: 0 4\nnew/0: 0\n");
  for (int i = 0;
       i < 500 && describe(*backend_->Live()->state) != describe(want); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  live = backend_->Live();
  EXPECT_EQ(describe(*live->state), describe(want));
  EXPECT_EQ(*live->capacity, want.Capacity());
  EXPECT_NE(live->gpus_version, version);
}

}  // namespace
}  // namespace migserve::kubernetes
