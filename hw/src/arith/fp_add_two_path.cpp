// Fp32Add, arch = two_path: the near/far binary32 adder (docs/arith.md). Bit for bit the same
// function as the basic datapath and verif::fp32_add; built to keep the alignment shift, the
// carry chains and the normalization shift off one path:
//   far path  (an addition, or exponents 2 or more apart): both alignment shifts start on the
//             low bits of the exponent difference; one compound adder gives V and V + 1; the
//             rounding only selects (at most one place of normalization, known from the carries);
//   near path (a subtraction with exponents at most 1 apart): no alignment, |x - y| from one
//             compound adder, its leading zeros anticipated from the operands beside the
//             subtraction, a normalization shift, and nothing to round.
#include <fmt/core.h>

#include <string>
#include <utility>
#include <vector>

#include "hw/arith/fp_add.hpp"
#include "hw/arith/pipeline.hpp"
#include "hw/arith/prefix.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

// Builds the adder a step at a time (docs/arith.md); the steps hand their values on through the
// pipeline (`def`, `at`), which places the registers the cuts ask for.
class TwoPathBuilder {
  static constexpr int kUnpack = Fp32Add::kUnpack, kAlign = Fp32Add::kAlign, kAddSub = Fp32Add::kAddSub;
  static constexpr int kNormalize = Fp32Add::kNormalize, kRound = Fp32Add::kRound, kSteps = Fp32Add::kSteps;

 public:
  TwoPathBuilder(Module& m, const Fp32AddParams& p, std::vector<int> cuts)
      : m_(m), a_(m.input("a", UInt(32))), b_(m.input("b", UInt(32))), sum_(m.output("sum", UInt(32))),
        pipe_(m, std::move(cuts), p.gate_stages ? Expr(m.input("valid", UInt(1))) : Expr{}), kind_(p.prefix) {}

  void build() {
    Sig sum = sum_;
    unpack();
    align();
    near_subtract();
    anticipate_leading_zeros();
    far_add();
    far_round();
    near_normalize();
    select_result();
    sum <<= pipe_.at("result", kSteps);
  }

