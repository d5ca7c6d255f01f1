// Bf16Mul: the exact product of two small floating-point numbers (bf16 x bf16 -> binary32 by
// default), as verif::bf16_mul defines it (docs/numerics.md, docs/arith.md):
//   * subnormal inputs read as zero of the same sign (DAZ);
//   * the significand product is exact (the output mantissa holds 2*man_bits+1 bits or more),
//     so there is no rounding; a product below the smallest normal flushes to zero, sign kept;
//   * a product at or above 2^(bias+1) is +-Inf; 0 x Inf and any NaN operand give the
//     canonical quiet NaN (exponent all ones, mantissa MSB set, sign 0).
// Ports: a, b UInt<1+exp_bits+man_bits>; product UInt<1+exp_bits+out_man_bits>. Combinational.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct Bf16MulParams {
  int exp_bits = 8;       // operand and result exponent width (2..11)
  int man_bits = 7;       // operand mantissa width, without the hidden one (1..23)
  int out_man_bits = 23;  // result mantissa width (2*man_bits+1 .. 52: the product is exact)
};

class Bf16Mul : public rtl::IdentifiedGenerator<Bf16MulParams> {
 public:
  explicit Bf16Mul(Bf16MulParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::Bf16Mul"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

  int operand_width() const { return 1 + p.exp_bits + p.man_bits; }
  int product_width() const { return 1 + p.exp_bits + p.out_man_bits; }
  // Gate levels of the default unit (Yosys generic synthesis, docs/arith.md), for balancing
  // pipelines that put it in front of an adder.
  static constexpr int kLevels = 29;
};

// Fp32MulBf16: binary32 x bf16 -> binary32, the vector unit's multiplier, as
// verif::fp32_mul_bf16 defines it (docs/numerics.md §5b): the exact 24 x 8-bit significand
// product rounded once to nearest even, DAZ inputs, a product whose exact value is below 2^-126
// flushed to zero (sign kept), overflow to +-Inf, the canonical NaN.
// Ports: x UInt<32>, a UInt<16> -> product UInt<32>. Combinational.
struct Fp32MulBf16Params {};

class Fp32MulBf16 : public rtl::IdentifiedGenerator<Fp32MulBf16Params> {
 public:
  explicit Fp32MulBf16(Fp32MulBf16Params params) : IdentifiedGenerator(params) {}
  std::string generator_name() const override { return "hw::Fp32MulBf16"; }
  rtl::Identity identity() const override { return rtl::Identity("fp32_mul_bf16"); }
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
