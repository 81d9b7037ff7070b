// Events as the API server takes them: in their object's namespace, those
// of a cluster-scoped object (a Node) in "default"; the stand-in refuses
// the others as a real API server does (422, "does not match
// event.namespace"), and a sink says which event it could not record.
#include "kube/event_recorder.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "kube/testing/api_server_standin.h"

namespace migserve::kube {
namespace {

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderTest() : server_({"", "", "admin"}) {}

  void SetUp() override {
    ASSERT_TRUE(server_.Start().ok());
    client_.emplace(server_.ClientConfig("default", "admin"));
  }

  ApiServerStandIn server_;
  std::optional<KubeClient> client_;
};

TEST_F(EventRecorderTest, AnEventLivesInItsObjectsNamespace) {
  EventRecorder pod(&*client_,
                    {{"apiVersion", "v1"},
                     {"kind", "Pod"},
                     {"name", "proxy-0"},
                     {"namespace", "ns"}},
                    "migserve-router");
  ASSERT_TRUE(
      pod.Record(EventType::kNormal, "RoutesApplied", "generation 1").ok());
  std::vector<nlohmann::json> events =
      server_.List("/api/v1/namespaces/ns/events");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "Normal");
  EXPECT_EQ(events[0]["reason"], "RoutesApplied");
  EXPECT_EQ(events[0]["source"]["component"], "migserve-router");
  EXPECT_EQ(events[0]["involvedObject"]["name"], "proxy-0");

  // A Node's, in "default".
  nlohmann::json node = {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"name", "gpu-0"}};
  EXPECT_TRUE(EventRecorder(&*client_, node, "migserve-agent")
                  .Record(EventType::kNormal, "Repartitioned", "GPU 0")
                  .ok());
  EXPECT_EQ(server_.List("/api/v1/namespaces/default/events").size(), 1u);
}

// The stand-in takes Events only where the API server does.
TEST_F(EventRecorderTest, TheStandInRefusesAnEventElsewhere) {
  nlohmann::json event = {
      {"metadata", {{"generateName", "gpu-0."}}},
      {"involvedObject", {{"kind", "Node"}, {"name", "gpu-0"}}},
      {"type", "Normal"},
      {"reason", "Repartitioned"}};
  Status node =
      client_->Create("/api/v1/namespaces/migserve/events", event).status();
  EXPECT_NE(node.message().find(
                "involvedObject.namespace: Invalid value: \"\": does not "
                "match event.namespace"),
            std::string::npos)
      << node.ToString();
  event["involvedObject"] = {
      {"kind", "Pod"}, {"name", "p"}, {"namespace", "ns"}};
  EXPECT_FALSE(client_->Create("/api/v1/namespaces/other/events", event).ok());
  EXPECT_TRUE(client_->Create("/api/v1/namespaces/ns/events", event).ok());
}

TEST_F(EventRecorderTest, ASinkLogsWhatItCouldNotRecord) {
  EventRecorder recorder(&*client_,
                         {{"kind", "Pod"}, {"name", "p"}, {"namespace", "ns"}},
                         "migserve-agent");
  std::vector<std::string> log;
  EventSink sink =
      recorder.Sink([&](const std::string& line) { log.push_back(line); });
  server_.FailNext(2, 403);  // both tries below refused
  sink(EventType::kWarning, "RepartitionFailed", "GPU 0: busy");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].rfind("migserve-agent: event RepartitionFailed not "
                         "recorded: ",
                         0),
            0u)
      << log[0];
  // With no log, a failure is dropped.
  recorder.Sink(nullptr)(EventType::kWarning, "RepartitionFailed", "again");
}

}  // namespace
}  // namespace migserve::kube
