#include <fmt/core.h>

#include <stdexcept>
#include <vector>

#include "hw/arith/fp_mul.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

Bf16MulParams checked(Bf16MulParams p) {
  if (p.exp_bits < 2 || p.exp_bits > 11)
    throw std::invalid_argument(fmt::format("Bf16Mul: exp_bits = {} is out of range; allowed: 2..11", p.exp_bits));
  if (p.man_bits < 1 || p.man_bits > 23)
    throw std::invalid_argument(fmt::format("Bf16Mul: man_bits = {} is out of range; allowed: 1..23", p.man_bits));
  if (p.out_man_bits < 2 * p.man_bits + 1 || p.out_man_bits > 52)
    throw std::invalid_argument(fmt::format(
        "Bf16Mul: out_man_bits = {} cannot hold the exact product of two {}-bit mantissas; allowed: {}..52",
        p.out_man_bits, p.man_bits, 2 * p.man_bits + 1));
  return p;
}

// A (1, exp_bits, man_bits) operand of a multiplier, classified: exponent all ones is Inf
// (mantissa 0) or NaN; exponent 0 is zero (subnormals read as zero).
struct FpOperand {
  Sig exp, man, zero, inf, nan;
};
FpOperand classify(Module& m, const Sig& x, int exp_bits, int man_bits, const std::string& n) {
  FpOperand o;
  o.exp = m.node(n + "_exp", x.bits(exp_bits + man_bits - 1, man_bits));
  o.man = m.node(n + "_man", x.bits(man_bits - 1, 0));
  Sig exp_max = m.node(n + "_exp_max", o.exp.and_reduce());
  Sig man_zero = m.node(n + "_man_zero", o.man == 0);
  o.zero = m.node(n + "_zero", o.exp == 0);
  o.inf = m.node(n + "_inf", exp_max & man_zero);
  o.nan = m.node(n + "_nan", exp_max & !man_zero);
  return o;
}

}  // namespace

Bf16Mul::Bf16Mul(Bf16MulParams params) : IdentifiedGenerator(checked(params)) {}

Identity Bf16Mul::identity() const {
  return Identity("fp_mul")
      .param("exp_bits", p.exp_bits, fmt::format("_e{}", p.exp_bits))
      .param("man_bits", p.man_bits, fmt::format("m{}", p.man_bits))
      .param("out_man_bits", p.out_man_bits, fmt::format("_o{}", p.out_man_bits));
}

void Bf16Mul::build(Module& m) const {
  const int E = p.exp_bits, M = p.man_bits, O = p.out_man_bits;
  const int W = operand_width();
  const int bias = (1 << (E - 1)) - 1;
  const int exp_ones = (1 << E) - 1;
  m.add_comment("Exact product, DAZ inputs, FTZ result, overflow -> Inf, canonical NaN (docs/arith.md).");
  Sig a = m.input("a", UInt(W));
  Sig b = m.input("b", UInt(W));
  Sig product = m.output("product", UInt(product_width()));

  const FpOperand x = classify(m, a, E, M, "a");
  const FpOperand y = classify(m, b, E, M, "b");
  Sig sign = m.node("sign", a.bit(W - 1) ^ b.bit(W - 1));
  Sig is_nan = m.node("is_nan", x.nan | y.nan | (x.inf & y.zero) | (y.inf & x.zero));
  Sig is_inf = m.node("is_inf", x.inf | y.inf);  // a NaN case wins over it below
  Sig is_zero = m.node("is_zero", x.zero | y.zero);

  // Significands 1.m as (M+1)-bit integers: the product is in [2^(2M), 2^(2M+2)). A product at
  // or above 2 (top bit set) moves the binary point one place and bumps the exponent.
  Sig sig_a = m.node("sig_a", cat({lit(1, 1), x.man}));
  Sig sig_b = m.node("sig_b", cat({lit(1, 1), y.man}));
  Sig sig_prod = m.node("sig_prod", sig_a * sig_b);
  Sig carry = m.node("sig_carry", sig_prod.bit(2 * M + 1));
  // The 2M+1 fraction bits below the leading one, left-aligned in the result mantissa.
  Sig frac = m.node("frac", mux(carry, sig_prod.bits(2 * M, 0), cat({sig_prod.bits(2 * M - 1, 0), lit(0, 1)})));
  Expr man_out = O > 2 * M + 1 ? cat({frac, lit(0, O - 2 * M - 1)}) : Expr(frac);

  // Biased result exponent = ea + eb - bias + carry. Everything about it is formed for both
  // values of the carry beside the multiplier (E+1 bits, no sign needed), and the carry only
  // selects: the exponent path adds no depth behind the significand product.
  Sig exp_sum = m.node("exp_sum", x.exp.zext(E + 1) + y.exp.zext(E + 1));
  // Flush: result exponent <= 0, i.e. exp_sum + carry <= bias.
  Sig underflow = m.node("underflow", mux(carry, exp_sum <= bias - 1, exp_sum <= bias));
  // Overflow: result exponent >= all ones, i.e. exp_sum + carry >= bias + all ones.
  Sig overflow = m.node("overflow", mux(carry, exp_sum >= bias + exp_ones - 1, exp_sum >= bias + exp_ones));
  // Modulo 2^E: the low bits of the difference are the difference of the low bits.
  Sig exp_low = m.node("exp_low", exp_sum.trunc(E) - bias);
  Sig exp_high = m.node("exp_high", exp_sum.trunc(E) - (bias - 1));
  Sig exp_out = m.node("exp_out", mux(carry, exp_high, exp_low));

  Expr zero_bits = lit(0, E + O);
  Expr inf_bits = cat({lit(static_cast<uint64_t>(exp_ones), E), lit(0, O)});
  Expr nan_bits = cat({lit(0, 1), lit(static_cast<uint64_t>(exp_ones), E), lit(1, 1), lit(0, O - 1)});
  Sig magnitude = m.node("magnitude", mux(is_inf | overflow, inf_bits,
                                          mux(is_zero | underflow, zero_bits, cat({exp_out, man_out}))));
  product <<= mux(is_nan, nan_bits, cat({sign, magnitude}));
}

