#!/usr/bin/env bash
# fetta sweep --backend slurm against a real single-node Slurm started here (scripts/slurm/up.sh,
# stopped by a trap whatever happens): ci_tiny through a job array gives the local backend's
# records; a task killed while it runs is recorded with Slurm's state and finished by
# --resume --retry-failed; an impossible point is recorded with its reason; bad setups are refused.
#   slurm_test.sh FETTA SOURCE_DIR WORK_DIR
set -euo pipefail
fetta=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
export D=$work/cluster
trap '"$src/scripts/slurm/down.sh"' EXIT
# Ports of its own, so a Slurm already running on this machine is left alone.
SLURMCTLD_PORT=16817 SLURMD_PORT=16818 CPUS=2 "$src/scripts/slurm/up.sh"
export SLURM_CONF=$D/etc/slurm.conf
export FETTA_CACHE_DIR=$work/cache
cd "$src"

# Without a cluster's client on PATH: refused, naming the packages.
if env PATH=/nonexistent "$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/nopath" --backend slurm 2> "$work/nopath.log"; then
  echo "a slurm sweep without sbatch was accepted"; exit 1
fi
grep -q 'sbatch is not on PATH; install the Debian package slurm-client' "$work/nopath.log" || { cat "$work/nopath.log"; exit 1; }
# A submission Slurm rejects: its message is shown.
if "$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/rejected" --backend slurm \
     --slurm-opt "--partition=no_such_partition" 2> "$work/rejected.log"; then
  echo "a rejected submission was reported as a success"; exit 1
fi
grep -q "sbatch rejected the sweep's job array.*invalid partition" "$work/rejected.log" || { cat "$work/rejected.log"; exit 1; }

# The reference: ci_tiny on the local backend.
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/local" --jobs 2 2> "$work/local.log"

# ci_tiny as a job array, submitted without waiting; task 1 is cancelled while it runs.
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/slurm" --backend slurm --no-wait 2> "$work/submit.log"
grep -q 'not waiting; collect with' "$work/submit.log" || { cat "$work/submit.log"; exit 1; }
job=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["job"])' "$work/slurm/slurm/submission.json")
for _ in $(seq 1 600); do
  squeue -h -j "$job" -t R -O ArrayTaskID:20 | grep -qx ' *1 *' && break
  sleep 0.2
done
squeue -h -j "$job" -t R -O ArrayTaskID:20 | grep -qx ' *1 *' || { echo "task 1 never ran"; squeue -t all; exit 1; }
scancel "${job}_1"
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/slurm" --backend slurm --resume 2> "$work/collect.log"
grep -q "following Slurm job $job" "$work/collect.log" || { cat "$work/collect.log"; exit 1; }
/usr/bin/python3 - "$work/slurm/results.jsonl" "$job" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 4, len(recs)
failed = [r for r in recs if r["status"] != "ok"]
assert len(failed) == 1, failed
r = failed[0]
assert r["slurm"]["task"] == 1 and r["slurm"]["state"] == "CANCELLED", r
assert f"slurm task {sys.argv[2]}_1: CANCELLED" in r["reason"], r["reason"]
PY
# --resume --retry-failed runs the cancelled point again: the records now equal the local ones.
"$fetta" sweep --grid scripts/grids/ci_tiny.yaml --out "$work/slurm" --backend slurm --resume --retry-failed \
  2> "$work/retry.log"
grep -q '1 point(s) to run (3 already recorded)' "$work/retry.log" || { cat "$work/retry.log"; exit 1; }
# The records differ only in their `run` sections (backend, host, time) and in the output
# directory they name; the CSV only in that directory.
sed "s|$work/local/|$work/slurm/|g" "$work/local/results.csv" | cmp - "$work/slurm/results.csv" ||
  { echo "slurm results.csv differs from the local one"; exit 1; }
/usr/bin/python3 - "$work/local/results.jsonl" "$work/slurm/results.jsonl" "$work/local/" "$work/slurm/" <<'PY'
import json, sys
local = [json.loads(l.replace(sys.argv[3], sys.argv[4])) for l in open(sys.argv[1])]
slurm = [json.loads(l) for l in open(sys.argv[2])]
assert [r["run"]["backend"] for r in local] == ["local"] * 4, local
assert all(r["run"]["backend"] == "slurm" and "job" in r["run"] and r["run"]["seconds"] > 0 for r in slurm), slurm
for r in local + slurm:
    del r["run"]
assert local == slurm, "slurm records differ from the local ones"
PY

# A point that cannot be built fails in its task, recorded with the reason; the others complete.
"$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/fail" --backend slurm --max-running 1 2> "$work/fail.log"
grep 'ce.rows=3' "$work/fail/results.csv" | grep -q ',failed,.*allowed: a power of two' || { cat "$work/fail/results.csv"; exit 1; }
[ "$(grep -c ',ok,' "$work/fail/results.csv")" -eq 2 ] || { cat "$work/fail/results.csv"; exit 1; }
# An output directory the tasks do not see as the submitter wrote it: submitted held, the token
# file changed under them, released; every task fails saying so, and the failure is recorded.
"$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/unseen" --backend slurm --no-wait \
  --slurm-opt "--hold" 2> "$work/unseen_submit.log"
job=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["job"])' "$work/unseen/slurm/submission.json")
echo "another directory" > "$work/unseen/slurm/sub1/visible"
scontrol release "$job"
# Every point failed: the sweep says so and exits 1.
rc=0
"$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/unseen" --backend slurm --resume 2> "$work/unseen.log" || rc=$?
[ "$rc" = 1 ] || { cat "$work/unseen.log"; echo "every point failed, and the sweep exited $rc (want 1)"; exit 1; }
grep -q '3 of 3 point(s) failed' "$work/unseen.log" || { cat "$work/unseen.log"; exit 1; }
[ "$(grep -c ',failed,' "$work/unseen/results.csv")" -eq 3 ] || { cat "$work/unseen/results.csv"; exit 1; }
grep -q 'FAILED, exit code [0-9]*, no record; log: .*is not the file the submitter wrote: --out is not shared with this node' \
  "$work/unseen/results.csv" || { cat "$work/unseen/results.csv"; exit 1; }
echo "slurm test: ok"
