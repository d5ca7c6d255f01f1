// The ASAP7 flow: Yosys + ABC on the ASAP7 RVT TT standard cells, one module at a time.
#pragma once

#include <string>
#include <vector>

#include "flows/design_dir.hpp"
#include "flows/fanout_repair.hpp"
#include "flows/liberty.hpp"
#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

// The libraries the flow maps to, prepared once and reused from the cache.
struct Asap7Libraries {
  std::string pdk_dir;
  std::string comb_lib;  // INVBUF + SIMPLE + AO + OA merged into one Liberty file (for ABC)
  std::string seq_lib;   // SEQ, decompressed (for dfflibmap)
  std::vector<std::string> sources;  // the .lib.gz files used
  std::vector<std::string> seq_cells;
  LibertyGroup seq;      // parsed SEQ library (flip-flop timing)
  CellLibrary cells;     // every cell's pins and area (fanout repair)
};

// Finds the five RVT TT libraries in `pdk_dir` (throws naming the directory and the missing
// file), decompresses and merges them into `cache_dir` unless an up-to-date copy is there
// (the file names carry a hash of the sources; written atomically, safe for parallel runs).
Asap7Libraries prepare_asap7_libraries(const std::string& pdk_dir, const std::string& cache_dir);

// Load and slews at which the flow evaluates the flop and at which ABC drives and loads ports
// (as the OpenROAD flow scripts' ASAP7 platform does: BUFx2 drivers, 3.898 fF loads).
inline constexpr const char* kAsap7DriverCell = "BUFx2_ASAP7_75t_R";
inline constexpr double kAsap7OutputLoadFf = 3.898;
// The integrated clock gate (SEQ library: latch_posedge_precontrol; CLK, ENA, SE -> GCLK) that
// replaces rtl_gen's fetta_clock_gate model.
inline constexpr const char* kAsap7ClockGateCell = "ICGx1_ASAP7_75t_R";
// fetta_clock_gate as one instance of the ICG cell, and the cell as a black box for Yosys.
std::string asap7_clock_gate_verilog();
inline constexpr double kAsap7FlopSlewPs = 20.0;
inline constexpr double kAsap7FlopLoadFf = 2.88;

// How a module's hierarchy is synthesized. `flatten`: the module flattened before mapping, so
// ABC optimizes across its submodules' boundaries (the reference figures; slow on large tops).
// `keep`: every distinct submodule mapped once by ABC, out of context, and the mapped netlist
// flattened for the figures and for OpenSTA (area and flops summed over every instance; every
// path, through module ports too, timed whole). Far faster on a top of identical CEs.
enum class Hierarchy { flatten, keep };

struct Asap7Run {
  double clock_mhz = 1000;
  SramModel sram;
  Hierarchy hierarchy = Hierarchy::flatten;
  // Also search the highest clock: resynthesize at the period OpenSTA says the netlist needs
  // until it stops improving (at most `fmax_runs` mappings in all).
  bool fmax = false;
  int fmax_runs = 4;
  FanoutLimits fanout;
};

// Synthesizes `module`, times it with OpenSTA and measures it. Logs, netlists, SDC and timing
// reports go to `work_dir`; every command line is appended to `commands`.
ModuleResult synth_asap7_module(const DesignDir& design, const DesignModule& module, const Asap7Libraries& libs,
                                const Asap7Run& run, const std::string& work_dir, std::vector<std::string>* commands);

// The scripts of one module (exposed for tests and docs). The coarse script reads the RTL,
// runs Yosys' generic synthesis up to its fine stage (memories kept as $mem_v2 cells), lists the
// memories, writes a checkpoint, then runs the address probe (`<work_dir>/sram_probe.v`,
// address_probe_techmap()) into memory_addresses.txt; the map script maps that checkpoint at `period_ps`: memories
// to the macros of `sram_dir` (when given) or to flip-flops, the rest to ASAP7 cells.
std::string asap7_coarse_script(const DesignDir& design, const std::string& module, Hierarchy hierarchy,
                                const std::string& work_dir);
std::string asap7_map_script(const std::string& module, const Asap7Libraries& libs, double period_ps,
                             Hierarchy hierarchy, const std::string& checkpoint, const std::string& sram_dir,
                             const std::string& work_dir);
std::string asap7_abc_script();

// The out-of-context constraints of a module (docs/synthesis.md, "Sign-off timing"): clock on
// `clk` when the module has one, inputs a flop's clock-to-Q after the edge through a BUFx2,
// outputs a flop's setup before it into 3.898 fF.
sta::Constraints asap7_constraints(const Asap7Libraries& libs, const std::string& flop_cell, double period_ps,
                                   bool has_clock);

}  // namespace fetta::flows::synth