void Fp32MulBf16::build(Module& m) const {
  m.add_comment("binary32 x bf16: exact product rounded to nearest even, DAZ, FTZ on the exact product,");
  m.add_comment("overflow -> Inf, canonical NaN (docs/numerics.md, docs/arith.md).");
  Sig x = m.input("x", UInt(32));
  Sig a = m.input("a", UInt(16));
  Sig product = m.output("product", UInt(32));

  const FpOperand xo = classify(m, x, 8, 23, "x");
  const FpOperand ao = classify(m, a, 8, 7, "a");
  Sig is_nan = m.node("is_nan", xo.nan | ao.nan | (xo.inf & ao.zero) | (ao.inf & xo.zero));
  Sig is_inf = m.node("is_inf", xo.inf | ao.inf);
  Sig is_zero = m.node("is_zero", xo.zero | ao.zero);
  Sig sign = m.node("sign", x.bit(31) ^ a.bit(15));

  // Significands: 24 x 8 bits, the product in [2^30, 2^32). With its top bit set the binary
  // point moves one place: 24 bits kept, then the guard bit and the sticky OR of the rest.
  Sig sig_prod = m.node("sig_prod", cat({lit(1, 1), xo.man}) * cat({lit(1, 1), ao.man}));
  Sig carry = m.node("sig_carry", sig_prod.bit(31));
  Sig keep = m.node("keep", mux(carry, sig_prod.bits(31, 8), sig_prod.bits(30, 7)));
  Sig guard = m.node("guard", mux(carry, sig_prod.bit(7), sig_prod.bit(6)));
  Sig sticky = m.node("sticky", mux(carry, sig_prod.bits(6, 0).or_reduce(), sig_prod.bits(5, 0).or_reduce()));
  Sig round_up = m.node("round_up", guard & (sticky | keep.bit(0)));
  Sig rounded = m.node("rounded", keep.zext(25) + round_up.zext(25));
  Sig round_carry = m.node("round_carry", rounded.bit(24));  // 2^24: the next binade, mantissa 0

  // Biased exponent = ex + ea - 127 + carry + round_carry. Flush is judged on the exact product
  // (before rounding), overflow after it. Every exponent and comparison is formed for each value
  // of the two carries beside the multiplier; the carries only select, so the exponent adds no
  // depth behind the significand product and its rounding.
  Sig exp_sum = m.node("exp_sum", xo.exp.zext(10) + ao.exp.zext(10));
  Sig underflow = m.node("underflow", mux(carry, exp_sum <= 126, exp_sum <= 127));
  std::vector<Expr> over, exps;  // by carry + round_carry = 0, 1, 2
  for (int k = 0; k < 3; ++k) {
    over.push_back(m.node(fmt::format("overflow_{}", k), exp_sum >= 127 + 255 - k));
    exps.push_back(m.node(fmt::format("exp_{}", k), (exp_sum - (127 - k)).trunc(8)));
  }
  Sig overflow = m.node("overflow", mux(carry, mux(round_carry, over[2], over[1]), mux(round_carry, over[1], over[0])));
  Sig exp_out = m.node("exp_out", mux(carry, mux(round_carry, exps[2], exps[1]), mux(round_carry, exps[1], exps[0])));

  Expr magnitude = mux(is_inf | overflow, lit(0x7F800000, 31),
                       mux(is_zero | underflow, lit(0, 31), cat({exp_out, rounded.bits(22, 0)})));
  product <<= mux(is_nan, m.constant("QUIET_NAN", 0x7FC00000, 32), cat({sign, magnitude}));
}

}  // namespace fetta::hw