 private:
  // Step 1: classify; exponent difference and order; operands of both paths.
  void unpack() {
    Sig a_exp = m_.node("a_exp", a_.bits(30, 23));
    Sig b_exp = m_.node("b_exp", b_.bits(30, 23));
    Sig a_man = m_.node("a_man", a_.bits(22, 0));
    Sig b_man = m_.node("b_man", b_.bits(22, 0));
    Sig a_zero = m_.node("a_zero", a_exp == 0);  // zero or subnormal: read as signed zero
    Sig b_zero = m_.node("b_zero", b_exp == 0);
    Sig a_man_zero = m_.node("a_man_zero", a_man == 0);
    Sig b_man_zero = m_.node("b_man_zero", b_man == 0);
    Sig a_inf = m_.node("a_inf", a_exp.and_reduce() & a_man_zero);
    Sig b_inf = m_.node("b_inf", b_exp.and_reduce() & b_man_zero);
    Sig a_nan = m_.node("a_nan", a_exp.and_reduce() & !a_man_zero);
    Sig b_nan = m_.node("b_nan", b_exp.and_reduce() & !b_man_zero);
    Sig signs_differ = m_.node("signs_differ", a_.bit(31) ^ b_.bit(31));
    // One compound adder gives ea - eb - 1 (sum) and ea - eb (sum1): the carry of the second is
    // ea >= eb and the complement of the first is eb - ea, so |ea - eb| needs no negation.
    CompoundSum ediff = compound_add(m_, "exp_diff", a_exp, ~b_exp, kind_);
    Expr a_exp_ge = pipe_.def(kUnpack, "a_exp_ge", ediff.carry1);
    Sig exp_dist = m_.node("exp_dist", mux(a_exp_ge, ediff.sum1, ~ediff.sum));

    // The results that bypass both paths, as flags (as in the basic datapath). Exact
    // cancellation needs equal magnitudes of opposite sign, which the operands show directly.
    pipe_.def(kUnpack, "is_nan", a_nan | b_nan | (a_inf & b_inf & signs_differ));
    pipe_.def(kUnpack, "both_zero", a_zero & b_zero);
    pipe_.def(kUnpack, "zero_sign", a_.bit(31) & b_.bit(31));  // -0 only if both are -0
    // So does a finite sum of operands 26 or more binades apart: the smaller is below half an ulp
    // of the larger (and is no tie), so the larger is the rounded result. Flagged from 32 on,
    // where the 5-bit alignment shift would wrap; 26..31 go through the datapath.
    Sig far_out = m_.node("far_out", exp_dist.bits(7, 5) != 0);
    pipe_.def(kUnpack, "pass_big", a_inf | b_inf | a_zero | b_zero | far_out);
    pipe_.def(kUnpack, "is_zero", signs_differ & (a_.bits(30, 0) == b_.bits(30, 0)));
    pipe_.def(kUnpack, "subtract", signs_differ);

    // Far path: the operands are ordered by exponent alone. With exponents 2 or more apart the
    // larger exponent is the larger magnitude; in an addition the order does not matter.
    // The candidate exponents of the result (one down, same, one up) are formed here, beside the
    // difference, so that the rounding only selects one.
    pipe_.def(kUnpack, "far_sign", mux(a_exp_ge, a_.bit(31), b_.bit(31)));
    pipe_.def(kUnpack, "big_exp", mux(a_exp_ge, a_exp, b_exp));
    pipe_.def(kUnpack, "big_exp_up", mux(a_exp_ge, a_exp + 1, b_exp + 1));
    pipe_.def(kUnpack, "big_exp_down", mux(a_exp_ge, a_exp - 1, b_exp - 1));
    pipe_.def(kUnpack, "big_is_max", mux(a_exp_ge, a_exp == 254, b_exp == 254));  // one more is Inf
    pipe_.def(kUnpack, "big_man", mux(a_exp_ge, a_man, b_man));
    // Both alignments are started before the order is known: b >> (ea - eb) and a >> (eb - ea),
    // whose low bits come out of the difference first; the order then picks one. Distances of 32
    // or more (the top three bits) leave the far result equal to the big operand (pass_big).
    pipe_.def(kUnpack, "a_sig", cat({lit(1, 1), a_man}));
    pipe_.def(kUnpack, "b_sig", cat({lit(1, 1), b_man}));
    pipe_.def(kUnpack, "shift_ab", ediff.sum1.bits(4, 0));
    pipe_.def(kUnpack, "shift_ba", ~ediff.sum.bits(4, 0));

    // Near path (subtraction, |ea - eb| <= 1): which operand is shifted one place follows from
    // ea - eb mod 4 (01: b, 11: a), i.e. from the two low bits of the difference, long before its
    // top bits are known. When the exponents are further apart the path is not selected.
    Sig diff_low = m_.node("exp_diff_low", ediff.sum1.bits(1, 0));
    Sig a_half = m_.node("near_a_half", diff_low == 3);
    Sig b_half = m_.node("near_b_half", diff_low == 1);
    pipe_.def(kUnpack, "near_x", mux(a_half, cat({lit(1, 2), a_man}), cat({lit(1, 1), a_man, lit(0, 1)})));
    pipe_.def(kUnpack, "near_y", mux(b_half, cat({lit(1, 2), b_man}), cat({lit(1, 1), b_man, lit(0, 1)})));
    pipe_.def(kUnpack, "near_exp", mux(a_half, b_exp, a_exp));
    pipe_.def(kUnpack, "near_range", exp_dist.bits(7, 1) == 0);
    pipe_.def(kUnpack, "a_sign", a_.bit(31));
    pipe_.def(kUnpack, "b_sign", b_.bit(31));
  }

  // Step 2, far path: both alignments, the order picking one.
  void align() {
    // {1.m, 0, 0} >> shift one stage per bit of the shift, smallest first (the low bits of the
    // exponent difference are ready first). The top 24 bits line up with the big significand,
    // then guard and round; bits leaving them are ORed into the sticky bit stage by stage.
    auto align = [&](const std::string& name, const Expr& sig, const Expr& shift) {
      Sig v = m_.node(name + "_r0", cat({sig, lit(0, 2)}));
      Expr sticky = lit(0, 1);
      for (int k = 0; k < 5; ++k) {
        const int d = 1 << k;
        sticky = m_.node(fmt::format("{}_st{}", name, d), sticky | (shift.bit(k) & v.bits(d - 1, 0).or_reduce()));
        v = m_.node(fmt::format("{}_r{}", name, d), mux(shift.bit(k), cat({lit(0, d), v.bits(25, d)}), v));
      }
      return std::pair<Sig, Expr>{v, sticky};
    };
    Expr a_ge = pipe_.at("a_exp_ge", kAlign);
    auto [b_aligned, b_sticky] = align("align_b", pipe_.at("b_sig", kAlign), pipe_.at("shift_ab", kAlign));
    auto [a_aligned, a_sticky] = align("align_a", pipe_.at("a_sig", kAlign), pipe_.at("shift_ba", kAlign));
    pipe_.def(kAlign, "aligned", mux(a_ge, b_aligned, a_aligned));
    pipe_.def(kAlign, "sticky", mux(a_ge, b_sticky, a_sticky));
  }

