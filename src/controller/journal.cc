#include "controller/journal.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>

namespace migserve::controller {
namespace {

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
      stmt_ = nullptr;
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

// Column `c` of the statement's current row if it is text; nullopt for a
// NULL, a number or a blob, which only a damaged journal holds.
std::optional<std::string> TextColumn(sqlite3_stmt* stmt, int c) {
  if (sqlite3_column_type(stmt, c) != SQLITE_TEXT) return std::nullopt;
  return reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
}

Status Error(sqlite3* db, std::string_view what) {
  return Status::Unavailable(
      fmt::format("journal: {}: {}", what, sqlite3_errmsg(db)));
}

}  // namespace

Status Journal::Damaged(const std::string& what) {
  return Status::FailedPrecondition(
      fmt::format("journal: {}: not trusted; {}", what, kStartOver));
}

StatusOr<std::unique_ptr<Journal>> Journal::Open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    Status status = Error(db, "cannot open " + path);
    sqlite3_close(db);
    return status;
  }
  std::unique_ptr<Journal> journal(new Journal(db));
  MIGSERVE_ASSIGN_OR_RETURN(int format, journal->Format());
  if (format == 2) {
    MIGSERVE_RETURN_IF_ERROR(journal->Exec(
        "BEGIN; ALTER TABLE plan ADD COLUMN goal TEXT NOT NULL DEFAULT ''; "
        "PRAGMA user_version=3; COMMIT;"));
    format = 3;
  }
  if (format == 3) {  // the pod table is created below
    journal->predates_pods_ = true;
    format = kFormatVersion;
  }
  if (format != kFormatVersion) return OtherFormat(path, format);
  MIGSERVE_RETURN_IF_ERROR(journal->Exec(
      "PRAGMA journal_mode=WAL;"
      "PRAGMA synchronous=FULL;"
      "CREATE TABLE IF NOT EXISTS plan (version INTEGER PRIMARY KEY, "
      "  target TEXT NOT NULL, json TEXT NOT NULL, finished INTEGER NOT NULL "
      "  DEFAULT 0, goal TEXT NOT NULL DEFAULT '');"
      "CREATE TABLE IF NOT EXISTS action (version INTEGER NOT NULL, "
      "  id INTEGER NOT NULL, state INTEGER NOT NULL, "
      "  PRIMARY KEY (version, id));"
      "CREATE TABLE IF NOT EXISTS route (seq INTEGER PRIMARY KEY, "
      "  version INTEGER NOT NULL, action INTEGER NOT NULL, "
      "  service TEXT NOT NULL, route TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS pod (name TEXT PRIMARY KEY, "
      "  token TEXT NOT NULL, uid TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS degraded (id INTEGER PRIMARY KEY "
      "  CHECK (id = 0), description TEXT NOT NULL);"
      "CREATE TABLE IF NOT EXISTS fence (id INTEGER PRIMARY KEY "
      "  CHECK (id = 0), epoch INTEGER NOT NULL);"));
  // An upgraded journal stays at format 3 until its pods are adopted
  // (PodsAdopted), so that a failed adoption is tried again.
  if (!journal->predates_pods_) {
    MIGSERVE_RETURN_IF_ERROR(journal->StampFormat());
  }
  return journal;
}

StatusOr<std::unique_ptr<Journal>> Journal::OpenReadOnly(
    const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    return Status::NotFound("no journal at " + path);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    Status status = Error(db, "cannot open " + path);
    sqlite3_close(db);
    return status;
  }
  std::unique_ptr<Journal> journal(new Journal(db));
  MIGSERVE_ASSIGN_OR_RETURN(int format, journal->Format());
  journal->predates_pods_ = format == 2 || format == 3;
  if (format != kFormatVersion && !journal->predates_pods_) {
    return OtherFormat(path, format);
  }
  return journal;
}

Status Journal::OtherFormat(const std::string& path, int format) {
  return Status::FailedPrecondition(fmt::format(
      "journal {} has format {}, this migserve reads format {} (GPUs named "
      "by node and index, each plan with its goal, the pods it created); "
      "let the migserve that wrote it finish, or move the file away to start "
      "afresh (the controller then replans from the cluster as it is)",
      path, format, kFormatVersion));
}

Status Journal::StampFormat() {
  return Exec(fmt::format("PRAGMA user_version={};", kFormatVersion));
}

