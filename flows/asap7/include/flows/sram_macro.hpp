// SRAM macros for the memories of an emitted design, in the manner of FakeRAM (the generator
// OpenROAD's ASAP7 platform uses): for every distinct memory shape a black-box cell with a
// Liberty model of its own (area from the SRAM model, clock-to-Q, setup and hold on every pin,
// leakage), a Verilog stub for Yosys, and a Yosys techmap rule that turns the matching $mem_v2
// cells into instances of it. The mapped netlist then carries the macros as cells, so OpenSTA
// times every path into and out of a memory (docs/synthesis.md, "The SRAM macros").
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

// Why `m` cannot be a macro: the macros have registered, read-first reads without a reset on
// the read data and rising-edge writes (what rtl_gen emits). Empty when it can be one.
std::string macro_obstacle(const MemoryMacro& m);

// The read and write ports of `m` a macro merges into read/write ports: each write port j, in
// order, with the first read port i not taken yet whose address is the same (`same_address`) and
// that is never enabled with it (`never_together`). Empty without both facts for a pair.
std::vector<std::pair<int, int>> shared_port_pairs(const MemoryMacro& m);

// "fetta_sram_w16_d2048_1r1w": every shape parameter in the name. With read/write ports (`rw_pairs`)
// the counts of the plain read, plain write and read/write ports, zeros left out:
// "fetta_sram_w16_d2048_1r1rw" (2 read ports and 1 write port, one pair merged).
std::string macro_cell_name(const MemoryMacro& m);

// Ports of a macro cell: clk; per read port i rd<i>_en, rd<i>_addr[abits], rd<i>_data[width];
// per write port j wr<j>_mask[width] (a bit-write enable: Yosys' per-bit write enable),
// wr<j>_addr[abits], wr<j>_data[width]; per read/write port k rw<k>_en (its read enable),
// rw<k>_addr[abits], rw<k>_data[width] (read data), rw<k>_mask[width], rw<k>_wdata[width]. A
// read/write port reads or writes in a cycle, never both (the techmap only merges ports Yosys
// found are never enabled together).
struct MacroLibrary {
  std::vector<MemoryMacro> cells;  // one per distinct cell, `cell` set, sorted by name
  std::string liberty;             // every cell's Liberty model, one library
  std::string verilog_stubs;       // (* blackbox *) modules for Yosys
  // $mem_v2 -> macro rules: one branch per shape and merged-port pairing, those with read/write
  // ports first (each checks its pairs' shared address and exclusive enables), then plain shapes.
  std::string techmap;
};

// The macros for the memories of `found` that can be macros (shapes deduplicated); the rest
// are left to flip-flops. Deterministic: the same shapes give the same text.
MacroLibrary make_macro_library(const std::vector<MemoryMacro>& found, const SramModel& model);

// The address probe (docs/synthesis.md, "The SRAM model and the SRAM macros"): a techmap file
// that replaces every $mem_v2 by a `fetta_mem_probe` cell named like it, whose SHARED_ADDR
// parameter has bit i * WR_PORTS + j set when read port i and write port j have the same address
// drivers (Yosys' _TECHMAP_CONNMAP_RD_ADDR_ / _WR_ADDR_, which see through aliases). Run on a
// throw-away copy of the coarse design, then `dump t:fetta_mem_probe`.
std::string address_probe_techmap();

// Sets `same_address` of the memories of `found` from the probe's dump. Memories are matched by
// name; the k-th memory of a name (several modules with a kept hierarchy) takes the k-th probe
// cell of that name (`dump` lists modules in the same order each time).
void apply_address_probe(const std::string& probe_dump, std::vector<MemoryMacro>& found);

// Instances of macro cells in a Yosys `dump` of the mapped design: (cell type, instance name).
std::vector<std::pair<std::string, std::string>> parse_macro_instances(const std::string& dump_text);

}  // namespace fetta::flows::synth
