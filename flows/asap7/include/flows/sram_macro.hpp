// SRAM macros for the memories of an emitted design, in the manner of FakeRAM (the generator
// OpenROAD's ASAP7 platform uses): for every distinct memory shape a black-box cell with a
// Liberty model of its own (area from the SRAM model, clock-to-Q, setup and hold on every pin,
// leakage), a Verilog stub for Yosys, and a Yosys techmap rule that turns the matching $mem_v2
// cells into instances of it. The mapped netlist then carries the macros as cells, so OpenSTA
// times every path into and out of a memory (docs/synthesis.md, "The SRAM macros").
#pragma once

#include <string>
#include <vector>

#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

// Why `m` cannot be a macro: the macros have registered, read-first reads without a reset on
// the read data and rising-edge writes (what rtl_gen emits). Empty when it can be one.
std::string macro_obstacle(const MemoryMacro& m);

// "fetta_sram_w16_d2048_1r1w": every shape parameter in the name.
std::string macro_cell_name(const MemoryMacro& m);

// Ports of a macro cell: clk; per read port i rd<i>_en, rd<i>_addr[abits], rd<i>_data[width];
// per write port j wr<j>_mask[width] (a bit-write enable: Yosys' per-bit write enable),
// wr<j>_addr[abits], wr<j>_data[width].
struct MacroLibrary {
  std::vector<MemoryMacro> cells;  // one per distinct shape, `cell` set, sorted by name
  std::string liberty;             // every cell's Liberty model, one library
  std::string verilog_stubs;       // (* blackbox *) modules for Yosys
  std::string techmap;             // $mem_v2 -> macro rules, one branch per shape
};

// The macros for the memories of `found` that can be macros (shapes deduplicated); the rest
// are left to flip-flops. Deterministic: the same shapes give the same text.
MacroLibrary make_macro_library(const std::vector<MemoryMacro>& found, const SramModel& model);

// Instances of macro cells in a Yosys `dump` of the mapped design: (cell type, instance name).
std::vector<std::pair<std::string, std::string>> parse_macro_instances(const std::string& dump_text);

}  // namespace fetta::flows::synth
