#include "controller/journal.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>

#include "util/test_util.h"

namespace migserve::controller {
namespace {

TEST(JournalTest, KeepsThePlanAndActionStatesAcrossReopen) {
  std::string path = testing::TempDir() + "/journal.db";
  {
    auto journal = Journal::Open(path).value();
    int version = journal->BeginPlan("target", "{\"actions\": []}", "").value();
    EXPECT_EQ(version, 1);
    ASSERT_TRUE(journal->Mark(version, 0, ActionState::kStarted).ok());
    ASSERT_TRUE(journal->Mark(version, 0, ActionState::kDone).ok());
    ASSERT_TRUE(journal->Mark(version, 1, ActionState::kStarted).ok());
  }
  auto journal = Journal::Open(path).value();
  std::optional<JournaledPlan> plan = journal->Current().value();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->target, "target");
  EXPECT_EQ(plan->plan_json, "{\"actions\": []}");
  EXPECT_EQ(plan->actions,
            (std::map<int, ActionState>{{0, ActionState::kDone},
                                        {1, ActionState::kStarted}}));
  ASSERT_TRUE(journal->FinishPlan(plan->version).ok());
  EXPECT_FALSE(journal->Current().value().has_value());
  EXPECT_EQ(journal->BeginPlan("t2", "{}", "").value(), 2);
}

TEST(JournalTest, RecordsRouteChangesInOrderPerPlan) {
  std::string path = testing::TempDir() + "/journal-routes.db";
  std::remove(path.c_str());
  {
    auto journal = Journal::Open(path).value();
    int one = journal->BeginPlan("t", "{}", "").value();
    ASSERT_TRUE(journal->RecordRoute(one, {-1, "a", "r0"}).ok());
    ASSERT_TRUE(journal->RecordRoute(one, {3, "b", "r1"}).ok());
    int two = journal->BeginPlan("t", "{}", "").value();
    ASSERT_TRUE(journal->RecordRoute(two, {0, "a", "r2"}).ok());
    ASSERT_TRUE(journal->RecordRoute(one, {4, "a", "r3"}).ok());
  }
  auto journal = Journal::Open(path).value();
  std::vector<JournaledRoute> one = journal->Routes(1).value();
  ASSERT_EQ(one.size(), 3u);
  EXPECT_EQ(one[0].action, -1);
  EXPECT_EQ(one[1].service, "b");
  EXPECT_EQ(one[2].route, "r3");
  EXPECT_EQ(journal->Routes(2).value().size(), 1u);
  EXPECT_TRUE(journal->Routes(3).value().empty());
}

TEST(JournalTest, ReportsAnUnopenableFile) {
  auto journal = Journal::Open("/nonexistent-dir/journal.db");
  ASSERT_FALSE(journal.ok());
  EXPECT_EQ(journal.status().code(), Status::Code::kUnavailable);
}

TEST(JournalTest, RefusesAJournalOfAnotherFormat) {
  std::string old_path = testing::TempDir() + "/journal-v1.db";
  std::string future_path = testing::TempDir() + "/journal-v9.db";
  for (const std::string& path : {old_path, future_path})
    std::remove(path.c_str());
  // A format 1 journal: the tables, no version number.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "CREATE TABLE plan (version INTEGER PRIMARY KEY, "
                         "target TEXT, json TEXT, finished INTEGER);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto old = Journal::Open(old_path);
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(old.status().message(),
            "journal " + old_path +
                " has format 1, this migserve reads format 4 (GPUs named by "
                "node and index, each plan with its goal, the pods it "
                "created); let the migserve that wrote it finish, or "
                "move the file away to start afresh (the controller then "
                "replans from the cluster as it is)");
  ASSERT_EQ(sqlite3_open(future_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "PRAGMA user_version=9;", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  auto future = Journal::Open(future_path);
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.status().message().find("has format 9"), std::string::npos);
  // A new journal records the current format.
  std::string fresh = testing::TempDir() + "/journal-new.db";
  std::remove(fresh.c_str());
  ASSERT_TRUE(Journal::Open(fresh).ok());
  EXPECT_TRUE(Journal::Open(fresh).ok());
}

// Runs `sql` on the journal file at `path`.
void Sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

TEST(JournalTest, UpgradesAFormatTwoJournalInPlace) {
  std::string path = testing::TempDir() + "/journal-v2.db";
  std::remove(path.c_str());
  Sql(path,
      "CREATE TABLE plan (version INTEGER PRIMARY KEY, target TEXT NOT NULL, "
      "json TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0);"
      "CREATE TABLE action (version INTEGER NOT NULL, id INTEGER NOT NULL, "
      "state INTEGER NOT NULL, PRIMARY KEY (version, id));"
      "INSERT INTO plan (target, json) VALUES ('t', '{}');"
      "INSERT INTO action VALUES (1, 4, 1);"
      "PRAGMA user_version=2;");
  auto journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  auto current = (*journal)->Current().value();
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->target, "t");
  EXPECT_EQ(current->goal_json, "");  // unknown: the caller's goal applies
  EXPECT_EQ(current->actions.at(4), ActionState::kDone);
  EXPECT_EQ((*journal)->BeginPlan("u", "{}", "{\"g\": 1}").value(), 2);
  // Through format 3 toward 4: no pods known, and it says so until the
  // caller has adopted them (an adoption that failed is tried again).
  EXPECT_TRUE((*journal)->predates_pods());
  EXPECT_TRUE((*journal)->Pods().value().empty());
  journal->reset();
  journal = Journal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  EXPECT_TRUE((*journal)->predates_pods());
  ASSERT_TRUE((*journal)->PodsAdopted().ok());
  EXPECT_FALSE((*journal)->predates_pods());
  journal->reset();
  EXPECT_FALSE(Journal::Open(path).value()->predates_pods());
}

TEST(JournalTest, KeepsThePodsTheControllerCreated) {
  std::string path = testing::TempDir() + "/journal-pods.db";
  std::remove(path.c_str());
  {
    auto journal = Journal::Open(path).value();
    EXPECT_FALSE(journal->predates_pods());  // new: nothing to predate
    ASSERT_TRUE(journal->PutPod("a", {"t1", ""}).ok());
    ASSERT_TRUE(journal->PutPod("b", {"t2", "uid-2"}).ok());
    ASSERT_TRUE(journal->PutPod("a", {"t1", "uid-1"}).ok());
    ASSERT_TRUE(journal->PutPod("c", {"", "uid-3"}).ok());
    ASSERT_TRUE(journal->ErasePod("b").ok());
    ASSERT_TRUE(journal->ErasePod("never").ok());
  }
  auto pods = Journal::Open(path).value()->Pods().value();
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods.at("a").token, "t1");
  EXPECT_EQ(pods.at("a").uid, "uid-1");
  EXPECT_EQ(pods.at("c").token, "");
  EXPECT_EQ(pods.at("c").uid, "uid-3");
  // A row edited to NULL (the table rebuilt without NOT NULL) is refused.
  Sql(path,
      "CREATE TABLE copy AS SELECT * FROM pod; DROP TABLE pod; "
      "ALTER TABLE copy RENAME TO pod; INSERT INTO pod VALUES ('p', NULL, "
      "'u')");
  auto damaged = Journal::Open(path).value()->Pods();
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("not trusted"), std::string::npos);
}

