// Hostile inputs, table-driven: hundreds of broken, absurd or malicious
// files and flags, each run through the command that reads it, in-process.
// Every case's exit code and first line of stderr are kept in a golden
// table per surface (testdata/hostile/<surface>.txt, reviewed when it
// changes; MIGSERVE_UPDATE_GOLDEN=1 rewrites it): a crash fails the test
// binary, a hang its ctest timeout, and a silent wrong answer or an unclear
// error is a line of the table that reads wrong.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "boundary/input_file.h"
#include "cli/cli_test_util.h"
#include "util/file.h"
#include "util/test_util.h"

namespace migserve::cli {
namespace {

using testing::SourcePath;

// One run: the files written to a fresh folder, then `args`, in which
// "{name}" is the path of the case's file `name` (or of its output), "{P}"
// the shipped A100 profiles, "{day}", "{night}" the shipped deployments and
// "{night.yaml}" night's workload.
struct Case {
  std::string name;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> args;
};

std::string Substitute(std::string arg, const std::string& dir) {
  const std::map<std::string, std::string> fixed = {
      {"{P}", SourcePath("data/profiles/a100-80gb.csv")},
      {"{day}", SourcePath("data/deployments/day.json")},
      {"{night}", SourcePath("data/deployments/night.json")},
      {"{night.yaml}", SourcePath("data/workloads/night.yaml")}};
  for (const auto& [key, path] : fixed) {
    if (arg == key) return path;
  }
  if (arg.size() > 2 && arg.front() == '{' && arg.back() == '}') {
    return dir + "/" + arg.substr(1, arg.size() - 2);
  }
  return arg;
}

// The case's line of the table: name, exit code, first line of stderr (on
// failure the first error line, past progress and warnings) with the folder and
// the source tree left out and timings blanked.
std::string Run(const Case& c, const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& [name, text] : c.files) {
    std::filesystem::path path = dir + "/" + name;
    std::filesystem::create_directories(path.parent_path());
    EXPECT_TRUE(WriteFileAtomic(path, text).ok()) << c.name;
  }
  std::vector<std::string> args;
  for (const std::string& a : c.args) args.push_back(Substitute(a, dir));
  CliResult r = Cli(args);
  // The error, past progress and warnings before it; else the first line.
  std::string first = r.err.substr(0, r.err.find('\n'));
  std::istringstream lines(r.err);
  for (std::string line; r.code != 0 && std::getline(lines, line);) {
    if ((line.rfind("migserve: ", 0) == 0 || line.rfind("--", 0) == 0) &&
        line.rfind("migserve: warning:", 0) != 0) {
      first = line;
      break;
    }
  }
  for (const std::string& prefix : {dir + "/", SourcePath("")}) {
    for (size_t at; (at = first.find(prefix)) != std::string::npos;) {
      first.erase(at, prefix.size());
    }
  }
  first = std::regex_replace(first, std::regex("[0-9]+\\.[0-9]+ s\\b"), "T s");
  return fmt::format("{}\t{}\t{}\n", c.name, r.code, first);
}

// Runs `cases` and compares their lines with the surface's golden table;
// says how the surface held: the cases accepted (exit 0: each line of the
// table says whether that was right), refused as bad input (2) and failed
// (1). A crash ends the binary and a hang its ctest timeout, so a table
// that is compared has neither.
void ExpectTable(const std::string& surface, const std::vector<Case>& cases) {
  std::string dir = testing::TempDir() + "/" + surface;
  std::string text;
  std::map<std::string, int> by_code;
  for (size_t k = 0; k < cases.size(); ++k) {
    std::string line = Run(cases[k], fmt::format("{}/{}", dir, k));
    size_t code = line.find('\t') + 1;
    ++by_code[line.substr(code, line.find('\t', code) - code)];
    text += line;
  }
  std::cerr << fmt::format(
      "hostile: {}: {} cases, 0 crashes, 0 hangs: {} accepted, {} refused as "
      "bad input, {} failed\n",
      surface, cases.size(), by_code["0"], by_code["2"], by_code["1"]);
  std::string path = SourcePath("src/cli/testdata/hostile/" + surface + ".txt");
  if (std::getenv("MIGSERVE_UPDATE_GOLDEN") != nullptr) {
    ASSERT_TRUE(WriteFileAtomic(path, text).ok());
  }
  auto golden = ReadFile(path);
  ASSERT_TRUE(golden.ok()) << golden.status().ToString();
  // Line by line, so that a failure shows the case.
  std::istringstream want(*golden), got(text);
  for (std::string w, g; want.good() || got.good();) {
    w.clear();
    g.clear();
    std::getline(want, w);
    std::getline(got, g);
    EXPECT_EQ(g, w) << "differs from " << path
                    << " (MIGSERVE_UPDATE_GOLDEN=1 to rewrite)";
  }
}

// ---------------------------------------------------------------- workload

// A one-service workload, one field per line so errors name it; `top` is
// added after the GPU line, `service` replaces a line of the service.
std::string Workload(const std::string& top = "",
                     const std::map<std::string, std::string>& service = {}) {
  std::map<std::string, std::string> fields = {{"name", "r"},
                                               {"model", "resnet50"},
                                               {"throughput", "3000"},
                                               {"latency_ms", "100"}};
  for (const auto& [key, value] : service) fields[key] = value;
  std::string text = "gpu: A100-SXM4-80GB\n" + top + "services:\n";
  const char* dash = "  - ";
  for (const auto& [key, value] : fields) {
    text += fmt::format("{}{}: {}\n", dash, key, value);
    dash = "    ";
  }
  return text;
}

Case Optimize(const std::string& name, const std::string& workload,
              const std::string& profiles = "{P}") {
  std::vector<std::pair<std::string, std::string>> files = {
      {"w.yaml", workload}};
  std::string p = profiles;
  if (profiles != "{P}") {
    files.push_back({"p.csv", profiles});
    p = "{p.csv}";
  }
  return {
      name, files, {"optimize", "-w", "{w.yaml}", "-p", p, "--algo", "greedy"}};
}

const std::vector<std::string> kBadNumbers = {
    ".nan", ".inf", "-.inf",  "-1",   "0",      "1e309",
    "abc",  "[1]",  "{a: 1}", "\"\"", "1e-320", "true"};

std::vector<Case> WorkloadNumberCases() {
  std::vector<Case> cases;
  for (const char* field : {"latency_budget", "router_replicas", "arrival_cv",
                            "headroom", "max_procs"}) {
    for (const std::string& v : kBadNumbers) {
      cases.push_back(Optimize(fmt::format("{}={}", field, v),
                               Workload(fmt::format("{}: {}\n", field, v))));
    }
  }
  for (const std::string& v : kBadNumbers) {
    cases.push_back(
        Optimize("survive.keep=" + v,
                 Workload("survive:\n  domain: gpu\n  keep: " + v + "\n")));
  }
  for (const char* field : {"throughput", "latency_ms", "min_replicas"}) {
    for (const std::string& v : kBadNumbers) {
      cases.push_back(Optimize(fmt::format("services.{}={}", field, v),
                               Workload("", {{field, v}})));
    }
  }
  return cases;
}

std::vector<Case> WorkloadNameCases() {
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, std::string>> names = {
      {"nul", "\"a\\0b\""},     {"escape", "\"\\e[31mred\""},
      {"newline", "\"a\\nb\""}, {"tab", "\"a\\tb\""},
      {"empty", "\"\""},        {"long", std::string(300, 'a')},
      {"slash", "a/b"},         {"dotdot", "../x"},
      {"space", "\"a b\""},     {"unicode", "\"r\\u00e9sum\\u00e9\""},
      {"leading-dash", "-x"},   {"upper", "Resnet"},
      {"number", "12"},         {"list", "[a]"},
  };
  for (const auto& [label, value] : names) {
    cases.push_back(Optimize("name=" + label, Workload("", {{"name", value}})));
    cases.push_back(
        Optimize("model=" + label, Workload("", {{"model", value}})));
  }
  cases.push_back(Optimize(
      "two services of one name",
      "gpu: A100-SXM4-80GB\nservices:\n"
      "  - {name: r, model: resnet50, throughput: 30, latency_ms: "
      "100}\n"
      "  - {name: r, model: bert, throughput: 30, latency_ms: 100}\n"));
  cases.push_back(
      Optimize("unknown model", Workload("", {{"model", "resnet5000"}})));
  return cases;
}

std::vector<Case> WorkloadShapeCases() {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    bomb += fmt::format(
        "{}: &{} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, "
        "*{p}, *{p}, *{p}]\n",
        c, c, fmt::arg("p", std::string(1, c - 1)));
  }
  // More services than the optimizers number (kMaxServices): the greedy
  // crashed on 200,000 (issue 76's region-scale run).
  std::string many = "gpu: A100-SXM4-80GB\nservices:\n";
  for (int k = 0; k < 65536; ++k) {
    many += fmt::format(
        "  - {{name: s{}, model: resnet50, throughput: 1, "
        "latency_ms: 100}}\n",
        k);
  }
  std::string deep = "gpu: A100-SXM4-80GB\nx: " + std::string(70, '[') +
                     std::string(70, ']') + "\n" + Workload().substr(20);
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"alias bomb", bomb + Workload()},
      {"duplicate top key", "gpu: A100-SXM4-80GB\n" + Workload()},
      {"duplicate service key", Workload("", {{"name", "r\n    name: s"}})},
      {"nesting 70", deep},
      {"tab indent", "gpu: A100-SXM4-80GB\nservices:\n\t- name: r\n"},
      {"unterminated quote", "gpu: \"A100\nservices: []\n"},
      {"unterminated flow", "gpu: A100-SXM4-80GB\nservices: [{name: r\n"},
      {"a list", "- gpu\n- services\n"},
      {"a scalar", "hello\n"},
      {"empty", ""},
      {"comments only", "# nothing\n# here\n"},
      {"binary", std::string("\xff\xfe\x00\x01gpu", 7)},
      {"utf-8 bom", "\xef\xbb\xbf" + Workload()},
      {"services not a list", "gpu: A100-SXM4-80GB\nservices: 3\n"},
      {"no services", "gpu: A100-SXM4-80GB\nservices: []\n"},
      {"service a scalar", "gpu: A100-SXM4-80GB\nservices:\n  - r\n"},
      {"unknown top field", Workload("gpux: 1\n")},
      {"unknown service field", Workload("", {{"throughptu", "1"}})},
      {"unknown gpu", "gpu: A100-SXM9\n" + Workload().substr(20)},
      {"no gpu", Workload().substr(20)},
      {"gpu and gpus",
       Workload("gpus:\n  - {name: A100-SXM4-80GB, cost: 1}\n")},
      {"gpu a list", "gpu: [A100-SXM4-80GB]\n" + Workload().substr(20)},
      {"fleet cost nan", "gpus:\n  - {name: A100-SXM4-80GB, cost: .nan}\n" +
                             Workload().substr(20)},
      {"fleet cost 1e308", "gpus:\n  - {name: A100-SXM4-80GB, cost: 1e308}\n" +
                               Workload().substr(20)},
      {"fleet gpu twice",
       "gpus:\n  - {name: A100-SXM4-80GB}\n  - {name: A100-80GB}\n" +
           Workload().substr(20)},
      {"65,536 services", many},
      {"router unknown", Workload("router: carrier-pigeon\n")},
      {"capacity model unknown", Workload("capacity_model: p100\n")},
      {"survive domain unknown",
       Workload("survive: {domain: rack, keep: 0.5}\n")},
      {"observe query empty", Workload("", {{"observe", "{rate: \"\"}"}})},
      {"observe unknown key",
       Workload("", {{"observe", "{rate: up, p50_ms: up}"}})},
      {"anchors within bounds",
       "gpu: A100-SXM4-80GB\nservices:\n"
       "  - {name: r, model: &m resnet50, throughput: 30, latency_ms: &l 100}\n"
       "  - {name: s, model: *m, throughput: 30, latency_ms: *l}\n"},
      // A ServingWorkload manifest is read as its spec (issue 90).
      {"manifest of another kind",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingTarget\n"
       "metadata: {name: t}\nspec: {}\n"},
      {"manifest of another group",
       "apiVersion: example.com/v1\nkind: ServingWorkload\n"
       "metadata: {name: t}\nspec: {}\n"},
      {"manifest without a spec",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w}\n"},
      {"manifest spec a list",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w}\nspec: [a]\n"},
      {"manifest without a name",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {}\nspec: {}\n"},
      {"manifest name with a slash",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: a/b}\nspec: {}\n"},
      {"manifest namespace with a newline",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w, namespace: \"a\\nb\"}\nspec: {}\n"},
      {"manifest generation 1.5",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w, generation: 1.5}\nspec: {}\n"},
      {"manifest generation 1e300",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w, generation: 1e300}\nspec: {}\n"},
      {"manifest unknown top field",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w}\nspex: {}\nspec: {}\n"},
      {"manifest bad service",
       "apiVersion: migserve.io/v1alpha1\nkind: ServingWorkload\n"
       "metadata: {name: w, namespace: n, generation: 2}\nspec:\n"
       "  gpu: A100-SXM4-80GB\n"
       "  services: [{name: r, model: resnet50, throughput: -1, "
       "latency_ms: 100}]\n"},
      {"10k services of one name",
       [] {
         std::string w = "gpu: A100-SXM4-80GB\nservices:\n";
         for (int k = 0; k < 10000; ++k) {
           w += "  - {name: r, model: resnet50, throughput: 1, latency_ms: "
                "100}\n";
         }
         return w;
       }()},
  };
  std::vector<Case> cases;
  for (const auto& [label, text] : texts) {
    cases.push_back(Optimize(label, text));
  }
  cases.push_back(
      {"missing file", {}, {"optimize", "-w", "{none.yaml}", "-p", "{P}"}});
  cases.push_back(
      {"a folder", {{"d/x", ""}}, {"optimize", "-w", "{d}", "-p", "{P}"}});
  return cases;
}

