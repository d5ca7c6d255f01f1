#!/bin/sh
# No child tool outlives its sweep. (1) The sweep is killed with SIGKILL while a point's lint tools
# run: its worker and every tool it started die with it. (2) The sweep and its worker are killed
# at once, orphaning the tools: the next --resume stops them before it starts, says so, and then
# finishes the sweep with every point recorded once.
#   children_test.sh FETTA SOURCE_DIR WORK_DIR
set -eu
fetta=$1
src=$2
work=$3
rm -rf "$work"
mkdir -p "$work/s"
out=$(cd "$work/s" && pwd -P)
cd "$src"
grid=tests/sweep/children_grid.yaml
marker="FETTA_JOB=sweep:$out"

# The processes carrying this sweep's marker in their environment.
marked() {
  for e in /proc/[0-9]*/environ; do
    if { tr '\0' '\n' < "$e"; } 2> /dev/null | grep -qxF "$marker"; then
      p=${e#/proc/}
      echo "${p%/environ}"
    fi
  done
}
wait_for_tools() {  # up to 60 s until a child tool of the sweep runs
  i=0
  while [ -z "$(marked)" ]; do
    i=$((i + 1))
    [ $i -le 600 ] || { echo "no child tool appeared"; cat "$work/log"; exit 1; }
    sleep 0.1
  done
}
gone_within() {  # $1 tenths of a second for every marked process to be gone
  i=0
  while [ -n "$(marked)" ]; do
    i=$((i + 1))
    [ $i -le "$1" ] || return 1
    sleep 0.1
  done
}

# (1) SIGKILL to the sweep: the worker's parent-death signal takes its group down.
"$fetta" sweep --grid $grid --out "$out" --resume 2>> "$work/log" &
sup=$!
wait_for_tools
kill -9 $sup
wait $sup 2> /dev/null || true
gone_within 50 || { echo "child tools outlived a SIGKILLed sweep:"; ps -o pid,pgid,args -p "$(marked | tr '\n' ',')0"; exit 1; }
echo "(1) sweep SIGKILLed: its child tools are gone"

# (2) The sweep and its worker SIGKILLed together: the tools are orphans until --resume. Each
# attempt uses a sweep of its own; an attempt whose orphans all finish on their own before the
# resume looks for them (a loaded machine) proves nothing and is retried.
stopped=""
for attempt in 1 2 3; do
  mkdir -p "$work/s$attempt"
  out=$(cd "$work/s$attempt" && pwd -P)
  marker="FETTA_JOB=sweep:$out"
  "$fetta" sweep --grid $grid --out "$out" --resume 2>> "$work/log" &
  sup=$!
  wait_for_tools
  worker=$(ps -o pid= --ppid $sup | tr -d ' ' | head -n 1)
  kill -9 $sup $worker
  wait $sup 2> /dev/null || true
  sleep 0.2
  orphans=$(marked)
  [ -n "$orphans" ] || continue
  echo "(2) attempt $attempt orphaned: $(echo $orphans | wc -w) process(es)"
  "$fetta" sweep --grid $grid --out "$out" --resume 2> "$work/resume.log"
  for p in $orphans; do
    if { tr '\0' '\n' < /proc/$p/environ; } 2> /dev/null | grep -qxF "$marker"; then
      echo "orphan $p still runs"; exit 1
    fi
  done
  if grep -q "stopped [1-9][0-9]* process(es) left running by an earlier sweep" "$work/resume.log"; then
    stopped=yes
    break
  fi
  echo "(2) attempt $attempt: the orphans finished before the resume looked for them"
done
[ -n "$stopped" ] || { echo "no resume stopped an orphaned child tool in 3 attempts"; cat "$work/resume.log"; exit 1; }
[ -z "$(marked)" ] || { echo "tools left after the sweep finished"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import collections, json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
pts = collections.Counter(r["point"] for r in recs)
assert len(pts) == 4 and all(c == 1 for c in pts.values()), pts
assert all(r["status"] == "ok" for r in recs), [r.get("reason") for r in recs]
PY
echo "children test: ok"
