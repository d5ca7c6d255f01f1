// Switching activity of a design recorded in simulation: per bit of every traced signal, how
// often it toggles per clock cycle and the fraction of time it is 1 (docs/power.md).
//
// Read back from an FST waveform that a Verilated model wrote (`fetta run --trace`, or any
// `--trace-fst` model): Verilator traces every port and every register under its RTL name,
// which is how the mapped netlist names its flip-flops (`<instance path>.<reg>[<bit>]_reg`).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fetta::flows::power {

struct BitActivity {
  std::string name;   // "<instance path>.<signal>[<bit>]" below the design's scope; no [..] for 1 bit
  double toggle_rate = 0;  // value changes (0->1 or 1->0) per clock cycle
  double duty = 0;         // fraction of the time at 1
  bool port = false;       // a port of the design's top module
};

// How a sampled trace was taken (fetta run --trace DIR --trace-sample W/N): the first `window`
// cycles of every `every`, in `windows` files, of a run of `run_cycles`. every 0: every cycle traced.
struct TraceSampling {
  int64_t window = 0, every = 0, windows = 0, run_cycles = 0;
  bool sampled() const { return every > 0; }
  int64_t traced_cycles() const;  // the windows' cycles, the last cut by the run's end
};
// {"window_cycles", "every_cycles", "windows", "run_cycles"}
nlohmann::json to_json(const TraceSampling& s);

struct Activity {
  std::string source;  // the trace it was read from
  std::string scope;   // the design's top in the trace, e.g. "TOP.fifo_w8_d4"
  std::string clock;   // the signal whose rising edges are the cycles
  std::string window;  // "": the whole trace; else the 1-bit signal (or "!signal") the activity was counted while
  int64_t cycles = 0;  // inside the window
  std::vector<BitActivity> bits;  // sorted by name, each once
  TraceSampling sample;  // sampled: `cycles` counts the windows' cycles only
};

// Which traced signals to read: called with "<instance path>.<signal>" ("<signal>" at the top),
// the signal's RTL name without a bit index (an unpacked index stays: "mem[3]").
using SignalFilter = std::function<bool(const std::string& signal)>;

// Reads `fst`, keeps the signals under `scope` (dot-separated, as the trace names it; empty: the
// trace's single top scope that holds `clock`) and counts cycles as rising edges of
// `<scope>.<clock>`. Unknown values (x, z) neither toggle nor count as 1. With a `window` (a
// 1-bit signal of the scope, `name` or `name[bit]`, or `!name` for where it is 0), only the time
// and the changes while the signal has that value count: the changes of an edge that sets it
// count inside, those of an edge that clears it outside. Throws std::runtime_error naming the
// file for an unreadable trace, a scope it does not hold, no such window signal, or no clock
// edge (in the window). With `keep`, only the signals it accepts, the ports of the scope, the
// clock and the window signal are read: the value changes of the rest are never decompressed.
// `fst` may be a sampled trace's directory (its sampling.json names the window files): the
// windows' activities are read alike and merged (merged_windows).
Activity read_fst_activity(const std::string& fst, const std::string& scope = {}, const std::string& clock = "clk",
                           const std::string& window = {}, const SignalFilter& keep = {});

// The checks of read_fst_activity that need only the trace's names (readable, the scope, the
// clock, the window signal), without reading its value changes: a bad trace fails early.
void check_fst(const std::string& fst, const std::string& scope = {}, const std::string& clock = "clk",
               const std::string& window = {});

// The activity of several windows of one run together: cycles summed, each bit's toggle rate and
// duty weighted by its window's cycles. Throws std::runtime_error when a bit is missing from a window.
Activity merged_windows(const std::vector<Activity>& windows);

// Every toggle rate multiplied by `factor` (duties unchanged): the sanity check that switching
// power is linear in activity.
Activity scaled(const Activity& a, double factor);

nlohmann::json to_json(const Activity& a);
// Throws std::runtime_error naming `what` and the field for a malformed document.
Activity activity_from_json(const nlohmann::json& j, const std::string& what);

// "a.b.sig[3]" -> {"a.b", "sig[3]"}; no dot: {"", name}.
std::pair<std::string, std::string> split_instance(const std::string& name);

}  // namespace fetta::flows::power
