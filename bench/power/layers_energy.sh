#!/usr/bin/env bash
# Energy of whole runs (FP+BP+WG) of the shipped layers on a configuration, measured from sampled
# activity (docs/power.md, "Sampled activity"), next to the analytical model `fetta run` prints:
# per layer a traced run that records the first W cycles of every N (fetta run --trace DIR
# --trace-sample W/N --json), fetta power on it (one ASAP7 synthesis for all layers), and the
# windows deleted once their activity is read (about 58 KB per traced cycle on the default top).
# A run the wall-cycle model puts under 100 windows is traced whole instead: fewer windows miss
# the run's mix of busy and waiting cycles (docs/power.md, "Sampled activity"), and such a run's
# whole trace is small. Resumable: a layer with its power.json is skipped. Then
# bench/power/model_check.py OUT.
#   bench/power/layers_energy.sh [config] [W/N] [out-dir] [layer...]
#   (defaults: configs/default.yaml, 100/2000, out/layers_energy, the six shipped layers)
set -euo pipefail
cfg=${1:-configs/default.yaml}
sample=${2:-100/2000}
out=${3:-out/layers_energy}
[ $# -gt 3 ] && shift 3 || set --
layers=${*:-"tt_fetta_example tt_transformer_768 ttm_transformer_768 tr_transformer_768 ht_transformer_768 bt_transformer_768"}
fetta=${FETTA:-./build/fetta}
mkdir -p "$out"
[ -d "$out/rtl" ] || "$fetta" gen --config "$cfg" --part top --out "$out/rtl" --no-lint > "$out/gen.log"
first=""
for layer in $layers; do
  d="$out/$layer"
  mkdir -p "$d"
  first=${first:-$layer}
  [ "$layer" = "$first" ] || [ -e "$d/asap7" ] || ln -s "../$first/asap7" "$d/asap7"
  if [ -s "$d/power.json" ]; then echo "== $layer: done before"; continue; fi
  t0=$(date +%s)
  every=${sample#*/}
  predicted=$("$fetta" compile --config "$cfg" --layer "configs/layers/$layer.yaml" --out "$d/program" |
              sed -n 's/^end to end (the wall-cycle model[^:]*: \([0-9]*\) cycles.*/\1/p')
  rm -rf "$d/program"
  if [ "${predicted:-0}" -lt $((100 * every)) ]; then
    trace=(--trace "$d/trace.fst")
    what="whole trace ($predicted cycles)"
  else
    trace=(--trace "$d/trace" --trace-sample "$sample")
    what="sampled $sample"
  fi
  if [ ! -s "$d/run.json" ]; then
    "$fetta" run --config "$cfg" --layer "configs/layers/$layer.yaml" --seed 1 "${trace[@]}" \
      --json > "$d/run.json.tmp" 2> "$d/run.log" || { tail -5 "$d/run.log"; exit 1; }
    mv "$d/run.json.tmp" "$d/run.json"
  fi
  src=${trace[1]}
  t1=$(date +%s)
  size=$(du -sh "$src" | cut -f1)
  "$fetta" power --rtl "$out/rtl" --fst "$src" --run "$d/run.json" --out "$d" > "$d/power.txt" 2> "$d/power.log" ||
    { tail -5 "$d/power.log"; exit 1; }
  rm -rf "$src"
  t2=$(date +%s)
  echo "== $layer: $what, run $((t1 - t0)) s ($size of FST), power $((t2 - t1)) s"
  grep -E "^(total|energy of the run)" "$d/power.txt"
done