Status Journal::PodsAdopted() {
  MIGSERVE_RETURN_IF_ERROR(StampFormat());
  predates_pods_ = false;
  return Status::Ok();
}

StatusOr<int> Journal::Format() {
  Statement version(db_, "PRAGMA user_version");
  Statement tables(db_,
                   "SELECT count(*) FROM sqlite_master WHERE type='table'");
  if (version.get() == nullptr || tables.get() == nullptr ||
      sqlite3_step(version.get()) != SQLITE_ROW ||
      sqlite3_step(tables.get()) != SQLITE_ROW) {
    return Error(db_, "reading the format version");
  }
  int format = sqlite3_column_int(version.get(), 0);
  bool empty = sqlite3_column_int(tables.get(), 0) == 0;
  // Format 1 journals predate the version number.
  if (format == 0) return empty ? kFormatVersion : 1;
  return format;
}

Journal::~Journal() { sqlite3_close(db_); }

Status Journal::Snapshot(const std::string& from, const std::string& to) {
  sqlite3* source = nullptr;
  sqlite3* copy = nullptr;
  const std::string part = to + ".part";
  std::error_code ignored;
  std::filesystem::remove(part, ignored);
  auto fail = [&](sqlite3* db, const std::string& what) {
    Status status = Error(db, what);
    sqlite3_close(source);
    sqlite3_close(copy);
    std::filesystem::remove(part, ignored);
    return status;
  };
  if (sqlite3_open_v2(from.c_str(), &source, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    return fail(source, "cannot open " + from);
  }
  // A commit under way holds the WAL only for an instant.
  sqlite3_busy_timeout(source, 2000);
  if (sqlite3_open(part.c_str(), &copy) != SQLITE_OK) {
    return fail(copy, "cannot create " + part);
  }
  sqlite3_backup* backup = sqlite3_backup_init(copy, "main", source, "main");
  if (backup == nullptr) return fail(copy, "copying " + from);
  int step = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (step != SQLITE_DONE) return fail(copy, "copying " + from);
  sqlite3_close(source);
  source = nullptr;
  if (sqlite3_close(copy) != SQLITE_OK) return fail(copy, "closing " + part);
  copy = nullptr;
  std::error_code error;
  std::filesystem::rename(part, to, error);
  if (error) {
    std::filesystem::remove(part, ignored);
    return Status::Unavailable(fmt::format("journal: renaming {} to {}: {}",
                                           part, to, error.message()));
  }
  return Status::Ok();
}

StatusOr<long> Journal::FencedEpoch() {
  Statement read(db_, "SELECT epoch FROM fence WHERE id = 0");
  if (read.get() == nullptr) {
    // A journal written before fencing (or never fenced, read only).
    if (std::string_view(sqlite3_errmsg(db_)).starts_with("no such table")) {
      return -1L;
    }
    return Error(db_, "prepare");
  }
  int step = sqlite3_step(read.get());
  if (step == SQLITE_DONE) return -1L;
  if (step != SQLITE_ROW) return Error(db_, "read the fence");
  return static_cast<long>(sqlite3_column_int64(read.get(), 0));
}

Status Journal::Fence(long epoch) {
  // Taken in one write transaction: of two controllers fencing at once,
  // the one with the older epoch reads the newer and is refused.
  MIGSERVE_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Statement read(db_, "SELECT epoch FROM fence WHERE id = 0");
  long newest = -1;
  if (read.get() != nullptr && sqlite3_step(read.get()) == SQLITE_ROW) {
    newest = sqlite3_column_int64(read.get(), 0);
  }
  if (newest > epoch) {
    (void)Exec("ROLLBACK");
    return Status::FailedPrecondition(fmt::format(
        "journal: fenced: a controller holding the lease at epoch {} has "
        "written it since; this one holds epoch {}",
        newest, epoch));
  }
  std::string sql = fmt::format(
      "INSERT INTO fence (id, epoch) VALUES (0, {0}) ON CONFLICT (id) DO "
      "UPDATE SET epoch = {0};",
      epoch);
  // Every later write of this connection checks the token in the same
  // statement: one whose epoch is no longer the newest aborts.
  for (const char* table : {"plan", "action", "route", "pod", "degraded"}) {
    for (const char* op : {"INSERT", "UPDATE", "DELETE"}) {
      sql += fmt::format(
          "CREATE TEMP TRIGGER IF NOT EXISTS fence_{0}_{1} BEFORE {1} ON "
          "main.{0} WHEN (SELECT epoch FROM main.fence WHERE id = 0) > {2} "
          "BEGIN SELECT RAISE(ABORT, 'fenced: a controller holding a newer "
          "lease writes this journal'); END;",
          table, op, epoch);
    }
  }
  if (Status s = Exec(sql + "COMMIT;"); !s.ok()) {
    (void)Exec("ROLLBACK");
    return s;
  }
  return Status::Ok();
}

Status Journal::Exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : "unknown error";
    sqlite3_free(message);
    return Status::Unavailable("journal: " + text);
  }
  return Status::Ok();
}

