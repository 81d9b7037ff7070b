#!/usr/bin/env bash
# Checks what the mutex annotations say (src/util/mutex.h: GUARDED_BY,
# REQUIRES) with clang's thread-safety analysis: every .cc under src/ that
# includes util/mutex.h, or whose own header does, compiled with
# -fsyntax-only -Wthread-safety -Werror: the check in seconds, without a
# build. GCC ignores the annotations; every clang build enforces them (CI's
# `make asan` is one). A standard mutex outside util/mutex.h (product code:
# tests and their doubles may use it) is a finding too. Prints the
# findings and exits 1 if there is one.
#
# usage: tools/thread-safety.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang++ >/dev/null || { echo "thread-safety: needs clang++" >&2; exit 2; }
mapfile -t files < <(
  for cc in $(git ls-files 'src/*.cc'); do
    header="${cc%.cc}.h"
    if grep -q '#include "util/mutex.h"' "$cc" ||
       { [[ -f "$header" ]] && grep -q '#include "util/mutex.h"' "$header"; }; then
      echo "$cc"
    fi
  done)
echo "thread-safety: ${#files[@]} files" >&2
status=0
# A mutex of the standard library's in product code is one the analysis
# cannot see: util/mutex.h's Mutex is the one place that wraps it.
bare=$(git grep -nE 'std::(recursive_|shared_|timed_)?mutex\b' -- 'src/*.cc' \
  'src/*.h' ':!src/util/mutex.h' ':!*_test.cc' ':!src/*/testing/*' || true)
if [[ -n "$bare" ]]; then
  echo "thread-safety: a bare standard mutex (use util/mutex.h's Mutex):" >&2
  echo "$bare" >&2
  status=1
fi
printf '%s\n' "${files[@]}" |
  xargs -P "${JOBS:-$(nproc)}" -I{} clang++ -std=c++20 -fsyntax-only \
    -Wthread-safety -Werror=thread-safety -Isrc -I/usr/include/coin \
    -DMIGSERVE_VERSION='"0"' {} || status=1
exit $status
