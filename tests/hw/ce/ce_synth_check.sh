#!/bin/sh
# Yosys generic synthesis of one generated CE (flattened): fails on any warning or latch (the clock
# gates' excepted) and
# prints the cell and flip-flop counts (recorded in docs/ce.md).
# usage: ce_synth_check.sh RTL_DIR TOP
set -eu
dir=$1
top=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
files=$(sed "s|^|$dir/|" "$dir/filelist.f" | tr '\n' ' ')
# Any latch but the clock gates' (fetta_clock_gate, docs/rtl_gen.md "Clock gating") fails the select.
if ! yosys -q -l "$log" -p "read_verilog -sv $files; hierarchy -check -top $top; proc; \
    select -assert-none t:\$dlatch t:\$adlatch t:\$dlatchsr t:\$sr %u %u %u fetta_clock_gate/* %d; \
    synth -flatten -top $top" >/dev/null; then
  grep -E 'ERROR|dlatch' "$log" | head -5
  echo "FAIL: latches inferred" >&2
  exit 1
fi
if grep -qi "warning" "$log"; then
  grep -i "warning" "$log"
  echo "FAIL: Yosys warnings" >&2
  exit 1
fi
cells=$(grep "Number of cells" "$log" | tail -1 | awk '{print $4}')
ffs=$(grep -E '\$_S?DFFE?_' "$log" | awk '{s += $2} END {print s}')
echo "$top: $cells cells, $ffs flip-flops, no latches, no warnings"
