#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) with clang under ASan and UBSan in
# build-fuzz/ and runs each for SECONDS (default 20) from its corpus
# (fuzz/corpus/NAME), as many at once as cores (JOBS). New inputs go to a
# scratch directory, so the repository's corpus changes only by hand; a
# crash or sanitizer report fails the run with the input saved as
# build-fuzz/crashes/NAME-*. To keep
# an input that found a bug, fix the bug and copy the input into the corpus.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
tools/install-deps.sh --clang
# A new tree uses Ninja, as the Makefile's do; an old one keeps its own.
generator=()
[[ -f build-fuzz/CMakeCache.txt ]] || generator=(-G Ninja)
cmake -S . -B build-fuzz "${generator[@]}" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMIGSERVE_FUZZ=ON >/dev/null
cmake --build build-fuzz --target fuzz -j "${JOBS:-$(nproc)}"
mkdir -p build-fuzz/crashes
# One harness: SECONDS from its corpus; on a crash or sanitizer report, the
# end of its log.
fuzz_one() {
  local name scratch
  name=$(basename "$1")
  scratch=$(mktemp -d)
  if build-fuzz/fuzz/fuzz_"$name" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix=build-fuzz/crashes/"$name"- "$scratch" "$1" \
      2> build-fuzz/"$name".log; then
    rm -rf "$scratch"
    echo "fuzz: $name for ${seconds}s:" \
      "$(grep -h "stat::number_of_executed_units" build-fuzz/"$name".log)" >&2
  else
    rm -rf "$scratch"
    echo "fuzz: $name failed:" >&2
    tail -40 build-fuzz/"$name".log >&2
    return 1
  fi
}
export -f fuzz_one
export seconds
# A harness is one process on one core: as many at once as cores.
printf '%s\n' fuzz/corpus/*/ |
  xargs -P "${JOBS:-$(nproc)}" -I{} bash -c 'fuzz_one "$1"' _ {} ||
  { echo "fuzz: a harness failed (inputs in build-fuzz/crashes)" >&2; exit 1; }
echo "fuzz: no crash" >&2
