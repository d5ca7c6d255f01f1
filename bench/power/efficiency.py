#!/usr/bin/env python3
"""Energy efficiency of FETTA over the baselines per layer, from a finished `fetta sweep` with
baseline points and each top's own measured energy constants (docs/results.md, "Energy
efficiency against the baselines").

    bench/power/efficiency.py --sweep DIR --constants fetta=FILE [--constants tpu_offchip=FILE]
                              --constants tpu=FILE --constants hier=FILE [--out PREFIX]

DIR      a sweep with `baseline: [fetta, tpu, hier]` or also `tpu_offchip` (results.jsonl: cycles, MACs and the traffic
         of every layer-phase; points/<point>/config.yaml for the clock).
FILE     the constants of that baseline's top: a `bench/power/energy_model.py --json` output or a
         configuration YAML with an `energy:` section.
The sweep's own energy columns use the base configuration's constants for every point; here each
point's cycles, MACs and traffic are priced with the constants measured on its own top. Prints,
per layer (phases summed), the energy of each top on chip (static + MAC + SRAM + network) and with
DRAM, and FETTA's efficiency over each baseline (baseline energy / FETTA energy), with geomeans.
--out PREFIX writes PREFIX.json, PREFIX.csv and PREFIX.png (efficiency per layer, on chip and with
DRAM, over each baseline).
"""
import argparse
import csv
import json
import math
import os
import re
import sys


def load_constants(spec):
    name, sep, path = spec.partition("=")
    if not sep or name not in ("fetta", "tpu_offchip", "tpu", "hier"):
        sys.exit(f"--constants {spec}: expected fetta=FILE, tpu_offchip=FILE, tpu=FILE or hier=FILE")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"--constants {spec}: {e}")
    if path.endswith(".json"):
        c = json.loads(text).get("constants")
    else:
        import yaml  # Debian python3-yaml
        c = (yaml.safe_load(text) or {}).get("energy")
    keys = ("static_mw", "mac_pj", "sram_read_pj_per_byte", "sram_write_pj_per_byte", "network_hop_pj",
            "dram_read_pj_per_byte", "dram_write_pj_per_byte")
    if not c or any(k not in c for k in keys if k != "network_hop_pj"):
        sys.exit(f"--constants {spec}: no complete energy constants ({', '.join(keys)})")
    if c.get("network_hop_pj", 0):
        sys.exit(f"--constants {spec}: network_hop_pj must be 0: measured constants count the networks in mac_pj")
    return name, c


def point_clock_mhz(sweep, point):
    import yaml
    path = os.path.join(sweep, "points", re.sub(r"[^A-Za-z0-9_.-]", "_", point), "config.yaml")
    with open(path) as f:
        return float(yaml.safe_load(f)["clock_mhz"])


def energy_pj(c, layer, clock_mhz):
    """(on chip, DRAM) energy of one layer-phase in pJ by the constants c."""
    t = layer.get("traffic")
    if t is None:
        sys.exit(f"{layer['layer']} {layer['phase']}: no traffic in the record; re-run the sweep with this fetta")
    static = c["static_mw"] * layer["cycles"] * 1000.0 / clock_mhz  # mW x ns
    on_chip = (static + c["mac_pj"] * layer["macs"] + t["sram_read_bytes"] * c["sram_read_pj_per_byte"] +
               t["sram_write_bytes"] * c["sram_write_pj_per_byte"])
    dram = t["dram_read_bytes"] * c["dram_read_pj_per_byte"] + t["dram_write_bytes"] * c["dram_write_pj_per_byte"]
    return on_chip, dram


