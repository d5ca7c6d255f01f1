// Synthesis of an emitted design (a directory written by rtl::write_design) for one target:
//   asap7  - Yosys + ABC on the ASAP7 RVT TT standard cells: area, cells, flops, delay, slack;
//   xilinx - Yosys synth_xilinx for UltraScale+ (xcup): LUTs, FFs, DSPs, BRAMs;
//   ice40  - Yosys synth_ice40 + nextpnr-ice40 place and route: resources and a real Fmax.
// Every selected module is synthesized out of context, flattened below it, or for asap7 with
// its hierarchy kept (each distinct submodule mapped once; docs/synthesis.md).
#pragma once

#include <string>

#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

struct Options {
  Target target = Target::asap7;
  double clock_mhz = 0;        // 0: the target's default (asap7 1000, ice40 50; xilinx has none)
  std::string modules = "all";  // all | top | comma-separated module names
  bool keep_hierarchy = false;  // asap7: map each distinct submodule once instead of flattening first
  bool fmax = false;            // asap7: also search each module's highest clock (resynthesizing)
  std::string pdk_dir;          // asap7: the Liberty files (default: <repo>/../shared/pdk/asap7)
  std::string cache_dir;        // asap7: where the merged Liberty files are kept
  std::string device;           // xilinx: family (xcup); ice40: hx8k, up5k, ...
  std::string package;          // ice40 package (default: the device's largest)
  SramModel sram;
  int seed = 1;                 // nextpnr placement seed (fixed: runs are reproducible)
};

// Throws std::invalid_argument naming the option and the allowed values for a bad one (checked
// again by run_synth; callers that do expensive work first call it up front).
void validate_options(const Options& opt);

// Throws std::invalid_argument for bad options (naming the option and the allowed values),
// MissingToolError when the target's programs are missing, std::runtime_error when a tool fails
// or a design does not fit the FPGA.
SynthReport run_synth(const std::string& rtl_dir, const std::string& work_dir, const Options& opt);

double default_clock_mhz(Target t);
std::string default_pdk_dir();    // $FETTA_ASAP7_DIR, else <repo>/../shared/pdk/asap7
std::string default_cache_dir();  // $FETTA_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache, + /fetta

}  // namespace fetta::flows::synth
