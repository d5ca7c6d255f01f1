#!/bin/sh
# Programs the verifier accepts after a random one-field edit (tests/fuzz/test_fuzz_program.cpp
# keeps the first ones) run on the RTL without a crash or a hang: each `fetta exec` ends with 0
# (all match), 1 (a mismatch: the edit changed what is computed) or 2 (an error the run names),
# within a time limit, and says nothing internal ("std::", a signal, an abort).
#   program_runs.sh <fuzz_tests> <fetta> <work dir> <cache dir>
set -eu
fuzz=$1 fetta=$2 work=$3 cache=$4
rm -rf "$work" && mkdir -p "$work"
FETTA_FUZZ_KEEP="$work" FETTA_FUZZ_CONFIG=configs/ce2x4_x8.yaml "$fuzz" "[fuzz_program]" > "$work/fuzz.log"
n=0
for m in "$work"/mutant_*; do
  n=$((n + 1))
  rc=0
  timeout 600 "$fetta" exec --program "$m" --cache-dir "$cache" > "$m.out" 2> "$m.err" || rc=$?
  case $rc in
    0|1|2) ;;
    124) echo "FAIL: $m hung (600 s)"; exit 1 ;;
    *) echo "FAIL: $m ended with $rc"; cat "$m.err"; exit 1 ;;
  esac
  if grep -E "std::|terminate called|Segmentation|Aborted|_M_|bad_alloc" "$m.err" "$m.out"; then
    echo "FAIL: $m: an internal message"; exit 1
  fi
  echo "$(basename "$m"): exit $rc"
done
test "$n" -gt 0 || { echo "FAIL: no accepted program kept"; exit 1; }
echo "$n accepted programs ran on the RTL: no crash, no hang"