def geomean(v):
    v = [x for x in v if x > 0]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", required=True)
    ap.add_argument("--constants", action="append", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    consts = dict(load_constants(s) for s in a.constants)
    if "fetta" not in consts:
        sys.exit("--constants fetta=FILE is required (the reference of the ratios)")
    path = os.path.join(a.sweep, "results.jsonl")
    try:
        recs = [json.loads(l) for l in open(path) if l.strip()]
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")
    # (baseline, layer) -> [on chip pJ, DRAM pJ, cycles, MACs]
    acc = {}
    for r in recs:
        if r.get("status") != "ok":
            continue
        base = r["params"].get("baseline", "fetta")
        if base not in consts:
            continue
        clock = point_clock_mhz(a.sweep, r["point"])
        for l in r["layers"]:
            on, dr = energy_pj(consts[base], l, clock)
            v = acc.setdefault((base, l["layer"]), [0.0, 0.0, 0, 0])
            v[0] += on
            v[1] += dr
            v[2] += l["cycles"]
            v[3] += l["macs"]
    layers = sorted({k[1] for k in acc if k[0] == "fetta"})
    bases = [b for b in ("tpu_offchip", "tpu", "hier") if b in consts and any(k[0] == b for k in acc)]
    if not layers or not bases:
        sys.exit(f"{path}: needs fetta points and at least one baseline with --constants")
    rows = []
    for layer in layers:
        f = acc[("fetta", layer)]
        row = {"layer": layer, "fetta_on_chip_uj": f[0] * 1e-6, "fetta_total_uj": (f[0] + f[1]) * 1e-6,
               "fetta_pj_per_mac": (f[0] + f[1]) / f[3]}
        for b in bases:
            o = acc.get((b, layer))
            if not o:
                continue
            row[f"{b}_on_chip_uj"] = o[0] * 1e-6
            row[f"{b}_total_uj"] = (o[0] + o[1]) * 1e-6
            row[f"{b}_speedup"] = o[2] / f[2]
            row[f"{b}_eff_on_chip"] = o[0] / f[0]
            row[f"{b}_eff_total"] = (o[0] + o[1]) / (f[0] + f[1])
        rows.append(row)
    head = "| layer | FETTA on chip / with DRAM uJ |"
    rule = "| --- | ---: |"
    for b in bases:
        head += f" {b} on chip / with DRAM uJ | speedup | efficiency on chip | with DRAM |"
        rule += " ---: | ---: | ---: | ---: |"
    print(head)
    print(rule)
    for r in rows:
        line = f"| {r['layer']} | {r['fetta_on_chip_uj']:.1f} / {r['fetta_total_uj']:.1f} |"
        for b in bases:
            line += (f" {r[f'{b}_on_chip_uj']:.1f} / {r[f'{b}_total_uj']:.1f} | {r[f'{b}_speedup']:.2f}x |"
                     f" {r[f'{b}_eff_on_chip']:.2f}x | {r[f'{b}_eff_total']:.2f}x |")
        print(line)
    geo = {}
    line = "| geomean | |"
    for b in bases:
        geo[b] = {k: geomean([r[f"{b}_{k}"] for r in rows]) for k in ("speedup", "eff_on_chip", "eff_total")}
        line += f" | {geo[b]['speedup']:.2f}x | {geo[b]['eff_on_chip']:.2f}x | {geo[b]['eff_total']:.2f}x |"
    print(line)
    if a.out:
        with open(a.out + ".json", "w") as f:
            json.dump({"sweep": a.sweep, "constants": consts, "layers": rows, "geomean": geo}, f, indent=1)
        with open(a.out + ".csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        plot(rows, bases, geo, a.out + ".png")
        print(f"wrote {a.out}.json, {a.out}.csv and {a.out}.png")


def plot(rows, bases, geo, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = [r["layer"] for r in rows] + ["geomean"]
    series = [(b, k) for b in bases for k in ("eff_on_chip", "eff_total")]
    fig, ax = plt.subplots(figsize=(max(7, 1.4 * len(names)), 4))
    width = 0.8 / len(series)
    for i, (b, k) in enumerate(series):
        vals = [r[f"{b}_{k}"] for r in rows] + [geo[b][k]]
        xs = [j + i * width for j in range(len(names))]
        ax.bar(xs, vals, width, label=f"over {b}, {'on chip' if k == 'eff_on_chip' else 'with DRAM'}",
               hatch="" if k == "eff_on_chip" else "//")
        for x, v in zip(xs, vals):
            ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=6)
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(names))])
    ax.set_xticklabels(names, rotation=20, ha="right", fontsize=8)
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_ylabel("baseline energy / FETTA energy")
    ax.set_title("Energy efficiency of FETTA, each top at its own measured constants (FP+BP+WG)")
    ax.set_ylim(0, 1.25 * max(max(r[f"{b}_{k}"] for r in rows) for b, k in series))
    ax.legend(fontsize=7, ncol=len(series), loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
