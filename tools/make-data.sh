#!/usr/bin/env bash
# Regenerates the shipped data from ../shared (ParvaGPU's and MIGPerf's
# measurements) with the migserve binary: the profile CSVs, the six ParvaGPU
# scenarios, and the paper-style workloads (paper 7). Run from the
# repository root after a build.
set -euo pipefail
bin=${MIGSERVE:-build/migserve}
p=data/profiles/a100-80gb.csv
$bin import parvagpu ../shared/data/public/parvagpu -o $p --workloads-dir data/workloads
$bin import migperf ../shared/data/public/migperf/data -o data/profiles/migperf.csv
# The workloads keep the paper's sizes: their rates are scaled under the
# paper's capacity model, and the files use the default (p99) model.
gen() {
  $bin generate -p $p --capacity-model paper "$@" | sed '/^capacity_model: paper$/d'
}
# Four simulation workloads: 24 services, 100 ms SLOs, hundreds of GPUs.
gen --services 24 --latency 100 --distribution normal --mean 1000 --stddev 300 --target-gpus 150 --seed 1 >data/workloads/normal-1.yaml
gen --services 24 --latency 100 --distribution normal --mean 1000 --stddev 500 --target-gpus 250 --seed 2 >data/workloads/normal-2.yaml
gen --services 24 --latency 100 --distribution lognormal --sigma 1.0 --target-gpus 200 --seed 3 >data/workloads/lognormal-1.yaml
gen --services 24 --latency 100 --distribution lognormal --sigma 1.5 --target-gpus 400 --seed 4 >data/workloads/lognormal-2.yaml
# Day and night: the same five services at peak and at low load.
models=bert,inceptionv3,densenet169,resnet101,resnet50
gen --services 5 --models $models --latency 100 --target-gpus 16 --seed 7 >data/workloads/day.yaml
gen --services 5 --models $models --latency 100 --target-gpus 5 --seed 8 >data/workloads/night.yaml
# Their optimal deployments, the controller's transition pair. The committed
# pair was made before the router entered the capacity model (credits for
# one proxy's rotation); the transition tests' figures are calibrated on it,
# and the serving tests optimize their own. Rerunning this rewrites them.
mkdir -p data/deployments
for w in day night; do
  $bin optimize -w data/workloads/$w.yaml -p $p --algo milp -o data/deployments/$w.json
done
