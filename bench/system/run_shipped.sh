#!/bin/sh
# The shipped tensorized layers (the paper's TT example and configs/layers/*_transformer_768.yaml)
# end to end on one configuration: RTL cycles, model error, PE utilization per contraction and
# phase, every result checked against the golden model. Writes <out>/<layer>.json (the report of
# `fetta run --json`) and prints each phase's totals.
#   bench/system/run_shipped.sh [config] [out-dir]      (default: configs/default.yaml, out/bench_system)
set -eu
cfg=${1:-configs/default.yaml}
out=${2:-out/bench_system}
mkdir -p "$out"
for layer in configs/layers/tt_fetta_example.yaml configs/layers/*_transformer_768.yaml; do
  name=$(basename "$layer" .yaml)
  ./build/fetta run --config "$cfg" --layer "$layer" --seed 1 --json > "$out/$name.json"
  /usr/bin/python3 - "$out/$name.json" <<'PY'
import json, sys
from collections import defaultdict
r = json.load(open(sys.argv[1]))
tot = defaultdict(lambda: [0, 0, 0, 0, 0])
for s in r["steps"]:
    t = tot[(s["layer"], s["phase"])]
    t[0] += s["macs"]; t[1] += s["cycles"]; t[2] += s["predicted_cycles"]; t[3] += s["host_cycles"]; t[4] += s["mismatches"]
for (layer, phase), (macs, cyc, pred, host, bad) in tot.items():
    print(f"{layer:22} {phase}  MACs {macs:>12,}  cycles {cyc:>9,}  model {pred:>9,}  "
          f"util {100 * macs / (cyc * r['pes']):5.1f}%  host {host:>9,}  {'match' if bad == 0 else f'{bad} MISMATCHES'}")
print(f"  simulated {r['sim_cycles']:,} cycles in {r['sim_seconds']:.1f} s")
PY
done
