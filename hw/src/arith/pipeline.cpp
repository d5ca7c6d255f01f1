#include "hw/arith/pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "arch/config.hpp"

namespace fetta::hw {

void check_mac_stages(const std::string& who, const std::string& stages_field, int stages, int product_stages) {
  const arch::limits::IntRange s = arch::limits::kMacPipelineStages, p = arch::limits::kMacProductStages;
  if (stages < s.lo || stages > s.hi)
    throw std::invalid_argument(fmt::format("{}: {} = {} is out of range; allowed: {} (combinational) .. {}", who,
                                            stages_field, stages, s.lo, s.hi));
  if (product_stages < p.lo || product_stages > p.hi)
    throw std::invalid_argument(
        fmt::format("{}: product_stages = {} is out of range; allowed: {} .. {}", who, product_stages, p.lo, p.hi));
}

std::vector<int> place_cuts(const std::vector<int>& step_levels, int stages, int lead_levels) {
  if (step_levels.empty()) throw std::invalid_argument("place_cuts: step_levels is empty; give at least one step");
  if (stages < 0) throw std::invalid_argument(fmt::format("place_cuts: stages = {} is negative; allowed: 0 or more", stages));
  if (lead_levels < 0)
    throw std::invalid_argument(fmt::format("place_cuts: lead_levels = {} is negative; allowed: 0 or more", lead_levels));
  const int n = static_cast<int>(step_levels.size());
  const int inner = n - 1;  // boundaries between steps
  const int k = std::min(stages, inner);
  std::vector<int> regs(n, 0);
  regs[n - 1] = stages - k;
  if (k == 0) return regs;
  // Exhaustive over the C(inner, k) subsets (inner <= ~6): the first subset with the smallest
  // deepest segment wins, so the result is deterministic.
  std::vector<int> best;
  int best_depth = 0;
  std::vector<bool> pick(inner, false);
  std::fill(pick.begin(), pick.begin() + k, true);
  do {
    std::vector<int> trial(n, 0);
    for (int i = 0; i < inner; ++i) trial[i] = pick[i] ? 1 : 0;
    trial[n - 1] = regs[n - 1];
    const int depth = deepest_segment(step_levels, trial, lead_levels);
    if (best.empty() || depth < best_depth) {
      best = trial;
      best_depth = depth;
    }
  } while (std::prev_permutation(pick.begin(), pick.end()));
  return best;
}

int deepest_segment(const std::vector<int>& step_levels, const std::vector<int>& regs, int lead_levels) {
  int deepest = 0;
  int run = lead_levels;
  for (size_t i = 0; i < step_levels.size(); ++i) {
    run += step_levels[i];
    if (i + 1 == step_levels.size() || regs.at(i) > 0) {
      deepest = std::max(deepest, run);
      run = 0;
    }
  }
  return deepest;
}

rtl::Expr GatedStages::valid() {
  if (!pending_.empty()) {
    rtl::Sig v = m_.reg(pending_, rtl::UInt(1), rtl::reset_to(0));
    v <<= valid_;
    valid_ = v;
    pending_.clear();
  }
  return valid_;
}

rtl::RegOptions GatedStages::stage(const std::string& gate, const std::string& valid_name) {
  if (!gated()) return {};
  rtl::RegOptions opt = rtl::clocked_by(m_.clock_gate(gate, valid()));
  pending_ = valid_name;
  return opt;
}

Pipeline::Pipeline(rtl::Module& m, std::vector<int> regs_after_step, rtl::Expr valid)
    : m_(m), regs_(std::move(regs_after_step)), gates_(m, std::move(valid)) {}

rtl::RegOptions Pipeline::stage_options(int stage) {
  while (static_cast<int>(stage_options_.size()) < stage) {
    const int k = static_cast<int>(stage_options_.size()) + 1;
    stage_options_.push_back(gates_.stage(fmt::format("s{}", k), fmt::format("valid_s{}", k)));
  }
  return stage_options_[static_cast<size_t>(stage - 1)];
}

int Pipeline::latency() const {
  int total = 0;
  for (int r : regs_) total += r;
  return total;
}

int Pipeline::stage_of_step(int step) const {
  int stage = 0;
  for (int i = 0; i < step && i < steps(); ++i) stage += regs_[i];
  return stage;
}

rtl::Expr Pipeline::def(int step, const std::string& name, const rtl::Expr& value) {
  if (values_.count(name)) throw std::logic_error("Pipeline: value '" + name + "' defined twice");
  Value v;
  v.step = step;
  v.by_stage.push_back(m_.node(name, value));
  values_.emplace(name, v);
  return v.by_stage[0];
}

rtl::Expr Pipeline::at(const std::string& name, int step) {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::logic_error("Pipeline: value '" + name + "' read before it is defined");
  Value& v = it->second;
  if (step < v.step) throw std::logic_error("Pipeline: value '" + name + "' read by an earlier step");
  const int from = stage_of_step(v.step);
  const int to = stage_of_step(step);
  while (static_cast<int>(v.by_stage.size()) <= to - from) {
    const rtl::Expr& prev = v.by_stage.back();
    const int stage = from + static_cast<int>(v.by_stage.size());
    rtl::Sig r = m_.reg(fmt::format("{}_s{}", name, stage),
                        prev.is_signed() ? rtl::SInt(prev.width()) : rtl::UInt(prev.width()), stage_options(stage));
    r <<= prev;
    v.by_stage.push_back(r);
  }
  return v.by_stage[to - from];
}

rtl::Expr product_registers(rtl::Module& m, rtl::Expr value, const std::string& name, int stages,
                            const rtl::Expr& valid) {
  using namespace rtl;
  GatedStages gates(m, valid);
  for (int k = 1; k <= stages; ++k) {
    const rtl::Type t = value.is_signed() ? SInt(value.width()) : UInt(value.width());
    const std::string reg = fmt::format("{}_p{}", name, k);
    Sig q = m.reg(reg, t, gates.stage(reg, fmt::format("{}_valid_p{}", name, k)));
    q <<= value;
    value = q;
  }
  return value;
}

}  // namespace fetta::hw
