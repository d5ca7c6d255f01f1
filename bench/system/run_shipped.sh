#!/bin/sh
# The shipped tensorized layers (configs/layers/*_transformer_768.yaml and the paper's TT
# example) end to end on one configuration: RTL cycles, model error, PE utilization per phase,
# every result checked against the golden model. Results: <out>/<layer>.json and <layer>.txt.
#   bench/system/run_shipped.sh [config] [out-dir]      (default: configs/default.yaml, out/bench_system)
set -eu
cfg=${1:-configs/default.yaml}
out=${2:-out/bench_system}
mkdir -p "$out"
for layer in configs/layers/tt_fetta_example.yaml configs/layers/*_transformer_768.yaml; do
  name=$(basename "$layer" .yaml)
  echo "== $name on $cfg"
  ./build/fetta run --config "$cfg" --layer "$layer" --seed 1 > "$out/$name.txt" 2> "$out/$name.log"
  grep -E '^[a-z].* / |total:|simulated' "$out/$name.txt"
  ./build/fetta run --config "$cfg" --layer "$layer" --seed 1 --json > "$out/$name.json" 2>/dev/null
done
