// Static timing analysis of a mapped netlist with OpenSTA (Debian package `opensta`, program
// `sta`): the SDC the flow writes, the Tcl script, and readers for what `report_checks`,
// `report_wns`, `report_tns` and `report_worst_slack` print. The readers are kept apart from
// running the tool so that each is unit-tested on captured text (docs/synthesis.md, "Sign-off
// timing").
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fetta::flows::sta {

// The constraints of one module timed out of context (or of a whole top). Every time is in ps,
// every capacitance in fF: the ASAP7 libraries' units.
struct Constraints {
  std::string clock_port;  // empty: no clock port; a virtual clock times the ports against each other
  std::string clock_name = "clk";
  double period_ps = 1000;
  // The ports are registered outside the module: an input changes this long after the clock
  // edge (the driving flop's clock-to-Q), an output must settle this long before the next edge
  // (the capturing flop's setup).
  double input_delay_ps = 0;
  double output_delay_ps = 0;
  std::string driving_cell;  // library cell that drives every input but the clock
  double load_ff = 0;        // on every output
};

// Throws std::invalid_argument naming the field for a period <= 0, negative delays or load.
void validate(const Constraints& c);
// The SDC text (create_clock, set_input_delay, set_output_delay, set_driving_cell, set_load).
std::string write_sdc(const Constraints& c);

// One stage of a reported path: the pin a delay arrives at, its cell, the edge there.
struct PathStage {
  std::string pin;   // instance/pin or a port
  std::string cell;  // library cell, or "in"/"out" for a port
  std::string edge;  // "^" rise, "v" fall
  double delay_ps = 0;
  double time_ps = 0;  // arrival at this pin
};

struct TimingPath {
  std::string startpoint;  // as OpenSTA names it, e.g. "acc[3]_reg (rising edge-triggered flip-flop clocked by clk)"
  std::string endpoint;
  std::string path_group;
  double arrival_ps = 0;
  double required_ps = 0;
  double slack_ps = 0;
  std::vector<PathStage> stages;  // every output pin (and port) along the path, in order
};

struct StaResult {
  double period_ps = 0;
  std::optional<double> worst_slack_ps;  // none: no constrained path at all
  double wns_ps = 0;                     // min(0, worst slack)
  double tns_ps = 0;                     // sum of the negative endpoint slacks
  long long failing_endpoints = 0;
  long long endpoints = 0;
  // Clock gating: the integrated clock gates' enable checks (setup of ENA to the clock that the
  // gate passes), part of the figures above and given apart.
  long long clock_gates = 0;
  long long gating_failing = 0;
  std::optional<double> gating_worst_slack_ps;
  std::optional<TimingPath> worst_path;
  // Shortest period at which every path meets timing, for this netlist: period - worst slack
  // (the constraints are absolute times, so slack shifts one for one with the period).
  std::optional<double> min_period_ps() const;
  std::optional<double> fmax_mhz() const;
};

// Readers (throw std::runtime_error naming `what` when the text lacks what they need).
std::optional<TimingPath> parse_report_checks(const std::string& text);
double parse_metric(const std::string& text, const std::string& key, const std::string& what);  // "wns 0.00" -> 0
// Endpoints listed by `report_checks -format end` whose slack is negative.
long long count_violated_endpoints(const std::string& text);
// The slacks of the endpoints `report_checks -format end` lists, in its order.
std::vector<double> endpoint_slacks(const std::string& text);

struct Run {
  std::vector<std::string> liberty;  // every library the netlist's cells come from
  std::string netlist;               // gate-level Verilog
  std::string top;
  std::string sdc;                   // a file
  std::string work_dir;              // sta.tcl, sta.log, timing.txt go here
};

// The Tcl script OpenSTA runs (exposed for tests and docs).
std::string sta_script(const Run& run);

// Runs `sta` on `run` and reads its reports; appends the command line to `commands`. Throws
// std::runtime_error naming the file when OpenSTA reports an error (unknown cell, SDC error,
// unlinked design). `timing.txt` in the work directory keeps the worst path and the summary.
StaResult run_sta(const Run& run, double period_ps, std::vector<std::string>* commands);

// The first line of an OpenSTA log that must stop the run, or "": OpenSTA reports a bad file or
// command as "Error: <file>, <line> ..." and goes on, and a cell missing from every library as
// "... not found" at link time. Neither may pass silently.
std::string first_failure(const std::string& log);
// A path as a Tcl word (braced).
std::string tcl_path(const std::string& p);

// "sta" on PATH, with the apt-get line to install it otherwise (std::runtime_error).
void require_sta();
std::string sta_version();

}  // namespace fetta::flows::sta