  // Step 2, near path: |x - y|.
  void near_subtract() {
    // x - y and y - x from one compound adder: x + ~y + 1 is x - y, and the complement of x + ~y
    // is y - x. The carry of x - y says which is not negative.
    CompoundSum nsub = compound_add(m_, "near_sub", pipe_.at("near_x", kAlign), ~pipe_.at("near_y", kAlign), kind_);
    pipe_.def(kAlign, "near_x_ge", nsub.carry1);
    pipe_.def(kAlign, "near_diff", mux(nsub.carry1, nsub.sum1, ~nsub.sum));
  }

  // Step 2, near path, beside the subtraction: where the leading one of |x - y| will be.
  void anticipate_leading_zeros() {
    // Leading-zero anticipation: x - y as signed digits x_i - y_i (g: +1, s: -1, e: 0); a
    // leading one of |x - y| can start at digit k only where f_k is set, and it starts at the
    // first such k or one place below (Schmookler & Nowka; the indicator is the same for x - y
    // and y - x, so the unknown sign does not matter).
    Expr x = pipe_.at("near_x", kAlign), y = pipe_.at("near_y", kAlign);
    Sig gd = m_.node("lza_g", x & ~y);
    Sig sd = m_.node("lza_s", (~x) & y);
    Sig ed = m_.node("lza_e", ~(x ^ y));
    const int n = x.width();
    // Per digit k: e of digit k+1 (1 above the top), g and s of digit k-1 (0 below the bottom),
    // a word at a time.
    Sig e_up = m_.node("lza_e_up", cat({lit(1, 1), ed.bits(n - 1, 1)}));
    Sig g_dn = m_.node("lza_g_dn", cat({gd.bits(n - 2, 0), lit(0, 1)}));
    Sig s_dn = m_.node("lza_s_dn", cat({sd.bits(n - 2, 0), lit(0, 1)}));
    Sig lza = m_.node("lza_f", (e_up & ((gd & ~s_dn) | (sd & ~g_dn))) | (~e_up & ((sd & ~s_dn) | (gd & ~g_dn))));
    pipe_.def(kAlign, "near_lz", leading_zeros(m_, "near_lz", lza));
  }

  // Step 3: the far path's add or subtract.
  void far_add() {
    // A compound adder: V = big + small and V + 1, or for a subtraction big + ~small =
    // big - small - 1 and big - small.
    Expr aligned = pipe_.at("aligned", kAddSub);
    Expr far_sub = pipe_.at("subtract", kAddSub);
    Sig small_hi = m_.node("far_small", aligned.bits(25, 2));
    Sig addend = m_.node("far_addend", small_hi ^ repl(far_sub, 24));
    CompoundSum fsum = compound_add(m_, "far", cat({lit(1, 1), pipe_.at("big_man", kAddSub)}), addend, kind_);
    pipe_.def(kAddSub, "far_v0", fsum.sum);
    pipe_.def(kAddSub, "far_v1", fsum.sum1);
    pipe_.def(kAddSub, "far_c0", fsum.carry);
    pipe_.def(kAddSub, "far_c1", fsum.carry1);
    // The bits below the significand: guard, round, sticky of the aligned operand; negated (mod
    // 8) for a subtraction, which then carries into the upper part only when they are all zero.
    Sig grs = m_.node("far_grs", cat({aligned.bits(1, 0), pipe_.at("sticky", kAddSub)}));
    Sig grs_neg =
        m_.node("far_grs_neg", cat({grs.bit(2) ^ (grs.bit(1) | grs.bit(0)), grs.bit(1) ^ grs.bit(0), grs.bit(0)}));
    pipe_.def(kAddSub, "far_low", mux(far_sub, grs_neg, grs));
    pipe_.def(kAddSub, "far_low_carry", far_sub & (grs == 0));
  }

