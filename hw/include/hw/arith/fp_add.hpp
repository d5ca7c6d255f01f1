// Fp32Add: binary32 + binary32, exactly verif::fp32_add (docs/numerics.md, docs/arith.md):
// round to nearest even, subnormal inputs read as signed zero, results below 2^-126 flushed to
// zero (sign kept), overflow to +-Inf, x + (-x) = +0, Inf - Inf and NaN operands give the
// canonical quiet NaN 0x7FC00000.
//
// Ports: a, b UInt<32>; sum UInt<32>. With stages = 0 it is combinational; with stages = S the
// sum of the inputs of cycle t appears at cycle t + S (fixed latency, no reset: the caller pipes
// its own valid; with gate_stages the stages load only for a `valid` input). Registers go on the step boundaries that keep the deepest segment
// shallowest (place_cuts); stages beyond the four inner boundaries sit at the output.
//
// Two datapaths compute the same bits (docs/arith.md):
//   basic:    one path: magnitude compare, align, add/subtract, normalize by a leading-zero
//             search interleaved with the shift, round with an incrementer;
//   two_path: a far path (addition, or exponents 2 or more apart: full alignment, at most one
//             bit of normalization, rounding by a compound adder's select) beside a near path
//             (subtraction with exponents at most 1 apart: no alignment, exact, leading zeros
//             anticipated from the operands beside the subtraction), every adder a
//             parallel-prefix network of the kind `prefix` names. About twice as fast
//             combinationally, about 1.6 times the area (docs/arith.md).
#pragma once

#include <string>
#include <vector>

#include "hw/arith/prefix.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

enum class Fp32AddArch { basic = 0, two_path = 1 };

// "basic", "two_path"; throws std::invalid_argument naming `what` and the allowed values.
std::string fp32_add_arch_name(Fp32AddArch arch, const std::string& what = "arch");

struct Fp32AddParams {
  int stages = 0;       // register stages (0 = combinational), 0..16
  // Gate levels of logic in front of a and b inside the same pipeline segment (FpMac sets it to
  // the multiplier's depth when the multiplier output is not registered). Only moves the cuts.
  int lead_levels = 0;  // 0..64; ignored (and reported as 0) when stages = 0
  Fp32AddArch arch = Fp32AddArch::basic;
  // The carry networks of the two-path adders; ignored (and reported as the default) for basic,
  // whose adders are `+` and `-`.
  PrefixKind prefix = PrefixKind::sklansky;
  // An input `valid` (UInt<1>): a stage's registers load only for valid inputs, on gated clocks
  // (Pipeline); an invalid input's sum is not defined. Ignored (false) when stages = 0.
  bool gate_stages = false;
};

class Fp32Add : public rtl::IdentifiedGenerator<Fp32AddParams> {
 public:
  explicit Fp32Add(Fp32AddParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::Fp32Add"; }
  // basic: "fp32_add_s0", "fp32_add_s2", "fp32_add_s2_lead16", "fp32_add_s1_gated";
  // two_path: "fp32_add_twopath_sk_s0", "fp32_add_twopath_ks_s2_lead16" (ks, sk, bk)
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

  // The datapath steps, in order, and their gate levels as measured by Yosys (for place_cuts).
  // two_path: unpack = classify, exponent difference, operands of both paths; align = far
  // alignment shifts beside the near subtraction and leading-zero anticipation; add/sub = far
  // compound add; normalize = far rounding select beside the near shift and exponent; round =
  // the final select.
  enum Step { kUnpack = 0, kAlign, kAddSub, kNormalize, kRound, kSteps };
  static std::vector<int> step_levels(Fp32AddArch arch = Fp32AddArch::basic);
  // Where the registers go for these parameters (entry i: registers after step i).
  std::vector<int> cuts() const;

 private:
  void build_basic(rtl::Module& m) const;
  void build_two_path(rtl::Module& m) const;  // fp_add_two_path.cpp
};

}  // namespace fetta::hw
