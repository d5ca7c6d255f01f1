#!/bin/sh
# Two first runs of the same RTL into an empty model cache at once (two sweeps started together):
# both must finish with every result matching, and the model must be Verilated once (one run
# builds it, the other waits for the cache lock and then uses it).
#   concurrent_first_runs.sh <fetta> <cache-dir>   (from the source tree)
set -u
fetta=$1
cache=$2
rm -rf "$cache"
run() { "$fetta" run --config configs/ce2x4_x8.yaml --layer configs/layers/tt_small.yaml --phases fp --cache-dir "$cache"; }
run > "$cache.1.log" 2>&1 &
p1=$!
run > "$cache.2.log" 2>&1 &
p2=$!
wait $p1
r1=$?
wait $p2
r2=$?
cat "$cache.1.log" "$cache.2.log"
builds=$(cat "$cache.1.log" "$cache.2.log" | grep -c "fetta run: Verilating")
echo "concurrent_first_runs: exit codes $r1 and $r2, the model Verilated $builds time(s)"
[ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [ "$builds" -eq 1 ]
