#!/usr/bin/python3
"""Plots of a `fetta sweep` result directory (results.csv) as PNG files next to it.

    /usr/bin/python3 scripts/plot_sweep.py OUT_DIR

area_vs_pes.png       ASAP7 area (CE area x CE count + the other synthesized parts) against the PEs
util_vs_lanes.png     PE utilization against network lanes, per layer/phase (FETTA points)
speedup.png           cycles of each baseline / cycles of FETTA with the same other parameters, per layer
e2e_speedup.png       the same end to end (e2e_cycles: the wall-cycle model, DMA and host transfers included)
efficiency.png        energy of each baseline / energy of FETTA, the same way (the points' energy: constants)
energy_per_mac.png    pJ per MAC per layer and point, stacked by term (static, MAC, SRAM, network, DRAM)
area_breakdown.png    ASAP7 area per part for every point (stacked bars, CE x count)
Plots without data in the CSV (no synthesis, no baselines) are skipped with a message.
"""
import csv
import math
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f)]


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def save(fig, out, name):
    p = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(p, dpi=120)
    plt.close(fig)
    print("wrote", p)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = [r for r in load(os.path.join(out, "results.csv")) if r["status"] == "ok"]
    if not rows:
        sys.exit("no successful points in results.csv")

    # Area vs PEs (one value per point): the CE array (one CE's area times the CE count) plus the
    # other synthesized parts, which exist once.
    def parts_of(r):
        out = {}
        for item in (r["part_areas"] or "").split(";"):
            if "=" in item:
                k, v = item.split("=", 1)
                out[k] = float(v) * (num(r["ce_count"]) if k == "ce" else 1)
        return out

    pts = {}
    for r in rows:
        if parts_of(r):
            pts[r["point"]] = r
    if pts:
        fig, ax = plt.subplots(figsize=(6, 4))
        for base in sorted({r["baseline"] for r in pts.values()}):
            sel = [r for r in pts.values() if r["baseline"] == base]
            ax.scatter([num(r["pes"]) for r in sel], [sum(parts_of(r).values()) for r in sel], label=base,
                       marker="o" if base == "fetta" else "x")
        ax.set_xlabel("PEs")
        ax.set_ylabel("ASAP7 area (um^2): CE x count + other parts")
        ax.set_xscale("log", base=2)
        ax.legend()
        ax.set_title("Area vs array size")
        save(fig, out, "area_vs_pes.png")
    else:
        print("area_vs_pes.png: no synthesis figures in this sweep")

    # Utilization vs lanes (FETTA points): one line per array size (PEs), MAC-weighted over the
    # layers and phases of the sweep.
    fetta = [r for r in rows if r["baseline"] == "fetta" and num(r["utilization"]) is not None]
    if fetta:
        fig, ax = plt.subplots(figsize=(6, 4))
        acc = defaultdict(lambda: [0.0, 0.0])  # (pes, shape, lanes) -> [macs, macs / util]
        for r in fetta:
            k = (int(num(r["pes"])), f"{r['ce_rows']}x{r['ce_cols']} x{r['ce_count']}", int(num(r["lanes"])))
            acc[k][0] += num(r["macs"])
            acc[k][1] += num(r["cycles"]) * num(r["pes"])
        series = defaultdict(list)
        for (pes, shape, lanes), (macs, pe_cycles) in acc.items():
            series[(pes, shape)].append((lanes, 100 * macs / pe_cycles))
        for (pes, shape), v in sorted(series.items()):
            v.sort()
            ax.plot([x for x, _ in v], [y for _, y in v], marker="o", label=f"{shape} ({pes} PEs)")
        ax.set_xlabel("network lanes")
        ax.set_ylabel("PE utilization (%), all layers and phases")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7)
        ax.set_title("Utilization vs network width")
        save(fig, out, "util_vs_lanes.png")

    # Speedup and energy efficiency of FETTA over each baseline kind, per layer (phases summed).
    def key(r):
        return (r["dtype"], r["pes"], r["layer"])

    def per_layer(column):
        acc = defaultdict(lambda: defaultdict(float))
        for r in rows:
            if num(r.get(column)) is not None:
                acc[r["baseline"]][key(r)] += num(r[column])
        return acc

    def ratio_plot(column, name, ylabel, title):
        acc = per_layer(column)
        bases = [b for b in ("tpu_offchip", "tpu", "hier") if b in acc]
        if "fetta" not in acc or not bases:
            print(f"{name}: the sweep has no baseline points with {column}")
            return
        layers = sorted({k[2] for k in acc["fetta"]})
        fig, ax = plt.subplots(figsize=(max(6, 1.2 * len(layers)), 4))
        width = 0.8 / len(bases)
        for i, b in enumerate(bases):
            sp = []
            for layer in layers:
                f = [v for k, v in acc["fetta"].items() if k[2] == layer]
                o = [v for k, v in acc[b].items() if k[2] == layer]
                sp.append(sum(o) / sum(f) if f and o and sum(f) > 0 else 0)
            xs = [j + i * width for j in range(len(layers))]
            valid = [v for v in sp if v > 0]
            geomean = math.exp(sum(math.log(v) for v in valid) / len(valid)) if valid else 0
            ax.bar(xs, sp, width, label=f"over {b} (geomean {geomean:.2f}x)")
            print(f"{name}: over {b}: " + ", ".join(f"{layer} {v:.2f}x" for layer, v in zip(layers, sp)) +
                  f"; geomean {geomean:.2f}x")
            for x, s in zip(xs, sp):
                ax.text(x, s, f"{s:.2f}x", ha="center", va="bottom", fontsize=7)
        ax.set_xticks([j + width * (len(bases) - 1) / 2 for j in range(len(layers))])
        ax.set_xticklabels(layers, rotation=20, ha="right", fontsize=8)
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_ylabel(ylabel)
        ax.legend()
        ax.set_title(title)
        save(fig, out, name)

    ratio_plot("cycles", "speedup.png", "speedup (cycles of baseline / cycles of FETTA)", "Speedup per layer (FP+BP+WG)")
    ratio_plot("e2e_cycles", "e2e_speedup.png", "speedup end to end (baseline / FETTA)",
               "Speedup end to end per layer (FP+BP+WG; the wall-cycle model)")
    ratio_plot("energy_uj", "efficiency.png", "energy of baseline / energy of FETTA",
               "Energy efficiency per layer (FP+BP+WG, model constants)")

    # Energy per MAC per layer and point, stacked by term (the model's constants of each point).
    terms = ("static_uj", "mac_uj", "sram_uj", "network_uj", "dram_uj")
    erows = [r for r in rows if all(num(r.get(t)) is not None for t in terms)]
    if erows:
        groups = defaultdict(lambda: [0.0] * (len(terms) + 1))  # (layer, point) -> terms..., macs
        for r in erows:
            g = groups[(r["layer"], r["point"])]
            for i, t in enumerate(terms):
                g[i] += num(r[t]) * 1e6
            g[-1] += num(r["macs"])
        labels = sorted(groups)
        fig, ax = plt.subplots(figsize=(max(6, 0.5 * len(labels)), 4))
        bottom = [0.0] * len(labels)
        for i, t in enumerate(terms):
            vals = [groups[l][i] / groups[l][-1] for l in labels]
            ax.bar(range(len(labels)), vals, bottom=bottom, label=t[:-3])
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels([f"{l} {p}" for l, p in labels], rotation=60, ha="right", fontsize=6)
        ax.set_ylabel("pJ per MAC (FP+BP+WG)")
        ax.legend(fontsize=7)
        ax.set_title("Energy per MAC by term")
        save(fig, out, "energy_per_mac.png")
    else:
        print("energy_per_mac.png: no energy columns in this sweep")

    # Area breakdown per point (CE area times the CE count).
    brk = {r["point"]: parts_of(r) for r in pts.values()}
    if brk:
        names = sorted({k for p in brk.values() for k in p})
        labels = list(brk)
        fig, ax = plt.subplots(figsize=(max(6, 0.6 * len(labels)), 4))
        bottom = [0.0] * len(labels)
        for n in names:
            vals = [brk[l].get(n, 0.0) for l in labels]
            ax.bar(range(len(labels)), vals, bottom=bottom, label=n + (" (x CE count)" if n == "ce" else ""))
            bottom = [b + v for b, v in zip(bottom, vals)]
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=6)
        ax.set_ylabel("ASAP7 area (um^2)")
        ax.legend()
        ax.set_title("Area breakdown")
        save(fig, out, "area_breakdown.png")


if __name__ == "__main__":
    main()
