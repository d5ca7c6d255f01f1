#!/bin/sh
# End to end on the DMA path (the default) and on the host path (--no-dma) on the shipped layers:
# each layer, all phases, run twice by `fetta run --json`, then per layer:
#   compute     the GEMMs' cycles (the same both ways: the DMA changes no instruction)
#   serial      compute + STORE + host + DRAM of the host path, the columns' sum
#   e2e host    simulated cycles + the DRAM time accounted beside them (`end_to_end.cycles`), --no-dma
#   e2e DMA     the same on the default path: the inputs' and weights' DRAM traffic waited for in
#               the simulation, overlapped with the GEMM before
#   bound       `end_to_end.bound_cycles`: max(compute, the layer's inputs read once and results
#               written once at the DRAM's bandwidth), what issue #22 measures end to end against
#   model       `end_to_end.model_cycles`: the wall-cycle model's prediction (mapper::predict_wall)
#               and its error against the run, on both paths
# Writes <out>/<layer>.{host,dma}.json, <out>/summary.csv and summary.png; resumable: a layer whose two
# reports exist is not run again.
#   bench/system/run_dma.sh [config] [out-dir] [fetta binary]
#   (defaults: configs/default.yaml, out/bench_dma, ./build/fetta)
set -eu
cfg=${1:-configs/default.yaml}
out=${2:-out/bench_dma}
fetta=${3:-./build/fetta}
mkdir -p "$out"
layers="configs/layers/tt_fetta_example.yaml $(ls configs/layers/*_transformer_768.yaml)"
n=0
total=$(echo "$layers" | wc -w)
for layer in $layers; do
  n=$((n + 1))
  name=$(basename "$layer" .yaml)
  for mode in host dma; do
    f="$out/$name.$mode.json"
    if [ -s "$f" ]; then echo "[$n/$total] $name $mode: done before"; continue; fi
    echo "[$n/$total] $name $mode ..."
    flag=--dma
    [ "$mode" = host ] && flag=--no-dma
    "$fetta" run --config "$cfg" --layer "$layer" --seed 1 --json $flag > "$f.tmp"
    mv "$f.tmp" "$f"
  done
done
/usr/bin/python3 - "$out" $layers <<'PY'
import csv, json, os, sys
out, layers = sys.argv[1], sys.argv[2:]
rows = []
for layer in layers:
    name = os.path.basename(layer)[:-5]
    host = json.load(open(f"{out}/{name}.host.json"))
    dma = json.load(open(f"{out}/{name}.dma.json"))
    steps = host["steps"]
    compute = sum(s["cycles"] for s in steps)
    assert compute == sum(s["cycles"] for s in dma["steps"]), f"{name}: compute cycles differ on the DMA path"
    bad = sum(s["mismatches"] + s["stored_mismatches"] for r in (host, dma) for s in r["steps"])
    serial = sum(s[k] for s in steps for k in ("cycles", "store_cycles", "host_cycles", "dram_cycles"))
    e2e_host, e2e_dma = host["end_to_end"], dma["end_to_end"]
    assert e2e_host["bound_cycles"] == e2e_dma["bound_cycles"], f"{name}: the bound differs"
    rows.append({"layer": name, "compute": compute, "serial": serial, "e2e_host": e2e_host["cycles"],
                 "e2e_dma": e2e_dma["cycles"], "dma_kib": round(dma["dma"]["bytes"] / 1024, 1),
                 "dma_host_wait": dma["dma"]["host_wait_cycles"], "probe_host": e2e_host["probe_cycles"],
                 "probe_dma": e2e_dma["probe_cycles"], "least_bytes": e2e_dma["least_dram_bytes"],
                 "bound": e2e_dma["bound_cycles"], "model_host": e2e_host["model_cycles"],
                 "model_dma": e2e_dma["model_cycles"], "model_err_host_pct": round(e2e_host["model_error_percent"], 3),
                 "model_err_dma_pct": round(e2e_dma["model_error_percent"], 3), "mismatches": bad})
with open(f"{out}/summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
print(f"{'layer (FP+BP+WG)':22} {'compute':>9} {'serial':>10} {'e2e host':>10} {'e2e DMA':>10} {'DMA/host':>9} "
      f"{'bound':>9} {'DMA/bound':>9}  DMA KiB  model err host/DMA  mismatches")
for r in rows:
    print(f"{r['layer']:22} {r['compute']:>9,} {r['serial']:>10,} {r['e2e_host']:>10,} {r['e2e_dma']:>10,} "
          f"{r['e2e_dma'] / r['e2e_host']:>9.3f} {r['bound']:>9,} {r['e2e_dma'] / r['bound']:>9.2f}  "
          f"{r['dma_kib']:>7,}  {r['model_err_host_pct']:+7.2f}% {r['model_err_dma_pct']:+7.2f}%   {r['mismatches']}")
print(f"wrote {out}/summary.csv")
PY
/usr/bin/python3 "$(dirname "$0")/plot_dma.py" "$out"
