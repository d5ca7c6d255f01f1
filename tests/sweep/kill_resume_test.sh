#!/bin/sh
# A sweep killed with SIGKILL at several instants, each time resumed, and finally completed: every
# point is recorded exactly once in results.jsonl and its rows once in results.csv. Also a torn
# last line (a kill in the middle of a write) and a point recorded twice: --resume drops the
# first and counts the second once, and rewrites the CSV from the records.
#   kill_resume_test.sh FETTA SOURCE_DIR WORK_DIR
set -eu
fetta=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
cd "$src"
grid=tests/sweep/kill_grid.yaml
points=54  # 3 x 3 x 3 x 2; a point takes some 20 ms, so the kills land mid-sweep
n=0
for delay in 0.05 0.1 0.15 0.2 0.25 0.3 0.4 0.5; do
  n=$((n + 1))
  "$fetta" sweep --grid $grid --out "$work/s" --resume --jobs 2 2>> "$work/log" &
  pid=$!
  sleep $delay
  kill -9 $pid 2> /dev/null || true
  wait $pid 2> /dev/null || true
  # A kill in the middle of a write: half a record at the end of the file.
  if [ $n -eq 3 ] && [ -s "$work/s/results.jsonl" ]; then
    head -n 1 "$work/s/results.jsonl" | cut -c1-40 | tr -d '\n' >> "$work/s/results.jsonl"
  fi
  # A point recorded twice (two submitters, or a record written again by hand).
  if [ $n -eq 5 ] && [ -s "$work/s/results.jsonl" ]; then
    head -n 1 "$work/s/results.jsonl" >> "$work/s/results.jsonl"
  fi
done
"$fetta" sweep --grid $grid --out "$work/s" --resume --jobs 2 2>> "$work/log"
/usr/bin/python3 - "$work/s" $points <<'PY'
import csv, json, sys, collections
out, n = sys.argv[1], int(sys.argv[2])
recs = [json.loads(l) for l in open(out + "/results.jsonl")]  # every line whole
pts = collections.Counter(r["point"] for r in recs)
assert len(pts) == n and all(c == 1 for c in pts.values()), pts
assert all(r["status"] == "ok" for r in recs), [r for r in recs if r["status"] != "ok"]
rows = list(csv.DictReader(open(out + "/results.csv")))
per = collections.Counter((r["point"], r["phase"]) for r in rows)
assert len(per) == 2 * n and all(c == 1 for c in per.values()), per
assert {r["point"] for r in rows} == set(pts), "CSV and JSONL name different points"
print(f"{n} points, {len(rows)} CSV rows, each once")
PY
# The kills must have landed mid-sweep for the test to mean anything.
[ "$(grep -cE 'sweep: [1-9][0-9]* point\(s\) to run \([1-9]' "$work/log")" -ge 2 ] || { cat "$work/log"; echo "no kill landed mid-sweep"; exit 1; }
echo "kill-resume test: ok"
