#include <fmt/core.h>

#include <stdexcept>

#include "hw/arith/fp_add.hpp"
#include "hw/arith/pipeline.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

Fp32AddParams checked(Fp32AddParams p) {
  if (p.stages < 0 || p.stages > 16)
    throw std::invalid_argument(
        fmt::format("Fp32Add: stages = {} is out of range; allowed: 0 (combinational) .. 16", p.stages));
  if (p.lead_levels < 0 || p.lead_levels > 64)
    throw std::invalid_argument(fmt::format("Fp32Add: lead_levels = {} is out of range; allowed: 0..64", p.lead_levels));
  fp32_add_arch_name(p.arch, "Fp32Add: arch");
  prefix_tag(p.prefix, "Fp32Add: prefix");
  if (p.stages == 0) p.lead_levels = 0;  // no cuts to move: one module for every lead
  if (p.stages == 0) p.gate_stages = false;  // no registers to gate
  if (p.arch == Fp32AddArch::basic) p.prefix = Fp32AddParams{}.prefix;  // no prefix adders in it
  return p;
}

// Width of the significand datapath: carry, hidden one, 23 mantissa bits, then guard, round
// and sticky. Three bits below the mantissa are enough for round-to-nearest-even of a sum or
// difference: when the aligned operand loses bits (exponent difference >= 2) the result needs
// at most one left shift, and when the difference needs a longer shift it is exact.
constexpr int kSig = 24;                // 1.m
constexpr int kExt = kSig + 3;          // 1.m G R S
constexpr int kAligned = kSig + 2;      // shifted operand kept above the sticky bit
constexpr int kMaxShift = kAligned;     // shifting this far leaves only the sticky bit

}  // namespace

std::string fp32_add_arch_name(Fp32AddArch arch, const std::string& what) {
  switch (arch) {
    case Fp32AddArch::basic: return "basic";
    case Fp32AddArch::two_path: return "two_path";
  }
  throw std::invalid_argument(
      fmt::format("{} = {} is not an adder architecture; allowed: basic, two_path", what, static_cast<int>(arch)));
}

Fp32Add::Fp32Add(Fp32AddParams params) : IdentifiedGenerator(checked(params)) {}

Identity Fp32Add::identity() const {
  Identity id("fp32_add");
  if (p.arch != Fp32AddArch::basic)
    id.param("arch", fp32_add_arch_name(p.arch), fmt::format("_twopath_{}", prefix_tag(p.prefix))).param("prefix", prefix_name(p.prefix));
  id.param("stages", p.stages, fmt::format("_s{}", p.stages))
      .param("lead_levels", p.lead_levels, p.lead_levels == 0 ? "" : fmt::format("_lead{}", p.lead_levels));
  if (p.gate_stages) id.flag("gate_stages", true, "_gated");
  return id;
}

// Gate levels per step, measured on each datapath (Yosys 0.23 `synth -flatten`, generic gates,
// `ltp -noff` per register-to-register segment of the adder with all four inner cuts;
// docs/arith.md). They only steer where registers go.
std::vector<int> Fp32Add::step_levels(Fp32AddArch arch) {
  if (arch == Fp32AddArch::two_path) return {16, 14, 14, 8, 13};  // fp32_add_twopath_sk_s4
  return {18, 10, 17, 16, 18};                                     // fp32_add_s4
}

std::vector<int> Fp32Add::cuts() const { return place_cuts(step_levels(p.arch), p.stages, p.lead_levels); }

void Fp32Add::build(Module& m) const {
  if (p.arch == Fp32AddArch::basic) return build_basic(m);
  if (m.design()->view() == View::synthesis) return build_two_path(m);
  // The simulation view: the basic datapath computes the same bits in a few dozen Verilated
  // expressions instead of some 3,400 (its adders are `+` and `-`, not prefix networks). Same ports and latency; the
  // registers sit at the basic datapath's cuts, so a trace of this view is not the netlist's.
  m.set_simulation_view("the basic datapath (same ports, latency and bits; fetta equiv proves it)", p.stages);
  build_basic(m);
}

