// The FPGA flows: Yosys synth_xilinx (resource counts for UltraScale+) and synth_ice40 +
// nextpnr-ice40 (resources and a placed-and-routed Fmax), one module at a time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flows/design_dir.hpp"
#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

// Xilinx families Yosys' synth_xilinx knows; throws std::invalid_argument naming `--device`
// and the allowed families for another.
void check_xilinx_family(const std::string& family);
ModuleResult synth_xilinx_module(const DesignDir& design, const DesignModule& module, const std::string& family,
                                 const std::string& work_dir, std::vector<std::string>* commands);
XilinxMetrics xilinx_metrics(const std::map<std::string, long long>& cells);

struct Ice40Device {
  std::string device;   // hx8k, up5k, ...
  std::string package;  // ct256, sg48, ...
  bool has_dsp = false;
};
// Default package: the one with the most I/O. Throws std::invalid_argument naming `--device`
// (or `--package`) and the allowed values.
Ice40Device ice40_device(const std::string& device, const std::string& package);
// Synthesizes and places and routes `module`. Throws std::runtime_error with a clear message
// when it does not fit the device (logic, RAM or I/O pins).
ModuleResult synth_ice40_module(const DesignDir& design, const DesignModule& module, const Ice40Device& dev,
                                double clock_mhz, int seed, const std::string& work_dir,
                                std::vector<std::string>* commands);
Ice40Metrics ice40_metrics(const std::map<std::string, long long>& cells);

// The ports of `module` from its emitted header (`input logic signed [7:0] a,` one per line, as
// rtl::write_design writes them); none when the header has another shape.
struct Port {
  std::string name;
  bool input = true;
  bool is_signed = false;
  int width = 1;
};
std::optional<std::vector<Port>> parse_module_ports(const std::string& sv_text, const std::string& module);
// A wrapper `fetta_ooc_<module>` that registers every input and output of `module` on `clk`
// (added when the module has none), so that every path of the module is register to register
// and the placed design's Fmax is the module's own, as it would be between registers in context.
std::string ooc_wrapper(const std::string& module, const std::vector<Port>& ports);

}  // namespace fetta::flows::synth