// ------------------------------------------------------------- profile CSV

std::string ProfileRow(const std::map<std::string, std::string>& change) {
  std::map<std::string, std::string> row = {
      {"model", "resnet50"},  {"gpu", "A100-SXM4-80GB"},
      {"profile", "1g.10gb"}, {"batch", "8"},
      {"procs", "1"},         {"throughput", "500"},
      {"latency_ms", "15"},   {"memory_gb", "5"}};
  for (const auto& [key, value] : change) row[key] = value;
  return fmt::format("{},{},{},{},{},{},{},{}\n", row["model"], row["gpu"],
                     row["profile"], row["batch"], row["procs"],
                     row["throughput"], row["latency_ms"], row["memory_gb"]);
}

constexpr const char* kProfileHeader =
    "model,gpu,profile,batch,procs,throughput,latency_ms,memory_gb\n";

std::vector<Case> ProfileCases() {
  std::string small = Workload("", {{"throughput", "300"}});
  std::vector<Case> cases;
  for (const char* column :
       {"batch", "procs", "throughput", "latency_ms", "memory_gb"}) {
    for (const char* v : {"nan", "inf", "-1", "0", "1e309", "abc", "1.5", "",
                          "1e-320", "0x10", "\"8\""}) {
      cases.push_back(Optimize(fmt::format("{}={}", column, v), small,
                               kProfileHeader + ProfileRow({{column, v}})));
    }
  }
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"no throughput column",
       "model,gpu,profile,batch,latency_ms\nresnet50,A100-SXM4-80GB,1g.10gb,"
       "8,15\n"},
      {"a column twice",
       "model,gpu,profile,batch,batch,throughput,latency_ms\n"
       "resnet50,A100-SXM4-80GB,1g.10gb,8,8,500,15\n"},
      {"an extra column",
       "note," + std::string(kProfileHeader) + "x," + ProfileRow({})},
      {"unknown gpu", kProfileHeader + ProfileRow({{"gpu", "V100"}})},
      {"unknown profile",
       kProfileHeader + ProfileRow({{"profile", "9g.90gb"}})},
      {"profile too small for memory",
       kProfileHeader + ProfileRow({{"memory_gb", "40"}})},
      {"short row", std::string(kProfileHeader) + "resnet50,A100-SXM4-80GB\n"},
      {"long row", kProfileHeader + ProfileRow({}).substr(0, 44) + ",1,2,3\n"},
      {"unterminated quote", std::string(kProfileHeader) +
                                 "\"resnet50,A100-SXM4-80GB,1g.10gb,8,1,"
                                 "500,15,5\n"},
      {"crlf",
       "model,gpu,profile,batch,procs,throughput,latency_ms,"
       "memory_gb\r\n" +
           ProfileRow({}).substr(0, ProfileRow({}).size() - 1) + "\r\n"},
      {"bom", "\xef\xbb\xbf" + std::string(kProfileHeader) + ProfileRow({})},
      {"empty", ""},
      {"header only", kProfileHeader},
      {"nul byte", std::string(kProfileHeader) + std::string("res\0net", 7) +
                       ProfileRow({}).substr(8)},
      {"the same row twice",
       kProfileHeader + ProfileRow({}) + ProfileRow({{"throughput", "600"}})},
      {"model measured elsewhere",
       kProfileHeader + ProfileRow({{"gpu", "H100-SXM5-80GB"}})},
      {"model name with escape",
       kProfileHeader + ProfileRow({{"model", "\x1b[31mresnet50"}})},
      {"latency over every slo",
       kProfileHeader + ProfileRow({{"latency_ms", "5000"}})},
  };
  for (const auto& [label, text] : texts) {
    cases.push_back(Optimize(label, small, text));
  }
  return cases;
}

