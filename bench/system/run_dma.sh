#!/bin/sh
# End to end with and without the DMA path (docs/dma.md) on the shipped layers: each layer, all
# phases, run twice by `fetta run --json` (plain, then --dma), then per layer:
#   compute     the GEMMs' cycles (the same both ways: the DMA changes no instruction)
#   serial      compute + STORE + host + DRAM, the columns' sum (docs/results.md's older figure)
#   e2e plain   simulated cycles + the DRAM time accounted beside them (`end_to_end.cycles`)
#   e2e DMA     the same with --dma: the inputs' and weights' DRAM traffic waited for in the
#               simulation, overlapped with the GEMM before
#   bound       max(compute, the layer's inputs read once and results written once at the DRAM's
#               bandwidth), the figure issue #22 measures wall cycles against
# Writes <out>/<layer>.{plain,dma}.json, <out>/summary.csv and summary.png; resumable: a layer whose two
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
  for mode in plain dma; do
    f="$out/$name.$mode.json"
    if [ -s "$f" ]; then echo "[$n/$total] $name $mode: done before"; continue; fi
    echo "[$n/$total] $name $mode ..."
    flag=""
    [ "$mode" = dma ] && flag=--dma
    # shellcheck disable=SC2086
    "$fetta" run --config "$cfg" --layer "$layer" --seed 1 --json $flag > "$f.tmp"
    mv "$f.tmp" "$f"
  done
  [ -d "$out/$name.program" ] || "$fetta" compile --config "$cfg" --layer "$layer" --out "$out/$name.program" > /dev/null
done
/usr/bin/python3 - "$out" $layers <<'PY'
import csv, json, os, sys
out, layers = sys.argv[1], sys.argv[2:]
rows = []
for layer in layers:
    name = os.path.basename(layer)[:-5]
    plain = json.load(open(f"{out}/{name}.plain.json"))
    dma = json.load(open(f"{out}/{name}.dma.json"))
    prog = json.load(open(f"{out}/{name}.program/program.json"))
    steps = plain["steps"]
    compute = sum(s["cycles"] for s in steps)
    assert compute == sum(s["cycles"] for s in dma["steps"]), f"{name}: compute cycles differ with --dma"
    bad = sum(s["mismatches"] + s["stored_mismatches"] for r in (plain, dma) for s in r["steps"])
    serial = sum(s[k] for s in steps for k in ("cycles", "store_cycles", "host_cycles", "dram_cycles"))
    # Least data movement: every distinct input once, every network result once, operand-sized.
    op_bytes = 1 if plain["dtype"] == "int8" else 2
    inputs = {}
    for t in prog["tensors"]:
        if t["kind"] == "input":
            n = 1
            for d in t["dims"]:
                n *= d
            inputs[t["input"]] = n
    results = sum(s["m"] * s["n"] for s in steps if s["step"] + 1 == s["steps"] and s["term"] + 1 == s["terms"])
    moved = (sum(inputs.values()) + results) * op_bytes
    bw = plain["dram"]["bandwidth_gbps"]  # GB/s = bytes per ns = bytes per cycle at 1 GHz
    bound = max(compute, round(moved / bw))
    e2e_plain, e2e_dma = plain["end_to_end"]["cycles"], dma["end_to_end"]["cycles"]
    rows.append({"layer": name, "compute": compute, "serial": serial, "e2e_plain": e2e_plain, "e2e_dma": e2e_dma,
                 "dma_kib": round(dma["dma"]["bytes"] / 1024, 1), "dma_host_wait": dma["dma"]["host_wait_cycles"],
                 "probe_plain": plain["end_to_end"]["probe_cycles"], "probe_dma": dma["end_to_end"]["probe_cycles"],
                 "least_bytes": moved, "bound": bound, "mismatches": bad})
with open(f"{out}/summary.csv", "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
    w.writeheader()
    w.writerows(rows)
print(f"{'layer (FP+BP+WG)':22} {'compute':>9} {'serial':>10} {'e2e plain':>10} {'e2e DMA':>10} {'DMA/plain':>9} "
      f"{'bound':>9} {'DMA/bound':>9}  DMA KiB  mismatches")
for r in rows:
    print(f"{r['layer']:22} {r['compute']:>9,} {r['serial']:>10,} {r['e2e_plain']:>10,} {r['e2e_dma']:>10,} "
          f"{r['e2e_dma'] / r['e2e_plain']:>9.3f} {r['bound']:>9,} {r['e2e_dma'] / r['bound']:>9.2f}  "
          f"{r['dma_kib']:>7,}  {r['mismatches']}")
print(f"wrote {out}/summary.csv")
PY
/usr/bin/python3 "$(dirname "$0")/plot_dma.py" "$out"