// A dry run reads the journal and changes nothing: no file is created, an
// old format is not upgraded, and nothing can be written.
TEST(JournalTest, OpensReadOnlyWithoutChangingAnything) {
  std::string path = testing::TempDir() + "/journal-read-only.db";
  std::remove(path.c_str());
  auto missing = Journal::OpenReadOnly(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path));
  ASSERT_TRUE(Journal::Open(path).value()->PutPod("a", {"t", "uid-1"}).ok());
  {
    auto journal = Journal::OpenReadOnly(path);
    ASSERT_TRUE(journal.ok()) << journal.status().ToString();
    EXPECT_FALSE((*journal)->predates_pods());
    EXPECT_EQ((*journal)->Pods().value().at("a").uid, "uid-1");
    EXPECT_FALSE((*journal)->PutPod("b", {"t", "uid-2"}).ok());
    EXPECT_FALSE((*journal)->BeginPlan("t", "{}", "{}").ok());
  }
  EXPECT_EQ(Journal::Open(path).value()->Pods().value().size(), 1u);
  std::remove(path.c_str());
  Sql(path,
      "CREATE TABLE plan (version INTEGER PRIMARY KEY, target TEXT NOT NULL, "
      "json TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0, goal TEXT NOT "
      "NULL DEFAULT ''); PRAGMA user_version=3;");
  EXPECT_TRUE(Journal::OpenReadOnly(path).value()->predates_pods());
  Sql(path, "PRAGMA user_version=9;");
  auto other = Journal::OpenReadOnly(path);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("has format 9"), std::string::npos);
  // No pod table: neither read-only open upgraded the format 3 file.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT count(*) FROM sqlite_master WHERE "
                               "name='pod'",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// The degraded description outlives the process that wrote it; a journal
