// One journal per controller in a directory (`controller --journal-dir`,
// docs/kubernetes.md, "Upgrade and uninstall"): SQLite's locks belong to
// the process that holds them, so a controller stopped while it held its
// journal locked (a process stopped mid-write, a node cut off while its
// pod is replaced) would block a successor sharing the file for as long as
// it stays stopped. Here each controller writes a file of its own, named
// by its lease identity, and a controller whose file is new adopts its
// predecessor's plan: it copies the journal fenced at the newest lease
// epoch (the last leader's; among equals, the last written), reading it
// only, then removes the others. A stopped predecessor that wakes writes
// to its own removed file, and the Lease fences everything else it sends.
#ifndef MIGSERVE_CONTROLLER_JOURNAL_DIR_H_
#define MIGSERVE_CONTROLLER_JOURNAL_DIR_H_

#include <memory>
#include <string>
#include <vector>

#include "controller/journal.h"
#include "util/status_or.h"

namespace migserve::controller {

struct JournalInDir {
  std::unique_ptr<Journal> journal;
  std::string path;         // its file
  std::string adopted;      // the journal it began as a copy of; "" if none
  long adopted_epoch = -1;  // the epoch that one was fenced at
  std::vector<std::string> removed;  // the other journals, once adopted
};

// The file of the controller `name` (its lease identity) in `dir`: the
// name with every character but letters, digits, '.', '_' and '-' made
// '_', and ".db".
std::string JournalFileIn(const std::string& dir, const std::string& name);

// Opens the journal of `name` in `dir` (creating the directory if need
// be). If it is new and other journals (*.db) are there, it begins as a
// copy of the newest and the others are removed. FailedPrecondition
// naming the file for one that cannot be read (damaged, another format):
// adopting an older plan past it could undo what it did.
StatusOr<JournalInDir> OpenJournalIn(const std::string& dir,
                                     const std::string& name);

// The journal in `dir` a controller starting there would adopt (or its
// own, `name`'s, if it has one), for a dry run to read; NotFound if there
// is none.
StatusOr<std::string> JournalToReadIn(const std::string& dir,
                                      const std::string& name);

}  // namespace migserve::controller

#endif  // MIGSERVE_CONTROLLER_JOURNAL_DIR_H_
