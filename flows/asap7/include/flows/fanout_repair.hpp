// Fanout repair of a mapped, flat gate-level netlist: a buffer tree on every net that drives
// more pins (or more pin capacitance) than one cell should. ABC buffers the nets inside the
// logic it maps, but with a kept hierarchy it maps each module out of context, so a net that
// crosses module ports (a mode bit broadcast to 256 PEs, the reset, a write enable into 32 mask
// pins of a macro) reaches the flattened netlist unbuffered: its driver would see picofarads
// and the timing would be meaningless. A placement-driven flow repairs such nets before timing
// (OpenROAD's `repair_design`); this is the same step without placement: sinks are grouped in
// the order of their instance names, which keeps the pins of one module together.
// docs/synthesis.md, "Fanout repair".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flows/liberty.hpp"

namespace fetta::flows::synth {

// What the repair needs of a cell library: per cell its area and per pin its direction,
// capacitance and width (1, or a bus's width).
struct PinInfo {
  bool output = false;
  double cap_ff = 0;
  int width = 1;
};
struct CellInfo {
  double area_um2 = 0;
  bool tie = false;  // a constant driver (no timing arc): its nets are not repaired
  std::map<std::string, PinInfo> pins;
};
using CellLibrary = std::map<std::string, CellInfo>;

// Adds the cells of a parsed Liberty library (its `type` groups give bus widths).
void add_cells(CellLibrary& lib, const LibertyGroup& library);

struct FanoutLimits {
  int max_fanout = 16;        // pins one driver may drive
  double max_load_ff = 24.0;  // pin capacitance one driver may drive
  std::string buffer_cell = "BUFx4f_ASAP7_75t_R";
  std::string buffer_in = "A";
  std::string buffer_out = "Y";
};

struct FanoutRepairStats {
  long long nets_repaired = 0;
  long long buffers = 0;
  double buffer_area_um2 = 0;
  long long worst_fanout = 0;  // the largest fanout before the repair
  std::string worst_net;
};

// Reads the flat netlist `in` (module `top`, as Yosys' write_verilog writes it after splitnets:
// one cell instance per statement, named pin connections, no `assign`), buffers every net of
// more than `limits` (but the clock net `clock` and nets of tie cells), and writes the result to
// `out`. Throws std::runtime_error naming the file and line for what it cannot read (an unknown
// cell or pin, an `assign`).
FanoutRepairStats repair_fanout(const std::string& in, const std::string& out, const std::string& top,
                                const std::string& clock, const CellLibrary& lib, const FanoutLimits& limits);

}  // namespace fetta::flows::synth
