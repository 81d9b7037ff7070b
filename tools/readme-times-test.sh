#!/usr/bin/env bash
# The README's time of `make test` on a fresh clone is the last one
# measured: the figure before "at the last measure" in README.md is the one
# docs/benchmarks.md's "Last measure" line gives, so that the two cannot
# drift apart (a new measure changes both, or this fails).
set -euo pipefail
cd "$(dirname "$0")/.."
figure='[0-9]+ min [0-9]+ s'
readme=$(tr '\n' ' ' <README.md |
  grep -oE "($figure) at the last measure" | grep -oE "$figure" || true)
bench=$(tr '\n' ' ' <docs/benchmarks.md |
  grep -oE "\*\*Last measure\*\* of a fresh clone's \`make test\`: \*\*$figure\*\*" |
  grep -oE "$figure" || true)
[[ $(wc -l <<<"$readme") == 1 && -n $readme ]] || {
  echo "README.md: no one 'N min N s at the last measure' (found: '$readme')" >&2
  exit 1
}
[[ $(wc -l <<<"$bench") == 1 && -n $bench ]] || {
  echo "docs/benchmarks.md: no one '**Last measure** of a fresh clone's" \
    "\`make test\`: **N min N s**' (found: '$bench')" >&2
  exit 1
}
if [[ $readme != "$bench" ]]; then
  echo "README.md says make test took $readme at the last measure;" \
    "docs/benchmarks.md's last measure is $bench" >&2
  exit 1
fi
