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

void Fp32Add::build_two_path(Module& m) const {
  m.add_comment("binary32 add, RNE, DAZ/FTZ, canonical NaN; near/far paths, " + prefix_name(p.prefix) +
                " prefix adders; latency " + std::to_string(p.stages) + " cycle(s) (docs/arith.md).");
  Sig a = m.input("a", UInt(32));
  Sig b = m.input("b", UInt(32));
  Sig sum = m.output("sum", UInt(32));
  Pipeline pipe(m, cuts());
  const PrefixKind kind = p.prefix;

  // ---- step 1: classify; exponent difference and order; operands of both paths.
  Sig a_exp = m.node("a_exp", a.bits(30, 23));
  Sig b_exp = m.node("b_exp", b.bits(30, 23));
  Sig a_man = m.node("a_man", a.bits(22, 0));
  Sig b_man = m.node("b_man", b.bits(22, 0));
  Sig a_zero = m.node("a_zero", a_exp == 0);  // zero or subnormal: read as signed zero
  Sig b_zero = m.node("b_zero", b_exp == 0);
  Sig a_man_zero = m.node("a_man_zero", a_man == 0);
  Sig b_man_zero = m.node("b_man_zero", b_man == 0);
  Sig a_inf = m.node("a_inf", a_exp.and_reduce() & a_man_zero);
  Sig b_inf = m.node("b_inf", b_exp.and_reduce() & b_man_zero);
  Sig a_nan = m.node("a_nan", a_exp.and_reduce() & !a_man_zero);
  Sig b_nan = m.node("b_nan", b_exp.and_reduce() & !b_man_zero);
  Sig signs_differ = m.node("signs_differ", a.bit(31) ^ b.bit(31));
  // One compound adder gives ea - eb - 1 (sum) and ea - eb (sum1): the carry of the second is
  // ea >= eb and the complement of the first is eb - ea, so |ea - eb| needs no negation.
  CompoundSum ediff = compound_add(m, "exp_diff", a_exp, ~b_exp, kind);
  Expr a_exp_ge = pipe.def(kUnpack, "a_exp_ge", ediff.carry1);
  Sig exp_dist = m.node("exp_dist", mux(a_exp_ge, ediff.sum1, ~ediff.sum));

  // The results that bypass both paths, as flags (as in the basic datapath). Exact
  // cancellation needs equal magnitudes of opposite sign, which the operands show directly.
  pipe.def(kUnpack, "is_nan", a_nan | b_nan | (a_inf & b_inf & signs_differ));
  pipe.def(kUnpack, "both_zero", a_zero & b_zero);
  pipe.def(kUnpack, "zero_sign", a.bit(31) & b.bit(31));  // -0 only if both are -0
  // So does a finite sum of operands 26 or more binades apart: the smaller is below half an ulp
  // of the larger (and is no tie), so the larger is the rounded result. Flagged from 32 on,
  // where the 5-bit alignment shift would wrap; 26..31 go through the datapath.
  Sig far_out = m.node("far_out", exp_dist.bits(7, 5) != 0);
  pipe.def(kUnpack, "pass_big", a_inf | b_inf | a_zero | b_zero | far_out);
  pipe.def(kUnpack, "is_zero", signs_differ & (a.bits(30, 0) == b.bits(30, 0)));
  pipe.def(kUnpack, "subtract", signs_differ);

  // Far path: the operands are ordered by exponent alone. With exponents 2 or more apart the
  // larger exponent is the larger magnitude; in an addition the order does not matter.
  // The candidate exponents of the result (one down, same, one up) are formed here, beside the
  // difference, so that the rounding only selects one.
  pipe.def(kUnpack, "far_sign", mux(a_exp_ge, a.bit(31), b.bit(31)));
  pipe.def(kUnpack, "big_exp", mux(a_exp_ge, a_exp, b_exp));
  pipe.def(kUnpack, "big_exp_up", mux(a_exp_ge, a_exp + 1, b_exp + 1));
  pipe.def(kUnpack, "big_exp_down", mux(a_exp_ge, a_exp - 1, b_exp - 1));
  pipe.def(kUnpack, "big_is_max", mux(a_exp_ge, a_exp == 254, b_exp == 254));  // one more is Inf
  pipe.def(kUnpack, "big_man", mux(a_exp_ge, a_man, b_man));
  // Both alignments are started before the order is known: b >> (ea - eb) and a >> (eb - ea),
  // whose low bits come out of the difference first; the order then picks one. Distances of 32
  // or more (the top three bits) leave the far result equal to the big operand (pass_big).
  pipe.def(kUnpack, "a_sig", cat({lit(1, 1), a_man}));
  pipe.def(kUnpack, "b_sig", cat({lit(1, 1), b_man}));
  pipe.def(kUnpack, "shift_ab", ediff.sum1.bits(4, 0));
  pipe.def(kUnpack, "shift_ba", ~ediff.sum.bits(4, 0));

  // Near path (subtraction, |ea - eb| <= 1): which operand is shifted one place follows from
  // ea - eb mod 4 (01: b, 11: a), i.e. from the two low bits of the difference, long before its
  // top bits are known. When the exponents are further apart the path is not selected.
  Sig diff_low = m.node("exp_diff_low", ediff.sum1.bits(1, 0));
  Sig a_half = m.node("near_a_half", diff_low == 3);
  Sig b_half = m.node("near_b_half", diff_low == 1);
  pipe.def(kUnpack, "near_x", mux(a_half, cat({lit(1, 2), a_man}), cat({lit(1, 1), a_man, lit(0, 1)})));
  pipe.def(kUnpack, "near_y", mux(b_half, cat({lit(1, 2), b_man}), cat({lit(1, 1), b_man, lit(0, 1)})));
  pipe.def(kUnpack, "near_exp", mux(a_half, b_exp, a_exp));
  pipe.def(kUnpack, "near_range", exp_dist.bits(7, 1) == 0);
  pipe.def(kUnpack, "a_sign", a.bit(31));
  pipe.def(kUnpack, "b_sign", b.bit(31));

  // ---- step 2: far alignment; near subtraction and leading-zero anticipation.
  // {1.m, 0, 0} >> shift one stage per bit of the shift, smallest first (the low bits of the
  // exponent difference are ready first). The top 24 bits line up with the big significand,
  // then guard and round; bits leaving them are ORed into the sticky bit stage by stage.
  auto align = [&](const std::string& name, const Expr& sig, const Expr& shift) {
    Sig v = m.node(name + "_r0", cat({sig, lit(0, 2)}));
    Expr sticky = lit(0, 1);
    for (int k = 0; k < 5; ++k) {
      const int d = 1 << k;
      sticky = m.node(fmt::format("{}_st{}", name, d), sticky | (shift.bit(k) & v.bits(d - 1, 0).or_reduce()));
      v = m.node(fmt::format("{}_r{}", name, d), mux(shift.bit(k), cat({lit(0, d), v.bits(25, d)}), v));
    }
    return std::pair<Sig, Expr>{v, sticky};
  };
  Expr a_ge = pipe.at("a_exp_ge", kAlign);
  auto [b_aligned, b_sticky] = align("align_b", pipe.at("b_sig", kAlign), pipe.at("shift_ab", kAlign));
  auto [a_aligned, a_sticky] = align("align_a", pipe.at("a_sig", kAlign), pipe.at("shift_ba", kAlign));
  pipe.def(kAlign, "aligned", mux(a_ge, b_aligned, a_aligned));
  pipe.def(kAlign, "sticky", mux(a_ge, b_sticky, a_sticky));
  // x - y and y - x from one compound adder: x + ~y + 1 is x - y, and the complement of x + ~y
  // is y - x. The carry of x - y says which is not negative.
  CompoundSum nsub = compound_add(m, "near_sub", pipe.at("near_x", kAlign), ~pipe.at("near_y", kAlign), kind);
  pipe.def(kAlign, "near_x_ge", nsub.carry1);
  pipe.def(kAlign, "near_diff", mux(nsub.carry1, nsub.sum1, ~nsub.sum));
  // Leading-zero anticipation: x - y as signed digits x_i - y_i (g: +1, s: -1, e: 0); a
  // leading one of |x - y| can start at digit k only where f_k is set, and it starts at the
  // first such k or one place below (Schmookler & Nowka; the indicator is the same for x - y
  // and y - x, so the unknown sign does not matter).
  {
    Expr x = pipe.at("near_x", kAlign), y = pipe.at("near_y", kAlign);
    Sig gd = m.node("lza_g", x & ~y);
    Sig sd = m.node("lza_s", (~x) & y);
    Sig ed = m.node("lza_e", ~(x ^ y));
    const int n = x.width();
    // Per digit k: e of digit k+1 (1 above the top), g and s of digit k-1 (0 below the bottom),
    // a word at a time.
    Sig e_up = m.node("lza_e_up", cat({lit(1, 1), ed.bits(n - 1, 1)}));
    Sig g_dn = m.node("lza_g_dn", cat({gd.bits(n - 2, 0), lit(0, 1)}));
    Sig s_dn = m.node("lza_s_dn", cat({sd.bits(n - 2, 0), lit(0, 1)}));
    Sig lza = m.node("lza_f", (e_up & ((gd & ~s_dn) | (sd & ~g_dn))) | (~e_up & ((sd & ~s_dn) | (gd & ~g_dn))));
    pipe.def(kAlign, "near_lz", leading_zeros(m, "near_lz", lza));
  }

  // ---- step 3: far add/subtract as a compound adder (V = big + small and V + 1, or for a
  // subtraction big + ~small = big - small - 1 and big - small).
  Expr aligned = pipe.at("aligned", kAddSub);
  Expr far_sub = pipe.at("subtract", kAddSub);
  Sig small_hi = m.node("far_small", aligned.bits(25, 2));
  Sig addend = m.node("far_addend", small_hi ^ repl(far_sub, 24));
  CompoundSum fsum = compound_add(m, "far", cat({lit(1, 1), pipe.at("big_man", kAddSub)}), addend, kind);
  pipe.def(kAddSub, "far_v0", fsum.sum);
  pipe.def(kAddSub, "far_v1", fsum.sum1);
  pipe.def(kAddSub, "far_c0", fsum.carry);
  pipe.def(kAddSub, "far_c1", fsum.carry1);
  // The bits below the significand: guard, round, sticky of the aligned operand; negated (mod
  // 8) for a subtraction, which then carries into the upper part only when they are all zero.
  Sig grs = m.node("far_grs", cat({aligned.bits(1, 0), pipe.at("sticky", kAddSub)}));
  Sig grs_neg = m.node("far_grs_neg", cat({grs.bit(2) ^ (grs.bit(1) | grs.bit(0)), grs.bit(1) ^ grs.bit(0), grs.bit(0)}));
  pipe.def(kAddSub, "far_low", mux(far_sub, grs_neg, grs));
  pipe.def(kAddSub, "far_low_carry", far_sub & (grs == 0));

  // ---- step 4: far rounding by selection; near normalization.
  // Far: the unrounded upper part T is V0, or V1 when the low part carries. Three cases by
  // where its leading one is: R (addition carried out: shift right once), N (in place), L
  // (subtraction fell below 1: shift left once). In each, T + round_up is V0 or V1, and which
  // one depends only on low bits that are ready early; the late carries only pick the case.
  Expr sub4 = pipe.at("subtract", kNormalize);
  Expr v0 = pipe.at("far_v0", kNormalize), v1 = pipe.at("far_v1", kNormalize);
  Expr c0 = pipe.at("far_c0", kNormalize), c1 = pipe.at("far_c1", kNormalize);
  Expr low = pipe.at("far_low", kNormalize), low_carry = pipe.at("far_low_carry", kNormalize);
  Sig l2 = m.node("far_l2", low.bit(2)), l1 = m.node("far_l1", low.bit(1)), l0 = m.node("far_l0", low.bit(0));
  // R: guard = V0[0], sticky = the low bits; an odd V0 rounds up to V1 >> 1 = (V0 >> 1) + 1.
  Sig up_r = m.node("round_up_r", v0.bit(0) & (v0.bit(1) | l2 | l1 | l0));
  // N: guard = l2, sticky = l1 | l0 (a subtraction with l2 set has T = V0).
  Sig sel_n = m.node("round_sel_n", low_carry | (l2 & (v0.bit(0) | l1 | l0)));
  // L: the LSB is l2, guard = l1, sticky = l0; the round carries into T only when l2 is set.
  Sig sel_l = m.node("round_sel_l", low_carry | (l2 & l1));
  Sig lsb_l = m.node("round_lsb_l", l2 ^ (l1 & (l2 | l0)));
  // The late carries only pick between two candidates, "hi" and "lo": R or N for an addition
  // (carry out or not), N or L for a subtraction (T, i.e. V0 or V1 by the low carry, >= 1 or
  // not). N rounding up to 2.0 equals R (V0 is all ones, so up_r is set and V1 >> 1 is 1.0), L
  // rounding up to 1.0 equals N (sel_n is set and V1 is 1.0), so those two take the other one.
  // Each candidate has its own exponent, ready early. Overflow to Inf happens only in R of the
  // largest exponent: the exponent candidate is 255 already, the mantissa must be 0.
  Sig top = m.node("far_top", mux(low_carry, v1.bit(23), v0.bit(23)));
  pipe.def(kNormalize, "far_late", mux(sub4, top | (sel_l & v1.bit(23)), c0 | (sel_n & c1)));
  Sig rounded_hi = m.node("rounded_hi", mux(mux(sub4, sel_n, up_r), v1, v0));
  Sig rounded_lo = m.node("rounded_lo", mux(mux(sub4, sel_l, sel_n), v1, v0));
  Expr sign4 = pipe.at("far_sign", kNormalize);
  Expr man_r = mux(pipe.at("big_is_max", kNormalize), lit(0, 23), rounded_hi.bits(23, 1));
  pipe.def(kNormalize, "far_hi", cat({sign4, mux(sub4, pipe.at("big_exp", kNormalize), pipe.at("big_exp_up", kNormalize)),
                                      mux(sub4, rounded_hi.bits(22, 0), man_r)}));
  pipe.def(kNormalize, "far_lo", cat({sign4, mux(sub4, pipe.at("big_exp_down", kNormalize), pipe.at("big_exp", kNormalize)),
                                      mux(sub4, cat({rounded_lo.bits(21, 0), lsb_l}), rounded_lo.bits(22, 0))}));

  // Near: the difference is exact; shift its leading one to the top by the anticipated count,
  // largest step first (the count's top bit is ready first), then one more place when the
  // anticipation was one short. Used only when the difference is below 1 (at least one leading
  // zero), so nothing is shifted out and nothing is rounded.
  Expr diff = pipe.at("near_diff", kNormalize);
  Expr lz = pipe.at("near_lz", kNormalize);
  Expr v = diff;
  for (int k : {16, 8, 4, 2, 1}) {
    int bit = 0;
    while ((1 << bit) < k) ++bit;
    v = m.node(fmt::format("near_norm_l{}", k), mux(lz.bit(bit), v << k, v));
  }
  Sig near_norm = m.node("near_norm", v);
  Sig exact = m.node("near_lz_exact", near_norm.bit(24));
  // big_exp - lz (exact count) and big_exp - lz - 1 (one short) from one compound adder; the
  // carry of big_exp + ~lz is big_exp > lz. At or below 0 the result flushes to zero, sign kept.
  CompoundSum nexp = compound_add(m, "near_exp_sub", pipe.at("near_exp", kNormalize), ~lz.zext(8), kind);
  Sig flush_exact = m.node("near_flush_exact", !nexp.carry);
  Sig flush_short = m.node("near_flush_short", (!nexp.carry) | (nexp.sum == 0));
  Sig near_sign = m.node("near_sign", mux(pipe.at("near_x_ge", kNormalize), pipe.at("a_sign", kNormalize),
                                          pipe.at("b_sign", kNormalize)));
  Expr flushed = cat({near_sign, lit(0, 31)});
  pipe.def(kNormalize, "near_exact", exact);
  pipe.def(kNormalize, "near_hi", mux(flush_exact, flushed, cat({near_sign, nexp.sum1, near_norm.bits(23, 1)})));
  pipe.def(kNormalize, "near_lo", mux(flush_short, flushed, cat({near_sign, nexp.sum, near_norm.bits(22, 0)})));
  pipe.def(kNormalize, "use_near", sub4 & pipe.at("near_range", kNormalize) & !diff.bit(24));

  // ---- step 5: the special results from the early flags, else the near or the far result.
  // (Measured: folding the specials in beside the adders took 60 ps off the combinational
  // adder; the late signals then drive one 4:1 select.)
  Expr is_nan = pipe.at("is_nan", kRound), both_zero = pipe.at("both_zero", kRound);
  Expr pass_big = pipe.at("pass_big", kRound), is_zero = pipe.at("is_zero", kRound);
  Sig special = m.node("special", is_nan | both_zero | pass_big | is_zero);
  // Apart from NaN and zeros every special result is the operand of the larger exponent.
  Sig other = m.node("other_result",
                     mux(is_nan, m.constant("QUIET_NAN", 0x7FC00000u, 32),
                         mux(both_zero, cat({pipe.at("zero_sign", kRound), lit(0, 31)}),
                             mux(pass_big, cat({pipe.at("far_sign", kRound), pipe.at("big_exp", kRound),
                                                pipe.at("big_man", kRound)}),
                                 lit(0, 32)))));
  // The special results are folded into the far candidates, so that after the late signals
  // (the far carries, the near anticipation check) only a 4:1 select is left.
  Sig far_hi = m.node("far_hi_result", mux(special, other, pipe.at("far_hi", kRound)));
  Sig far_lo = m.node("far_lo_result", mux(special, other, pipe.at("far_lo", kRound)));
  Sig sel_near = m.node("sel_near", (!special) & pipe.at("use_near", kRound));
  pipe.def(kRound, "result", mux(sel_near, mux(pipe.at("near_exact", kRound), pipe.at("near_hi", kRound),
                                               pipe.at("near_lo", kRound)),
                                 mux(pipe.at("far_late", kRound), far_hi, far_lo)));
  sum <<= pipe.at("result", kSteps);
}

}  // namespace fetta::hw
