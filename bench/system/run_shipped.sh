#!/bin/sh
# The shipped tensorized layers (the paper's TT example and configs/layers/*_transformer_768.yaml)
# end to end on one configuration: RTL cycles, model error, PE utilization per contraction and
# phase, every result checked against the golden model; which intermediates stay on chip (STORE)
# and why the others go through the host. Writes <out>/<layer>.json (the report of
# `fetta run --json`) and prints each phase's totals, then per layer the serial end-to-end sum
# (compute + STORE + host + DRAM) and the reasons over all layers.
#   bench/system/run_shipped.sh [config] [out-dir] [extra fetta run options, e.g. --through-host]
#   (defaults: configs/default.yaml, out/bench_system)
set -eu
cfg=${1:-configs/default.yaml}
out=${2:-out/bench_system}
extra=${3:-}
mkdir -p "$out"
for layer in configs/layers/tt_fetta_example.yaml configs/layers/*_transformer_768.yaml; do
  name=$(basename "$layer" .yaml)
  # shellcheck disable=SC2086  # $extra is a list of options
  ./build/fetta run --config "$cfg" --layer "$layer" --seed 1 --json $extra > "$out/$name.json"
  /usr/bin/python3 - "$out/$name.json" <<'PY'
import json, sys
sys.path.insert(0, "scripts")
from shipped_table import phase_totals
r = json.load(open(sys.argv[1]))
tot = phase_totals(r)
for (layer, phase), t in tot.items():
    print(f"{layer:22} {phase}  MACs {t['macs']:>12,}  cycles {t['cycles']:>9,}  model {t['predicted_cycles']:>9,}  "
          f"util {100 * t['macs'] / (t['cycles'] * r['pes']):5.1f}%  on chip {t['on_chip']:>2}/{t['intermediates']:<2}  "
          f"store {t['store_cycles']:>6,}  host {t['host_cycles']:>9,}  DRAM {t['dram_cycles']:>9,}  "
          f"{'match' if t['bad'] == 0 else str(t['bad']) + ' MISMATCHES'}")
print(f"  simulated {r['sim_cycles']:,} cycles in {r['sim_seconds']:.1f} s")
PY
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, re, sys
from collections import Counter
why = Counter()
# Per layer, all phases: the serial end-to-end sum docs/results.md compares (compute + STORE +
# host + DRAM cycles), intermediates on chip, output-stationary contractions.
cols = ("cycles", "store_cycles", "host_cycles", "dram_cycles")
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    steps = json.load(open(f))["steps"]
    inter = [s for s in steps if s["step"] + 1 < s["steps"]]  # contractions whose result is an intermediate
    t = [sum(s[k] for s in steps) for k in cols]
    rows.append((steps[0]["layer"] if steps else f, t, sum(s["kept_on_chip"] for s in inter), len(inter),
                 sum("output-stationary" in s["mapping"] for s in steps), len(steps)))
    for s in inter:
        w = "kept on chip" if s["kept_on_chip"] else re.sub(r"\d[\d,]*", "N", s["through_host_because"])
        why[w] += 1
if rows:
    rows.append(("all layers", [sum(r[1][i] for r in rows) for i in range(len(cols))],
                 *(sum(r[j] for r in rows) for j in (2, 3, 4, 5))))
print(f"{'layer (FP+BP+WG)':22} {'compute':>10} {'STORE':>9} {'host':>10} {'DRAM':>10} {'end to end':>11}  on chip  OS")
for name, t, on, inter, os_, n in rows:
    print(f"{name:22} {t[0]:>10,} {t[1]:>9,} {t[2]:>10,} {t[3]:>10,} {sum(t):>11,}  {on:>3}/{inter:<3}  {os_}/{n}")
print(f"intermediates of every layer ({sum(why.values())}):")
for w, n in why.most_common():
    print(f"  {n:>4}  {w}")
PY