  // Step 4, far path: rounding by selection.
  void far_round() {
    // Far: the unrounded upper part T is V0, or V1 when the low part carries. Three cases by
    // where its leading one is: R (addition carried out: shift right once), N (in place), L
    // (subtraction fell below 1: shift left once). In each, T + round_up is V0 or V1, and which
    // one depends only on low bits that are ready early; the late carries only pick the case.
    sub4_ = pipe_.at("subtract", kNormalize);
    Expr v0 = pipe_.at("far_v0", kNormalize), v1 = pipe_.at("far_v1", kNormalize);
    Expr c0 = pipe_.at("far_c0", kNormalize), c1 = pipe_.at("far_c1", kNormalize);
    Expr low = pipe_.at("far_low", kNormalize), low_carry = pipe_.at("far_low_carry", kNormalize);
    Sig l2 = m_.node("far_l2", low.bit(2)), l1 = m_.node("far_l1", low.bit(1)), l0 = m_.node("far_l0", low.bit(0));
    // R: guard = V0[0], sticky = the low bits; an odd V0 rounds up to V1 >> 1 = (V0 >> 1) + 1.
    Sig up_r = m_.node("round_up_r", v0.bit(0) & (v0.bit(1) | l2 | l1 | l0));
    // N: guard = l2, sticky = l1 | l0 (a subtraction with l2 set has T = V0).
    Sig sel_n = m_.node("round_sel_n", low_carry | (l2 & (v0.bit(0) | l1 | l0)));
    // L: the LSB is l2, guard = l1, sticky = l0; the round carries into T only when l2 is set.
    Sig sel_l = m_.node("round_sel_l", low_carry | (l2 & l1));
    Sig lsb_l = m_.node("round_lsb_l", l2 ^ (l1 & (l2 | l0)));
    // The late carries only pick between two candidates, "hi" and "lo": R or N for an addition
    // (carry out or not), N or L for a subtraction (T, i.e. V0 or V1 by the low carry, >= 1 or
    // not). N rounding up to 2.0 equals R (V0 is all ones, so up_r is set and V1 >> 1 is 1.0), L
    // rounding up to 1.0 equals N (sel_n is set and V1 is 1.0), so those two take the other one.
    // Each candidate has its own exponent, ready early. Overflow to Inf happens only in R of the
    // largest exponent: the exponent candidate is 255 already, the mantissa must be 0.
    Sig top = m_.node("far_top", mux(low_carry, v1.bit(23), v0.bit(23)));
    pipe_.def(kNormalize, "far_late", mux(sub4_, top | (sel_l & v1.bit(23)), c0 | (sel_n & c1)));
    Sig rounded_hi = m_.node("rounded_hi", mux(mux(sub4_, sel_n, up_r), v1, v0));
    Sig rounded_lo = m_.node("rounded_lo", mux(mux(sub4_, sel_l, sel_n), v1, v0));
    Expr sign4 = pipe_.at("far_sign", kNormalize);
    Expr man_r = mux(pipe_.at("big_is_max", kNormalize), lit(0, 23), rounded_hi.bits(23, 1));
    pipe_.def(kNormalize, "far_hi",
              cat({sign4, mux(sub4_, pipe_.at("big_exp", kNormalize), pipe_.at("big_exp_up", kNormalize)),
                   mux(sub4_, rounded_hi.bits(22, 0), man_r)}));
    pipe_.def(kNormalize, "far_lo",
              cat({sign4, mux(sub4_, pipe_.at("big_exp_down", kNormalize), pipe_.at("big_exp", kNormalize)),
                   mux(sub4_, cat({rounded_lo.bits(21, 0), lsb_l}), rounded_lo.bits(22, 0))}));
  }

