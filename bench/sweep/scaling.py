#!/usr/bin/env python3
"""The scaling table of bench/sweep/slurm_scaling.sh: wall time of each run, the sum of its points'
own times (results.jsonl `run.seconds`), the overhead per task, and the wall time expected on N
nodes of C cores from the local per-point times (in grid order, each onto the first free slot).

    bench/sweep/scaling.py OUT_DIR [--cores C] [--json FILE]
"""
import argparse
import heapq
import json
import os
import sys


def runs(out):
    for name in sorted(os.listdir(out)):
        t = os.path.join(out, name, "time.json")
        if os.path.exists(t):
            recs = [json.loads(l) for l in open(os.path.join(out, name, "results.jsonl"))]
            yield name, json.load(open(t))["wall_s"], [r["run"]["seconds"] for r in recs if "run" in r]


def slots_of(name):
    return int(name.rsplit("_", 1)[1][1:])  # local_j2 -> 2, slurm_c8 -> 8


def makespan(times, slots):
    """Wall time of the points run in grid order, each on the first free slot: the order both
    backends start them in (local workers take the next point; a job array starts by index)."""
    free = [0.0] * slots
    for t in times:
        heapq.heapreplace(free, free[0] + t)
    return max(free)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--cores", type=int, default=2, help="cores per node for the expected scaling")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    print("| run | slots | points | wall s | sum of point s | ideal s | overhead per task s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    base = None
    for name, wall, times in runs(a.out):
        slots = slots_of(name)
        ideal = makespan(times, slots)
        over = (wall - ideal) * min(slots, len(times)) / max(1, len(times))
        rows.append({"run": name, "slots": slots, "points": len(times), "wall_s": wall, "sum_s": sum(times),
                     "ideal_s": ideal, "overhead_per_task_s": over})
        print(f"| {name} | {slots} | {len(times)} | {wall:.1f} | {sum(times):.1f} | {ideal:.1f} | {over:.2f} |")
        if name == "local_j1":
            base = times
    if base is None:
        sys.exit("no local_j1 run: the expected scaling needs its per-point times")
    print(f"\nexpected wall time on N nodes of {a.cores} cores (from local_j1's point times, no overhead):")
    print("| nodes | slots | wall s | speedup over one core |")
    print("| ---: | ---: | ---: | ---: |")
    one = makespan(base, 1)
    scaling = []
    for n in (1, 2, 4, 8, 16, 32):
        m = makespan(base, n * a.cores)
        scaling.append({"nodes": n, "wall_s": m, "speedup": one / m})
        print(f"| {n} | {n * a.cores} | {m:.1f} | {one / m:.2f}x |")
    if a.json:
        json.dump({"runs": rows, "scaling": scaling}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
