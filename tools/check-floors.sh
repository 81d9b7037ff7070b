#!/usr/bin/env bash
# Checks every #include "..." under a source tree against the floors of
# tools/floors.txt: a module includes only itself and the modules below it
# that its row names (and theirs, transitively); tests and test doubles may
# also include the testing/ headers of those modules and util/test_util.h.
# The MILP solver is named only in its room: outside src/optimizer/milp/ no
# file includes a COIN-OR header or names a COIN type (Cbc..., Clp...,
# Osi..., Coin...), nor a header of that room that does, directly or
# through another of its headers; the rest reach it through
# optimizer/milp/solve.h.
# Prints each offending include or name as file:line: reason and exits 1 if
# there is one, 0 otherwise.
#
# usage: tools/check-floors.sh [SRC_DIR [FLOORS_FILE]]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="${1:-$here/../src}"
floors="${2:-$here/floors.txt}"
[[ -d "$src" ]] || { echo "check-floors: $src: no such directory" >&2; exit 2; }
[[ -f "$floors" ]] || { echo "check-floors: $floors: no such file" >&2; exit 2; }

rc=0
find "$src" -type f \( -name '*.h' -o -name '*.cc' \) | sort |
  awk -v src="$src/" -v floors="$floors" '
  # A test double: a file of a testing/ folder or the shared test helpers.
  function double(path) {
    return path ~ /(^|\/)testing\// || path ~ /^util\/test_util\.(h|cc)$/
  }
  # The module whose folder is the longest prefix of `path`.
  function module_of(path,    m, best, len) {
    best = ""; len = -1
    for (m in folder) {
      if (index(path, folder[m] "/") == 1 && length(folder[m]) > len) {
        best = m; len = length(folder[m])
      }
    }
    return best
  }
  BEGIN {
    while ((getline line < floors) > 0) {
      sub(/#.*/, "", line)
      n = split(line, f, " ")
      if (n < 2) continue
      folder[f[1]] = f[2]
      deps[f[1]] = ""
      for (i = 3; i <= n; ++i) deps[f[1]] = deps[f[1]] " " f[i]
      for (i = 3; i <= n; ++i) named[f[i]] = 1
    }
    for (m in named) if (!(m in folder)) {
      printf "%s: module %s is named but has no row\n", floors, m
      bad = 1
    }
    # allowed[m, d]: m may include d. The transitive closure of the rows,
    # by rounds until nothing is added.
    for (m in folder) {
      n = split(deps[m], list, " ")
      for (i = 1; i <= n; ++i) allowed[m, list[i]] = 1
    }
    do {
      added = 0
      for (m in folder) for (d in folder) for (e in folder) {
        if (allowed[m, d] && allowed[d, e] && !allowed[m, e]) {
          allowed[m, e] = 1
          added = 1
        }
      }
    } while (added)
  }
  {
    file = $0
    rel = substr(file, length(src) + 1)
    from = module_of(rel)
    if (from == "") {
      printf "%s: in no module of %s\n", file, floors
      bad = 1
      next
    }
    is_test = (rel ~ /_test\.cc$/ || double(rel))
    lineno = 0
    while ((getline text < file) > 0) {
      ++lineno
      if (text !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
      inc = text
      sub(/^[ \t]*#[ \t]*include[ \t]*"/, "", inc)
      sub(/".*/, "", inc)
      if (index(inc, "/") == 0) continue  # a generated or local header
      to = module_of(inc)
      if (to == "") {
        printf "%s:%d: includes \"%s\", in no module of %s\n", file, lineno, inc, floors
        bad = 1
        continue
      }
      if (double(inc) && !is_test) {
        printf "%s:%d: product code includes the test double \"%s\"\n", file, lineno, inc
        bad = 1
        continue
      }
      if (to == from || allowed[from, to]) continue
      if (allowed[to, from]) {
        printf "%s:%d: \"%s\" runs back up the floors: %s is below %s\n", file, lineno, inc, from, to
      } else {
        printf "%s:%d: \"%s\": %s may not include its sibling %s (tools/floors.txt)\n", file, lineno, inc, from, to
      }
      bad = 1
    }
    close(file)
  }
  END { exit bad ? 1 : 0 }' || rc=1
coin=$(cd "$src" && grep -rnE '#[[:space:]]*include[[:space:]]*<coin/|\<(Cbc|Clp|Osi|Coin)[A-Z][A-Za-z]*' \
  --include='*.h' --include='*.cc' . | grep -v '^\./optimizer/milp/' || true)
bare=$(cd "$src" && grep -rnE 'std::(recursive_|shared_|timed_)?mutex\>' \
  --include='*.h' --include='*.cc' . |
  grep -v -e '^\./util/mutex\.h:' -e '_test\.cc:' -e '/testing/' || true)
if [[ -n $bare ]]; then
  sed -e "s|^\./|$src/|" -e 's|$|: a bare std::mutex the thread-safety analysis cannot follow (use util/mutex.h)|' <<<"$bare"
  rc=1
fi
# Nor through a header of optimizer/milp/ that one outside includes: such a
# header may include no COIN header, directly or through another of the
# room's headers (milp_optimizer.h reached CBC through search.h: issue 94).
outside=$(cd "$src" && grep -rhoE '#[[:space:]]*include[[:space:]]*"optimizer/milp/[a-z_]+\.h"' \
  --include='*.h' --include='*.cc' . --exclude-dir=milp | sed -E 's/.*"(.*)"/\1/' | sort -u || true)
declare -A reached=()
todo=($outside)
while ((${#todo[@]})); do
  header=${todo[0]}; todo=("${todo[@]:1}")
  [[ -n ${reached[$header]:-} || ! -f $src/$header ]] && continue
  reached[$header]=1
  if grep -qE '#[[:space:]]*include[[:space:]]*<coin/' "$src/$header"; then
    coin+=$'\n'"./$header: included from outside optimizer/milp/"
  fi
  todo+=($(grep -oE '#[[:space:]]*include[[:space:]]*"optimizer/milp/[a-z_]+\.h"' "$src/$header" |
    sed -E 's/.*"(.*)"/\1/' || true))
done
coin=$(sed '/^$/d' <<<"$coin")
if [[ -n $coin ]]; then
  sed -e "s|^\./|$src/|" -e 's|$|: names the MILP solver outside optimizer/milp/ (use optimizer/milp/solve.h)|' <<<"$coin"
  rc=1
fi
exit $rc