// written before it was kept reads "" (read-only too), and a damaged one
// is refused.
TEST(JournalTest, KeepsWhatTheClusterWasDegradedTo) {
  std::string path = testing::TempDir() + "/journal-degraded.db";
  std::remove(path.c_str());
  Sql(path,
      "CREATE TABLE plan (version INTEGER PRIMARY KEY, target TEXT NOT NULL, "
      "json TEXT NOT NULL, finished INTEGER NOT NULL DEFAULT 0, goal TEXT NOT "
      "NULL DEFAULT ''); CREATE TABLE pod (name TEXT PRIMARY KEY, token TEXT "
      "NOT NULL, uid TEXT NOT NULL); PRAGMA user_version=4;");
  EXPECT_EQ(Journal::OpenReadOnly(path).value()->Degraded().value(), "");
  {
    auto journal = Journal::Open(path).value();
    EXPECT_EQ(journal->Degraded().value(), "");
    ASSERT_TRUE(journal->PutDegraded("2 of 18 GPUs dropped").ok());
    ASSERT_TRUE(journal->PutDegraded("3 of 18 GPUs dropped").ok());
  }
  EXPECT_EQ(Journal::Open(path).value()->Degraded().value(),
            "3 of 18 GPUs dropped");
  EXPECT_EQ(Journal::OpenReadOnly(path).value()->Degraded().value(),
            "3 of 18 GPUs dropped");
  Sql(path, "UPDATE degraded SET description = x'07';");
  auto damaged = Journal::Open(path).value()->Degraded();
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("not trusted"), std::string::npos)
      << damaged.status().ToString();
  std::remove(path.c_str());
}

// Two controllers on one journal file, the second holding a newer lease
// epoch (issue 72): once the second has fenced the journal, every write of
// the first is refused in the write itself, its reads still work, and it
// cannot take the journal back with its older epoch.
TEST(JournalTest, AFencedOlderLeaderCannotWriteTheJournal) {
  std::string path = testing::TempDir() + "/journal-fenced.db";
  std::remove(path.c_str());
  auto old_leader = Journal::Open(path).value();
  ASSERT_TRUE(old_leader->Fence(3).ok());
  int version = old_leader->BeginPlan("t", "{}", "").value();
  ASSERT_TRUE(old_leader->Mark(version, 0, ActionState::kStarted).ok());
  auto new_leader = Journal::Open(path).value();
  ASSERT_TRUE(new_leader->Fence(4).ok());
  Status marked = old_leader->Mark(version, 0, ActionState::kFailed);
  ASSERT_FALSE(marked.ok());
  EXPECT_NE(marked.message().find("fenced"), std::string::npos)
      << marked.ToString();
  EXPECT_FALSE(old_leader->FinishPlan(version).ok());
  EXPECT_FALSE(old_leader->PutPod("p", {"token", "uid"}).ok());
  EXPECT_FALSE(old_leader->PutDegraded("x").ok());
  EXPECT_FALSE(old_leader->BeginPlan("t", "{}", "").ok());
  // What the old leader left half-done is the new one's to resume.
  std::optional<JournaledPlan> current = new_leader->Current().value();
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->actions.at(0), ActionState::kStarted);
  ASSERT_TRUE(new_leader->Mark(version, 0, ActionState::kDone).ok());
  EXPECT_TRUE(old_leader->Current().ok());
  // A reopened old leader is refused at once.
  Status again = Journal::Open(path).value()->Fence(3);
  EXPECT_EQ(again.code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(again.message().find("epoch 4"), std::string::npos)
      << again.ToString();
  // The same epoch (a restarted leader that took the lease back in one
  // transition) may go on.
  EXPECT_TRUE(Journal::Open(path).value()->Fence(4).ok());
  std::remove(path.c_str());
}

// Rows edited by hand or damaged are refused with the way to start over,
// never read as something else (a NULL column crashed the reader).
TEST(JournalTest, RefusesDamagedRows) {
  std::string path = testing::TempDir() + "/journal-damaged.db";
  for (const char* damage :
       {"CREATE TABLE copy AS SELECT * FROM plan; DROP TABLE plan; "
        "ALTER TABLE copy RENAME TO plan; UPDATE plan SET json = NULL",
        "UPDATE plan SET goal = x'00'", "UPDATE action SET state = 9",
        "UPDATE action SET state = 'done'"}) {
    std::remove(path.c_str());
    {
      auto journal = Journal::Open(path).value();
      int version = journal->BeginPlan("t", "{}", "{}").value();
      ASSERT_TRUE(journal->Mark(version, 0, ActionState::kDone).ok());
    }
    Sql(path, damage);
    auto journal = Journal::Open(path).value();
    auto current = journal->Current();
    ASSERT_FALSE(current.ok()) << damage;
    EXPECT_EQ(current.status().code(), Status::Code::kFailedPrecondition);
    EXPECT_NE(current.status().message().find(
                  "not trusted; move the journal file away (or pass another "
                  "--journal) to start over"),
              std::string::npos)
        << current.status().message();
  }
}

}  // namespace
}  // namespace migserve::controller
