#!/bin/sh
# Yosys generic cell counts of the non-RAM logic of an emitted memory block (docs/memory.md):
# memories stay $mem_v2 cells (synth stops before memory_map), everything else is mapped to
# Yosys' generic gates and flip-flops.
#   tests/hw/mem/cell_count.sh DIR TOP      (DIR written by mem_gen or `fetta gen`)
set -e
dir=$1
top=$2
files=$(sed "s|^|$dir/|" "$dir/filelist.f" | tr '\n' ' ')
yosys -q -p "read_verilog -sv $files; synth -top $top -flatten -run begin:fine; opt -fast -full; techmap; opt -fast; abc -fast; opt_clean; tee -o /dev/stdout stat"
