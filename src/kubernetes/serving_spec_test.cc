#include "kubernetes/serving_spec.h"

#include <gtest/gtest.h>

#include "kubernetes/cluster_model.h"

namespace migserve::kubernetes {
namespace {

constexpr char kSpec[] = R"(namespace: serving
routing:
  gateway: {name: inference, namespace: gateways, sectionName: http}
  match: header
  hostnames: [models.example.com]
template:
  image: registry.example.com/triton:24.08
  command: [/bin/sh, -c]
  args: ["exec tritonserver --model-repository=/models"]
  env:
    - {name: LOG_VERBOSE, value: "1"}
  ports:
    - {name: grpc, containerPort: 8001}
    - {name: http, containerPort: 8000}
  readinessProbe:
    httpGet: {path: /v2/health/ready, port: http}
    periodSeconds: 2
  resources:
    requests: {cpu: "4", memory: 16Gi}
  volumeMounts: [{name: models, mountPath: /models}]
  volumes: [{name: models, persistentVolumeClaim: {claimName: models}}]
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  labels: {team: search}
services:
  bert-1:
    image: registry.example.com/triton:24.08-bert
    labels: {team: nlp}
    securityContext: {runAsNonRoot: true, runAsUser: 2000}
)";

TEST(ServingSpecTest, ReadsTheTemplateAndServiceOverrides) {
  auto spec = ParseServingSpec(kSpec, "serving.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->namespace_, "serving");
  ASSERT_TRUE(spec->gateway);
  EXPECT_EQ(spec->gateway->name, "inference");
  EXPECT_EQ(spec->gateway->namespace_, "gateways");
  EXPECT_EQ(spec->gateway->section_name, "http");
  EXPECT_EQ(spec->match, RouteMatch::kHeader);
  EXPECT_EQ(spec->hostnames, std::vector<std::string>{"models.example.com"});
  const auto& pod = spec->pod;
  EXPECT_EQ(pod["image"], "registry.example.com/triton:24.08");
  EXPECT_EQ(pod["args"][0], "exec tritonserver --model-repository=/models");
  // Plain scalars that are numbers become numbers; quoted ones stay text.
  EXPECT_EQ(pod["readinessProbe"]["periodSeconds"], 2);
  EXPECT_EQ(pod["readinessProbe"]["httpGet"]["port"], "http");
  EXPECT_EQ(pod["resources"]["requests"]["cpu"], "4");
  EXPECT_EQ(pod["resources"]["requests"]["memory"], "16Gi");
  EXPECT_EQ(pod["env"][0]["value"], "1");
  EXPECT_EQ(pod["volumes"][0]["persistentVolumeClaim"]["claimName"], "models");
  // The port named http, not the first.
  EXPECT_EQ(spec->RoutePort("bert-1"), 8000);
  auto bert = spec->TemplateFor("bert-1");
  EXPECT_EQ(bert["image"], "registry.example.com/triton:24.08-bert");
  EXPECT_EQ(bert["labels"]["team"], "nlp");
  EXPECT_EQ(bert["args"], pod["args"]);
  EXPECT_EQ(spec->TemplateFor("other")["labels"]["team"], "search");
  // The default pod security context, unless replaced whole.
  EXPECT_EQ(pod["securityContext"]["runAsUser"], 1000);
  EXPECT_EQ(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
  EXPECT_EQ(
      bert["securityContext"],
      (nlohmann::ordered_json{{"runAsNonRoot", true}, {"runAsUser", 2000}}));
  EXPECT_TRUE(
      spec->UnusedOverrides({"bert-1", "resnet50-1"}, "d.json").empty());
  EXPECT_EQ(spec->UnusedOverrides({"bert-2", "resnet50-1"}, "d.json"),
            std::vector<std::string>{
                "serving.yaml:25: services.bert-1: no service bert-1 in "
                "d.json (it has: bert-2, resnet50-1)"});
}

TEST(ServingSpecTest, AnEmptySpecIsTheDefaultTemplateWithoutRoutes) {
  auto spec = ParseServingSpec("{}", "empty.yaml");
  ASSERT_TRUE(spec.ok());
  EXPECT_FALSE(spec->gateway);
  EXPECT_EQ(spec->match, RouteMatch::kPath);
  EXPECT_EQ(spec->pod, ServingSpec::DefaultTemplate());
  EXPECT_EQ(spec->RoutePort("any"), 8000);
}

// Each kind its engine's template (issue 75: a mixed workload took
// per-service overrides by hand): the built-in vLLM template for `llm`
// under the built-in default; `templates:` by kind name, each kind's
// fields over its engine's built-in template; the spec's own `template:`
// for every kind `templates:` does not name; an unknown kind refused with
// the kinds there are.
TEST(ServingSpecTest, LanguageModelsGetTheLlmTemplate) {
  const workload::ServiceKind llm = *workload::ParseServiceKind("llm");
  ServingSpec empty = ParseServingSpec("{}", "empty.yaml").value();
  EXPECT_EQ(empty.TemplateFor("chat")["image"], kTritonImage);  // no kind
  empty.kinds["chat"] = llm;
  EXPECT_EQ(empty.TemplateFor("chat"), ServingSpec::VllmTemplate());
  EXPECT_EQ(empty.TemplateFor("vision")["image"], kTritonImage);
  auto spec = ParseServingSpec(
      "template: {image: registry/triton:1}\n"
      "templates:\n"
      "  llm:\n"
      "    image: registry/vllm:2\n"
      "    ports: [{name: http, containerPort: 9000}]\n",
      "both.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  spec->kinds["chat"] = llm;
  nlohmann::ordered_json chat = spec->TemplateFor("chat");
  EXPECT_EQ(chat["image"], "registry/vllm:2");
  EXPECT_EQ(chat["command"], ServingSpec::VllmTemplate()["command"]);
  EXPECT_EQ(spec->RoutePort("chat"), 9000);
  EXPECT_EQ(spec->RoutePort("vision"), 8000);
  auto own = ParseServingSpec("template: {image: registry/any:1}\n", "o.yaml");
  ASSERT_TRUE(own.ok());
  own->kinds["chat"] = llm;
  EXPECT_EQ(own->TemplateFor("chat")["image"], "registry/any:1");
  auto dnn =
      ParseServingSpec("templates: {dnn: {image: registry/t:3}}\n", "d.yaml");
  ASSERT_TRUE(dnn.ok()) << dnn.status().ToString();
  dnn->kinds["chat"] = llm;
  EXPECT_EQ(dnn->TemplateFor("vision")["image"], "registry/t:3");
  EXPECT_EQ(dnn->TemplateFor("vision")["ports"],
            ServingSpec::DefaultTemplate()["ports"]);
  EXPECT_EQ(dnn->TemplateFor("chat"), ServingSpec::VllmTemplate());
  auto unknown =
      ParseServingSpec("templates:\n  lm: {image: registry/v:1}\n", "u.yaml");
  EXPECT_EQ(unknown.status().message(),
            "u.yaml:2: templates.lm: no service kind lm (the kinds: dnn (the "
            "default) or llm)");
}

// Triton's image without a command would start a shell and serve nothing:
// it gets the default server command; an image of the user's own keeps its
// entrypoint, and a command given is kept.
TEST(ServingSpecTest, TritonWithoutACommandServesTheReplicasModel) {
  auto spec = ParseServingSpec(
      "services:\n"
      "  own: {image: example.com/server:1}\n"
      "  given: {command: [/bin/serve]}\n"
      "  moved: {ports: [{name: http, containerPort: 9000}]}\n",
      "s.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  nlohmann::ordered_json triton = spec->TemplateFor("any");
  EXPECT_EQ(triton["command"], nlohmann::ordered_json::array({"tritonserver"}));
  EXPECT_EQ(triton["args"][2], "--load-model=$(MIGSERVE_MODEL)");
  EXPECT_EQ(triton["args"][3], "--http-port=8000");
  EXPECT_EQ(triton["args"][4], "--grpc-port=8001");
  EXPECT_EQ(triton["args"][5], "--metrics-port=8002");
  EXPECT_EQ(triton["resources"]["requests"]["memory"], "4Gi");
  EXPECT_FALSE(spec->TemplateFor("own").contains("command"));
  EXPECT_FALSE(spec->TemplateFor("own").contains("args"));
  EXPECT_EQ(spec->TemplateFor("given")["command"],
            nlohmann::ordered_json::array({"/bin/serve"}));
  EXPECT_FALSE(spec->TemplateFor("given").contains("args"));
  // Triton listens where the template's ports say: one http port, 9000.
  nlohmann::ordered_json moved = spec->TemplateFor("moved")["args"];
  EXPECT_EQ(moved[3], "--http-port=9000");
  EXPECT_EQ(moved.size(), 5u) << moved.dump();
}

TEST(ServingSpecTest, RefusesBadSpecsNamingLineAndField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"template:\n  imag: x\n", "s.yaml:2: template.imag: unknown field"},
      {"template:\n  env:\n    - {name: MIGSERVE_BATCH, value: '1'}\n",
       "s.yaml:3: template.env: env[0]: MIGSERVE_BATCH is set by migserve"},
      {"template:\n  env:\n    - {value: '1'}\n",
       "s.yaml:3: template.env[0].name: missing"},
      {"template:\n  ports:\n    - {name: http, containerPort: 70000}\n",
       "s.yaml:3: template.ports[0].containerPort: must be 1 to 65535"},
      {"template:\n  ports: []\n",
       "s.yaml:2: template.ports: needs at least one port"},
      {"template:\n  resources:\n    limits: {nvidia.com/gpu: 1}\n",
       "s.yaml:3: template.resources.limits: nvidia.com/gpu: migserve "
       "requests"},
      {"template:\n  resources:\n    claims: []\n",
       "s.yaml:3: template.resources.claims: unknown field"},
      {"template:\n  labels: {migserve.io/service: x}\n",
       "template.labels.migserve.io/service: migserve.io/service is set by "
       "migserve"},
      {"template:\n  labels: {team: 'a b'}\n",
       "s.yaml:2: template.labels.team: value \"a b\" is not a Kubernetes "
       "label value"},
      {"template:\n  nodeSelector: {kubernetes.io/hostname: n}\n",
       "template.nodeSelector.kubernetes.io/hostname: migserve pins each"},
      {"template:\n  command: {a: b}\n",
       "s.yaml:2: template.command: expected a list of strings"},
      {"template:\n  readinessProbe: [1]\n",
       "s.yaml:2: template.readinessProbe: expected a mapping"},
      {"routing:\n  match: host\n",
       "s.yaml:2: routing.match: expected path or header, got host"},
      {"routing:\n  gateway: {namespace: g}\n",
       "s.yaml:2: routing.gateway.name: missing"},
      {"namespace: Serving_1\n",
       "s.yaml:1: namespace: Serving_1 is not a DNS label"},
      {"services:\n  bert-1:\n    volumez: []\n",
       "s.yaml:3: services.bert-1.volumez: unknown field"},
      // vLLM would answer 404 to every name but this one (issue 89).
      {"templates:\n  llm:\n    args: [serve, "
       "'--served-model-name=$(MIGSERVE_SERVICE)']\n",
       "s.yaml:3: templates.llm.args: "
       "'--served-model-name=$(MIGSERVE_SERVICE)' "
       "serves one name, but the proxy routes the service's name, its model "
       "and the model's aliases to it: write --served-model-name and "
       "$(MIGSERVE_SERVED_MODEL_NAMES) as two words"},
      {"template: [\n", "s.yaml:"},
  };
  for (const Case& c : cases) {
    auto spec = ParseServingSpec(c.yaml, "s.yaml");
    ASSERT_FALSE(spec.ok()) << c.yaml;
    EXPECT_NE(spec.status().message().find(c.error), std::string::npos)
        << c.yaml << " gave: " << spec.status().message();
  }
}

}  // namespace
}  // namespace migserve::kubernetes
