#!/usr/bin/env python3
"""The analytical energy model against measured energy, per layer (issue target: within 10 %).

    bench/power/model_check.py OUT [--csv FILE]

OUT is a bench/power/layers_energy.sh directory: per layer, the run's report (run.json, whose
`energy` is the model: the configuration's `energy:` constants on the run's cycles, MACs, SRAM
accesses and DRAM bytes) and fetta power's power.json (whose `energy` is measured: OpenSTA's power
from the run's activity, CACTI's SRAM accesses, the LPDDR4 model's DRAM). Prints one row per
layer: cycles, the activity's source, measured and modelled energy in uJ, the error of the total
and of the core terms alone (everything but DRAM, which both price alike from the same bytes).
"""
import argparse
import csv
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--csv", help="write the rows here too (default OUT/model_check.csv)")
    a = ap.parse_args()
    rows = []
    for layer in sorted(os.listdir(a.out)):
        d = os.path.join(a.out, layer)
        if not os.path.isfile(os.path.join(d, "power.json")) or not os.path.isfile(os.path.join(d, "run.json")):
            continue
        run, pw = load(os.path.join(d, "run.json")), load(os.path.join(d, "power.json"))
        m, e = run["energy"], pw["energy"]
        if not e or not e.get("dram"):
            sys.exit(f"{d}/power.json: no whole-run energy; run fetta power with --run and without --while")
        sample = pw["activity"].get("sample")
        measured_core = e["core_joules"] + e["sram_access_joules"]
        model_core = m["static_joules"] + m["mac_joules"] + m["sram_joules"] + m["network_joules"]
        rows.append({
            "layer": layer,
            "cycles": run["sim_cycles"],
            "macs": e["macs"],
            "traced_cycles": pw["activity"]["cycles"],
            "sample": f"{sample['window_cycles']}/{sample['every_cycles']}" if sample else "whole run",
            "power_mw": round(e["core_joules"] / e["seconds"] * 1e3 + e["sram_access_joules"] / e["seconds"] * 1e3, 2),
            "measured_core_uj": round(e["core_joules"] * 1e6, 3),
            "measured_sram_uj": round(e["sram_access_joules"] * 1e6, 3),
            "dram_uj": round(e["dram"]["joules"] * 1e6, 3),
            "measured_uj": round(e["joules"] * 1e6, 3),
            "model_core_uj": round(model_core * 1e6, 3),
            "model_uj": round(m["joules"] * 1e6, 3),
            "error_percent": round(100 * (m["joules"] - e["joules"]) / e["joules"], 2),
            "core_error_percent": round(100 * (model_core - measured_core) / measured_core, 2),
        })
    if not rows:
        sys.exit(f"{a.out}: no layer with run.json and power.json; run bench/power/layers_energy.sh first")
    cols = list(rows[0].keys())
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r[c]) for c in cols))
    worst = max(abs(r["error_percent"]) for r in rows)
    print(f"worst total error {worst:.2f} % (target: within 10 %); worst core error "
          f"{max(abs(r['core_error_percent']) for r in rows):.2f} %")
    with open(a.csv or os.path.join(a.out, "model_check.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
