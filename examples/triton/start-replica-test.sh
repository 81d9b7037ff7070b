#!/bin/bash
# Runs start-replica.sh as a replica with batch 32 and 2 processes would,
# with a stand-in tritonserver, and checks the config.pbtxt it writes and the
# command it runs. Usage: start-replica-test.sh (from anywhere).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
printf '#!/bin/sh\necho "tritonserver $*"\n' > "$work/bin/tritonserver"
chmod +x "$work/bin/tritonserver"
out=$(PATH="$work/bin:$PATH" MODEL_REPOSITORY="$here/model-repository" \
  REPLICA_REPOSITORY="$work/repo" MIGSERVE_MODEL=resnet50 MIGSERVE_BATCH=32 \
  MIGSERVE_PROCS=2 MAX_QUEUE_DELAY_US=5000 bash "$here/start-replica.sh")
config="$work/repo/resnet50/config.pbtxt"
fail() { echo "start-replica-test: $1" >&2; cat "$config" >&2; exit 1; }
grep -q '^max_batch_size: 32$' "$config" || fail "max_batch_size is not 32"
grep -q '^    count: 2$' "$config" || fail "instance count is not 2"
grep -q 'preferred_batch_size: \[ 32 \]' "$config" || fail "preferred batch"
grep -q 'max_queue_delay_microseconds: 5000' "$config" || fail "queue delay"
if grep -q '@' "$config"; then fail "a placeholder is left"; fi
[ ! -e "$work/repo/resnet50/config.pbtxt.template" ] || fail "template left"
case "$out" in
  *"--load-model=resnet50"*"--http-port=8000"*) ;;
  *) fail "tritonserver ran as: $out" ;;
esac
# A template with its own instance count runs another replica than the
# planned one: refused, naming the placeholder.
mkdir -p "$work/fixed/resnet50"
sed 's/@INSTANCES@/4/' "$here/model-repository/resnet50/config.pbtxt.template" \
  > "$work/fixed/resnet50/config.pbtxt.template"
if err=$(PATH="$work/bin:$PATH" MODEL_REPOSITORY="$work/fixed" \
  REPLICA_REPOSITORY="$work/repo2" MIGSERVE_MODEL=resnet50 MIGSERVE_BATCH=32 \
  MIGSERVE_PROCS=2 bash "$here/start-replica.sh" 2>&1); then
  fail "a template with a fixed instance count ran: $err"
fi
case "$err" in
  *"config.pbtxt.template has no @INSTANCES@"*"2 instance(s)"*) ;;
  *) fail "unclear refusal: $err" ;;
esac
echo "start-replica-test: ok ($out)"