  // Step 4, near path: normalization.
  void near_normalize() {
    // Near: the difference is exact; shift its leading one to the top by the anticipated count,
    // largest step first (the count's top bit is ready first), then one more place when the
    // anticipation was one short. Used only when the difference is below 1 (at least one leading
    // zero), so nothing is shifted out and nothing is rounded.
    Expr diff = pipe_.at("near_diff", kNormalize);
    Expr lz = pipe_.at("near_lz", kNormalize);
    Expr v = diff;
    for (int k : {16, 8, 4, 2, 1}) {
      int bit = 0;
      while ((1 << bit) < k) ++bit;
      v = m_.node(fmt::format("near_norm_l{}", k), mux(lz.bit(bit), v << k, v));
    }
    Sig near_norm = m_.node("near_norm", v);
    Sig exact = m_.node("near_lz_exact", near_norm.bit(24));
    // big_exp - lz (exact count) and big_exp - lz - 1 (one short) from one compound adder; the
    // carry of big_exp + ~lz is big_exp > lz. At or below 0 the result flushes to zero, sign kept.
    CompoundSum nexp = compound_add(m_, "near_exp_sub", pipe_.at("near_exp", kNormalize), ~lz.zext(8), kind_);
    Sig flush_exact = m_.node("near_flush_exact", !nexp.carry);
    Sig flush_short = m_.node("near_flush_short", (!nexp.carry) | (nexp.sum == 0));
    Sig near_sign = m_.node("near_sign", mux(pipe_.at("near_x_ge", kNormalize), pipe_.at("a_sign", kNormalize),
                                            pipe_.at("b_sign", kNormalize)));
    Expr flushed = cat({near_sign, lit(0, 31)});
    pipe_.def(kNormalize, "near_exact", exact);
    pipe_.def(kNormalize, "near_hi", mux(flush_exact, flushed, cat({near_sign, nexp.sum1, near_norm.bits(23, 1)})));
    pipe_.def(kNormalize, "near_lo", mux(flush_short, flushed, cat({near_sign, nexp.sum, near_norm.bits(22, 0)})));
    pipe_.def(kNormalize, "use_near", sub4_ & pipe_.at("near_range", kNormalize) & !diff.bit(24));
  }

  // Step 5: the special results from the early flags, else the near or the far result.
  void select_result() {
    // (Measured: folding the specials in beside the adders took 60 ps off the combinational
    // adder; the late signals then drive one 4:1 select.)
    Expr is_nan = pipe_.at("is_nan", kRound), both_zero = pipe_.at("both_zero", kRound);
    Expr pass_big = pipe_.at("pass_big", kRound), is_zero = pipe_.at("is_zero", kRound);
    Sig special = m_.node("special", is_nan | both_zero | pass_big | is_zero);
    // Apart from NaN and zeros every special result is the operand of the larger exponent.
    Sig other = m_.node("other_result",
                       mux(is_nan, m_.constant("QUIET_NAN", 0x7FC00000u, 32),
                           mux(both_zero, cat({pipe_.at("zero_sign", kRound), lit(0, 31)}),
                               mux(pass_big, cat({pipe_.at("far_sign", kRound), pipe_.at("big_exp", kRound),
                                                  pipe_.at("big_man", kRound)}),
                                   lit(0, 32)))));
    // The special results are folded into the far candidates, so that after the late signals
    // (the far carries, the near anticipation check) only a 4:1 select is left.
    Sig far_hi = m_.node("far_hi_result", mux(special, other, pipe_.at("far_hi", kRound)));
    Sig far_lo = m_.node("far_lo_result", mux(special, other, pipe_.at("far_lo", kRound)));
    Sig sel_near = m_.node("sel_near", (!special) & pipe_.at("use_near", kRound));
    pipe_.def(kRound, "result", mux(sel_near, mux(pipe_.at("near_exact", kRound), pipe_.at("near_hi", kRound),
                                                 pipe_.at("near_lo", kRound)),
                                   mux(pipe_.at("far_late", kRound), far_hi, far_lo)));
  }

  Module& m_;
  Sig a_, b_, sum_;  // declared before pipe_, which may declare `valid` after them
  Pipeline pipe_;
  const PrefixKind kind_;
  Expr sub4_;  // whether the operation subtracts, as the far rounding and the near result read it
};

}  // namespace

void Fp32Add::build_two_path(Module& m) const {
  m.add_comment("binary32 add, RNE, DAZ/FTZ, canonical NaN; near/far paths, " + prefix_name(p.prefix) +
                " prefix adders; latency " + std::to_string(p.stages) + " cycle(s) (docs/arith.md).");
  TwoPathBuilder(m, p, cuts()).build();
}

}  // namespace fetta::hw
