#!/bin/sh
# Simulation speed of `fetta run` on three tops, each in both views of the RTL (docs/rtl_gen.md,
# "Views"): synthesis (the structural arithmetic) and simulation (behavioural arithmetic proven
# equal to it; what fetta run and the system tests simulate by default), the simulation view on one
# and on two Verilator threads (fetta run's default on two cores). Per row: the model's build
# time (Verilator and the C++ compile, on an empty cache of the script's own), and the simulated
# cycles per second of the whole run (compiler, host model, golden model and scoreboard included,
# as `fetta run` prints it).
# Writes <out>/sim_speed.csv; resumable: a row already there is not measured again. Progress goes
# to stderr.
#   bench/system/sim_speed.sh [out-dir] [fetta binary]
#   (defaults: out/bench_sim_speed, ./build/fetta; about 25 minutes on 2 cores, mostly the
#   synthesis view's builds; run it on an otherwise idle machine)
set -eu
out=${1:-out/bench_sim_speed}
fetta=${2:-./build/fetta}
mkdir -p "$out"
csv="$out/sim_speed.csv"
[ -s "$csv" ] || echo "config,layer,phases,view,threads,build_s,cycles,sim_s,cycles_per_s" > "$csv"
# config | layer | phases
runs="default|tt_fetta_example|fp,bp,wg ce4x4_x4|tt_fetta_example|fp baseline_tpu|tt_fetta_example|fp"
n=0
for run in $runs; do
  for variant in synthesis/1 simulation/1 simulation/2; do
    n=$((n + 1))
    view=${variant%/*}; threads=${variant#*/}
    cfg=${run%%|*}; rest=${run#*|}; layer=${rest%%|*}; phases=${rest#*|}
    if grep -q "^$cfg,$layer,\"$phases\",$view,$threads," "$csv"; then echo "[$n/9] $cfg $variant: done before" >&2; continue; fi
    echo "[$n/9] $cfg $layer $phases, $view view, $threads thread(s) ..." >&2
    log="$out/$cfg.$view.$threads.log"
    "$fetta" run --config "configs/$cfg.yaml" --layer "configs/layers/$layer.yaml" --phases "$phases" --seed 1 \
      --view "$view" --sim-threads "$threads" --cache-dir "$out/cache" > "$log" 2>&1
    build=$(sed -n 's/^fetta run: model built in \([0-9.]*\) s$/\1/p' "$log")
    speed=$(sed -n 's/^simulated \([0-9]*\) cycles in \([0-9.]*\) s (\([0-9]*\) cycles\/s)$/\1,\2,\3/p' "$log")
    [ -n "$speed" ] || { echo "no speed line in $log" >&2; exit 1; }
    echo "$cfg,$layer,\"$phases\",$view,$threads,${build:-cached},$speed" >> "$csv"
    echo "    $(tail -n 1 "$csv")" >&2
  done
done
cat "$csv"
