#!/usr/bin/env bash
# Checks what the mutex annotations say (src/util/mutex.h: GUARDED_BY,
# REQUIRES) with clang's thread-safety analysis: every .cc under src/ that
# includes util/mutex.h, or whose own header does, compiled with
# -fsyntax-only -Wthread-safety -Werror: the check in seconds, without a
# build. GCC ignores the annotations; every clang build enforces them (CI's
# `make asan` is one). Prints clang's findings and exits 1 if there is one.
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
printf '%s\n' "${files[@]}" |
  xargs -P "${JOBS:-$(nproc)}" -I{} clang++ -std=c++20 -fsyntax-only \
    -Wthread-safety -Werror=thread-safety -Isrc -I/usr/include/coin \
    -DMIGSERVE_VERSION='"0"' {} || status=1
exit $status
