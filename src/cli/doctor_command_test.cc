// `migserve doctor` against the stand-in API server: one line per check,
// exit 1 while something will not work, 0 once it is mended.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "kube/testing/api_server_standin.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

// A kubeconfig file `name` for `server`, its user `user` (YAML).
std::string Kubeconfig(const kube::ApiServerStandIn& server,
                       const std::string& name, const std::string& user) {
  return testing::WriteTempFile(
      name,
      "current-context: c\ncontexts:\n- name: c\n  context: {cluster: c, "
      "user: u}\nclusters:\n- name: c\n  cluster: {server: '" +
          server.url() + "'}\nusers:\n- name: u\n  user: " + user + "\n");
}

// The GPU Operator's ClusterPolicy: MIG strategy mixed, the MIG manager on
// the ConfigMap custom-mig-config.
void PutClusterPolicy(kube::ApiServerStandIn* server) {
  server->Put(
      "/apis/nvidia.com/v1/clusterpolicies/cluster-policy",
      {{"metadata", {{"name", "cluster-policy"}}},
       {"spec",
        {{"mig", {{"strategy", "mixed"}}},
         {"migManager", {{"config", {{"name", "custom-mig-config"}}}}}}}});
}

TEST(DoctorCliTest, NamesWhatWillNotWorkUntilItIsMended) {
  kube::ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  std::string kubeconfig = Kubeconfig(server, "doctor-kubeconfig", "{}");
  PutClusterPolicy(&server);
  server.Put(
      "/apis/apps/v1/namespaces/gpu-operator/daemonsets/nvidia-mig-manager",
      {{"metadata", {{"labels", {{"app", "nvidia-mig-manager"}}}}}});
  server.Put("/api/v1/nodes/gpu-0",
             {{"metadata",
               {{"name", "gpu-0"},
                {"labels", {{"nvidia.com/mig.capable", "true"}}}}}});
  CliResult r = Cli({"doctor", "--kubeconfig", kubeconfig});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out,
            "ok: ClusterPolicy cluster-policy: MIG strategy mixed\n"
            "problem: node gpu-0: no nvidia.com/mig.config label, so the MIG "
            "manager applies nothing (kubectl label node gpu-0 "
            "nvidia.com/mig.config=<config>)\n"
            "ok: no node's GPUs are partitioned by NVIDIA's DRA driver "
            "(DynamicMIG)\n");
  EXPECT_EQ(r.err, "migserve: doctor: 1 problem\n");

  server.Update("/api/v1/nodes/gpu-0", [](nlohmann::json* node) {
    (*node)["metadata"]["labels"]["nvidia.com/mig.config"] = "all-disabled";
  });
  r = Cli({"doctor", "--kubeconfig", kubeconfig});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("ok: node gpu-0: nvidia.com/mig.config=all-disabled"),
            std::string::npos)
      << r.out;

  // The same cluster has no DRA driver: not ready for --partitioner dra.
  r = Cli({"doctor", "--kubeconfig", kubeconfig, "--partitioner", "dra"});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(
      r.out,
      "ok: resource.k8s.io/v1 is served\n"
      "problem: no ResourceSlice of NVIDIA's DRA driver (gpu.nvidia.com): "
      "install it (the GPU Operator's DRA mode or the driver's Helm "
      "chart)\n");
  EXPECT_EQ(
      Cli({"doctor", "--kubeconfig", kubeconfig, "--partitioner", "x"}).code,
      2);
}