namespace {

using enum Fp32Add::Step;

// The basic datapath's step 1: classify, order by magnitude, exponent difference.
void basic_unpack(Module& m, Pipeline& pipe, const Sig& a, const Sig& b) {
  Sig a_exp = m.node("a_exp", a.bits(30, 23));
  Sig b_exp = m.node("b_exp", b.bits(30, 23));
  Sig a_zero = m.node("a_zero", a_exp == 0);  // zero or subnormal: read as signed zero
  Sig b_zero = m.node("b_zero", b_exp == 0);
  Sig a_man_zero = m.node("a_man_zero", a.bits(22, 0) == 0);
  Sig b_man_zero = m.node("b_man_zero", b.bits(22, 0) == 0);
  Sig a_inf = m.node("a_inf", a_exp.and_reduce() & a_man_zero);
  Sig b_inf = m.node("b_inf", b_exp.and_reduce() & b_man_zero);
  Sig a_nan = m.node("a_nan", a_exp.and_reduce() & !a_man_zero);
  Sig b_nan = m.node("b_nan", b_exp.and_reduce() & !b_man_zero);
  Sig signs_differ = m.node("signs_differ", a.bit(31) ^ b.bit(31));
  // Results that bypass the datapath. Apart from NaN and 0 + 0 they all equal the operand of
  // larger magnitude (`big` below): Inf + finite is the Inf, Inf + Inf of one sign is either,
  // zero + x is x. So three flags are carried instead of a 32-bit value.
  pipe.def(kUnpack, "is_nan", a_nan | b_nan | (a_inf & b_inf & signs_differ));
  pipe.def(kUnpack, "both_zero", a_zero & b_zero);
  pipe.def(kUnpack, "zero_sign", a.bit(31) & b.bit(31));  // -0 only if both are -0
  pipe.def(kUnpack, "pass_big", a_inf | b_inf | a_zero | b_zero);
  // |a| < |b|: swap, so that `big` has the larger magnitude and the result its sign.
  Sig swap = m.node("swap", a.bits(30, 0) < b.bits(30, 0));
  Sig big = m.node("big_op", mux(swap, b, a));
  Sig small = m.node("small_op", mux(swap, a, b));
  pipe.def(kUnpack, "sign", big.bit(31));
  pipe.def(kUnpack, "subtract", signs_differ);
  pipe.def(kUnpack, "big_exp", big.bits(30, 23));
  pipe.def(kUnpack, "big_sig", cat({lit(1, 1), big.bits(22, 0)}));
  pipe.def(kUnpack, "small_sig", cat({lit(1, 1), small.bits(22, 0)}));
  // The alignment shift, clamped where only the sticky bit is left: both exponent differences
  // are formed and clamped beside the magnitude compare, which then only picks one.
  auto clamped_diff = [&](const Expr& from, const Expr& to, const std::string& n) {
    Sig diff = m.node("exp_diff_" + n, from - to);
    return m.node("shift_" + n, mux(diff > kMaxShift, lit(kMaxShift, 5), diff.bits(4, 0)));
  };
  Sig shift_ab = clamped_diff(a_exp, b_exp, "ab");  // a is the larger
  Sig shift_ba = clamped_diff(b_exp, a_exp, "ba");
  pipe.def(kUnpack, "shift", mux(swap, shift_ba, shift_ab));
}

// The basic datapath's step 2: align the smaller significand; bits shifted below the round bit
// become sticky.
void basic_align(Module& m, Pipeline& pipe) {
  Sig shifted = m.node("shifted", cat({pipe.at("small_sig", kAlign), lit(0, kAligned)}) >> pipe.at("shift", kAlign));
  pipe.def(kAlign, "small_aligned", cat({shifted.bits(kSig + kAligned - 1, kSig),
                                         shifted.bits(kSig - 1, 0).or_reduce()}));
}

// The basic datapath's step 3: add or subtract the magnitudes (big >= small, so the difference
// is >= 0).
void basic_add_sub(Pipeline& pipe) {
  Expr x = cat({lit(0, 1), pipe.at("big_sig", kAddSub), lit(0, 3)});
  Expr y = cat({lit(0, 1), pipe.at("small_aligned", kAddSub)});
  pipe.def(kAddSub, "raw_sum", mux(pipe.at("subtract", kAddSub), x - y, x + y));
}

// The basic datapath's step 4: normalize to 1.m G R S. A carry shifts right once (the lost bit
// joins the sticky bit); otherwise leading zeros are removed 16, 8, 4, 2, 1 at a time, which
// counts them.
void basic_normalize(Module& m, Pipeline& pipe) {
  Expr raw = pipe.at("raw_sum", kNormalize);
  Sig carry = m.node("sum_carry", raw.bit(kExt));
  Expr v = m.node("norm_l0", raw.bits(kExt - 1, 0));
  std::vector<Expr> lz_bits;
  for (int k : {16, 8, 4, 2, 1}) {
    Sig top_zero = m.node(fmt::format("lz{}", k), v.bits(kExt - 1, kExt - k) == 0);
    v = m.node(fmt::format("norm_l{}", k), mux(top_zero, v << k, v));
    lz_bits.push_back(top_zero);
  }
  Expr right = cat({raw.bits(kExt, 2), raw.bit(1) | raw.bit(0)});
  pipe.def(kNormalize, "norm", mux(carry, right, v));
  pipe.def(kNormalize, "norm_carry", carry);
  pipe.def(kNormalize, "lz", cat(lz_bits));
  pipe.def(kNormalize, "is_zero", raw == 0);  // exact cancellation
}

// The basic datapath's step 5: round to nearest even, then the exponent range and the special
// cases.
Expr basic_round(Module& m, Pipeline& pipe) {
  Expr norm = pipe.at("norm", kRound);
  Sig guard = m.node("guard", norm.bit(2));
  Sig round_up = m.node("round_up", guard & (norm.bit(3) | norm.bit(1) | norm.bit(0)));
  Sig rounded = m.node("rounded", norm.bits(kExt - 1, 3).zext(kSig) + round_up.zext(kSig));
  // Rounding carries out of the significand only from 1.11..1 (the mantissa field becomes all
  // zero and the exponent steps up): detected beside the incrementer, not behind it.
  Sig round_carry = m.node("round_carry", round_up & norm.bits(kExt - 1, 3).and_reduce());
  // The exponent, without an adder behind the leading-zero count or the rounding carry: all
  // four candidates are formed in parallel and selected (a compound adder). After a carry out
  // of the sum it is big_exp + 1 (+1 more if rounding carries), else big_exp - lz (+1).
  Expr big_exp = pipe.at("big_exp", kRound);
  Expr lz = pipe.at("lz", kRound).zext(8);
  Expr sum_carry = pipe.at("norm_carry", kRound);
  Sig exp_up = m.node("exp_up", mux(round_carry, big_exp + 2, big_exp + 1));
  Sig exp_down = m.node("exp_down", mux(round_carry, (big_exp + 1) - lz, big_exp - lz));
  Sig final_exp = m.node("final_exp", mux(sum_carry, exp_up, exp_down));
  // Below 2^-126 (big_exp - lz <= 0) the result comes only from cancellation and is exact:
  // flush it, sign kept. At or above 2^128 it is Inf: big_exp is at most 254, so only these.
  Sig underflow = m.node("underflow", (!sum_carry) & (big_exp <= lz));
  Sig overflow = m.node("overflow", mux(sum_carry, (big_exp == 254) | ((big_exp == 253) & round_carry),
                                        (lz == 0) & (big_exp == 254) & round_carry));
  Expr sign = pipe.at("sign", kRound);
  Expr big_value = cat({sign, big_exp, pipe.at("big_sig", kRound).bits(kSig - 2, 0)});
  // The rounded value passes one multiplexer; every other outcome is chosen from flags that
  // are ready early (the special operands, exact zero, flush, overflow).
  Expr is_nan = pipe.at("is_nan", kRound), both_zero = pipe.at("both_zero", kRound);
  Expr pass_big = pipe.at("pass_big", kRound), is_zero = pipe.at("is_zero", kRound);
  Sig use_rounded = m.node("use_rounded", !(is_nan | both_zero | pass_big | is_zero | underflow | overflow));
  Sig other = m.node("other_result",
                     mux(is_nan, m.constant("QUIET_NAN", 0x7FC00000u, 32),
                         mux(both_zero, cat({pipe.at("zero_sign", kRound), lit(0, 31)}),
                             mux(pass_big, big_value,
                                 mux(is_zero, lit(0, 32),
                                     mux(underflow, cat({sign, lit(0, 31)}), cat({sign, lit(0xFF, 8), lit(0, 23)})))))));
  Expr selected = mux(use_rounded, cat({sign, final_exp, rounded.bits(kSig - 2, 0)}), other);
  return selected;
}

}  // namespace

void Fp32Add::build_basic(Module& m) const {
  m.add_comment("binary32 add, RNE, DAZ/FTZ, canonical NaN; latency " + std::to_string(p.stages) +
                " cycle(s) (docs/arith.md).");
  Sig a = m.input("a", UInt(32));
  Sig b = m.input("b", UInt(32));
  Sig sum = m.output("sum", UInt(32));
  Pipeline pipe(m, cuts(), p.gate_stages ? Expr(m.input("valid", UInt(1))) : Expr{});

  basic_unpack(m, pipe, a, b);
  basic_align(m, pipe);
  basic_add_sub(pipe);
  basic_normalize(m, pipe);
  pipe.def(kRound, "result", basic_round(m, pipe));
  sum <<= pipe.at("result", kSteps);
}

}  // namespace fetta::hw
