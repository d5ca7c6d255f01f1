#!/usr/bin/env python3
"""The analytical model's energy constants from measured power (docs/power.md, "Energy model"),
and how far the model is from the measurements it was not derived from.

    bench/power/energy_model.py --busy DIR --idle DIR [--busy DIR --idle DIR]... [--check DIR]... [--json FILE]

Each DIR is a `fetta power --run RUN.json --out DIR` of one trace (its power.json):
  --busy  the trace counted `--while busy` (the computation),
  --idle  the same trace counted `--while '!busy'` (the controller waiting, the array idle),
  --check whole traces of other runs (phases, layers) of the same configuration.

The constants (configs/*.yaml `energy:`):
  static_mw              the idle power: drawn every cycle, whatever the array does;
  mac_pj                 (busy power - idle power) x busy time / MACs: every block's dynamic
                         energy of the computation (CEs, networks, accumulator, controller);
  network_hop_pj         0: the networks' energy is measured inside mac_pj;
  sram_*_pj_per_byte     CACTI's energy per access of each macro over the bytes it moved, weighted
                         by the busy windows' accesses;
  dram_*_pj_per_byte     the LPDDR4 model's (flows/power/dram_energy.hpp).
Each check run's energy is then predicted from its own cycles, MACs, SRAM accesses and DRAM bytes
and compared with its measurement.
"""
import argparse
import json
import os
import sys


def load(d):
    path = os.path.join(d, "power.json")
    try:
        with open(path) as f:
            p = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}; give a directory fetta power --run wrote")
    if not p.get("energy"):
        sys.exit(f"{path}: no energy section; run fetta power with --run RUN.json")
    return p


def width_of(cell):
    """Bits per word of a macro cell (fetta_sram_w<width>_d<depth>_<ports>)."""
    return int(cell.split("_w")[1].split("_")[0])


def sram_per_byte(runs):
    """(read pJ per byte, write pJ per byte) over every macro access of the runs: CACTI's energy
    per access of each macro, weighted by the accesses the runs made."""
    rd_j = rd_b = wr_j = wr_b = 0.0
    for p in runs:
        for m in p["sram_access"]["macros"]:
            width = width_of(m["cell"])
            rd_j += m["reads"] * m["read_pj"]
            rd_b += m["reads"] * width / 8
            wr_j += m["bits_written"] / width * m["write_pj"]
            wr_b += m["bits_written"] / 8
    return (rd_j / rd_b if rd_b else 0.0), (wr_j / wr_b if wr_b else 0.0)


def sram_bytes(p):
    """Bytes read and written in every SRAM macro over the run (from the counted accesses)."""
    rd = wr = 0.0
    for m in p["sram_access"]["macros"]:
        width = width_of(m["cell"])
        rd += m["reads"] * width / 8
        wr += m["bits_written"] / 8
    return rd, wr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--busy", required=True, action="append", help="repeatable: the runs' busy windows, pooled")
    ap.add_argument("--idle", required=True, action="append", help="repeatable: the same runs' idle windows")
    ap.add_argument("--check", action="append", default=[])
    ap.add_argument("--json", help="write the constants and the checks here")
    a = ap.parse_args()
    busy, idle = [load(d) for d in a.busy], [load(d) for d in a.idle]
    period_s = busy[0]["clock_period_ps"] * 1e-12
    # Pooled over the runs: the idle power is their idle energy over their idle time, and a MAC's
    # dynamic energy is their busy energy above that idle power over their MACs.
    idle_j = sum(p["total"]["total_w"] * p["energy"]["cycles"] * period_s for p in idle)
    idle_s = sum(p["energy"]["cycles"] * period_s for p in idle)
    p_idle = idle_j / idle_s
    busy_j = sum(p["total"]["total_w"] * p["energy"]["cycles"] * period_s for p in busy)
    busy_s = sum(p["energy"]["cycles"] * period_s for p in busy)
    macs = sum(p["energy"]["macs"] for p in busy)
    mac_pj = (busy_j - p_idle * busy_s) / macs * 1e12
    sram_rd, sram_wr = sram_per_byte(busy)
    dram = {}
    if not dram:  # a window has no DRAM share: take the model from a check run
        for d in a.check:
            dram = load(d)["energy"].get("dram") or {}
            if dram:
                break
    constants = {
        "mac_pj": round(mac_pj, 3),
        "sram_read_pj_per_byte": round(sram_rd, 3),
        "sram_write_pj_per_byte": round(sram_wr, 3),
        "network_hop_pj": 0,
        "dram_read_pj_per_byte": round(dram.get("read_pj_per_byte", 0), 1),
        "dram_write_pj_per_byte": round(dram.get("write_pj_per_byte", 0), 1),
        "static_mw": round(p_idle * 1e3, 1),
    }
    print(f"busy: {busy_j / busy_s * 1e3:.2f} mW over {busy_s / period_s:.0f} cycles ({', '.join(a.busy)}); "
          f"idle: {p_idle * 1e3:.2f} mW over {idle_s / period_s:.0f} cycles ({', '.join(a.idle)}); {macs} MACs")
    print("energy:  # derived by bench/power/energy_model.py")
    for k, v in constants.items():
        print(f"  {k}: {v}")
    checks = []
    if a.check:
        print(f"\n{'run':34} {'cycles':>8} {'MACs':>10} {'measured uJ':>12} {'model uJ':>10} {'error':>7}"
              f" {'core meas / model uJ':>22} {'error':>7} {'SRAM meas / model uJ':>22}")
    for d in a.check:
        p = load(d)
        e = p["energy"]
        seconds = e["cycles"] * p["clock_period_ps"] * 1e-12
        core = constants["static_mw"] * 1e-3 * seconds + constants["mac_pj"] * e["macs"] * 1e-12
        rd, wr = sram_bytes(p)
        sram = (rd * constants["sram_read_pj_per_byte"] + wr * constants["sram_write_pj_per_byte"]) * 1e-12
        dr = e.get("dram") or {}
        dram_j = (dr.get("bytes_read", 0) * constants["dram_read_pj_per_byte"] +
                  dr.get("bytes_written", 0) * constants["dram_write_pj_per_byte"]) * 1e-12
        model = core + sram + dram_j
        err = (model - e["joules"]) / e["joules"]
        checks.append({"run": d, "cycles": e["cycles"], "macs": e["macs"], "measured_j": e["joules"], "model_j": model,
                       "error": err, "core_measured_j": e["core_joules"], "core_model_j": core,
                       "sram_measured_j": e["sram_access_joules"], "sram_model_j": sram,
                       "core_error": (core - e["core_joules"]) / e["core_joules"]})
        core_err = (core - e["core_joules"]) / e["core_joules"]
        print(f"{d:34} {e['cycles']:>8} {e['macs']:>10} {e['joules'] * 1e6:>12.3f} {model * 1e6:>10.3f} {100 * err:>6.1f}%"
              f" {e['core_joules'] * 1e6:>10.3f} / {core * 1e6:<9.3f} {100 * core_err:>6.1f}%"
              f" {e['sram_access_joules'] * 1e6:>10.3f} / {sram * 1e6:<9.3f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"constants": constants, "busy": a.busy, "idle": a.idle, "checks": checks}, f, indent=1)


if __name__ == "__main__":
    main()
