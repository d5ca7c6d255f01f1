"""Checks `fetta run --json`'s overlap figures (docs/program.md, "Overlap") read from stdin: the
bench's per-cycle counts add up to the simulated cycles, the controller's executing cycles are
the wall-cycle model's busy cycles, and the overlap is within what the counts allow."""
import json
import sys

r = json.load(sys.stdin)
o, e = r["overlap"], r["end_to_end"]
c, m, ov = o["controller_cycles"], o["moving_cycles"], o["overlapped_cycles"]
checks = {
    "every cycle counted once": o["idle_cycles"] + c + m - ov == e["simulated_cycles"],
    "controller = the model's busy cycles": c == e["model_controller"]["busy_cycles"],
    "overlapped <= min(controller, moving)": 0 < ov <= min(c, m),
    "max(DMA, host) <= moving <= DMA + host":
        max(o["dma_busy_cycles"], o["host_transfer_cycles"]) <= m <= o["dma_busy_cycles"] + o["host_transfer_cycles"],
    "overlap percent": abs(o["overlap_percent"] - 100.0 * ov / min(c, m)) < 1e-9,
    "floor": o["floor_cycles"] == max(c, m) and o["simulated_per_floor"] >= 1.0,
}
bad = [k for k, ok in checks.items() if not ok]
print(json.dumps(o))
if bad:
    sys.exit("overlap figures inconsistent: " + "; ".join(bad))
print("overlap figures consistent")