// ---------------------------------------------------------- deployment JSON

using Mutation = std::function<void(nlohmann::json*)>;

nlohmann::json& First(nlohmann::json* d) {
  return (*d)["gpus"][0]["instances"][0];
}

std::vector<std::pair<std::string, Mutation>> DeploymentMutations() {
  std::vector<std::pair<std::string, Mutation>> m;
  auto set = [&](const std::string& label, const char* key,
                 nlohmann::json value) {
    m.push_back(
        {label, [key, value](nlohmann::json* d) { First(d)[key] = value; }});
  };
  for (auto [label, v] : {std::pair{"1e308", nlohmann::json(1e308)},
                          {"-1", nlohmann::json(-1)},
                          {"2e9", nlohmann::json(2e9)},
                          {"a string", nlohmann::json("x")},
                          {"null", nlohmann::json(nullptr)},
                          {"99999 (more than its row)", nlohmann::json(99999)},
                          {"150 (more than measured)", nlohmann::json(150)}}) {
    set(fmt::format("throughput={}", label), "throughput", v);
  }
  for (auto [label, v] : {std::pair{"0", nlohmann::json(0)},
                          {"-1", nlohmann::json(-1)},
                          {"1.5", nlohmann::json(1.5)},
                          {"1e10", nlohmann::json(1e10)},
                          {"a string", nlohmann::json("8")}}) {
    set(fmt::format("batch={}", label), "batch", v);
  }
  set("procs=0", "procs", 0);
  set("procs=2000", "procs", 2000);
  set("latency_ms=-1", "latency_ms", -1);
  set("latency_ms=1e8", "latency_ms", 1e8);
  set("start=-1", "start", -1);
  set("start=9", "start", 9);
  set("start=1.5", "start", 1.5);
  set("profile=9g.90gb", "profile", "9g.90gb");
  set("profile empty", "profile", "");
  set("profile with escape", "profile", "1g.10gb\x1b[0m");
  set("service unknown", "service", "zz");
  set("service empty", "service", "");
  set("service with nul", "service", std::string("bert\0-1", 7));
  set("service a number", "service", 5);
  auto gpu = [&](const std::string& label, const char* key,
                 nlohmann::json value) {
    m.push_back({label, [key, value](nlohmann::json* d) {
                   (*d)["gpus"][0][key] = value;
                 }});
  };
  gpu("id=-1", "id", -1);
  gpu("id=1e20", "id", 1e20);
  gpu("id a string", "id", "0");
  gpu("gpu unknown", "gpu", "X100");
  gpu("gpu empty", "gpu", "");
  gpu("index=-1", "index", -1);
  gpu("node with newline", "node", "node\nB");
  gpu("instances an object", "instances", nlohmann::json::object());
  m.push_back({"id twice", [](nlohmann::json* d) {
                 (*d)["gpus"][1]["id"] = (*d)["gpus"][0]["id"];
               }});
  m.push_back({"overlapping instances", [](nlohmann::json* d) {
                 auto& list = (*d)["gpus"][0]["instances"];
                 list.push_back(list[0]);
               }});
  m.push_back({"gpus missing", [](nlohmann::json* d) { d->erase("gpus"); }});
  m.push_back({"gpus an object", [](nlohmann::json* d) {
                 (*d)["gpus"] = nlohmann::json::object();
               }});
  m.push_back({"survive keep 0", [](nlohmann::json* d) {
                 (*d)["survive"] = {{"domain", "gpu"}, {"keep", 0}};
               }});
  m.push_back({"survive keep 2", [](nlohmann::json* d) {
                 (*d)["survive"] = {{"domain", "gpu"}, {"keep", 2}};
               }});
  m.push_back({"summary status unknown", [](nlohmann::json* d) {
                 (*d)["summary"] = {{"status", "great"}};
               }});
  m.push_back({"summary router unknown", [](nlohmann::json* d) {
                 (*d)["summary"] = {{"router", "pigeon"}};
               }});
  m.push_back({"summary workload generation 0", [](nlohmann::json* d) {
                 (*d)["summary"] = {
                     {"workload", {{"name", "ns/w"}, {"generation", 0}}}};
               }});
  m.push_back({"summary workload unknown key", [](nlohmann::json* d) {
                 (*d)["summary"] = {
                     {"workload",
                      {{"name", "ns/w"}, {"generation", 1}, {"owner", "x"}}}};
               }});
  m.push_back({"summary workload a string", [](nlohmann::json* d) {
                 (*d)["summary"] = {{"workload", "ns/w"}};
               }});
  m.push_back({"service rate -1", [](nlohmann::json* d) {
                 (*d)["services"][0]["throughput"] = -1;
               }});
  m.push_back({"service min_replicas 0", [](nlohmann::json* d) {
                 (*d)["services"][0]["min_replicas"] = 0;
               }});
  m.push_back({"service name twice", [](nlohmann::json* d) {
                 (*d)["services"].push_back((*d)["services"][0]);
               }});
  return m;
}

