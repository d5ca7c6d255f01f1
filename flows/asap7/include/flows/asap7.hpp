// The ASAP7 flow: Yosys + ABC on the ASAP7 RVT TT standard cells, one module at a time.
#pragma once

#include <string>
#include <vector>

#include "flows/design_dir.hpp"
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
};

// Finds the five RVT TT libraries in `pdk_dir` (throws naming the directory and the missing
// file), decompresses and merges them into `cache_dir` unless an up-to-date copy is there
// (the file names carry a hash of the sources; written atomically, safe for parallel runs).
Asap7Libraries prepare_asap7_libraries(const std::string& pdk_dir, const std::string& cache_dir);

// Load and slews at which the flow evaluates the flop and at which ABC drives and loads ports
// (as the OpenROAD flow scripts' ASAP7 platform does: BUFx2 drivers, 3.898 fF loads).
inline constexpr const char* kAsap7DriverCell = "BUFx2_ASAP7_75t_R";
inline constexpr double kAsap7OutputLoadFf = 3.898;
inline constexpr double kAsap7FlopSlewPs = 20.0;
inline constexpr double kAsap7FlopLoadFf = 2.88;

// How a module's hierarchy is synthesized. `flatten`: the module flattened before mapping, so
// ABC optimizes across its submodules' boundaries (the reference figures; slow on large tops).
// `keep`: every distinct submodule mapped once by ABC, out of context, and the mapped netlist
// flattened for the figures (area and flops summed over every instance; the delay is the worst
// submodule's, paths through module ports are not timed). Far faster on a top of identical CEs.
enum class Hierarchy { flatten, keep };

// Synthesizes `module` and measures it. Logs and netlists go to `work_dir`; every command line
// is appended to `commands`.
ModuleResult synth_asap7_module(const DesignDir& design, const DesignModule& module, const Asap7Libraries& libs,
                                double clock_mhz, const SramModel& sram, Hierarchy hierarchy,
                                const std::string& work_dir, std::vector<std::string>* commands);

// The Yosys script and the ABC script of one module (exposed for tests and docs).
std::string asap7_yosys_script(const DesignDir& design, const std::string& module, const Asap7Libraries& libs,
                               double clock_mhz, Hierarchy hierarchy, const std::string& work_dir);
std::string asap7_abc_script();

}  // namespace fetta::flows::synth
