#!/bin/sh
# How far OpenSTA's propagated activity is from a gate-level simulation (docs/power.md,
# "Gate-level check"). For each design: trace the RTL on a stimulus, run fetta power on it
# (activity annotated on the registers and ports, propagated through the gates by OpenSTA);
# then simulate the synthesized netlist itself on the same stimulus (each ASAP7 cell modelled from
# its Liberty function by Yosys, Verilated with every wire traced), check that it computes what
# the RTL computes, and run fetta power --gate-level on that trace (every gate's output annotated,
# nothing propagated). Prints both figures and their ratio.
#   bench/power/gate_level.sh [build-dir=build] [out-dir=out/bench_gate_level] [cycles=2000]
# Needs Verilator, Yosys and OpenSTA; a few minutes.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build}
out=${2:-out/bench_gate_level}
cycles=${3:-2000}
seed=0x90e7
fetta=${FETTA:-$build/fetta}
vinc=/usr/share/verilator/include
cmake --build "$build" -j2 --target fetta corpus_rtl synth_designs_rtl > /dev/null
mkdir -p "$out"
out=$(cd "$out" && pwd)

# (POSIX sh functions share one set of variables: each helper has names of its own.)
# A Verilated model of DESIGN's files with TRACER as its main: verilate NAME TOP TRACER FILES...
verilate() {
  vname=$1 vtop=$2 vtracer=$3
  shift 3
  rm -rf "$out/$vname.obj" "$out/$vname.inc"
  mkdir -p "$out/$vname.inc"
  printf '#include "V%s.h"\nusing FettaMac = V%s;\n' "$vtop" "$vtop" > "$out/$vname.inc/fetta_mac_model.h"
  verilator --cc --exe --build -j 2 --trace-fst --trace-underscore -Wno-fatal -Wno-lint -Wno-style -O2 \
    --top-module "$vtop" -Mdir "$out/$vname.obj" -o "$vname" -CFLAGS "-I$out/$vname.inc" -LDFLAGS -lz \
    "$@" "$vtracer" > "$out/$vname.verilate.log" 2>&1 || { tail -20 "$out/$vname.verilate.log"; exit 1; }
}

# The flat netlist with every ASAP7 cell as a Yosys model of its Liberty function.
gate_model() {
  gdir=$1 gtop=$2 gmodel=$3
  libs=$(sed -n 's/^read_liberty {\(.*\)}$/\1/p' "$gdir/sta.tcl" | grep -v '/sram/')
  {
    for lib in $libs; do echo "read_liberty -ignore_miss_func $lib"; done
    echo "read_verilog $gdir/netlist.v"
    echo "hierarchy -top $gtop"
    echo "flatten"
    echo "opt_clean"
    echo "write_verilog -noattr $gmodel"
  } > "$gmodel.ys"
  yosys -q -l "$gmodel.yosys.log" "$gmodel.ys" > /dev/null
}

figures() {  # total internal switching leakage (mW) of a power.json
  /usr/bin/python3 -c "import json,sys; t=json.load(open(sys.argv[1]))['total']; print(' '.join('%.4f' % (t[k]*1e3) for k in ('total_w','internal_w','switching_w','leakage_w')))" "$1"
}

run_design() {  # name top rtl-dir tracer tracer-args-after-fst...
  name=$1 top=$2 rtl=$(cd "$3" && pwd) tracer=$PWD/$4
  shift 4
  d="$out/$name"
  mkdir -p "$d/prop" "$d/gate"
  verilate "${name}_rtl" "$top" "$tracer" $(sed "s|^|$rtl/|" "$rtl/filelist.f")
  "$out/${name}_rtl.obj/${name}_rtl" "$d/rtl.fst" "$@" > "$d/rtl.txt"
  "$fetta" power --rtl "$rtl" --fst "$d/rtl.fst" --out "$d/prop" > "$d/prop/power.txt" 2> "$d/prop/power.log"
  netdir="$d/prop/asap7/$top"
  gate_model "$netdir" "$top" "$d/gate_sim.v"
  verilate "${name}_gate" "$top" "$tracer" "$d/gate_sim.v"
  "$out/${name}_gate.obj/${name}_gate" "$d/gate.fst" "$@" > "$d/gate.txt"
  if ! diff -q "$d/rtl.txt" "$d/gate.txt" > /dev/null; then
    echo "$name: the gate-level netlist and the RTL differ on the stimulus:"; diff "$d/rtl.txt" "$d/gate.txt"; exit 1
  fi
  [ -e "$d/gate/asap7" ] || ln -s ../prop/asap7 "$d/gate/asap7"
  "$fetta" power --rtl "$rtl" --fst "$d/gate.fst" --gate-level --out "$d/gate" > "$d/gate/power.txt" 2> "$d/gate/power.log"
  grep '^gate-level' "$d/gate/power.txt" | sed "s/^/$name: /"
  p=$(figures "$d/prop/power.json") g=$(figures "$d/gate/power.json")
  /usr/bin/python3 - "$name" "$p" "$g" <<'EOF'
import sys
name, p, g = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
for label, a, b in zip(("total", "internal", "switching", "leakage"), p, g):
    print(f"{name:22} {label:10} propagated {a:9.4f} mW  gate-level {b:9.4f} mW  ratio {a / b if b else float('nan'):6.3f}")
EOF
}

echo "seed $seed, $cycles cycles; OpenSTA 2.0.17, ASAP7 RVT TT 0.7 V, 1 GHz"
run_design adder_tree adder_tree_n8_w8 "$build/tests/rtl_gen/corpus_rtl/adder_tree_n8_w8" tests/power/adder_tree_trace.cpp \
  random "$cycles" "$seed"
run_design fp_mac fp_mac_bf16_fp32_s2 "$build/tests/flows/designs/fp_mac_bf16_fp32_s2" bench/power/fp_mac_trace.cpp \
  "$cycles" "$seed"