std::vector<Case> DeploymentCases() {
  nlohmann::json night = nlohmann::json::parse(
      ReadFile(SourcePath("data/deployments/night.json")).value());
  std::vector<Case> cases;
  for (const auto& [label, mutate] : DeploymentMutations()) {
    nlohmann::json d = night;
    mutate(&d);
    std::string text = d.dump(1);
    cases.push_back(
        {"plan: " + label,
         {{"d.json", text}},
         {"plan", "--from", "{night}", "--to", "{d.json}", "-p", "{P}"}});
    cases.push_back({"export: " + label,
                     {{"d.json", text}},
                     {"export", "-d", "{d.json}", "-o", "{out}"}});
  }
  std::string text =
      ReadFile(SourcePath("data/deployments/night.json")).value();
  const std::vector<std::pair<std::string, std::string>> raw = {
      {"truncated", text.substr(0, text.size() / 2)},
      {"trailing garbage", text + "}"},
      {"a list", "[]"},
      {"a string", "\"night\""},
      {"empty", ""},
      {"nested 100000", std::string(100000, '[') + std::string(100000, ']')},
      {"NaN literal", "{\"gpu\": NaN}"},
      {"a key twice",
       "{\"gpu\": \"A100-SXM4-80GB\", \"gpu\": \"X\", "
       "\"gpus\": []}"},
      {"a nested key twice",
       "{\n  \"gpu\": \"A100-SXM4-80GB\",\n  \"gpus\": [\n    {\"id\": 0,\n"
       "     \"instances\": [], \"id\": 1}]\n}\n"},
      {"invalid utf-8", "{\"gpu\": \"\xff\xfe\", \"gpus\": []}"},
      {"comments", "// night\n" + text},
  };
  for (const auto& [label, body] : raw) {
    cases.push_back({"plan: " + label,
                     {{"d.json", body}},
                     {"plan", "--from", "{night}", "--to", "{d.json}"}});
  }
  nlohmann::json inflated = night;
  First(&inflated)["throughput"] = 150;
  cases.push_back(
      {"validate: more than measured",
       {{"d.json", inflated.dump(1)}},
       {"validate", "-w", "{night.yaml}", "-p", "{P}", "-d", "{d.json}"}});
  cases.push_back({"optimize: -o is the input",
                   {{"w.yaml", Workload()}},
                   {"optimize", "-w", "{w.yaml}", "-p", "{P}", "--algo",
                    "greedy", "-o", "{w.yaml}"}});
  return cases;
}

// ------------------------------------------------------------ rate trace

Case Replay(const std::string& name, const std::string& trace,
            std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"replay", "--trace",           "{t.csv}",
                                   "-w",     "{w.yaml}",          "-p",
                                   "{P}",    "--oracle-interval", "600"};
  args.insert(args.end(), extra.begin(), extra.end());
  return {name, {{"t.csv", trace}, {"w.yaml", Workload()}}, args};
}

