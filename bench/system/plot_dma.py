"""Plots bench/system/run_dma.sh's summary: per layer, compute cycles, end to end on the host
path and the DMA path, and the bound (compute, or the least data movement at the DRAM's bandwidth).

    /usr/bin/python3 bench/system/plot_dma.py OUT_DIR [OUT_DIR ...]   -> OUT_DIR/summary.png each
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot(out: str) -> None:
    rows = list(csv.DictReader(open(f"{out}/summary.csv")))
    names = [r["layer"].replace("_transformer_768", "_768") for r in rows]
    series = [("compute", "compute"), ("e2e_host", "end to end, host path (--no-dma)"),
              ("e2e_dma", "end to end, DMA path (default)"), ("bound", "bound")]
    width = 0.2
    fig, ax = plt.subplots(figsize=(10, 4.5))
    for i, (key, label) in enumerate(series):
        xs = [j + (i - 1.5) * width for j in range(len(rows))]
        ax.bar(xs, [int(r[key]) / 1e3 for r in rows], width, label=label)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names)
    ax.set_ylabel("k cycles (FP + BP + WG)")
    ax.set_title("End to end on the DMA path and the host path (docs/dma.md)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(f"{out}/summary.png", dpi=120)
    print(f"wrote {out}/summary.png")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        plot(d)
