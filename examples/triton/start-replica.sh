#!/bin/bash
# Starts one migserve replica on Triton: copies the model's directory from the
# read-only repository, writes its config.pbtxt from config.pbtxt.template
# with the replica's batch and process count, and runs tritonserver with that
# one model. Shipped to pods as the ConfigMap triton-start-replica
# (kubectl create configmap triton-start-replica --from-file=start-replica.sh).
# MODEL_REPOSITORY and REPLICA_REPOSITORY move the two directories (tests).
set -euo pipefail
models=${MODEL_REPOSITORY:-/models}
repo=${REPLICA_REPOSITORY:-/tmp/models}
mkdir -p "$repo"
cp -r "$models/$MIGSERVE_MODEL" "$repo/"
template="$repo/$MIGSERVE_MODEL/config.pbtxt.template"
# The plan gave this replica a batch and a count of model instances (its
# credit assumes both): a template that fixes either would run another
# replica than the one planned, so it is refused, not followed.
if [ ! -f "$template" ]; then
  echo "start-replica: $MIGSERVE_MODEL has no config.pbtxt.template in" \
    "$models (a config.pbtxt with @MAX_BATCH_SIZE@ and @INSTANCES@)" >&2
  exit 1
fi
for placeholder in @MAX_BATCH_SIZE@ @INSTANCES@; do
  if ! grep -q "$placeholder" "$template"; then
    echo "start-replica: $MIGSERVE_MODEL/config.pbtxt.template has no" \
      "$placeholder: the replica was planned with batch $MIGSERVE_BATCH and" \
      "$MIGSERVE_PROCS instance(s); write max_batch_size: @MAX_BATCH_SIZE@" \
      "and instance_group [{ count: @INSTANCES@ }]" >&2
    exit 1
  fi
done
sed -e "s/@MAX_BATCH_SIZE@/$MIGSERVE_BATCH/g" \
    -e "s/@INSTANCES@/$MIGSERVE_PROCS/g" \
    -e "s/@MAX_QUEUE_DELAY_US@/${MAX_QUEUE_DELAY_US:-2000}/g" \
    "$template" > "$repo/$MIGSERVE_MODEL/config.pbtxt"
rm "$template"
exec tritonserver --model-repository="$repo" --model-control-mode=explicit \
  --load-model="$MIGSERVE_MODEL" --http-port=8000 --grpc-port=8001 \
  --metrics-port=8002