std::vector<Case> TraceCases() {
  auto two = [](const std::string& t0, const std::string& r0,
                const std::string& t1, const std::string& r1) {
    return fmt::format("time_s,service,rate\n{},r,{}\n{},r,{}\n", t0, r0, t1,
                       r1);
  };
  std::vector<Case> cases;
  for (const char* v : {"nan", "inf", "-1", "1e309", "abc", "", "1e-320", "0",
                        "-0", "2e9", "0x10", "1,000"}) {
    cases.push_back(
        Replay(fmt::format("first rate={}", v), two("0", v, "600", "3000")));
    cases.push_back(
        Replay(fmt::format("later rate={}", v), two("0", "3000", "600", v)));
  }
  for (const char* v : {"nan", "inf", "-1", "1e309", "abc", "", "1.5e3"}) {
    cases.push_back(
        Replay(fmt::format("time={}", v), two("0", "3000", v, "3000")));
  }
  const std::vector<std::pair<std::string, std::string>> texts = {
      {"time goes back",
       "time_s,service,rate\n0,r,3000\n600,r,3000\n300,r,"
       "3000\n"},
      {"a service twice at one time",
       "time_s,service,rate\n0,r,3000\n0,r,4000\n600,r,3000\n"},
      {"unknown service", "time_s,service,rate\n0,r,3000\n0,q,5\n600,r,1\n"},
      {"a service missing at the start",
       "time_s,service,rate\n0,q,1\n600,r,3000\n"},
      {"wrong header", "time,service,rate\n0,r,3000\n600,r,3000\n"},
      {"empty", ""},
      {"header only", "time_s,service,rate\n"},
      {"one moment", "time_s,service,rate\n0,r,3000\n"},
      {"service with escape",
       "time_s,service,rate\n0,r\x1b[2J,3000\n600,r,3000\n"},
      {"a year of one service",
       "time_s,service,rate\n0,r,3000\n31536000,r,"
       "3000\n"},
      // Work bounded by the input (issue 92: it ran on for ever).
      {"a billion seconds",
       "time_s,service,rate\n0,r,3000\n1000000000,r,3000\n"},
  };
  for (const auto& [label, text] : texts) cases.push_back(Replay(label, text));
  return cases;
}

// --------------------------------------------------------------- flags

std::vector<Case> FlagCases() {
  const std::vector<std::string> bad = {"nan", "inf", "-1", "1e309", "abc", ""};
  std::vector<Case> cases;
  auto add = [&](const Case& base, const char* flag) {
    for (const std::string& v : bad) {
      Case c = base;
      c.name = fmt::format("{} {}={}", base.args[0], flag, v);
      c.args.push_back(flag);
      c.args.push_back(v);
      cases.push_back(c);
    }
  };
  Case optimize = Optimize("", Workload());
  for (const char* flag : {"--time-limit", "--seed", "--threads", "--max-gpus",
                           "--almost-satisfied", "--mcts-top-k",
                           "--ga-population", "--milp-gap"}) {
    add(optimize, flag);
  }
  Case replay = Replay("", "time_s,service,rate\n0,r,3000\n600,r,3000\n");
  for (const char* flag :
       {"--oracle-interval", "--max-gpus", "--interval", "--window",
        "--quantile", "--up-step", "--up-limit", "--down-limit", "--headroom",
        "--cooldown", "--start-cost"}) {
    add(replay, flag);
  }
  Case plan{"", {}, {"plan", "--from", "{day}", "--to", "{night}"}};
  for (const char* flag : {"--spare-gpus", "--nodes", "--gpus-per-node"}) {
    add(plan, flag);
  }
  Case simulate{"", {}, {"simulate", "--from", "{day}", "--to", "{night}"}};
  for (const char* flag :
       {"--jitter", "--create-s", "--repartition-s", "--seed"}) {
    add(simulate, flag);
  }
  // More services than a workload may hold (issue 92: generate ran on and
  // wrote nothing, where optimize refuses such a workload at once).
  cases.push_back({"generate --services=200000",
                   {},
                   {"generate", "-p", "{P}", "--services", "200000"}});
  Case serve{
      "", {}, {"serve", "-d", "{night}", "-w", "{night.yaml}", "-p", "{P}"}};
  for (const char* flag : {"--load", "--cv", "--duration", "--router-replicas",
                           "--max-queue-delay"}) {
    add(serve, flag);
  }
  return cases;
}

// ------------------------------------------------ inventory, serving, GPUs