StatusOr<int> Journal::BeginPlan(const std::string& target,
                                 const std::string& plan_json,
                                 const std::string& goal_json) {
  Statement insert(db_,
                   "INSERT INTO plan (target, json, goal) VALUES (?, ?, ?)");
  if (insert.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_text(insert.get(), 1, target.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.get(), 2, plan_json.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.get(), 3, goal_json.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(insert.get()) != SQLITE_DONE)
    return Error(db_, "insert plan");
  return static_cast<int>(sqlite3_last_insert_rowid(db_));
}

Status Journal::Mark(int version, int action, ActionState state) {
  Statement upsert(db_,
                   "INSERT INTO action (version, id, state) VALUES (?, ?, ?) "
                   "ON CONFLICT (version, id) DO UPDATE SET state = "
                   "excluded.state");
  if (upsert.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_int(upsert.get(), 1, version);
  sqlite3_bind_int(upsert.get(), 2, action);
  sqlite3_bind_int(upsert.get(), 3, static_cast<int>(state));
  if (sqlite3_step(upsert.get()) != SQLITE_DONE)
    return Error(db_, "mark action");
  return Status::Ok();
}

Status Journal::RecordRoute(int version, const JournaledRoute& route) {
  Statement insert(db_,
                   "INSERT INTO route (version, action, service, route) "
                   "VALUES (?, ?, ?, ?)");
  if (insert.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_int(insert.get(), 1, version);
  sqlite3_bind_int(insert.get(), 2, route.action);
  sqlite3_bind_text(insert.get(), 3, route.service.c_str(), -1,
                    SQLITE_TRANSIENT);
  sqlite3_bind_text(insert.get(), 4, route.route.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(insert.get()) != SQLITE_DONE) {
    return Error(db_, "record route");
  }
  return Status::Ok();
}

StatusOr<std::vector<JournaledRoute>> Journal::Routes(int version) {
  Statement select(db_,
                   "SELECT action, service, route FROM route WHERE version "
                   "= ? ORDER BY seq");
  if (select.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_int(select.get(), 1, version);
  std::vector<JournaledRoute> routes;
  int step;
  while ((step = sqlite3_step(select.get())) == SQLITE_ROW) {
    auto text = [&](int column) {
      const unsigned char* value = sqlite3_column_text(select.get(), column);
      return value == nullptr ? std::string()
                              : reinterpret_cast<const char*>(value);
    };
    routes.push_back({sqlite3_column_int(select.get(), 0), text(1), text(2)});
  }
  if (step != SQLITE_DONE) return Error(db_, "read routes");
  return routes;
}

Status Journal::FinishPlan(int version) {
  return Exec(
      fmt::format("UPDATE plan SET finished = 1 WHERE version = {}", version));
}

StatusOr<std::optional<JournaledPlan>> Journal::Current() {
  Statement latest(db_,
                   "SELECT version, target, json, goal FROM plan WHERE "
                   "finished = 0 ORDER BY version DESC LIMIT 1");
  if (latest.get() == nullptr) return Error(db_, "prepare");
  int step = sqlite3_step(latest.get());
  if (step == SQLITE_DONE) return std::optional<JournaledPlan>();
  if (step != SQLITE_ROW) return Error(db_, "read plan");
  JournaledPlan plan;
  plan.version = sqlite3_column_int(latest.get(), 0);
  // A column edited to NULL or to a number is a damaged journal, refused.
  const char* columns[] = {"target", "json", "goal"};
  std::string* fields[] = {&plan.target, &plan.plan_json, &plan.goal_json};
  for (int c = 0; c < 3; ++c) {
    std::optional<std::string> text = TextColumn(latest.get(), c + 1);
    if (!text) {
      return Damaged(fmt::format("plan {}: column {} is not text", plan.version,
                                 columns[c]));
    }
    *fields[c] = std::move(*text);
  }
  Statement states(db_, "SELECT id, state FROM action WHERE version = ?");
  if (states.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_int(states.get(), 1, plan.version);
  while ((step = sqlite3_step(states.get())) == SQLITE_ROW) {
    int id = sqlite3_column_int(states.get(), 0);
    int state = sqlite3_column_int(states.get(), 1);
    if (sqlite3_column_type(states.get(), 0) != SQLITE_INTEGER ||
        sqlite3_column_type(states.get(), 1) != SQLITE_INTEGER ||
        state < static_cast<int>(ActionState::kStarted) ||
        state > static_cast<int>(ActionState::kFailed)) {
      return Damaged(fmt::format("plan {}: action {} has no valid state",
                                 plan.version, id));
    }
    plan.actions[id] = static_cast<ActionState>(state);
  }
  if (step != SQLITE_DONE) return Error(db_, "read actions");
  return std::optional<JournaledPlan>(std::move(plan));
}

StatusOr<std::map<std::string, JournaledPod>> Journal::Pods() {
  Statement select(db_, "SELECT name, token, uid FROM pod");
  if (select.get() == nullptr) return Error(db_, "prepare");
  std::map<std::string, JournaledPod> pods;
  int step;
  while ((step = sqlite3_step(select.get())) == SQLITE_ROW) {
    std::string fields[3];
    for (int c = 0; c < 3; ++c) {
      std::optional<std::string> text = TextColumn(select.get(), c);
      if (!text) {
        return Damaged(fmt::format("a pod's column {} is not text", c + 1));
      }
      fields[c] = std::move(*text);
    }
    pods[fields[0]] = {fields[1], fields[2]};
  }
  if (step != SQLITE_DONE) return Error(db_, "read pods");
  return pods;
}

Status Journal::PutPod(const std::string& name, const JournaledPod& pod) {
  Statement upsert(db_,
                   "INSERT INTO pod (name, token, uid) VALUES (?, ?, ?) "
                   "ON CONFLICT (name) DO UPDATE SET token = excluded.token, "
                   "uid = excluded.uid");
  if (upsert.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_text(upsert.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(upsert.get(), 2, pod.token.c_str(), -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(upsert.get(), 3, pod.uid.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(upsert.get()) != SQLITE_DONE) return Error(db_, "put pod");
  return Status::Ok();
}

StatusOr<std::string> Journal::Degraded() {
  Statement select(db_, "SELECT description FROM degraded WHERE id = 0");
  if (select.get() == nullptr) {
    // A read-only open of a journal written before the table existed.
    if (std::string_view(sqlite3_errmsg(db_)).starts_with("no such table")) {
      return std::string();
    }
    return Error(db_, "prepare");
  }
  int step = sqlite3_step(select.get());
  if (step == SQLITE_DONE) return std::string();
  if (step != SQLITE_ROW) return Error(db_, "read degraded");
  std::optional<std::string> text = TextColumn(select.get(), 0);
  if (!text) return Damaged("the degraded description is not text");
  return *text;
}

Status Journal::PutDegraded(const std::string& description) {
  Statement upsert(db_,
                   "INSERT INTO degraded (id, description) VALUES (0, ?) "
                   "ON CONFLICT (id) DO UPDATE SET "
                   "description = excluded.description");
  if (upsert.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_text(upsert.get(), 1, description.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(upsert.get()) != SQLITE_DONE) {
    return Error(db_, "put degraded");
  }
  return Status::Ok();
}

Status Journal::ErasePod(const std::string& name) {
  Statement erase(db_, "DELETE FROM pod WHERE name = ?");
  if (erase.get() == nullptr) return Error(db_, "prepare");
  sqlite3_bind_text(erase.get(), 1, name.c_str(), -1, SQLITE_TRANSIENT);
  if (sqlite3_step(erase.get()) != SQLITE_DONE) return Error(db_, "erase pod");
  return Status::Ok();
}

}  // namespace migserve::controller
