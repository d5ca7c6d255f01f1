#!/bin/sh
# The three tops side by side on the shipped layers and the paper's kinds of workload (issue #41
# §5-6; docs/results.md, "The paper's kinds of workload"): FETTA (configs/default.yaml) against
# TPU-Offchip (baseline_tpu_offchip.yaml) and the hierarchical array (baseline_hier.yaml), each
# layer FP+BP+WG on the default path. Per layer and top, `fetta compile --json`: the compute
# cycles, the wall-cycle model's end to end (within 0.13 % of the RTL on every shipped layer), the
# bound and where the intermediates go; for FETTA also `fetta run --json` on the RTL (bit-exact,
# its end to end and the model's error), unless --model-only; with --rtl-all the two baselines run
# on their RTL too. LAYERS (a space-separated list) picks the layers, all twelve by default; FLAGS
# adds options to every compile and run (e.g. FLAGS=--no-gather: the host's free permutation, for comparison, docs/dma.md §5).
# Writes <out>/<layer>.<top>.{compile,run}.json, <out>/summary.csv and summary.png; resumable: a
# report that exists is not made again.
#   [LAYERS="..."] [FLAGS="..."] bench/system/run_workloads.sh [out-dir] [fetta binary] [--model-only | --rtl-all]
#   (defaults: out/bench_workloads, ./build/fetta; about 15 minutes on 2 cores with FETTA's RTL
#   runs; --rtl-all on one core: the shipped six about 8 minutes, the paper-like six about 35)
set -eu
out=${1:-out/bench_workloads}
fetta=${2:-./build/fetta}
rtl=1
rtl_tops=default
case "${3:-}" in
  "") ;;
  --model-only) rtl=0 ;;
  --rtl-all) rtl_tops="default baseline_tpu_offchip baseline_hier" ;;
  *) echo "run_workloads.sh: third argument '$3'; allowed: --model-only, --rtl-all, or none" >&2; exit 2 ;;
