// Power of a mapped netlist from recorded switching activity, by OpenSTA (docs/power.md).
//
// The activity of every register bit (on its flip-flop's pins: `<name>_reg`, Q or QN), of every
// input port and of every SRAM macro's read data is annotated; OpenSTA propagates it through the
// combinational logic and reports internal, switching and leakage power per cell, which are summed
// per block (the first `block_depth` components of the instance path). OpenSTA reads power views
// of the libraries (flows/power_view.hpp), without which 2.0.17 stops its propagation at every
// register. It has no VCD/SAIF reader and its `set_power_activity -pins` is broken, so pins are
// annotated with `sta::set_power_pin_activity`, the command that option would call.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "flows/activity.hpp"
#include "flows/dram_energy.hpp"
#include "flows/power_view.hpp"
#include "flows/sram_energy.hpp"

namespace fetta::flows::power {

struct Breakdown {
  double internal_w = 0, switching_w = 0, leakage_w = 0;
  double total_w() const { return internal_w + switching_w + leakage_w; }
  Breakdown& operator+=(const Breakdown& o);
};

struct BlockPower {
  std::string block;  // "(top)" for cells directly in the top module
  long long cells = 0, flops = 0;
  Breakdown power;
};

struct Run {
  std::vector<std::string> liberty;
  std::string netlist, top;
  std::string sdc;                // the sign-off SDC, whose clock period the activities are per
  std::string work_dir;           // power.tcl, activity.txt, power.log
  std::string macros;             // the SRAM macro instances (the flow's macros.txt); "" without macros
  std::string flat_netlist;       // the flattened netlist (netlist.v): every flip-flop under its full name
  double clock_period_ps = 0;     // of the SDC's clock: the activities' time base
  std::string port_constraints;   // the SDC's set_driving_cell and set_load lines
  std::string clock_port = "clk";
  bool clock_stopped = false;  // a gated clock: no clock is created and its port toggles never
  int block_depth = 1;
  // A gate-level run (docs/power.md, "Gate-level check"): the activity is a simulation of the
  // flat netlist itself (gate_level_activity), every gate's output is annotated through a twin
  // input and nothing is propagated. `netlist` must then be the flat one.
  bool gate_level = false;
};

struct PowerResult {
  long long cells = 0, flops = 0, flops_annotated = 0, inputs_annotated = 0;
  std::vector<std::string> unmatched;  // flip-flops the activity names no signal for (OpenSTA propagates theirs)
  long long gated_flops = 0, clock_gates = 0;  // flip-flops on gated clocks and the gate cells, annotated from their latches
  std::vector<std::string> untraced_gates;      // gate cells whose latch the activity does not name: priced at the full clock
  long long macro_bits = 0, macro_bits_annotated = 0;  // SRAM read-data bits, those whose net the activity names
  long long idle_cells = 0;  // leaf cells with no internal or switching power: constant inputs, or none reached
  long long logic_pins = 0, logic_pins_annotated = 0;  // a gate-level run's gate outputs, those the activity names
  std::vector<BlockPower> blocks;       // by name
  Breakdown total;                      // OpenSTA's design total
  Breakdown sequential, combinational;  // its rows of the same: flip-flops (and latches), the rest
  // SRAM access energy over the activity's cycles (CACTI per access, the run's access counts),
  // which OpenSTA does not see: the macros' Liberty model has no internal power.
  SramAccesses sram;
  double sram_access_w(const std::string& block, int block_depth, double seconds) const;
};

// What power.tcl annotates, as a Tcl list: per line a flip-flop name (a register bit's, with
// `_reg`) or an input port bit, its toggle rate, duty and 1 for a port.
std::string activity_list(const Activity& a, const std::string& clock_port);
// `libraries`: the power views run_power writes of run.liberty; `views`: what they changed.
std::string power_script(const Run& run, const std::vector<std::string>& libraries, const std::vector<PowerView>& views);

// Readers of what power.tcl prints (throw std::runtime_error naming `what`).
std::vector<BlockPower> parse_blocks(const std::string& text, const std::string& what);
// The row `group` ("Total", "Sequential", "Combinational") of report_power.
Breakdown parse_total(const std::string& text, const std::string& what, const std::string& group = "Total");

// The power run of a module the ASAP7 flow synthesized into `module_dir`: the libraries and SDC
// its sign-off timing used (read from its sta.tcl) and, when the hierarchy was kept, the mapped
// netlist before flattening (`hierarchical.v`; the same cells, so the same total), else the flat
// one, where only flip-flops keep a block's name and every gate counts as the top's. Throws std::runtime_error
// naming what is missing (run `fetta synth --target asap7` first).
Run run_for_synthesized(const std::string& module_dir, const std::string& top, const std::string& work_dir);

// The signals the annotation can use, as a filter for read_fst_activity: the register of every
// flip-flop of the flat netlist (`<path>.<reg>[<bit>]_reg`) and every net an SRAM macro connects
// to. The rest of a trace (combinational wires, which OpenSTA propagates) need not be read.
SignalFilter power_signals(const Run& run);

// The activity of a gate-level simulation (the flat netlist with each cell's Liberty function, as
// Yosys' read_liberty models it), named for a gate-level run: a flip-flop `<X>_reg`'s state wire
// `<X>_reg.IQN` becomes the register bit `X` (duty complemented: IQN holds the inverted state);
// the cells' pin wires `<instance>.<pin>` and the ports stay.
Activity gate_level_activity(const Activity& gl);

// Throws std::runtime_error naming the files when OpenSTA fails; see sta::require_sta.
PowerResult run_power(const Run& run, const Activity& a);

// The work of the traced run, from its `fetta run --json` report.
struct RunWork {
  std::string source;
  std::vector<std::string> layers, phases;  // in run order, each once
  int64_t macs = 0;
  int64_t compute_cycles = 0, host_cycles = 0;  // summed over the run's steps
  int64_t sim_cycles = 0;                       // the whole simulated run, which the trace records
  int64_t busy_cycles = -1;                     // of them, the controller's `busy` high (-1: not in the report)
  int64_t dram_bytes_read = 0, dram_bytes_written = 0;  // the run's DRAM traffic
};
// Throws std::runtime_error naming `what` and the field for a document that is not such a report.
RunWork run_work_from_json(const nlohmann::json& j, const std::string& what);

// The run's energy: the core's (OpenSTA's average power over the traced cycles), the SRAM
// accesses' and the DRAM's (the run's bytes at the LPDDR4 model's energy; only for a whole
// run, since a window's share of the traffic is not known); per MAC, operations (2 per MAC) per
// joule, and energy x delay, of the sum.
struct Energy {
  int64_t cycles = 0;  // what the energy is over: the traced cycles, or a sampled trace's run
  double seconds = 0;
  double core_j = 0, sram_j = 0, dram_j = 0;
  bool dram_included = false;
  double joules = 0;
  double pj_per_mac = 0, tops_per_w = 0, edp_js = 0;
};

// How far a sampled trace's busy share may be from its run's before fetta power says the windows
// are too few, in percentage points.
inline constexpr double kSampleBusyTolerancePoints = 2.0;

// What `fetta power` prints and writes: the figures with where they come from.
struct PowerReport {
  Run run;
  std::string sta_version;
  std::string activity_source, activity_scope;
  std::string activity_window;  // "" or the signal the activity was counted while (read_fst_activity)
  int64_t activity_cycles = 0;
  TraceSampling sample;     // the activity's (Activity::sample)
  double traced_busy = -1;  // the `busy` port's duty in the activity (-1: no such port)
  PowerResult result;
  std::optional<RunWork> work;
  DramEnergyModel dram = lpddr4_micron();
  double seconds() const;        // the traced (windowed) cycles at the SDC's clock
  double sram_access_w() const;  // the SRAM accesses' energy over those seconds
  // How many of the run's cycles each traced one stands for: 1, or for a sampled trace the run's
  // cycles over the traced ones (every window's first W cycles, the last cut by the run's end).
  double sample_scale() const;
  std::string activity_text() const;  // "71150 cycles of T.fst" with the sample
  // A sampled trace's check against its run: the fraction of cycles the controller was busy in the
  // windows and in the whole run (the core's power follows that mix); "" when either is unknown.
  std::string sample_check_text() const;
};
// Throws std::invalid_argument when the report's run and the trace differ in length (another
// run's report); a windowed trace may be shorter than its run.
void require_same_run(const PowerReport& r);
Energy energy_of(const PowerReport& r);  // after require_same_run

// The share of a design's flip-flops a trace may leave unnamed: a trace of the design names nearly
// all (the default top's leaves 150 of 69,471, which synthesis renames); one that names few is of
// another design or scope, and its power would be mostly OpenSTA's propagation.
inline constexpr double kMaxUnmatchedFlops = 0.02;
// Throws std::runtime_error naming the trace, the share and the limit when `r` leaves more of the
// `design`'s flip-flops unnamed by the activity of `scope` than kMaxUnmatchedFlops allows.
void require_traced_flops(const PowerResult& r, const std::string& trace, const std::string& design, const std::string& scope);
std::string format_table(const PowerReport& r);
nlohmann::json to_json(const PowerReport& r);

}  // namespace fetta::flows::power
