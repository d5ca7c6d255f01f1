#!/usr/bin/env bash
# Yosys generic cell counts of both networks at N = 16, 64, 256 (docs/networks.md, "Cost").
# usage: tests/hw/net/net_cost.sh BUILD_DIR [OUT_DIR]
#   BUILD_DIR: a configured build with the net_rtl_gen target built.
set -euo pipefail
build=${1:?usage: net_cost.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/tests/hw/net/net_cost}
"$build/tests/hw/net/net_rtl_gen" --cost "$out"
printf '%-34s %10s %10s\n' module cells muxes
for dir in "$out"/*/; do
  top=$(basename "$dir")
  log="$out/$top.yosys.log"
  (cd "$dir" && yosys -q -p "read_verilog -sv $(tr '\n' ' ' < filelist.f); synth -flatten -top $top; tee -o $log stat" >/dev/null)
  cells=$(awk '/Number of cells:/ {print $4; exit}' "$log")
  muxes=$(awk '/\$_MUX_/ {print $2; exit}' "$log")
  printf '%-34s %10s %10s\n' "$top" "$cells" "${muxes:-0}"
done