// Under DRA with -d: the driver's slices must offer a device for every
// instance the deployment places (issue 92: slices that offered only other
// profiles passed).
TEST(DoctorCliTest, UnderDraTheSlicesMustOfferEveryPlannedInstance) {
  kube::ApiServerStandIn server({"", "", "", 1});
  ASSERT_TRUE(server.Start().ok());
  std::string kubeconfig = Kubeconfig(server, "doctor-dra-kubeconfig", "{}");
  nlohmann::json slices = nlohmann::json::parse(
      ReadFile(testing::SourcePath("src/kubernetes/testdata/night-dra/"
                                   "resource-slices.json"))
          .value());
  auto put = [&](const nlohmann::json& list) {
    for (const nlohmann::json& slice : list["items"]) {
      server.Put("/apis/resource.k8s.io/v1/resourceslices/" +
                     slice["metadata"]["name"].get<std::string>(),
                 slice);
    }
  };
  put(slices);
  server.Put("/apis/resource.k8s.io/v1/deviceclasses/mig.nvidia.com",
             {{"metadata", {{"name", "mig.nvidia.com"}}}});
  const std::string night = testing::SourcePath("data/deployments/night.json");
  CliResult r = Cli({"doctor", "--kubeconfig", kubeconfig, "--partitioner",
                     "dra", "-d", night});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok: the driver's slices offer a device for every "
                       "instance the deployment places\n"),
            std::string::npos)
      << r.out;
  // GPU 3's slice offers 3g.40gb at start 0 only.
  for (nlohmann::json& slice : slices["items"]) {
    nlohmann::json& devices = slice["spec"]["devices"];
    for (size_t i = 0; i < devices.size(); ++i) {
      if (devices[i]["name"] == "gpu-3-mig-3g40gb-9-4") devices.erase(i);
    }
  }
  put(slices);
  r = Cli({"doctor", "--kubeconfig", kubeconfig, "--partitioner", "dra", "-d",
           night});
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.out.find("problem: resourceslices: GPU 3 of node node-0: "
                       "ResourceSlice node-0-gpu.nvidia.com-3 offers no device "
                       "gpu-3-mig-3g40gb-9-4 for the deployment's 3g.40gb at "
                       "start 4"),
            std::string::npos)
      << r.out;
}

// The read-only ClusterRole the install ships (deploy/base/rbac.yaml,
// migserve-viewer) is all doctor needs: a user bound to it alone runs every
// check of every partitioner, and asks only for reads (issue 90: no
// read-only role shipped).
TEST(DoctorCliTest, RunsWithTheShippedViewerRoleAlone) {
  kube::ApiServerStandIn server(
      {"", "", "admin-token", 1, {{"viewer-token", "alice"}}});
  ASSERT_TRUE(server.Start().ok());
  ASSERT_TRUE(server.ApplyShipped("deploy/base/rbac.yaml").ok());
  server.Put(
      "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/alice-viewer",
      {{"metadata", {{"name", "alice-viewer"}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"},
         {"kind", "ClusterRole"},
         {"name", "migserve-viewer"}}},
       {"subjects", {{{"kind", "User"}, {"name", "alice"}}}}});
  PutClusterPolicy(&server);
  server.Put("/api/v1/nodes/gpu-0",
             {{"metadata",
               {{"name", "gpu-0"},
                {"labels",
                 {{"nvidia.com/mig.capable", "true"},
                  {"nvidia.com/mig.config", "all-disabled"}}}}}});
  std::string kubeconfig =
      Kubeconfig(server, "doctor-viewer-kubeconfig", "{token: viewer-token}");
  for (const char* partitioner : {"gpu-operator", "agent", "dra"}) {
    CliResult r =
        Cli({"doctor", "--kubeconfig", kubeconfig, "--insecure-loopback-http",
             "--partitioner", partitioner});
    EXPECT_NE(r.code, 2) << partitioner << ": " << r.err;
    EXPECT_EQ(r.err.find("403"), std::string::npos)
        << partitioner << ": " << r.err;
  }
  std::set<std::string> asked;
  for (const kube::RbacRequest& q : server.Authorized()) {
    if (q.user == "alice") asked.insert(q.verb);
  }
  EXPECT_FALSE(asked.empty());
  for (const std::string& verb : asked) {
    EXPECT_TRUE(verb == "get" || verb == "list" || verb == "watch") << verb;
  }
}

}  // namespace
}  // namespace migserve::cli
