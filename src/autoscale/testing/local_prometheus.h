// A real Prometheus server on 127.0.0.1 for tests: Debian's binary
// (tools/install-deps.sh; $MIGSERVE_PROMETHEUS overrides it) scraping the
// given targets every second (and those a file_sd file lists), its data in a
// scratch directory; stopped (SIGTERM, then waited for) when destroyed.
#ifndef MIGSERVE_AUTOSCALE_TESTING_LOCAL_PROMETHEUS_H_
#define MIGSERVE_AUTOSCALE_TESTING_LOCAL_PROMETHEUS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "util/status_or.h"

namespace migserve::autoscale {

struct ScrapeTarget {
  std::string address;                        // host:port
  std::map<std::string, std::string> labels;  // put on its series
};

class LocalPrometheus {
 public:
  // Starts Prometheus and waits until it is ready (/-/ready), at most 30 s.
  // Returns Unavailable with its log's last lines if it is not. With
  // `file_sd`, it also scrapes the targets that file lists (Prometheus's
  // file_sd_configs JSON: [{"targets": [...], "labels": {...}}]), reread
  // when it changes, as Kubernetes pod discovery would give them.
  static StatusOr<std::unique_ptr<LocalPrometheus>> Start(
      const std::vector<ScrapeTarget>& targets,
      const std::string& file_sd = "");
  ~LocalPrometheus();

  std::string url() const;  // http://127.0.0.1:port

 private:
  LocalPrometheus() = default;

  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_;
};

// The binary: $MIGSERVE_PROMETHEUS, else /usr/bin/prometheus.
std::string PrometheusBinary();

}  // namespace migserve::autoscale

#endif  // MIGSERVE_AUTOSCALE_TESTING_LOCAL_PROMETHEUS_H_
