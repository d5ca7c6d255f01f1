"""Plots bench/system/run_phases.sh's summary: per shipped layer and phase, end to end over its
bound (issue #22's goal is 1.15) and the wall-cycle model's error against the run (target 2 %).

    /usr/bin/python3 bench/system/plot_phases.py OUT_DIR   -> OUT_DIR/summary.png
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(out: str) -> None:
    rows = list(csv.DictReader(open(f"{out}/summary.csv")))
    names = [f"{r['layer'].replace('_transformer_768', '_768').replace('_example', '')}\n{r['phase']}" for r in rows]
    xs = range(len(rows))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 6), sharex=True)
    top.bar(xs, [float(r["wall_per_bound"]) for r in rows], color="tab:blue")
    top.axhline(1.15, color="tab:red", linestyle="--", label="goal: 1.15x the bound")
    top.set_ylabel("end to end / bound")
    top.set_title("Each shipped layer-phase on its own, default (DMA) path")
    top.legend()
    bottom.bar(xs, [float(r["model_err_pct"]) for r in rows], color="tab:green")
    tol = max(float(r["model_tol_pct"]) for r in rows)  # the runner's --check-model tolerance
    for limit in (-tol, tol):
        bottom.axhline(limit, color="tab:red", linestyle="--")
    bottom.set_ylabel("model error, %")
    bottom.set_xticks(list(xs))
    bottom.set_xticklabels(names, fontsize=7)
    fig.tight_layout()
    fig.savefig(f"{out}/summary.png", dpi=120)
    print(f"wrote {out}/summary.png")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    plot(sys.argv[1])
