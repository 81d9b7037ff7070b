// One journal per controller in a directory: a new controller adopts the
// plan, pods and routes of the journal fenced at the newest epoch, and
// writes its own file even while a stopped predecessor holds its journal
// locked, which on a shared file blocks every write of the successor.
#include "controller/journal_dir.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>

#include "util/file.h"
#include "util/test_util.h"

namespace migserve::controller {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  std::string dir = testing::TempDir() + "/" + name;
  fs::remove_all(dir);
  return dir;
}

// A journal in `dir` of controller `name` fenced at `epoch`, with a plan
// whose target is `target`, one action done and one pod.
void Leader(const std::string& dir, const std::string& name, long epoch,
            const std::string& target) {
  fs::create_directories(dir);
  std::unique_ptr<Journal> journal =
      Journal::Open(JournalFileIn(dir, name)).value();
  ASSERT_TRUE(journal->Fence(epoch).ok());
  int version = journal->BeginPlan(target, "{\"actions\": []}", "").value();
  ASSERT_TRUE(journal->Mark(version, 0, ActionState::kDone).ok());
  ASSERT_TRUE(journal->PutPod("pod-" + name, {"token", "uid-" + name}).ok());
}

TEST(JournalDirTest, ANewControllerStartsEmptyInAnEmptyDirectory) {
  const std::string dir = FreshDir("journals-empty");
  StatusOr<JournalInDir> opened = OpenJournalIn(dir, "controller-7f/1");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->path, dir + "/controller-7f_1.db");
  EXPECT_EQ(opened->adopted, "");
  EXPECT_FALSE(opened->journal->Current().value().has_value());
  EXPECT_EQ(JournalToReadIn(dir, "controller-7f/1").value(), opened->path);
  EXPECT_EQ(JournalToReadIn(FreshDir("journals-none"), "x").status().code(),
            Status::Code::kNotFound);
}

// The predecessor at epoch 3 holds its journal locked, a write under way
// when it stopped; an older leader's journal (epoch 2, written later) and
// a single shared journal of an older install (never fenced) lie beside
// it. The successor copies the epoch-3 plan and pods, removes the three,
// and writes and fences its own file at once.
TEST(JournalDirTest, ASuccessorAdoptsTheNewestEpochPastAStoppedHoldersLock) {
  const std::string dir = FreshDir("journals-adopt");
  Leader(dir, "old-install", -1, "install");
  fs::rename(JournalFileIn(dir, "old-install"), dir + "/journal.db");
  Leader(dir, "first", 3, "newest");
  Leader(dir, "second", 2, "older");
  sqlite3* stopped = nullptr;
  ASSERT_EQ(sqlite3_open(JournalFileIn(dir, "first").c_str(), &stopped),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(stopped,
                         "BEGIN IMMEDIATE; INSERT INTO degraded (id, "
                         "description) VALUES (0, 'uncommitted');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  // On the shared file the same lock stops the successor's first write.
  {
    StatusOr<std::unique_ptr<Journal>> shared =
        Journal::Open(JournalFileIn(dir, "first"));
    Status fenced = shared.ok() ? (*shared)->Fence(4) : shared.status();
    EXPECT_NE(fenced.message().find("database is locked"), std::string::npos)
        << fenced.ToString();
  }
  EXPECT_EQ(JournalToReadIn(dir, "third").value(), JournalFileIn(dir, "first"));

  StatusOr<JournalInDir> opened = OpenJournalIn(dir, "third");
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  EXPECT_EQ(opened->adopted, JournalFileIn(dir, "first"));
  EXPECT_EQ(opened->adopted_epoch, 3);
  EXPECT_EQ(opened->removed.size(), 3u);
  Journal& journal = *opened->journal;
  ASSERT_TRUE(journal.Fence(4).ok());
  std::optional<JournaledPlan> plan = journal.Current().value();
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->target, "newest");
  EXPECT_EQ(plan->actions,
            (std::map<int, ActionState>{{0, ActionState::kDone}}));
  EXPECT_EQ(journal.Pods().value().at("pod-first").uid, "uid-first");
  EXPECT_EQ(journal.Degraded().value(), "");  // the last commit only
  EXPECT_TRUE(journal.Mark(plan->version, 1, ActionState::kStarted).ok());
  EXPECT_EQ(journal.FencedEpoch().value(), 4);
  std::vector<std::string> left;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".db") left.push_back(e.path().string());
  }
  EXPECT_EQ(left, std::vector<std::string>{opened->path});
  sqlite3_exec(stopped, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(stopped);

  // Started again under the same name, it opens its own and adopts none.
  opened->journal.reset();
  StatusOr<JournalInDir> again = OpenJournalIn(dir, "third");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->adopted, "");
  EXPECT_EQ(again->journal->Current().value()->actions.size(), 2u);
}

// A journal it cannot read stops the adoption, named: adopting an older
// plan past it could undo what it did.
TEST(JournalDirTest, AJournalItCannotReadIsNamed) {
  const std::string dir = FreshDir("journals-damaged");
  Leader(dir, "first", 3, "newest");
  ASSERT_TRUE(WriteFileAtomic(dir + "/broken.db", "not a database").ok());
  StatusOr<JournalInDir> opened = OpenJournalIn(dir, "second");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), Status::Code::kFailedPrecondition);
  EXPECT_NE(opened.status().message().find(dir + "/broken.db cannot be read"),
            std::string::npos)
      << opened.status().ToString();
  EXPECT_FALSE(fs::exists(JournalFileIn(dir, "second")));
  EXPECT_TRUE(fs::exists(JournalFileIn(dir, "first")));
}

}  // namespace
}  // namespace migserve::controller
