#!/usr/bin/env bash
# Writes the shipped rate traces (data/traces/, docs/autoscale.md) for the
# services of data/workloads/normal-1.yaml, whose rates are the peaks:
#   normal-1-diurnal.csv   a day in 5-minute steps: each service at 20% of
#                          its rate at 4:00 rising to 100% at 16:00 (shifted
#                          by up to an hour per service), +-3% noise
#   normal-1-flapping.csv  six hours in 5-minute steps: each service
#                          alternating every 20 minutes between 50% and 80%
#                          of its rate
# usage: tools/make-traces.sh
set -euo pipefail
cd "$(dirname "$0")/.."
workload=data/workloads/normal-1.yaml
services() {  # name rate, one service a line
  sed -n 's/.*name: *\([^,]*\),.*throughput: *\([0-9.]*\).*/\1 \2/p' "$workload"
}
services | awk 'BEGIN { print "time_s,service,rate"; pi = atan2(0, -1) }
  { name[NR] = $1; peak[NR] = $2 }
  END {
    for (t = 0; t <= 86400; t += 300) {
      for (i = 1; i <= NR; ++i) {
        shift = ((i - 1) % 5 - 2) * 1800
        h = (t - 4 * 3600 - shift) / 86400
        level = 0.2 + 0.8 * (1 - cos(2 * pi * h)) / 2
        noise = 0.03 * sin(i * 12.9898 + t * 0.0078233)
        printf "%d,%s,%.1f\n", t, name[i], peak[i] * level * (1 + noise)
      }
    }
  }' > data/traces/normal-1-diurnal.csv
services | awk 'BEGIN { print "time_s,service,rate" }
  { name[NR] = $1; peak[NR] = $2 }
  END {
    for (t = 0; t <= 6 * 3600; t += 300) {
      level = int(t / 1200) % 2 == 0 ? 0.5 : 0.8
      for (i = 1; i <= NR; ++i) printf "%d,%s,%.1f\n", t, name[i], peak[i] * level
    }
  }' > data/traces/normal-1-flapping.csv
