#!/usr/bin/python3
"""The per-phase table of docs/results.md ("The whole accelerator on tensorized layers") from two
runs of bench/system/run_shipped.sh, the second with `--through-host`:

    bench/system/run_shipped.sh configs/default.yaml OUT
    bench/system/run_shipped.sh configs/default.yaml OUT_HOST --through-host
    /usr/bin/python3 scripts/shipped_table.py OUT OUT_HOST

Per layer and phase: MACs, RTL cycles, PE utilization, intermediates kept on chip, STORE cycles,
host cycles and DRAM cycles (traffic), each with the `--through-host` figure in parentheses.
Exits non-zero when a run has a mismatch or a contraction whose cycles differ from the model's,
so the table is never made from a failing run. Markdown on stdout.
"""
import json
import os
import sys
from collections import defaultdict

ORDER = ("tt_fetta_example", "tt_transformer_768", "tr_transformer_768", "bt_transformer_768",
         "ht_transformer_768", "ttm_transformer_768")
NOTE = {"tt_fetta_example": " (batch 128)", "bt_transformer_768": " (4 terms, summed on chip)"}
KEYS = ("macs", "cycles", "store_cycles", "host_cycles", "dram_cycles", "dram_bytes")


def phases(path):
    """(layer, phase) -> summed figures of one run's JSON report; checks it is clean."""
    report = json.load(open(path))
    tot = defaultdict(lambda: defaultdict(int))
    for s in report["steps"]:
        if s["mismatches"] or s["stored_mismatches"]:
            sys.exit(f"{path}: {s['layer']} {s['phase']} step {s['step']} has mismatches")
        if s["cycles"] != s["predicted_cycles"]:
            sys.exit(f"{path}: {s['layer']} {s['phase']} step {s['step']}: RTL {s['cycles']} != model "
                     f"{s['predicted_cycles']}")
        t = tot[(s["layer"], s["phase"])]
        for k in KEYS:
            t[k] += s[k]
        if s["step"] + 1 < s["steps"]:
            t["intermediates"] += 1
            t["on_chip"] += s["kept_on_chip"]
    return report["pes"], tot


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print("| layer | phase | MACs | cycles | PE utilization | kept on chip | STORE cycles "
          "| host cycles (through host) | DRAM cycles (traffic; through host) |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for layer in ORDER:
        pes, run = phases(os.path.join(sys.argv[1], layer + ".json"))
        _, host = phases(os.path.join(sys.argv[2], layer + ".json"))
        first = True
        for ph in ("fp", "bp", "wg"):
            t, h = run[(layer, ph)], host[(layer, ph)]
            name = layer + NOTE.get(layer, "") if first else ""
            first = False
            print(f"| {name} | {ph.upper()} | {t['macs']:,} | {t['cycles']:,} | "
                  f"{100 * t['macs'] / (t['cycles'] * pes):.1f}% | {t['on_chip']} of {t['intermediates']} | "
                  f"{t['store_cycles']:,} | {t['host_cycles']:,} ({h['host_cycles']:,}) | "
                  f"{t['dram_cycles']:,} ({t['dram_bytes'] / 1024:,.0f} KiB; {h['dram_cycles']:,}) |")


if __name__ == "__main__":
    main()
