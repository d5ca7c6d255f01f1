#!/bin/sh
# Power per block and energy per phase of a configuration on a layer, from the runs' own activity
# (docs/power.md): generate the top, run each phase traced (fetta run --trace --json: a second,
# traced model), then fetta power on each trace (ASAP7 synthesis with the hierarchy kept, once;
# OpenSTA with the activity annotated). Prints each phase's table and energy line and keeps
# <out>/<phase>/power.json (with its "energy" section), activity.json and the run's report.
#   bench/power/run_power.sh [config] [layer] [phases] [out-dir]
#   (defaults: configs/default.yaml, configs/layers/tt_fetta_example.yaml, fp,bp,wg, out/bench_power)
# The default top takes long: a traced Verilation, the traced runs, and the top's synthesis.
set -eu
cfg=${1:-configs/default.yaml}
layer=${2:-configs/layers/tt_fetta_example.yaml}
phases=${3:-fp,bp,wg}
out=${4:-out/bench_power}
fetta=${FETTA:-./build/fetta}
mkdir -p "$out"
"$fetta" gen --config "$cfg" --part top --out "$out/rtl" --no-lint > "$out/gen.log"
first_phase=""
for phase in $(echo "$phases" | tr ',' ' '); do
  t0=$(date +%s)
  mkdir -p "$out/$phase"
  if [ ! -s "$out/$phase/run.json" ]; then
    "$fetta" run --config "$cfg" --layer "$layer" --phases "$phase" --seed 1 --trace "$out/$phase/run.fst" --json \
      > "$out/$phase/run.json.tmp" 2> "$out/$phase/run.log" || { tail -5 "$out/$phase/run.log"; exit 1; }
    mv "$out/$phase/run.json.tmp" "$out/$phase/run.json"
  fi
  t1=$(date +%s)
  # One synthesis for every phase: the later ones reuse the first one's netlist.
  first_phase=${first_phase:-$phase}
  [ "$phase" = "$first_phase" ] || [ -e "$out/$phase/asap7" ] || ln -s "../$first_phase/asap7" "$out/$phase/asap7"
  "$fetta" power --rtl "$out/rtl" --fst "$out/$phase/run.fst" --run "$out/$phase/run.json" --out "$out/$phase" \
    > "$out/$phase/power.txt" 2> "$out/$phase/power.log" || { tail -5 "$out/$phase/power.log"; exit 1; }
  t2=$(date +%s)
  echo "== $phase: traced run $((t1 - t0)) s, synthesis and power $((t2 - t1)) s; $(du -h "$out/$phase/run.fst" | cut -f1) of FST"
  cat "$out/$phase/power.txt"
done