std::vector<Case> OtherFileCases() {
  std::vector<Case> cases;
  auto inventory = [&](const std::string& label, const std::string& text) {
    cases.push_back({"inventory: " + label,
                     {{"i.yaml", text}},
                     {"plan", "--from", "{day}", "--to", "{night}",
                      "--inventory", "{i.yaml}"}});
  };
  for (const char* v : {"0", "-1", "65", "1.5", "abc", "1e309"}) {
    inventory(fmt::format("gpus={}", v),
              fmt::format("nodes:\n  - {{name: a, gpu: A100-SXM4-80GB, "
                          "gpus: {}}}\n",
                          v));
  }
  inventory("a node twice",
            "nodes:\n  - {name: a, gpu: A100-SXM4-80GB, gpus: 8}\n"
            "  - {name: a, gpu: A100-SXM4-80GB, gpus: 8}\n");
  inventory("unknown gpu", "nodes:\n  - {name: a, gpu: X, gpus: 8}\n");
  inventory("name with escape",
            "nodes:\n  - {name: \"a\\e[2J\", gpu: A100-SXM4-80GB, gpus: 8}\n");
  inventory("nodes a map", "nodes: {a: 8}\n");
  inventory("no nodes", "nodes: []\n");
  inventory("too small",
            "nodes:\n  - {name: a, gpu: A100-SXM4-80GB, gpus: "
            "1}\n");

  auto serving = [&](const std::string& label, const std::string& text) {
    cases.push_back(
        {"serving: " + label,
         {{"s.yaml", text}},
         {"export", "-d", "{night}", "--serving", "{s.yaml}", "-o", "{out}"}});
  };
  serving("namespace with slash", "namespace: a/b\n");
  serving("namespace upper case", "namespace: Prod\n");
  serving("image with newline", "template:\n  image: \"a\\nb\"\n");
  serving("port 70000",
          "template:\n  ports: [{name: http, containerPort: 70000}]\n");
  serving("port nan",
          "template:\n  ports: [{name: http, containerPort: "
          ".nan}]\n");
  serving("unknown field", "namspace: x\n");
  serving("gateway name with space",
          "routing:\n  gateway: {name: \"a b\", namespace: g}\n");
  serving("unknown match",
          "routing:\n  gateway: {name: g, namespace: g}\n"
          "  match: cookie\n");
  serving("a service override for no service",
          "services:\n  nobody: {labels: {a: b}}\n");
  serving("label with newline",
          "services:\n  bert-1: {labels: {a: \"b\\nc\"}}\n");

  // Each table under a name of its own: a table is added to the process's
  // catalog, and the cases share one process.
  auto table = [&](const std::string& label, const std::string& text) {
    std::string name = fmt::format("T4G-{}", cases.size());
    cases.push_back(
        {"gpu table: " + label,
         {{"g.yaml", std::regex_replace(text, std::regex("T4G"), name)}},
         {"gpus", "--gpu-table", "{g.yaml}"}});
  };
  const std::string head =
      "name: T4G\nproducts: [{pci_device_id: 0x1, name: T}]\n"
      "compute_slices: 4\nmemory_slices: 4\nmemory_gb: 24\nprofiles:\n";
  const std::string one =
      "  - {name: 1g.6gb, nvml_id: 14, compute_slices: 1, memory_slices: 1, "
      "memory_gb: 5.8, starts: [0, 1, 2, 3]}\n";
  table("well formed", head + one);
  table("compute slices 0",
        std::regex_replace(head, std::regex("compute_slices: 4"),
                           "compute_slices: 0") +
            one);
  table("a start past the end",
        head + std::regex_replace(one, std::regex("3\\]"), "9]"));
  table("memory nan",
        head + std::regex_replace(one, std::regex("5\\.8"), ".nan"));
  table("a profile twice", head + one + one);
  table("name of a shipped gpu",
        std::regex_replace(head, std::regex("T4G"), "A100-SXM4-80GB") + one);
  table("name with escape",
        std::regex_replace(head, std::regex("T4G"), "\"T\\e[2J\"") + one);
  table("no profiles", head + "  []\n");
  table("more memory than the gpu",
        head + std::regex_replace(one, std::regex("5\\.8"), "500"));
  table("pci id a word",
        std::regex_replace(head, std::regex("0x1"), "zero") + one);
  return cases;
}

