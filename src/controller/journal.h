// The controller's journal in SQLite: the plan it is executing, which of
// its actions started and finished, so that a restarted controller resumes
// the same plan without repeating or losing an action (DESIGN 6), every
// route the controller changed on the way (docs/serving.md), and the pods
// it created, by name, create token and uid (the Kubernetes backend's
// ledger, kubernetes/pod_ledger.h). Each change is one transaction.
#ifndef MIGSERVE_CONTROLLER_JOURNAL_H_
#define MIGSERVE_CONTROLLER_JOURNAL_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "util/status_or.h"

struct sqlite3;

namespace migserve::controller {

enum class ActionState { kStarted, kDone, kFailed };

struct JournaledPlan {
  int version = 0;
  std::string target;     // the target deployment's JSON
  std::string plan_json;  // the plan
  // The floors the plan was made to keep (FormatGoal); "" in a plan that a
  // format 2 journal began.
  std::string goal_json;
  std::map<int, ActionState> actions;
};

// One route change: the route a service got when `action` started or
// finished (-1: when the controller brought the routes in line with the
// cluster before running the plan).
struct JournaledRoute {
  int action = 0;
  std::string service;
  std::string route;  // cluster::FormatRoute
};

// A pod the controller created (or adopted: token "").
struct JournaledPod {
  std::string token;
  std::string uid;
};

class Journal {
 public:
  // The format this build writes and reads: 4 keeps the pods the
  // controller created; 3 records each plan's goal; 2 names GPUs by node
  // and index (format 1, before the version was recorded, by listing
  // position). Format 2 and 3 journals are upgraded in place.
  static constexpr int kFormatVersion = 4;

  // What a refused journal's message says to do.
  static constexpr char kStartOver[] =
      "move the journal file away (or pass another --journal) to start "
      "over: the controller then plans from the cluster as it is (pass "
      "--adopt on its first run, or it counts none of the replicas it made)";

  // FailedPrecondition "journal: what: not trusted; " and kStartOver: the
  // journal is damaged, and how to start over.
  static Status Damaged(const std::string& what);

  // Opens (creating if needed) the journal at `path`; ":memory:" keeps it in
  // memory. Returns Unavailable with SQLite's message on failure, and
  // FailedPrecondition naming both formats for a journal of another format.
  static StatusOr<std::unique_ptr<Journal>> Open(const std::string& path);
  // Opens the existing journal at `path` for reading only: nothing is
  // created, upgraded or written (a dry run's view of what the controller
  // would read). NotFound if there is no file; a format 2 or 3 journal
  // opens with predates_pods() true (it has no pods to read).
  static StatusOr<std::unique_ptr<Journal>> OpenReadOnly(
      const std::string& path);
  // Copies the journal at `from` as its last commit left it to a new file
  // `to`, whole or not at all (a file beside `to` is renamed into place):
  // `from` is only read, and a writer that holds it locked, even one
  // stopped mid-write, does not stop the copy (WAL readers see the last
  // commit). Unavailable with SQLite's message on failure.
  static Status Snapshot(const std::string& from, const std::string& to);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  // Records a new plan (version = last + 1) and returns its version.
  StatusOr<int> BeginPlan(const std::string& target,
                          const std::string& plan_json,
                          const std::string& goal_json);
  Status Mark(int version, int action, ActionState state);
  Status RecordRoute(int version, const JournaledRoute& route);
  // Returns the route changes of plan `version`, oldest first.
  StatusOr<std::vector<JournaledRoute>> Routes(int version);
  // Marks the plan finished: Current() no longer returns it.
  Status FinishPlan(int version);

  // Returns the latest unfinished plan with its action states, or nullopt.
  StatusOr<std::optional<JournaledPlan>> Current();

  // The pods the controller created, by name.
  StatusOr<std::map<std::string, JournaledPod>> Pods();
  Status PutPod(const std::string& name, const JournaledPod& pod);
  Status ErasePod(const std::string& name);

  // What the controller that wrote the journal last said the cluster was
  // degraded to (the degraded target's description; "" while it holds the
  // target), so that a restarted controller says Recovered when its
  // predecessor said Degraded. A journal that predates it reads "".
  StatusOr<std::string> Degraded();
  Status PutDegraded(const std::string& description);

  // True if this journal was written by a migserve that kept no pods
  // (format 2 or 3, upgraded when opened) and PodsAdopted() has not been
  // called since: the pods its controller made are known only by their
  // owner annotation.
  bool predates_pods() const { return predates_pods_; }
  // Records that the pods of an upgraded journal have been adopted: the
  // journal is at format 4 from now on.
  Status PodsAdopted();

  // Takes the journal for the holder of the leader lease at `epoch` (its
  // leaseTransitions, a fencing token): refused (FailedPrecondition) if a
  // holder of a newer epoch took it since; from then on every write of this
  // connection is refused as soon as a newer epoch takes it, checked by
  // SQLite in the write itself, so a leader that stalled past its lease
  // cannot mark the plan its successor resumes. Once per connection, its
  // epoch fixed.
  Status Fence(long epoch);
  // The newest epoch that fenced the journal; -1 if none did.
  StatusOr<long> FencedEpoch();

 private:
  explicit Journal(sqlite3* db) : db_(db) {}
  Status Exec(const std::string& sql);
  // Marks the database as kFormatVersion.
  Status StampFormat();
  // Returns the format of the open database (kFormatVersion if it is new).
  StatusOr<int> Format();
  // FailedPrecondition naming `format` and the one this build reads.
  static Status OtherFormat(const std::string& path, int format);

  sqlite3* db_;
  bool predates_pods_ = false;
};

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_JOURNAL_H_
