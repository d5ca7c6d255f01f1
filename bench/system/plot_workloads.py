"""Plots bench/system/run_workloads.sh's summary: per layer, end to end over the bound on each top,
and FETTA's speedup over TPU-Offchip and the hierarchical array.

    /usr/bin/python3 bench/system/plot_workloads.py OUT_DIR   -> OUT_DIR/summary.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(out: str) -> None:
    rows = list(csv.DictReader(open(f"{out}/summary.csv")))
    names = [r["layer"].replace("_transformer_768", "_768") for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    width = 0.27
    for i, (key, label) in enumerate((("fetta", "FETTA"), ("tpu_offchip", "TPU-Offchip"), ("hier", "hierarchical"))):
        xs = [j + (i - 1) * width for j in range(len(rows))]
        top.bar(xs, [float(r[f"{key}_model"]) / float(r[f"{key}_bound"]) for r in rows], width, label=label)
    top.axhline(1.25, color="k", linestyle="--", linewidth=0.8, label="issue #41 target (1.25x)")
    top.set_ylabel("end to end / bound")
    top.set_title("End to end over the bound, FP + BP + WG (the wall-cycle model)")
    top.legend(fontsize=8)
    for i, (key, label) in enumerate((("speedup_tpu_offchip", "over TPU-Offchip"), ("speedup_hier", "over hierarchical"))):
        xs = [j + (i - 0.5) * width for j in range(len(rows))]
        bottom.bar(xs, [float(r[key]) for r in rows], width, label=label)
    bottom.axhline(1.0, color="k", linewidth=0.8)
    bottom.set_ylabel("FETTA speedup, end to end")
    bottom.set_xticks(range(len(rows)))
    bottom.set_xticklabels(names, rotation=30, ha="right")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"{out}/summary.png", dpi=110)
    print(f"wrote {out}/summary.png")


if __name__ == "__main__":
    main(sys.argv[1])