esac
mkdir -p "$out"
flags=${FLAGS:-}
layers=${LAYERS:-"tt_fetta_example tt_transformer_768 ttm_transformer_768 tr_transformer_768 ht_transformer_768
        bt_transformer_768 tt_atis tt_wmt_long ttm_ucf11 ht_ucf11 tr_ucf11 bt_ucf11"}
tops="default baseline_tpu_offchip baseline_hier"
n=0
total=$(echo $layers | wc -w)
for layer in $layers; do
  n=$((n + 1))
  for top in $tops; do
    f="$out/$layer.$top.compile.json"
    if [ ! -s "$f" ]; then
      echo "[$n/$total] $layer on $top: compile"
      "$fetta" compile --config "configs/$top.yaml" --layer "configs/layers/$layer.yaml" --out "$out/prog.$layer.$top" \
        --json $flags > "$f.tmp"
      mv "$f.tmp" "$f"
      rm -rf "$out/prog.$layer.$top"
    fi
  done
  for top in $rtl_tops; do
    f="$out/$layer.$top.run.json"
    if [ "$rtl" = 1 ] && [ ! -s "$f" ]; then
      echo "[$n/$total] $layer on $top: RTL"
      "$fetta" run --config "configs/$top.yaml" --layer "configs/layers/$layer.yaml" --seed 1 --sim-threads 1 --json \
        $flags > "$f.tmp"
      mv "$f.tmp" "$f"
    fi
  done
done
/usr/bin/python3 - "$out" $layers <<'PY'
import csv, json, math, os, sys
out, layers = sys.argv[1], sys.argv[2:]
tops = {"default": "fetta", "baseline_tpu_offchip": "tpu_offchip", "baseline_hier": "hier"}
rows = []
for layer in layers:
    r = {"layer": layer}
    for top, key in tops.items():
        c = json.load(open(f"{out}/{layer}.{top}.compile.json"))
        e = c["end_to_end"]
        r[f"{key}_compute"] = c["compute_cycles"]
        r[f"{key}_model"] = e["model_cycles"] - e["probe_cycles"]  # the scoreboard's probes are not the top's
        r[f"{key}_bound"] = e["bound_cycles"]
        r[f"{key}_on_chip"] = c["intermediates"]["on_chip"]
        r[f"{key}_intermediates"] = c["intermediates"]["count"]
    for top, key in tops.items():
        run = f"{out}/{layer}.{top}.run.json"
        if os.path.exists(run):
            j = json.load(open(run))
            r[f"{key}_rtl"] = j["end_to_end"]["cycles"] - j["end_to_end"]["probe_cycles"]
            r[f"{key}_rtl_model_error_pct"] = round(j["end_to_end"]["model_error_percent"], 3)
            r[f"{key}_rtl_mismatches"] = sum(s["mismatches"] + s["stored_mismatches"] for s in j["steps"])
    if "tpu_offchip_rtl" in r and "hier_rtl" in r:
        r["rtl_speedup_tpu_offchip"] = r["tpu_offchip_rtl"] / r["fetta_rtl"]
        r["rtl_speedup_hier"] = r["hier_rtl"] / r["fetta_rtl"]
    r["speedup_tpu_offchip"] = r["tpu_offchip_model"] / r["fetta_model"]
    r["speedup_hier"] = r["hier_model"] / r["fetta_model"]
    rows.append(r)
keys = sorted({k for r in rows for k in r}, key=lambda k: (k != "layer", k))
with open(f"{out}/summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=keys)
    w.writeheader()
    w.writerows(rows)
geo = lambda v: math.exp(sum(math.log(x) for x in v) / len(v))
print(f"{'layer (FP+BP+WG)':20} {'FETTA e2e':>10} {'RTL':>10} {'err %':>6} {'/bound':>6} {'on chip':>8} "
      f"{'TPU-Off':>10} {'speedup':>7} {'hier':>10} {'speedup':>7}")
for r in rows:
    print(f"{r['layer']:20} {r['fetta_model']:>10,} {r.get('fetta_rtl', 0):>10,} {r.get('fetta_rtl_model_error_pct', 0):>6.2f} "
          f"{r['fetta_model'] / r['fetta_bound']:>6.2f} {r['fetta_on_chip']:>3}/{r['fetta_intermediates']:<4} "
          f"{r['tpu_offchip_model']:>10,} {r['speedup_tpu_offchip']:>6.2f}x {r['hier_model']:>10,} {r['speedup_hier']:>6.2f}x")
for name, sel in (("shipped six", rows[:6]), ("paper-like six", rows[6:]), ("all", rows)):
    if sel:
        print(f"geomean, {name}: {geo([r['speedup_tpu_offchip'] for r in sel]):.2f}x over TPU-Offchip, "
              f"{geo([r['speedup_hier'] for r in sel]):.2f}x over the hierarchical array")
on_rtl = [r for r in rows if "rtl_speedup_tpu_offchip" in r]
for r in on_rtl:
    print(f"{r['layer']:20} on the RTL: FETTA {r['fetta_rtl']:,}, TPU-Offchip {r['tpu_offchip_rtl']:,} "
          f"({r['rtl_speedup_tpu_offchip']:.2f}x, model error {r['tpu_offchip_rtl_model_error_pct']:.2f} %), hierarchical "
          f"{r['hier_rtl']:,} ({r['rtl_speedup_hier']:.2f}x, model error {r['hier_rtl_model_error_pct']:.2f} %)")
if on_rtl:
    print(f"geomean on the RTL, {len(on_rtl)} layers: {geo([r['rtl_speedup_tpu_offchip'] for r in on_rtl]):.2f}x over "
          f"TPU-Offchip, {geo([r['rtl_speedup_hier'] for r in on_rtl]):.2f}x over the hierarchical array")
bad = sum(r.get(f"{k}_rtl_mismatches", 0) for r in rows for k in tops.values())
print(f"RTL mismatches: {bad}; wrote {out}/summary.csv")
sys.exit(1 if bad else 0)
PY
/usr/bin/python3 "$(dirname "$0")/plot_workloads.py" "$out"
