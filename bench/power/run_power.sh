#!/bin/sh
# Power per block of a configuration on a layer, from the run's own activity (docs/power.md):
# generate the top, run the layer traced (fetta run --trace: a second, traced model), then
# fetta power (ASAP7 synthesis with the hierarchy kept, OpenSTA with the activity annotated).
# Prints the table and keeps <out>/power/power.json, activity.json and the run's report.
#   bench/power/run_power.sh [config] [layer] [phases] [out-dir]
#   (defaults: configs/default.yaml, configs/layers/tt_fetta_example.yaml, fp,bp,wg, out/bench_power)
# The default top takes long: a traced Verilation, the traced run, and the top's synthesis.
set -eu
cfg=${1:-configs/default.yaml}
layer=${2:-configs/layers/tt_fetta_example.yaml}
phases=${3:-fp,bp,wg}
out=${4:-out/bench_power}
mkdir -p "$out"
t0=$(date +%s)
./build/fetta gen --config "$cfg" --part top --out "$out/rtl" --no-lint > "$out/gen.log"
./build/fetta run --config "$cfg" --layer "$layer" --phases "$phases" --seed 1 --trace "$out/run.fst" --json \
  > "$out/run.json" 2> "$out/run.log"
t1=$(date +%s)
./build/fetta power --rtl "$out/rtl/top" --fst "$out/run.fst" --out "$out/power" 2> "$out/power.log"
t2=$(date +%s)
echo "traced run $((t1 - t0)) s, synthesis and power $((t2 - t1)) s; $(du -h "$out/run.fst" | cut -f1) of FST"
