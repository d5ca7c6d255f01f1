#!/usr/bin/env python3
"""Two reports of `fetta run --json` (or `fetta exec --json`) of the same layers, compared: the
streams the host sent (instruction and unified-memory write digests), the simulated cycles, the
energy, and every contraction's mapping, cycles (compute, host, STORE, DRAM), results and on-chip
decision. DRAM bytes are compared in total (how a sum of terms books them per row may differ).
For refactorings of the compiler or the executor: equal reports mean the RTL was driven the same.

  bench/system/compare_runs.py BEFORE.json AFTER.json   (exit 1 when they differ)
"""
import json
import sys

STEP_KEYS = ("layer", "phase", "problem", "term", "step", "mapping", "m", "k", "n", "cycles", "predicted_cycles",
             "host_cycles", "store_cycles", "store_predicted_cycles", "dram_cycles", "elements", "mismatches",
             "stored_mismatches", "kept_on_chip", "summed_on_chip", "through_host_because", "store", "fp64_rel_error")


def differences(a, b):
    out = []
    for key in ("streams", "sim_cycles", "dram", "energy"):
        if a.get(key) != b.get(key):
            out.append(f"{key}: {a.get(key)} vs {b.get(key)}")
    if len(a["steps"]) != len(b["steps"]):
        out.append(f"contractions: {len(a['steps'])} vs {len(b['steps'])}")
    for i, (x, y) in enumerate(zip(a["steps"], b["steps"])):
        out += [f"contraction {i} {k}: {x.get(k)} vs {y.get(k)}" for k in STEP_KEYS if x.get(k) != y.get(k)]
    for k in ("dram_bytes_read", "dram_bytes_written"):
        ta, tb = (sum(s[k] for s in r["steps"]) for r in (a, b))
        if ta != tb:
            out.append(f"total {k}: {ta} vs {tb}")
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = (json.load(open(f)) for f in sys.argv[1:3])
    diff = differences(a, b)
    print(f"{'same' if not diff else 'DIFFERENT'}: {len(b['steps'])} contractions, instructions "
          f"{b.get('streams', {}).get('instructions_fnv1a', '?')}")
    for line in diff[:20]:
        print("  " + line)
    sys.exit(1 if diff else 0)


if __name__ == "__main__":
    main()