// Language models' inputs (issue 76): a workload's token terms and LLM
// tables, and the benchmark results `import vllm-bench` and `import aiperf`
// read.
std::vector<Case> LlmInputCases() {
  std::vector<Case> cases;
  // One LLM service with `fields` in place of its terms; validated against
  // the shipped profiles (a credit search only where the terms parse and
  // the slice can hold them).
  auto terms = [&](const std::string& label, const std::string& fields,
                   const std::string& model = "llama-3.1-8b") {
    cases.push_back(
        {"terms: " + label,
         {{"w.yaml",
           "gpu: A100-SXM4-80GB\nservices:\n  - {name: chat, model: " + model +
               ", kind: llm, throughput: 1, " + fields + "}\n"}},
         {"optimize", "-q", "-w", "{w.yaml}", "-p", "{P}", "--algo", "whole",
          "-o", "{out}"}});
  };
  const std::string ok =
      "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, output_tokens: 128";
  for (const char* v : {"0", "-1", ".nan", ".inf", "1e308", "abc"}) {
    terms(fmt::format("ttft_ms {}", v),
          fmt::format("ttft_ms: {}, tpot_ms: 100, prompt_tokens: 512, "
                      "output_tokens: 128",
                      v));
    terms(fmt::format("prompt_tokens {}", v),
          fmt::format("ttft_ms: 2000, tpot_ms: 100, prompt_tokens: {}, "
                      "output_tokens: 128",
                      v));
  }
  terms("no tpot_ms", "ttft_ms: 2000, prompt_tokens: 512, output_tokens: 128");
  terms("output_tokens 1e8",
        "ttft_ms: 2000, tpot_ms: 100, prompt_tokens: 512, "
        "output_tokens: 1e8");
  terms("prompt_cv 11", ok + ", prompt_cv: 11");
  terms("output_cv -0.5", ok + ", output_cv: -0.5");
  terms("prefix_cache_hit_rate 1", ok + ", prefix_cache_hit_rate: 1");
  terms("max_model_len 0", ok + ", max_model_len: 0");
  terms("max_model_len past the context", ok + ", max_model_len: 9000000");
  terms("max_model_len a word", ok + ", max_model_len: long");
  terms("max_model_len below the requests", ok + ", max_model_len: 100");
  terms("a model the table lacks", ok, "llama-9-900b");
  terms("a model with an escape", ok, "\"llama\\e[2J\"");
  terms("a dnn model as a language model", ok, "resnet50");
  for (const auto& [label, service] :
       {std::pair<std::string, std::string>{
            "kind in capitals",
            "{name: chat, model: llama-3.1-8b, kind: LLM, throughput: 1, " +
                ok + "}"},
        {"token terms without kind: llm",
         "{name: chat, model: resnet50, throughput: 1, latency_ms: 100, " + ok +
             "}"}}) {
    cases.push_back(
        {"terms: " + label,
         {{"w.yaml", "gpu: A100-SXM4-80GB\nservices:\n  - " + service + "\n"}},
         {"optimize", "-q", "-w", "{w.yaml}", "-p", "{P}", "--algo", "whole",
          "-o", "{out}"}});
  }

  // A workload whose `key` names `name`, written with `text` unless that
  // is empty (a path that is there already: a device, a directory).
  auto tables = [&](const std::string& label, const std::string& key,
                    const std::string& name, const std::string& text) {
    Case c{label,
           {{"w.yaml", "gpu: A100-SXM4-80GB\n" + key + ": " + name +
                           "\nservices:\n  - {name: chat, model: "
                           "llama-3.1-8b, kind: llm, throughput: 1, " +
                           ok + "}\n"}},
           {"optimize", "-q", "-w", "{w.yaml}", "-p", "{P}", "--algo", "whole",
            "-o", "{out}"}};
    if (!text.empty()) c.files.push_back({name, text});
    cases.push_back(std::move(c));
  };
  tables("llm_models: not YAML", "llm_models", "m.yaml", "models: [\n");
  tables("llm_models: a model with no layers", "llm_models", "m.yaml",
         "models:\n  - {name: tiny, params_b: 1}\n");
  tables("llm_models: /dev/zero", "llm_models", "/dev/zero", "");
  tables("llm_measurements: a header only", "llm_measurements", "m.csv",
         "model,gpu,profile\n");
  tables("llm_measurements: not CSV", "llm_measurements", "m.csv",
         "\x01\x02\x03\n");
  tables("llm_measurements: a directory", "llm_measurements", ".", "");

  // A deployment whose LLM replica declares `rate` req/s, its own latency
  // lowered with it (issue 76: only validate -p recomputed; now every
  // command holds an LLM replica to its slice's peaks).
  auto declared = [&](const std::string& label, double rate, double ms) {
    const std::string d = fmt::format(
        R"({{"gpu": "A100-SXM4-80GB", "services": [{{"name": "chat",
  "model": "llama-3.1-8b", "kind": "llm", "throughput": 2, "latency_ms": 60000,
  "ttft_ms": 2000, "tpot_ms": 100, "prompt_tokens": 512, "output_tokens": 128}}],
  "gpus": [{{"id": 0, "instances": [{{"profile": "3g.40gb", "start": 4,
  "service": "chat", "batch": 256, "procs": 1, "throughput": {},
  "latency_ms": {}}}]}}]}})",
        rate, ms);
    cases.push_back(
        {"deployment: " + label,
         {{"d.json", d}},
         {"plan", "--from", "{d.json}", "--to", "{d.json}", "-o", "{out}"}});
    cases.push_back({"deployment, export: " + label,
                     {{"d.json", d}},
                     {"export", "-d", "{d.json}", "-o", "{out}"}});
  };
  declared("an LLM replica as credited", 2.5, 5000);
  declared("an LLM replica past its slice's peaks", 1e6, 0.001);

  // A vLLM benchmark result with `fields` changed (null: removed).
  const nlohmann::json bench = {{"model_id", "meta-llama/Llama-3.1-8B"},
                                {"request_rate", 1.0},
                                {"completed", 500},
                                {"failed", 0},
                                {"total_input_tokens", 512000},
                                {"total_output_tokens", 128000},
                                {"request_throughput", 1.0},
                                {"output_throughput", 250.0},
                                {"median_ttft_ms", 80.0},
                                {"median_tpot_ms", 20.0}};
  auto vllm = [&](const std::string& label, const nlohmann::json& change) {
    nlohmann::json run = bench;
    for (const auto& [key, value] : change.items()) {
      if (value.is_null()) {
        run.erase(key);
      } else {
        run[key] = value;
      }
    }
    cases.push_back(
        {"vllm-bench: " + label,
         {{"r.json", run.dump()}},
         {"import", "vllm-bench", "{r.json}", "--gpu", "A100-SXM4-80GB",
          "--profile", "3g.40gb", "-o", "{out}"}});
  };
  vllm("as measured", nlohmann::json::object());
  vllm("no model id", {{"model_id", nullptr}});
  vllm("a model id the table lacks", {{"model_id", "acme/Giant-900B"}});
  vllm("a model id with a newline", {{"model_id", "meta-llama/Llama\n3.1-8B"}});
  vllm("completed 0", {{"completed", 0}});
  vllm("all but one failed", {{"completed", 1}, {"failed", 499}});
  vllm("negative throughput", {{"output_throughput", -250.0}});
  vllm("throughput a string", {{"output_throughput", "fast"}});
  vllm("ttft nan", {{"median_ttft_ms", "NaN"}});
  vllm("tpot 0", {{"median_tpot_ms", 0.0}});
  vllm("tokens 1e300", {{"total_output_tokens", 1e300}});
  vllm("faster than the slice's peak", {{"output_throughput", 2.5e6}});
  nlohmann::json z100 = bench;
  z100["gpu"] = "Z100";
  z100["profile"] = "3g.40gb";
  cases.push_back({"vllm-bench: a gpu in the file no table knows",
                   {{"r.json", z100.dump()}},
                   {"import", "vllm-bench", "{r.json}", "-o", "{out}"}});
  cases.push_back({"vllm-bench: not JSON",
                   {{"r.json", "{\"model_id\": "}},
                   {"import", "vllm-bench", "{r.json}", "--gpu",
                    "A100-SXM4-80GB", "--profile", "3g.40gb", "-o", "{out}"}});
  cases.push_back(
      {"vllm-bench: nested a thousand deep",
       {{"r.json", std::string(1000, '[') + std::string(1000, ']')}},
       {"import", "vllm-bench", "{r.json}", "--gpu", "A100-SXM4-80GB",
        "--profile", "3g.40gb", "-o", "{out}"}});
  // Read through the boundary's reader (issue 92: the last of two keys
  // was taken, and a number past a double's range said "not a JSON
  // object").
  cases.push_back({"vllm-bench: a key given twice",
                   {{"r.json", "{\"completed\": 500, \"completed\": 5}"}},
                   {"import", "vllm-bench", "{r.json}", "--gpu",
                    "A100-SXM4-80GB", "--profile", "3g.40gb", "-o", "{out}"}});
  cases.push_back(
      {"vllm-bench: a 400-digit integer",
       {{"r.json", "{\"completed\": " + std::string(400, '9') + "}"}},
       {"import", "vllm-bench", "{r.json}", "--gpu", "A100-SXM4-80GB",
        "--profile", "3g.40gb", "-o", "{out}"}});
  cases.push_back({"vllm-bench: an unknown profile",
                   {{"r.json", bench.dump()}},
                   {"import", "vllm-bench", "{r.json}", "--gpu",
                    "A100-SXM4-80GB", "--profile", "9g.900gb", "-o", "{out}"}});
  cases.push_back({"aiperf: not JSON",
                   {{"a.json", "[1, 2"}},
                   {"import", "aiperf", "{a.json}", "--gpu", "A100-SXM4-80GB",
                    "--profile", "3g.40gb", "-o", "{out}"}});
  cases.push_back({"aiperf: an empty object",
                   {{"a.json", "{}"}},
                   {"import", "aiperf", "{a.json}", "--gpu", "A100-SXM4-80GB",
                    "--profile", "3g.40gb", "-o", "{out}"}});
  cases.push_back(
      {"aiperf: a rate per fortnight",
       {{"a.json",
         R"({"input_config": {"model_names": ["meta-llama/Llama-3.1-8B"]},
  "request_throughput": {"unit": "requests/fortnight", "avg": 3},
  "output_token_throughput": {"unit": "tokens/sec", "avg": 250},
  "time_to_first_token": {"unit": "ms", "avg": 80},
  "inter_token_latency": {"unit": "ms", "avg": 20}})"}},
       {"import", "aiperf", "{a.json}", "--gpu", "A100-SXM4-80GB", "--profile",
        "3g.40gb", "-o", "{out}"}});
  return cases;
}

