#!/bin/sh
# The CI sweep end to end: the tiny grid (lint + ASAP7 synthesis + model cycles, 2 jobs), the
# plots, a resume that finds nothing left to do, and a grid with an impossible point (recorded,
# then retried with --retry-failed), and one point with RTL cycles.
#   run_sweep_test.sh FETTA SOURCE_DIR WORK_DIR
set -eu
fetta=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$src"
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/tiny" --jobs 2
ok=$(grep -c ',ok,' "$work/tiny/results.csv")
[ "$ok" -eq 8 ] || { echo "expected 8 ok rows (4 points x 2 phases), got $ok"; exit 1; }
# Every point has an ASAP7 area and model cycles.
awk -F'"' 'NR > 1 { print $3 }' "$work/tiny/results.csv" | awk -F, '{ if ($11 == "" || $16 + 0 <= 0) { print "row without cycles or area: " $0; bad = 1 } } END { exit bad }'
# Energy columns: the terms add up to the energy, and pJ/MAC, TOPS/W and EDP follow from it, the
# MACs and the cycles (at the point's clock); the static term is the configuration's static power
# over the cycles, DRAM from the program's traffic.
/usr/bin/python3 - "$work/tiny/results.csv" "$work/tiny/points" <<'PY'
import csv, json, math, os, re, sys, yaml
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["status"] == "ok"]
assert rows
recs = [json.loads(l) for l in open(os.path.join(os.path.dirname(sys.argv[1]), "results.jsonl"))]
layer_of = {(rec["point"], l["layer"], l["phase"]): l for rec in recs for l in rec.get("layers", [])}
for r in rows:
    cfg = yaml.safe_load(open(os.path.join(sys.argv[2], re.sub(r"[^A-Za-z0-9_.-]", "_", r["point"]), "config.yaml")))
    f = {k: float(r[k]) for k in ("energy_uj", "static_uj", "mac_uj", "sram_uj", "network_uj", "dram_uj",
                                  "pj_per_mac", "tops_per_w", "edp_js", "macs", "cycles")}
    parts = f["static_uj"] + f["mac_uj"] + f["sram_uj"] + f["network_uj"] + f["dram_uj"]
    assert math.isclose(parts, f["energy_uj"], rel_tol=1e-4), (parts, r)
    assert f["mac_uj"] > 0 and f["sram_uj"] > 0 and f["dram_uj"] > 0, r
    # DRAM: the program's own traffic (mapper::program_traffic), priced at the point's constants.
    t = layer_of[(r["point"], r["layer"], r["phase"])]["traffic"]
    assert t["dram_source"] == "program" and t["dram_read_bytes"] > 0 and t["dram_write_bytes"] > 0, t
    want = (t["dram_read_bytes"] * cfg["energy"]["dram_read_pj_per_byte"] +
            t["dram_write_bytes"] * cfg["energy"]["dram_write_pj_per_byte"]) * 1e-6
    assert math.isclose(f["dram_uj"], want, rel_tol=1e-3, abs_tol=1e-6), (f["dram_uj"], want, r)
    period_ns = 1000.0 / cfg["clock_mhz"]
    static = cfg["energy"]["static_mw"] * f["cycles"] * period_ns * 1e-6  # mW x ns = pJ
    assert math.isclose(f["static_uj"], static, rel_tol=1e-3, abs_tol=1e-4), (static, r)
    assert math.isclose(f["mac_uj"], cfg["energy"]["mac_pj"] * f["macs"] * 1e-6, rel_tol=1e-3, abs_tol=1e-4), r
    assert math.isclose(f["pj_per_mac"], f["energy_uj"] * 1e6 / f["macs"], rel_tol=1e-3), r
    assert math.isclose(f["tops_per_w"], 2 * f["macs"] / (f["energy_uj"] * 1e-6) * 1e-12, rel_tol=1e-3), r
    assert math.isclose(f["edp_js"], f["energy_uj"] * 1e-6 * f["cycles"] * period_ns * 1e-9, rel_tol=1e-3), r
    # energy_from: the hierarchical points carry configs/baseline_hier.yaml's constants, the others the base's.
    hier = yaml.safe_load(open("configs/baseline_hier.yaml"))["energy"]
    same = all(math.isclose(cfg["energy"][k], v) for k, v in hier.items())
    assert same == (r["baseline"] == "hier"), (r["point"], cfg["energy"], hier)
    # End to end (the wall-cycle model): at least the compute cycles and the bound.
    e2e, bound = int(r["e2e_cycles"]), int(r["bound_cycles"])
    assert e2e > f["cycles"] and bound >= f["cycles"] and e2e >= bound, r
# Every row has the header's columns, failed points included.
with open(sys.argv[1], newline="") as fh:
    table = list(csv.reader(fh))
