#!/usr/bin/env bash
# Proves tools/check-floors.sh catches what it is for: the real tree passes;
# a copy of it with one include run back up the floors, one sibling include
# and one test double in product code fails, naming each file and line;
# includes a test may make pass.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
check="$here/check-floors.sh"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
expect() {  # expect DESCRIPTION WANT_RC PATTERN...
  local what="$1" want="$2"; shift 2
  local rc=0
  "$check" "$tmp/src" > "$tmp/out" 2>&1 || rc=$?
  if [[ "$rc" != "$want" ]]; then
    echo "FAIL: $what: exit $rc, want $want"; cat "$tmp/out"; failures=$((failures + 1))
    return
  fi
  for pattern in "$@"; do
    if ! grep -qF -- "$pattern" "$tmp/out"; then
      echo "FAIL: $what: no line with '$pattern' in:"; cat "$tmp/out"
      failures=$((failures + 1))
    fi
  done
  echo "ok: $what"
}

# A fresh copy of the tree to break one way.
fresh() { rm -rf "$tmp/src" && cp -r "$here/../src" "$tmp/src"; }

fresh
expect "the tree as it is" 0

printf '#include "cli/command.h"\n' >> "$tmp/src/util/status.h"
line=$(wc -l < "$tmp/src/util/status.h")
expect "util including cli" 1 \
  "src/util/status.h:$line: \"cli/command.h\" runs back up the floors: util is below cli"

fresh
printf '#include "proxy/nginx_config.h"\n' >> "$tmp/src/agent/mig_driver.cc"
printf '#include "kube/testing/api_server_standin.h"\n' >> "$tmp/src/kubernetes/export.cc"
printf '#include "agent/testing/fake_nvml.h"\n#include "kube/testing/test_certificate.h"\n' \
  >> "$tmp/src/cli/cli_test.cc"
expect "a sibling, and a test double in product code" 1 \
  "\"proxy/nginx_config.h\": agent may not include its sibling proxy" \
  "src/kubernetes/export.cc:" "product code includes the test double"
if grep -q cli_test "$tmp/out"; then
  echo "FAIL: a test's include of lower test doubles was refused"; failures=$((failures + 1))
fi

fresh
printf '#include <coin/CbcModel.hpp>\n' >> "$tmp/src/controller/degraded_target.cc"
line=$(wc -l < "$tmp/src/controller/degraded_target.cc")
expect "the MILP solver named outside its room" 1 \
  "src/controller/degraded_target.cc:$line:#include <coin/CbcModel.hpp>: names the MILP solver outside optimizer/milp/"

fresh
printf '#include "optimizer/milp/search.h"\n' >> "$tmp/src/optimizer/milp/lp_bounds.h"
expect "the MILP solver reached through a header of its room" 1 \
  "src/optimizer/milp/cbc_run.h: included from outside optimizer/milp/" \
  "src/optimizer/milp/mig_model.h: included from outside optimizer/milp/"

fresh
printf 'static std::mutex stray_mu;\n' >> "$tmp/src/proxy/nginx_config.cc"
printf 'static std::mutex test_mu;\n' >> "$tmp/src/proxy/nginx_config_test.cc"
line=$(wc -l < "$tmp/src/proxy/nginx_config.cc")
expect "a bare std::mutex in product code" 1 \
  "src/proxy/nginx_config.cc:$line:static std::mutex stray_mu;: a bare std::mutex"
if grep -q nginx_config_test "$tmp/out"; then
  echo "FAIL: a test's std::mutex was refused"; failures=$((failures + 1))
fi

if ((failures)); then echo "check-floors-test: $failures failed"; exit 1; fi
echo "check-floors-test: all passed"