// The proxy's addresses (issue 76): a replica's address and ports as
// `router --render` reads them (the same checked Endpoint a pod's status
// makes in the router), and the listeners its flags give. Nothing here may
// reach nginx.conf: each is refused naming line and column, or flag.
std::vector<Case> ProxyAddressCases() {
  std::vector<Case> cases;
  const std::string head = "service,node,gpu,start,address,port,grpc_port\n";
  auto row = [&](const std::string& label, const std::string& text,
                 std::vector<std::string> flags = {}) {
    Case c{"replicas: " + label,
           {{"r.csv", head + text}},
           {"router", "--render", "-d", "{day}", "--replicas", "{r.csv}",
            "--run-dir", "{run}", "-o", "{out}"}};
    c.args.insert(c.args.end(), flags.begin(), flags.end());
    cases.push_back(c);
  };
  row("well formed", "bert-1,node-0,0,0,10.0.0.1,8000,8001\n");
  row("ipv6 address", "bert-1,node-0,0,0,fd00::17,8000,8001\n");
  for (const char* address :
       {"\"127.0.0.1:18503; } server { listen 18097; }\"", "10.0.0.1;",
        "\"10.0.0.1 10.0.0.2\"", "$host", "h{", "", "#x", "\"'q'\""}) {
    row(fmt::format("address {}", address),
        fmt::format("bert-1,node-0,0,0,{},8000,8001\n", address));
  }
  for (const char* port :
       {"0", "-1", "65536", "99999999", "80.5", "0x50", "1e3", "nan", ""}) {
    row(fmt::format("port {}", port),
        fmt::format("bert-1,node-0,0,0,10.0.0.1,{},8001\n", port));
    row(fmt::format("grpc port {}", port),
        fmt::format("bert-1,node-0,0,0,10.0.0.1,8000,{}\n", port));
  }
  for (const char* service : {"bert;1", "\"bert 1\"", "Bert-1", "-b"}) {
    row(fmt::format("service {}", service),
        fmt::format("{},node-0,0,0,10.0.0.1,8000,8001\n", service));
  }
  row("a site twice",
      "bert-1,node-0,0,0,10.0.0.1,8000,8001\n"
      "bert-1,node-0,0,0,10.0.0.2,8000,8001\n");
  row("start past the gpu", "bert-1,node-0,0,99,10.0.0.1,8000,8001\n");
  for (const char* listen :
       {"0.0.0.0:80; } server { listen 18097", "80;", "::1:80", "h:0",
        "h:123456", "a b:80", "", "[::1]:80"}) {
    row(fmt::format("--listen {}", listen),
        "bert-1,node-0,0,0,10.0.0.1,8000,8001\n", {"--listen", listen});
    row(fmt::format("--grpc-listen {}", listen),
        "bert-1,node-0,0,0,10.0.0.1,8000,8001\n", {"--grpc-listen", listen});
  }
  const std::pair<const char*, const char*> run_dirs[] = {
      {"a directive", "/tmp/a; } server { listen 18097"},
      {"a space", "/tmp/a b"},
      {"a variable", "/tmp/$x"},
      {"a newline", "/tmp/a\nb"},
      {"a comment", "/tmp/#x"},
      {"a quote", "/tmp/a\"b"}};
  for (const auto& [label, dir] : run_dirs) {
    cases.push_back(
        {fmt::format("--run-dir with {}", label),
         {{"r.csv", head + "bert-1,node-0,0,0,10.0.0.1,8000,8001\n"}},
         {"router", "--render", "-d", "{day}", "--replicas", "{r.csv}",
          "--run-dir", dir, "-o", "{out}"}});
  }
  return cases;
}

// The cases each test runs, by surface.
const std::vector<std::pair<std::string, std::function<std::vector<Case>()>>>&
Surfaces() {
  static const auto* surfaces = new std::vector<
      std::pair<std::string, std::function<std::vector<Case>()>>>{
      {"workload-numbers", WorkloadNumberCases},
      {"workload-names", WorkloadNameCases},
      {"workload-shape", WorkloadShapeCases},
      {"profiles", ProfileCases},
      {"deployments", DeploymentCases},
      {"traces", TraceCases},
      {"flags", FlagCases},
      {"other-files", OtherFileCases},
      {"llm-inputs", LlmInputCases},
      {"proxy-addresses", ProxyAddressCases},
  };
  return *surfaces;
}

std::vector<Case> CasesOf(const std::string& surface) {
  for (const auto& [name, cases] : Surfaces()) {
    if (name == surface) return cases();
  }
  return {};
}

TEST(HostileInputsTest, AtLeastFourHundredCases) {
  size_t total = 0;
  for (const auto& [name, cases] : Surfaces()) total += cases().size();
  EXPECT_GE(total, 400u);
}

TEST(HostileInputsTest, WorkloadNumbers) {
  ExpectTable("workload-numbers", CasesOf("workload-numbers"));
}
TEST(HostileInputsTest, WorkloadNames) {
  ExpectTable("workload-names", CasesOf("workload-names"));
}
TEST(HostileInputsTest, WorkloadShape) {
  ExpectTable("workload-shape", CasesOf("workload-shape"));
}
TEST(HostileInputsTest, Profiles) {
  ExpectTable("profiles", CasesOf("profiles"));
}
TEST(HostileInputsTest, Deployments) {
  ExpectTable("deployments", CasesOf("deployments"));
}
TEST(HostileInputsTest, Traces) { ExpectTable("traces", CasesOf("traces")); }
TEST(HostileInputsTest, Flags) { ExpectTable("flags", CasesOf("flags")); }
TEST(HostileInputsTest, OtherFiles) {
  ExpectTable("other-files", CasesOf("other-files"));
}
TEST(HostileInputsTest, LlmInputs) {
  ExpectTable("llm-inputs", CasesOf("llm-inputs"));
}
TEST(HostileInputsTest, ProxyAddresses) {
  ExpectTable("proxy-addresses", CasesOf("proxy-addresses"));
}

}  // namespace
}  // namespace migserve::cli