assert all(len(row) == len(table[0]) for row in table), [len(row) for row in table]
assert sorted({rec["config"]["energy_from"] for rec in recs}) == ["base", "configs/baseline_hier.yaml"], recs
PY
/usr/bin/python3 scripts/plot_sweep.py "$work/tiny"
for p in area_vs_pes util_vs_lanes speedup e2e_speedup area_breakdown energy_per_mac efficiency; do
  [ -s "$work/tiny/$p.png" ] || { echo "missing plot $p.png"; exit 1; }
done
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/tiny" --resume 2> "$work/resume.log"
grep -q '0 point(s) to run (4 already recorded)' "$work/resume.log" || { cat "$work/resume.log"; exit 1; }
"$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/fail"
grep -q '^ce.rows=3,failed' "$work/fail/results.csv" || { echo "the impossible point is not recorded as failed"; exit 1; }
grep 'ce.rows=3' "$work/fail/results.csv" | grep -q 'allowed: a power of two' || { echo "the failure has no reason"; exit 1; }
[ "$(grep -c ',ok,' "$work/fail/results.csv")" -eq 2 ] || { echo "the valid points did not complete"; exit 1; }
# A failed point's row has the header's columns too.
/usr/bin/python3 -c 'import csv, sys; t = list(csv.reader(open(sys.argv[1], newline=""))); assert all(len(r) == len(t[0]) for r in t), [len(r) for r in t]' "$work/fail/results.csv" || exit 1
# --retry-failed without --resume is refused (it would silently start from scratch).
if "$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/fail" --retry-failed 2> "$work/retry_alone.log"; then
  echo "--retry-failed without --resume was accepted"; exit 1
fi
grep -q -- '--retry-failed: only with --resume' "$work/retry_alone.log" || { cat "$work/retry_alone.log"; exit 1; }
# --retry-failed runs the failed point again (and only it); the files still hold one record each.
"$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/fail" --resume --retry-failed 2> "$work/retry.log"
grep -q '1 point(s) to run (2 already recorded)' "$work/retry.log" || { cat "$work/retry.log"; exit 1; }
[ "$(wc -l < "$work/fail/results.jsonl")" -eq 3 ] || { echo "retry left duplicate records"; exit 1; }
[ "$(grep -c '^ce.rows=3,failed' "$work/fail/results.csv")" -eq 1 ] || { echo "retry left duplicate CSV rows"; exit 1; }
# RTL cycles (Verilates the 4-CE top once, into a cache of its own): every row says rtl and has
# host-transfer, DRAM and STORE cycles; the run's report is kept per layer.
FETTA_CACHE_DIR="$work/cache" "$fetta" sweep --grid tests/sweep/rtl_cycles.yaml --out "$work/rtl"
/usr/bin/python3 - "$work/rtl/results.csv" "$work/rtl/points/baseline_fetta/run_tt_small.json" \
  "$work/rtl/points/baseline_fetta/config.yaml" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
for r in rows:
    assert r["status"] == "ok" and r["cycles_source"] == "rtl", r
    # DRAM cycles are the host path's accounted time: none where the DMA moves every input and result.
    assert int(r["cycles"]) > 0 and int(r["host_cycles"]) > 0 and int(r["dram_cycles"]) >= 0, r
    assert int(r["store_cycles"]) > 0, r  # tt_small keeps intermediates on chip on this top
# DRAM energy from the bytes the run moved in the phase, read and written at their own energies.
import json, yaml
run = json.load(open(sys.argv[2]))
e = yaml.safe_load(open(sys.argv[3]))["energy"]
# Every DRAM transaction of the run is some step's traffic: the DRAM target's counters are the steps' sums.
for k in ("read", "written"):
    assert sum(s["dram_bytes_" + k] for s in run["steps"]) == run["dram"]["bytes_" + k], (k, run["dram"])
for r in rows:
    steps = [s for s in run["steps"] if s["phase"] == r["phase"]]
    rd = sum(s["dram_bytes_read"] for s in steps)
    wr = sum(s["dram_bytes_written"] for s in steps)
    assert rd > 0 and wr > 0 and rd + wr == sum(s["dram_bytes"] for s in steps), (rd, wr)
    want = (rd * e["dram_read_pj_per_byte"] + wr * e["dram_write_pj_per_byte"]) * 1e-6
    assert abs(float(r["dram_uj"]) - want) <= 1e-4 + 1e-6 * want, (r["dram_uj"], want)
PY
[ -s "$work/rtl/points/baseline_fetta/run_tt_small.json" ] || { ls -R "$work/rtl/points"; exit 1; }
/usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); assert r["map_for"] == "end-to-end", r["map_for"]' \
  "$work/rtl/points/baseline_fetta/run_tt_small.json" || { echo "map_for did not reach fetta run"; exit 1; }
echo "sweep test: ok"
