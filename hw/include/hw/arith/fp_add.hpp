// Fp32Add: binary32 + binary32, exactly verif::fp32_add (docs/numerics.md, docs/arith.md):
// round to nearest even, subnormal inputs read as signed zero, results below 2^-126 flushed to
// zero (sign kept), overflow to +-Inf, x + (-x) = +0, Inf - Inf and NaN operands give the
// canonical quiet NaN 0x7FC00000.
//
// Ports: a, b UInt<32>; sum UInt<32>. With stages = 0 it is combinational; with stages = S the
// sum of the inputs of cycle t appears at cycle t + S (fixed latency, no valid, no reset: the
// caller pipes its own valid). Registers go on the step boundaries that keep the deepest segment
// shallowest (place_cuts); stages beyond the four inner boundaries sit at the output.
#pragma once

#include <string>
#include <vector>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct Fp32AddParams {
  int stages = 0;       // register stages (0 = combinational), 0..16
  // Gate levels of logic in front of a and b inside the same pipeline segment (FpMac sets it to
  // the multiplier's depth when the multiplier output is not registered). Only moves the cuts.
  int lead_levels = 0;  // 0..64; ignored (and reported as 0) when stages = 0
};

class Fp32Add : public rtl::Generator<Fp32AddParams> {
 public:
  explicit Fp32Add(Fp32AddParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::Fp32Add"; }
  std::string module_name() const override;  // "fp32_add_s0", "fp32_add_s2", "fp32_add_s2_lead16"
  rtl::ParamList params() const override;
  void build(rtl::Module& m) const override;

  // The datapath steps, in order, and their gate levels as measured by Yosys (for place_cuts).
  enum Step { kUnpack = 0, kAlign, kAddSub, kNormalize, kRound, kSteps };
  static std::vector<int> step_levels();
  // Where the registers go for these parameters (entry i: registers after step i).
  std::vector<int> cuts() const;
};

}  // namespace fetta::hw
