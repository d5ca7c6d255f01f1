// Power views of Liberty libraries: the same cells, changed only where OpenSTA 2.0.17's activity
// propagation would stop or crash (docs/power.md, "Power views"). For power analysis only; timing
// reads the libraries as they are.
//
// 1. Flip-flop and latch outputs: their clock-to-output arcs become combinational. OpenSTA 2.0.17
//    never crosses a register's clock-to-output arc when it propagates activity, so every gate fed
//    only by registers kept activity 0. The output still has its function (of the state IQ, IQN),
//    whose annotated activity the propagation now carries into the logic.
// 2. Constant outputs (tie cells): their function is dropped and fetta annotates them instead.
//    OpenSTA levelizes around the edges its constant propagation disables but its activity search
//    crosses them, which visits a vertex at its own level and crashes 2.0.17.
// 3. Macro outputs (the SRAM macros' read data: a clock-to-output arc and no function): the arcs
//    become combinational and each bit gets the function of a new input, its twin
//    `fetta_pwr_<name>`, on which fetta annotates the read data's recorded activity.
// 4. Integrated clock gates (`clock_gating_integrated_cell`): the gated clock's state_function
//    over the latch (which crashes 2.0.17) becomes the function of a twin input, on which fetta
//    annotates the gate's traced latch duty; OpenSTA carries it onto the gated flip-flops' clocks.
// 5. Only with `twin_logic` (a gate-level run, docs/power.md "Gate-level check"): every other
//    output with a function gets the function of its twin input too, so that each gate's output
//    is the activity a gate-level simulation recorded for it, and nothing is propagated.
#pragma once

#include <string>
#include <vector>

namespace fetta::flows::power {

inline constexpr const char* kTwinPrefix = "fetta_pwr_";

struct ConstantOutput {
  std::string cell, pin;
  bool value = false;
};

struct MacroOutput {
  std::string cell, pin;  // pin: a bus's name for a bus
};

struct PowerView {
  std::string liberty;
  int clocked_arcs = 0;  // register clock-to-output arcs made combinational
  std::vector<ConstantOutput> constants;
  std::vector<MacroOutput> macro_outputs;
  std::vector<MacroOutput> logic_outputs;  // with twin_logic: the gates' outputs given twins
  std::vector<MacroOutput> clock_gates;    // integrated clock gates' gated clocks, given twins
};

// The library is read by parse_liberty (flows/liberty.hpp) and edited where its tree says each
// group and attribute is written. Throws std::runtime_error `<what>:<line>: ...` for text that
// parse_liberty refuses or a bus whose type the library does not define.
PowerView power_view(const std::string& liberty, const std::string& what, bool twin_logic = false);

}  // namespace fetta::flows::power
