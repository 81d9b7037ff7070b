// The informer against the stand-in API server: it follows a collection
// through its watch without listing again, answers looks from its cache
// without a request, and lists again when the server has compacted the
// version it watches from (changes the watch can no longer deliver).
#include "kube/informer.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "kube/testing/api_server_standin.h"

namespace migserve::kube {
namespace {

using nlohmann::json;

constexpr char kWatchedPods[] = "/api/v1/namespaces/ns/pods";
constexpr char kSelected[] = "labelSelector=app%3Dweb";

json Pod(const std::string& app) {
  return {{"metadata", {{"labels", {{"app", app}}}}}};
}

class InformerTest : public ::testing::Test {
 protected:
  InformerTest() : server_({"", "", "", 1}) {
    EXPECT_TRUE(server_.Start().ok());
    KubeConfig config;
    config.server = server_.url();
    client_ = std::make_unique<KubeClient>(config, RetryPolicy{1, 0, 5});
  }

  void Put(const std::string& name, const std::string& app) {
    server_.Put(std::string(kWatchedPods) + "/" + name, Pod(app));
  }

  // Compacts the history with pod `gone` deleted and a web pod `added`
  // put: changes no watch delivers, only a new listing shows.
  void ExpireReplacing(const std::string& gone, const std::string& added) {
    server_.Expire([&](std::map<std::string, json>* objects) {
      objects->erase(std::string(kWatchedPods) + "/" + gone);
      json pod = Pod("web");
      pod["metadata"]["name"] = added;
      (*objects)[std::string(kWatchedPods) + "/" + added] = pod;
    });
  }

  // The names the informer holds once they are `want`, or after 10 s.
  std::set<std::string> NamesOnceThey(Informer* informer,
                                      const std::set<std::string>& want) {
    std::set<std::string> names;
    for (int i = 0; i < 1000; ++i) {
      names.clear();
      Informer::Objects objects = informer->Get().value();
      for (const auto& [name, pod] : objects) names.insert(name);
      if (names == want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return names;
  }

  ApiServerStandIn server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(InformerTest, FollowsTheWatchAndAnswersFromTheCache) {
  Put("a", "web");
  Put("b", "web");
  Put("other", "db");
  int changes = 0;
  std::mutex mu;
  Informer informer(client_.get(), kWatchedPods, kSelected, 1, [&] {
    std::lock_guard lock(mu);
    ++changes;
  });
  EXPECT_EQ(NamesOnceThey(&informer, {"a", "b"}),
            (std::set<std::string>{"a", "b"}));
  EXPECT_EQ(informer.lists(), 1);
  informer.Get().value();  // lists again and starts watching
  EXPECT_EQ(informer.lists(), 2);
  Put("c", "web");
  Put("d", "db");
  ASSERT_TRUE(client_->Delete(std::string(kWatchedPods) + "/a").ok());
  server_.Update(std::string(kWatchedPods) + "/b",
                 [](json* pod) { (*pod)["status"]["phase"] = "Running"; });
  EXPECT_EQ(NamesOnceThey(&informer, {"b", "c"}),
            (std::set<std::string>{"b", "c"}));
  for (int i = 0; i < 100 && informer.Get().value()["b"].count("status") == 0;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(informer.Get().value()["b"]["status"]["phase"], "Running");
  // Looks cost no request; the watch was renewed (each lasts 1 s here),
  // never replaced by a listing.
  long requests = client_->requests();
  for (int i = 0; i < 100; ++i) informer.Get().value();
  EXPECT_LE(client_->requests() - requests, 1);
  EXPECT_EQ(informer.lists(), 2);
  std::lock_guard lock(mu);
  EXPECT_GE(changes, 2 + 3);  // two listings, c added, a deleted, b changed
}

TEST_F(InformerTest, ListsAgainWhenItsVersionIsCompacted) {
  Put("a", "web");
  Informer informer(client_.get(), kWatchedPods, kSelected, 1);
  informer.Get().value();
  informer.Get().value();
  Put("b", "web");
  ASSERT_EQ(NamesOnceThey(&informer, {"a", "b"}),
            (std::set<std::string>{"a", "b"}));
  // Changes no watch delivers: only a new listing shows them.
  ExpireReplacing("a", "e");
  EXPECT_EQ(NamesOnceThey(&informer, {"b", "e"}),
            (std::set<std::string>{"b", "e"}));
  EXPECT_EQ(informer.lists(), 3);
  // And it watches again from the new listing.
  Put("f", "web");
  EXPECT_EQ(NamesOnceThey(&informer, {"b", "e", "f"}),
            (std::set<std::string>{"b", "e", "f"}));
  EXPECT_EQ(informer.lists(), 3);
}

// A consumer's books follow the collection change by change: the first take
// is the whole collection, then each take names what changed since the last
// (a deleted object as none), also across a listing that replaces the
// cache.
TEST_F(InformerTest, TakesTheChangesSinceTheLastTake) {
  Put("a", "web");
  Put("b", "web");
  Informer informer(client_.get(), kWatchedPods, kSelected, 1);
  ASSERT_TRUE(informer.Look().ok());
  ASSERT_TRUE(informer.Look().ok());  // lists again and starts watching
  auto names = [](const Informer::Changes& changes) {
    std::map<std::string, bool> present;
    for (const auto& [name, object] : changes)
      present[name] = object.has_value();
    return present;
  };
  using Present = std::map<std::string, bool>;
  EXPECT_EQ(names(informer.TakeChanges()), (Present{{"a", true}, {"b", true}}));
  EXPECT_TRUE(informer.TakeChanges().empty());
  Put("c", "web");
  ASSERT_TRUE(client_->Delete(std::string(kWatchedPods) + "/a").ok());
  ASSERT_EQ(NamesOnceThey(&informer, {"b", "c"}),
            (std::set<std::string>{"b", "c"}));
  Informer::Changes changes = informer.TakeChanges();
  EXPECT_EQ(names(changes), (Present{{"a", false}, {"c", true}}));
  EXPECT_EQ(changes["c"]->at("metadata").at("name"), "c");
  // A listing after compaction: what it dropped and what it brought.
  ExpireReplacing("b", "e");
  ASSERT_EQ(NamesOnceThey(&informer, {"c", "e"}),
            (std::set<std::string>{"c", "e"}));
  changes = informer.TakeChanges();
  EXPECT_FALSE(changes.at("b").has_value());
  EXPECT_TRUE(changes.at("e").has_value());
  EXPECT_EQ(changes.count("a"), 0u);
}

TEST_F(InformerTest, AFailedListingIsAnError) {
  server_.FailNext(1, 500);
  Informer informer(client_.get(), kWatchedPods, kSelected, 1);
  StatusOr<Informer::Objects> first = informer.Get();
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), Status::Code::kUnavailable);
  EXPECT_NE(first.status().message().find("GET /api/v1/namespaces/ns/pods"),
            std::string::npos)
      << first.status().message();
  Put("a", "web");
  EXPECT_EQ(NamesOnceThey(&informer, {"a"}), (std::set<std::string>{"a"}));
}

}  // namespace
}  // namespace migserve::kube
