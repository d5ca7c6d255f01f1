// FpMac: the bf16 PE's multiply-accumulate, out = Fp32Add(acc, Bf16Mul(a, b)), exactly
// verif::fp32_mac (the product is exact; the one rounding happens in the addition).
// Ports: a UInt<16>, b UInt<16> (bf16), acc UInt<32> (binary32); out UInt<32>.
// With stages = S the result of the inputs of cycle t appears at cycle t + S (fixed latency, no
// reset). The stages are balanced over multiplier + adder: when a register lands between them,
// the product and `acc` are registered together and the adder gets S - 1 stages.
#pragma once

#include <string>

#include "hw/arith/fp_add.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct FpMacParams {
  // Register stages (0 = combinational), 0 .. arch::limits::kMacPipelineStages.hi (8;
  // check_mac_stages); with product_stages, the adder's.
  int stages = 0;
  // The adder's datapath (Fp32AddParams::arch, ::prefix; the prefix is ignored for basic).
  Fp32AddArch adder_arch = Fp32AddArch::basic;
  PrefixKind adder_prefix = PrefixKind::sklansky;
  // Registers between the multiplier and the adder (0..4). The product is registered, `acc`
  // enters the adder directly: out(t) = acc(t - stages) + a*b(t - stages - product_stages). This
  // keeps an accumulation loop (acc = out) at one add per cycle while the multiplier gets its own
  // cycle. 0: `stages` are balanced over multiplier and adder as before.
  int product_stages = 0;
  // An input `valid` (UInt<1>, with product_stages > 0): whether the cycle's a, b are used. The
  // product registers then load only for valid cycles, on gated clocks (product_registers); an
  // idle cycle's result is not defined.
  bool product_valid = false;
};

class FpMac : public rtl::IdentifiedGenerator<FpMacParams> {
 public:
  explicit FpMac(FpMacParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::FpMac"; }
  // "fp_mac_bf16_fp32_s0" (basic adder), "fp_mac_bf16_fp32_twopath_sk_s0", "..._p1_s0" (product
  // stages), "..._p1v_s0" (with `valid`)
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

  // Whether a register sits between the multiplier and the adder, and the adder's own stages.
  bool product_registered() const;
  int adder_stages() const { return p.stages - (product_registered() ? 1 : 0); }
};

}  // namespace fetta::hw
