// Integer arithmetic for the int8/int16 accelerator variants. Everything wraps (two's
// complement), exactly as verif::int8_mac / verif::int16_mac48 / verif::wrap48.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct IntMacParams {
  int operand_bits = 8;  // 8 or 16
  int acc_bits = 32;     // at least the product (2*operand_bits), at most 64; the configs use 32 and 48
  int stages = 0;        // 0 .. arch::limits::kMacPipelineStages.hi (8; check_mac_stages), see IntMac
  int product_stages = 0;  // 0 .. 4 (check_mac_stages): registers on the product alone, in front of the rest (acc late)
  bool product_valid = false;  // an input `valid` gating the product registers (FpMacParams::product_valid)
};

// out = acc + a*b modulo 2^acc_bits. Ports: a, b SInt<operand_bits>; acc, out SInt<acc_bits>.
// Written as a plain signed `*` into a product wire and an add, so FPGA tools map it to one DSP.
// Register stages go where a DSP slice has them: 1 = product (M; `acc` is delayed with it),
// 2 = + output (P), 3 = + operands (A/B); more are added at the output. Latency = stages.
// product_stages P > 0 first registers the product alone P times (acc is not delayed), so an
// accumulation loop keeps one add per cycle: latency P + stages from a, b and stages from acc.
class IntMac : public rtl::IdentifiedGenerator<IntMacParams> {
 public:
  explicit IntMac(IntMacParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::IntMac"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

struct IntAddParams {
  int bits = 32;  // 2..64
};

// sum = a + b modulo 2^bits. Ports: a, b SInt<bits>; sum SInt<bits>. Combinational.
class IntAdd : public rtl::IdentifiedGenerator<IntAddParams> {
 public:
  explicit IntAdd(IntAddParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::IntAdd"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
