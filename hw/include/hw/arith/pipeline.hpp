// Register placement for the arithmetic datapaths: a datapath is written as a sequence of steps
// (unpack, align, add, normalize, round, ...), each with an estimated depth in gate levels. Given
// a number of register stages, place_cuts() puts registers on the step boundaries so that the
// deepest register-to-register segment is as shallow as possible; Pipeline then carries every
// value across the cuts between the step that computes it and the steps that read it.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// regs[i] = registers after step i (0 or 1 on an internal boundary; the last entry holds the
// stages left over once every internal boundary has a register: they sit at the output, where
// a retiming tool can pull them back into the logic). `lead_levels` is logic in front of the
// inputs (the multiplier in front of an adder) counted into the first segment.
// Throws std::invalid_argument for negative stages/levels or no steps.
std::vector<int> place_cuts(const std::vector<int>& step_levels, int stages, int lead_levels = 0);

// Deepest segment (gate levels, lead included) of a placement from place_cuts().
int deepest_segment(const std::vector<int>& step_levels, const std::vector<int>& regs, int lead_levels = 0);

// The validity of values passing register stages that clock only for valid values: each stage
// clocks on a gate of the validity of what it loads (rtl::Module::clock_gate), and the validity's
// delay to the next stage is a register with reset, made only when a later stage or a reader asks
// for it, so none dangles after the last stage. Without a valid signal every stage clocks each
// cycle. One rule for the arithmetic's pipelines, the product registers and the reduction network.
class GatedStages {
 public:
  GatedStages(rtl::Module& m, rtl::Expr valid) : m_(m), valid_(std::move(valid)) {}
  bool gated() const { return valid_.valid(); }
  // The validity of the values entering the next stage (a pending delay register is made now).
  rtl::Expr valid();
  // The clocking of the next stage's registers: gate `gate` on valid(); the validity they pass on
  // is register `valid_name`, made when asked for. Ungated: the default clock.
  rtl::RegOptions stage(const std::string& gate, const std::string& valid_name);

 private:
  rtl::Module& m_;
  rtl::Expr valid_;
  std::string pending_;  // the delay register still to be made for valid()
};

// `stages` registers on `value` alone, `<name>_p1` .. `<name>_p<stages>` (no reset). With `valid`
// (whether this cycle's value is used), register k loads only when the value it would take entered
// valid, on a gated clock (rtl::Module::clock_gate): an idle cycle's value is not defined, and
// the registers keep the last valid one instead of toggling. The valid bits' delays are registers
// `<name>_valid_p<k>` with reset.
rtl::Expr product_registers(rtl::Module& m, rtl::Expr value, const std::string& name, int stages,
                            const rtl::Expr& valid = {});

// The MAC's register stages and its product's, against the configuration's limits
// (arch::limits::kMacPipelineStages, kMacProductStages: one rule for the YAML, the PE and the
// MACs); std::invalid_argument naming `who`'s fields and the allowed values otherwise.
void check_mac_stages(const std::string& who, const std::string& stages_field, int stages, int product_stages);

// Carries values across the register cuts of one module. Usage:
//   Pipeline pipe(m, place_cuts(levels, stages));
//   pipe.def(kAlign, "sticky", expr);          // sticky is computed in step kAlign
//   Expr s = pipe.at("sticky", kRound);         // as seen by step kRound (registered as needed)
// Registers are named <value>_s<k>: the value as it enters pipeline stage k. They have no reset
// (pure datapath, fixed latency).
class Pipeline {
 public:
  // With `valid` (whether this cycle's inputs are used), the registers entering stage k load only
  // when that stage's input is valid, on one gated clock per stage (`s<k>`); the valid bits' delays
  // are registers `valid_s<k>` with reset. An invalid input's result is not defined.
  Pipeline(rtl::Module& m, std::vector<int> regs_after_step, rtl::Expr valid = {});

  int steps() const { return static_cast<int>(regs_.size()); }
  int latency() const;                 // total register stages, output included
  int stage_of_step(int step) const;   // registers in front of `step`

  // Declares `name` = value computed in `step` (a named wire in the module).
  rtl::Expr def(int step, const std::string& name, const rtl::Expr& value);
  // `name` as read by step `step` (steps() means the module output, after the trailing registers).
  rtl::Expr at(const std::string& name, int step);

 private:
  struct Value {
    int step = 0;
    std::vector<rtl::Expr> by_stage;  // index: stage - stage of the defining step
  };
  rtl::RegOptions stage_options(int stage);  // how a register entering `stage` is clocked

  rtl::Module& m_;
  std::vector<int> regs_;
  std::map<std::string, Value> values_;
  GatedStages gates_;
  std::vector<rtl::RegOptions> stage_options_;  // stage_options_[k - 1]: the registers entering stage k
};

}  // namespace fetta::hw
