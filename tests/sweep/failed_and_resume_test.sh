#!/bin/sh
# A sweep whose every point failed says how many and exits 1; --resume with the grid a directory
# ran resumes it, and with another grid is refused, naming the first line that differs.
#   failed_and_resume_test.sh FETTA SOURCE_DIR WORK_DIR
set -eu
fetta=$1
cd "$2"
work=$3
rm -rf "$work" && mkdir -p "$work"
rc=0
"$fetta" sweep --grid tests/sweep/all_failed.yaml --out "$work/s" 2> "$work/first.log" || rc=$?
[ "$rc" = 1 ] || { cat "$work/first.log"; echo "FAIL: exit $rc with every point failed (want 1)"; exit 1; }
grep -q "2 of 2 point(s) failed" "$work/first.log" || { cat "$work/first.log"; echo "FAIL: no count of failed points"; exit 1; }
rc=0
"$fetta" sweep --grid tests/sweep/all_failed.yaml --out "$work/s" --resume 2> "$work/same.log" || rc=$?
grep -q "0 point(s) to run (2 already recorded)" "$work/same.log" || { cat "$work/same.log"; echo "FAIL: the same grid did not resume"; exit 1; }
if "$fetta" sweep --grid tests/sweep/with_failure.yaml --out "$work/s" --resume 2> "$work/other.log"; then
  echo "FAIL: --resume took another grid's directory"; exit 1
fi
grep -q "holds the results of another grid: line 1 is '# Only impossible points" "$work/other.log" ||
  { cat "$work/other.log"; echo "FAIL: the refusal does not name the differing line"; exit 1; }
echo "failed-and-resume test: ok"
