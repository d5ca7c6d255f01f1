#!/usr/bin/python3
"""The speedup table of docs/results.md ("Speedup over the baselines") from a sweep over
`baseline: [fetta, tpu, hier]` with `cycles: rtl` (scripts/grids/paper.yaml or
paper_end_to_end.yaml):

    /usr/bin/python3 scripts/paper_table.py [--phases] OUT_DIR

Per layer, FP+BP+WG summed: compute cycles of each array and FETTA's speedup over the baselines,
then the same end to end (compute + STORE + host + DRAM cycles, the serial sum a run reports),
and the geometric means over the layers. With --phases: per layer and phase, compute cycles and
PE utilization of each array and the speedups (a BP row only where BP differs from FP).
Markdown on stdout.
"""
import csv
import math
import os
import sys
from collections import defaultdict

BASELINES = ("tpu", "hier")


def phase_table(rows):
    """The per-phase compute table: (layer, phase) -> baseline -> (MACs, cycles, utilization)."""
    cell = defaultdict(dict)
    layers = []
    for r in rows:
        if r["status"] == "ok" and r["cycles"]:
            cell[(r["layer"], r["phase"])][r["baseline"]] = (int(r["macs"]), int(r["cycles"]), float(r["utilization"]))
            if r["layer"] not in layers:
                layers.append(r["layer"])
    print("| layer | phase | MACs | FETTA cycles (util) | TPU-like cycles (util) | speedup "
          "| hierarchical cycles (util) | speedup |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for layer in layers:
        fp = cell.get((layer, "fp"))
        for i, ph in enumerate(("fp", "bp", "wg")):
            at = cell.get((layer, ph))
            if at is None or (ph == "bp" and at == fp):
                continue
            if any(b not in at for b in ("fetta",) + BASELINES):
                sys.exit(f"layer {layer} {ph} is missing a baseline")
            macs, fc, fu = at["fetta"]
            cells = [layer if i == 0 else "", ph.upper(), f"{macs:,}", f"{fc:,} ({100 * fu:.1f}%)"]
            for b in BASELINES:
                _, c, u = at[b]
                cells += [f"{c:,} ({100 * u:.1f}%)", f"{c / fc:.2f}x"]
            print("| " + " | ".join(cells) + " |")


def main():
    args = [a for a in sys.argv[1:] if a != "--phases"]
    if len(args) != 1:
        sys.exit(__doc__)
    path = os.path.join(args[0], "results.csv")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if "--phases" in sys.argv[1:]:
        phase_table(rows)
        return
    compute = defaultdict(lambda: defaultdict(int))
    end_to_end = defaultdict(lambda: defaultdict(int))
    layers = []
    for r in rows:
        if r["status"] != "ok" or not r["cycles"]:
            continue
        if r["cycles_source"] != "rtl" or not r["host_cycles"]:
            sys.exit(f"{path}: point {r['point']} has no RTL run figures (the sweep needs cycles: rtl)")
        c = int(r["cycles"])
        compute[r["baseline"]][r["layer"]] += c
        end_to_end[r["baseline"]][r["layer"]] += c + sum(int(r[k] or 0) for k in ("store_cycles", "host_cycles", "dram_cycles"))
        if r["layer"] not in layers:
            layers.append(r["layer"])
    missing = [b for b in ("fetta",) + BASELINES if b not in compute]
    if missing:
        sys.exit(f"{path}: no successful points of baseline(s) {', '.join(missing)}")
    for b in BASELINES:
        for layer in layers:
            if layer not in compute[b] or layer not in compute["fetta"]:
                sys.exit(f"{path}: layer {layer} is missing for {b} or fetta")

    def speedups(table, b):
        return [table[b][layer] / table["fetta"][layer] for layer in layers]

    def geomean(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs))

    sp_compute = {b: speedups(compute, b) for b in BASELINES}
    sp_end_to_end = {b: speedups(end_to_end, b) for b in BASELINES}
    print("| layer | FETTA | TPU-like | speedup | hierarchical | speedup | end to end: FETTA | over TPU-like | over hierarchical |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for i, layer in enumerate(layers):
        cells = [layer, f"{compute['fetta'][layer]:,}"]
        for b in BASELINES:
            cells += [f"{compute[b][layer]:,}", f"{sp_compute[b][i]:.2f}x"]
        cells.append(f"{end_to_end['fetta'][layer]:,}")
        cells += [f"{sp_end_to_end[b][i]:.2f}x" for b in BASELINES]
        print("| " + " | ".join(cells) + " |")
    g = [f"**{geomean(sp_compute[b]):.2f}x**" for b in BASELINES]
    e = [f"**{geomean(sp_end_to_end[b]):.2f}x**" for b in BASELINES]
    print(f"| geometric mean | | | {g[0]} | | {g[1]} | | {e[0]} | {e[1]} |")


if __name__ == "__main__":
    main()
