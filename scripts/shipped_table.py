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
KEYS = ("macs", "cycles", "predicted_cycles", "store_cycles", "host_cycles", "dram_cycles", "dram_bytes")


def phase_totals(report):
    """(layer, phase) -> the summed KEYS of a `fetta run --json` report's contractions, with
    "bad" (mismatching elements), "off_model" (contractions whose RTL cycles differ from the
    model's), "intermediates" and "on_chip" (of those, kept on chip). Also the per-phase lines of
    bench/system/run_shipped.sh."""
    tot = defaultdict(lambda: defaultdict(int))
    for s in report["steps"]:
        t = tot[(s["layer"], s["phase"])]
        for k in KEYS:
            t[k] += s[k]
        t["bad"] += s["mismatches"] + s["stored_mismatches"]
        t["off_model"] += s["cycles"] != s["predicted_cycles"]
        if s["step"] + 1 < s["steps"]:
            t["intermediates"] += 1
            t["on_chip"] += s["kept_on_chip"]
    return tot


def phases(path):
    """phase_totals of one run's JSON report, refusing a run that is not clean."""
    report = json.load(open(path))
    tot = phase_totals(report)
    for (layer, phase), t in tot.items():
        if t["bad"]:
            sys.exit(f"{path}: {layer} {phase}: {t['bad']} mismatching element(s)")
        if t["off_model"]:
            sys.exit(f"{path}: {layer} {phase}: {t['off_model']} contraction(s) whose RTL cycles differ from the model's")
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
