#!/bin/sh
# Written by migserve export (dra flavour): creates the ResourceClaims of
# replicas.yaml in the order that makes the scheduler's first-fit
# allocation give every GPU its planned MIG layout (docs/kubernetes.md,
# "Claims that land on the plan"). Each claim waits for the one before
# to be allocated; a claim that gets another device than planned stops
# the script. Run it with kubectl on the cluster: sh dra-apply.sh
set -eu
ns=migserve-replicas
objects="$(dirname "$0")/replicas.yaml"
kubectl apply -f "$objects" -l '!migserve.io/claim-step'
step() {
  kubectl apply -f "$objects" -l "migserve.io/claim-step=$1"
  got=""
  for _ in $(seq 1 300); do
    got="$(kubectl -n "$ns" get resourceclaim "$2" \
      -o jsonpath='{.status.allocation.devices.results[0].device}')"
    [ -n "$got" ] && break
    sleep 1
  done
  if [ "$got" != "$3" ]; then
    echo "dra-apply: claim $2 got device '$got', planned $3" >&2
    exit 1
  fi
}
release() {
  kubectl -n "$ns" delete pod/"$1" resourceclaim/"$1" --wait=false
}
step 0 bert-1-node-0-g0-1g-10gb-0 gpu-0-mig-1g10gb-19-0
step 1 bert-1-node-0-g0-1g-10gb-1 gpu-0-mig-1g10gb-19-1
step 2 bert-1-node-0-g0-1g-10gb-2 gpu-0-mig-1g10gb-19-2
step 3 bert-1-node-0-g0-1g-10gb-3 gpu-0-mig-1g10gb-19-3
step 4 bert-1-node-0-g0-1g-10gb-4 gpu-0-mig-1g10gb-19-4
step 5 bert-1-node-0-g0-1g-10gb-5 gpu-0-mig-1g10gb-19-5
step 6 bert-1-node-0-g0-1g-10gb-6 gpu-0-mig-1g10gb-19-6
step 7 bert-1-node-0-g1-1g-10gb-0 gpu-1-mig-1g10gb-19-0
step 8 bert-1-node-0-g1-1g-10gb-1 gpu-1-mig-1g10gb-19-1
step 9 bert-1-node-0-g1-1g-10gb-2 gpu-1-mig-1g10gb-19-2
step 10 bert-1-node-0-g1-1g-10gb-3 gpu-1-mig-1g10gb-19-3
step 11 bert-1-node-0-g1-1g-10gb-4 gpu-1-mig-1g10gb-19-4
step 12 bert-1-node-0-g1-1g-10gb-5 gpu-1-mig-1g10gb-19-5
step 13 bert-1-node-0-g1-1g-10gb-6 gpu-1-mig-1g10gb-19-6
step 14 bert-1-node-0-g2-1g-10gb-0 gpu-2-mig-1g10gb-19-0
step 15 bert-1-node-0-g2-1g-10gb-1 gpu-2-mig-1g10gb-19-1
step 16 bert-1-node-0-g2-1g-10gb-2 gpu-2-mig-1g10gb-19-2
step 17 bert-1-node-0-g2-1g-10gb-3 gpu-2-mig-1g10gb-19-3
step 18 bert-1-node-0-g2-1g-10gb-4 gpu-2-mig-1g10gb-19-4
step 19 bert-1-node-0-g2-1g-10gb-5 gpu-2-mig-1g10gb-19-5
step 20 bert-1-node-0-g2-1g-10gb-6 gpu-2-mig-1g10gb-19-6
step 21 inceptionv3-1-node-0-g3-1g-10gb-0 gpu-3-mig-1g10gb-19-0
step 22 inceptionv3-1-node-0-g3-1g-10gb-1 gpu-3-mig-1g10gb-19-1
step 23 inceptionv3-1-node-0-g3-1g-10gb-2 gpu-3-mig-1g10gb-19-2
step 24 densenet169-1-node-0-g3-1g-10gb-3 gpu-3-mig-1g10gb-19-3
step 25 densenet169-1-node-0-g3-3g-40gb-4 gpu-3-mig-3g40gb-9-4
step 26 densenet169-1-node-0-g4-1g-10gb-0 gpu-4-mig-1g10gb-19-0
step 27 densenet169-1-node-0-g4-1g-10gb-1 gpu-4-mig-1g10gb-19-1
step 28 densenet169-1-node-0-g4-1g-10gb-2 gpu-4-mig-1g10gb-19-2
step 29 densenet169-1-node-0-g4-1g-10gb-3 gpu-4-mig-1g10gb-19-3
step 30 resnet101-1-node-0-g4-3g-40gb-4 gpu-4-mig-3g40gb-9-4
step 31 densenet169-1-node-0-g5-1g-10gb-0 gpu-5-mig-1g10gb-19-0
step 32 densenet169-1-node-0-g5-1g-10gb-1 gpu-5-mig-1g10gb-19-1
step 33 resnet101-1-node-0-g5-1g-10gb-2 gpu-5-mig-1g10gb-19-2
step 34 resnet50-1-node-0-g5-1g-10gb-3 gpu-5-mig-1g10gb-19-3
step 35 resnet50-1-node-0-g5-3g-40gb-4 gpu-5-mig-3g40gb-9-4
