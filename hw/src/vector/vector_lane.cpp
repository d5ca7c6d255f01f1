// VectorLane: one element of the vector unit (hw/vector/vector_unit.hpp, docs/vector.md). The
// unit decodes the operation and drives the selects; the lane holds the data path.
#include <fmt/core.h>

#include <array>
#include <vector>

#include "hw/arith/fp_add.hpp"
#include "hw/arith/fp_convert.hpp"
#include "hw/arith/fp_mul.hpp"
#include "hw/vector/vector_unit.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

// tanh's segments (c0, c1, c2), binary32 bits, the table of verif/src/vector.cpp: the golden
// model states it, this is the hardware's copy, and ctest -L vector runs every bf16 through both.
constexpr std::array<std::array<uint32_t, 3>, 24> kTanhSegments = {{
    {0xB8EDE56Au, 0x3F809FE7u, 0xBD8F0C8Au}, {0xB95891C3u, 0x3F80EDF2u, 0xBDAE454Fu},
    {0xB9B1CBF8u, 0x3F814A97u, 0xBDCD27F0u}, {0xBA07980Au, 0x3F81B54Au, 0xBDEBA59Au},
    {0xBA65816Fu, 0x3F826CCCu, 0xBE0C3E72u}, {0xBACD3F39u, 0x3F838E4Fu, 0xBE293641u},
    {0xBB24EC1Eu, 0x3F84DA93u, 0xBE44EAD2u}, {0xBB75490Du, 0x3F864A04u, 0xBE5F2DCDu},
    {0xBBC65C22u, 0x3F889A76u, 0xBE81B48Au}, {0xBC24B051u, 0x3F8BE27Bu, 0xBE96C2CCu},
    {0xBC716873u, 0x3F8F16B1u, 0xBEA7E5C9u}, {0xBCA08137u, 0x3F91F08Bu, 0xBEB4F919u},
    {0xBCD16FF5u, 0x3F94F4A2u, 0xBEC0E07Bu}, {0xBCE5BB4Au, 0x3F960789u, 0xBEC48169u},
    {0xBC9D802Eu, 0x3F9310AAu, 0xBEBCB78Au}, {0x3B8729B6u, 0x3F8C4348u, 0xBEAD3ADFu},
    {0x3D87E099u, 0x3F797793u, 0xBE8EF097u}, {0x3E43CB06u, 0x3F4649C8u, 0xBE4BDDD1u},
    {0x3EAD1ACFu, 0x3F14020Au, 0xBE089942u}, {0x3EF6E351u, 0x3ED366CCu, 0xBDB01F20u},
    {0x3F28825Au, 0x3E7543BEu, 0xBD314922u}, {0x3F5264EEu, 0x3DDAFE27u, 0xBC865FAEu},
    {0x3F699720u, 0x3D3BC1C9u, 0xBBC7EA0Bu}, {0x3F756A91u, 0x3C9D2084u, 0xBB13AF25u},
}};
constexpr int kTanhLowExp = 123;   // |x| < 2^-4: tanh(x) = x in bf16
constexpr int kTanhHighExp = 129;  // |x| >= 4: +-1

}  // namespace

void VectorLane::build(Module& m) const {
  m.add_comment("One vector lane: 0. operand selects, 1. the binary32 x bf16 multiplier, 2. the adder or the");
  m.add_comment("sum-of-squares accumulator, 3. rounding to bf16. A two-pass operation (tanh, tanh_bwd) comes");
  m.add_comment("back to stage 0 from stage 2's register (pass2) with its partial result (docs/vector.md).");
  Sig a_in = m.input("a", UInt(16));
  Sig b_in = m.input("b", UInt(16));
  Sig s = m.input("s", UInt(32));
  Sig pass2 = m.input("pass2", UInt(1));        // stage 0 takes stage 2's entry back
  Sig m_a_sel = m.input("m_a_sel", UInt(2));    // VectorMulBf16
  Sig m_x_sel = m.input("m_x_sel", UInt(3));    // VectorMulOperand
  Sig z_sel = m.input("z_sel", UInt(2));        // VectorAddend
  Sig p2_from_b = m.input("p2_from_b", UInt(1));  // the second pass multiplies b (tanh_bwd), else |a|
  Sig relu = m.input("relu", UInt(1));
  Sig relu_bwd = m.input("relu_bwd", UInt(1));
  Sig tanh = m.input("tanh", UInt(1));
  Sig load0 = m.input("load0", UInt(1));
  // Stage 2's controls, decoded as an entry enters stage 0 and carried with it, so that the adder
  // stage starts from the lane's own flip-flops.
  Sig add_en0 = m.input("add_en", UInt(1));
  Sig sumsq0 = m.input("sumsq", UInt(1));
  Sig load1 = m.input("load1", UInt(1));
  Sig load2 = m.input("load2", UInt(1));
  // A reduce runs from the cycle after reduce_next rises to the one after it falls: the
  // accumulators move one lane down each cycle. Each lane keeps its own copy of the unit's state,
  // so that lane 0's adder selects from a local flip-flop.
  Sig reduce_next = m.input("reduce_next", UInt(1));
  Sig reduce_add = m.input("reduce_add", UInt(1));  // lane 0: it adds its neighbour instead
  Sig last = m.input("last", UInt(1));              // the reduce's last step: accumulators to +0
  Sig load3 = m.input("load3", UInt(1));
  Sig sign_from_a = m.input("sign_from_a", UInt(1));
  Sig acc_next = m.input("acc_next", UInt(32));
  Sig acc = m.output("acc", UInt(32));
  Sig sum = m.output("sum", UInt(32));
  Sig out = m.output("out", UInt(16));

  // Every stage's registers: what travels with an entry (the second pass's bf16 operand, a's
  // sign, a result that needs no arithmetic) and what the stage computed.
  struct Carried {
    Sig p2, a_sign, special, use_special;
  };
  auto carried = [&](const std::string& stage, const GatedClock& g) {
    return Carried{m.reg(stage + "_p2", UInt(16), clocked_by(g)), m.reg(stage + "_a_sign", UInt(1), clocked_by(g)),
                   m.reg(stage + "_special", UInt(16), clocked_by(g)),
                   m.reg(stage + "_use_special", UInt(1), clocked_by(g))};
  };
  auto pass_on = [](const Carried& to, const Carried& from) {
    to.p2 <<= from.p2;
    to.a_sign <<= from.a_sign;
    to.special <<= from.special;
    to.use_special <<= from.use_special;
  };
  const GatedClock stage0 = m.clock_gate("stage0", load0);
  const GatedClock stage1 = m.clock_gate("stage1", load1);
  const GatedClock stage2 = m.clock_gate("stage2", load2);
  const Carried c0r = carried("s0", stage0), c1r = carried("s1", stage1), c2r = carried("s2", stage2);
  Sig s0_m_a = m.reg("s0_m_a", UInt(16), clocked_by(stage0));
  Sig s0_m_x = m.reg("s0_m_x", UInt(32), clocked_by(stage0));
  Sig s0_z = m.reg("s0_z", UInt(32), clocked_by(stage0));
  Sig s1_product = m.reg("s1_product", UInt(32), clocked_by(stage1));
  Sig s1_z = m.reg("s1_z", UInt(32), clocked_by(stage1));
  Sig s2_r = m.reg("s2_r", UInt(32), clocked_by(stage2));
  Sig out_q = m.reg("out_q", UInt(16), clocked_by(m.clock_gate("stage3", load3)));
  Sig s0_add_en = m.reg("s0_add_en", UInt(1), clocked_by(stage0));
  Sig s1_add_en = m.reg("s1_add_en", UInt(1), clocked_by(stage1));
  // High exactly while a sumsq entry is in the stage: it clocks the accumulator.
  Sig shift = m.reg("reducing", UInt(1), reset_to(0));
  shift <<= reduce_next;
  Sig s0_sumsq = m.reg("s0_sumsq", UInt(1), reset_to(0));
  Sig s1_sumsq = m.reg("s1_sumsq", UInt(1), reset_to(0));
  Sig acc_q = m.reg("acc_q", UInt(32), reset_to(0).clocked_by(m.clock_gate("acc", s1_sumsq | shift)));
  s0_add_en <<= add_en0;
  s1_add_en <<= s0_add_en;
  s0_sumsq <<= load0 & sumsq0;
  s1_sumsq <<= s0_sumsq;

  // tanh's coefficients by segment: binade (2^-4 .. 2^1) and the top two mantissa bits of |x|.
  auto coefficient = [&](const std::string& name, size_t k, const Expr& x) {
    std::vector<Expr> items;
    for (const auto& row : kTanhSegments) items.push_back(lit(row[k], 32));
    Sig seg = m.node(name + "_seg", cat({(x.bits(14, 7) - kTanhLowExp).trunc(3), x.bits(6, 5)}));
    return m.node(name, select(items, seg));
  };

  // Stage 0, first pass: the operands of the row taken. A bf16 read as binary32 is its bits over
  // 16 zeros: the multiplier and the adder read subnormals as zero and any NaN as NaN, as
  // bf16_to_fp32 would.
  Expr zeros16 = lit(0, 16);
  Sig a32 = m.node("a32", cat({a_in, zeros16}));
  Sig b32 = m.node("b32", cat({b_in, zeros16}));
  Sig abs_a = m.node("abs_a", cat({lit(0, 1), a_in.bits(14, 0)}));
  Expr fp32_one = m.constant("FP32_ONE", 0x3F800000, 32);
  Sig m_a1 = m.node("m_a1", select({a_in, abs_a, m.constant("BF16_ONE", 0x3F80, 16)}, m_a_sel));
  Sig m_x1 = m.node("m_x1", select({s, b32, a32, cat({~a_in.bit(15), a_in.bits(14, 0), zeros16}),
                                    coefficient("tanh_c2", 2, a_in)},
                                   m_x_sel));
  Sig z1 = m.node("z1", select({b32, cat({~b_in.bit(15), b_in.bits(14, 0), zeros16}), fp32_one,
                                coefficient("tanh_c1", 1, a_in)},
                               z_sel));

  // Results that need no arithmetic: relu, its backward mask, and tanh's ends (|a| < 2^-4: a;
  // |a| >= 4: +-1).
  Expr qnan = m.constant("BF16_QNAN", 0x7FC0, 16);
  Sig a_exp = m.node("a_exp", a_in.bits(14, 7));
  Sig a_nan = m.node("a_nan", a_exp.and_reduce() & (a_in.bits(6, 0) != 0));
  Sig a_positive = m.node("a_positive", (a_exp != 0) & !a_in.bit(15));  // +Inf counts; NaN is taken first
  Sig b_exp = m.node("b_exp", b_in.bits(14, 7));
  Sig b_read = m.node("b_read", mux(b_exp.and_reduce() & (b_in.bits(6, 0) != 0), qnan,
                                    mux(b_exp == 0, cat({b_in.bit(15), lit(0, 15)}), b_in)));
  Sig tanh_small = m.node("tanh_small", a_exp < kTanhLowExp);
  Sig tanh_big = m.node("tanh_big", a_exp >= kTanhHighExp);
  Sig tanh_end = m.node("tanh_end", mux(tanh_small, mux(a_exp == 0, cat({a_in.bit(15), lit(0, 15)}), a_in),
                                        cat({a_in.bit(15), lit(0x3F80, 15)})));
  Sig special1 = m.node("special1", mux(a_nan, qnan, mux(relu, mux(a_positive, a_in, lit(0, 16)),
                                                          mux(relu_bwd, mux(a_positive, b_read, lit(0, 16)), tanh_end))));

  // Stage 0, second pass: the carried operand times the first pass's result, plus tanh's c0.
  s0_m_a <<= mux(pass2, c2r.p2, m_a1);
  s0_m_x <<= mux(pass2, s2_r, m_x1);
  s0_z <<= mux(pass2, coefficient("tanh_c0", 0, c2r.p2), z1);
  m.when(pass2, [&] { pass_on(c0r, c2r); }).otherwise([&] {
    c0r.p2 <<= mux(p2_from_b, b_in, abs_a);
    c0r.a_sign <<= a_in.bit(15);
    c0r.special <<= special1;
    c0r.use_special <<= relu | relu_bwd | (tanh & (a_nan | tanh_small | tanh_big));
  });

  // Stage 1: the multiplier.
  InstanceRef mul = m.instance(Fp32MulBf16({}), "mul");
  mul.io("a").sig() <<= s0_m_a;
  mul.io("x").sig() <<= s0_m_x;
  s1_product <<= mul.io("product").sig();
  s1_z <<= s0_z;
  pass_on(c1r, c0r);

  // Stage 2: the adder, shared by the row operations, sumsq's accumulation and (lane 0) the
  // reduce's sum of the accumulators.
  Sig reducing = m.node("lane0_reducing", shift & reduce_add);
  InstanceRef add = m.instance(Fp32Add({0, 0, Fp32AddArch::two_path, PrefixKind::sklansky}), "add");
  add.io("a").sig() <<= mux(reducing, acc_q, s1_product);
  add.io("b").sig() <<= mux(reducing, acc_next, mux(s1_sumsq, acc_q, s1_z));
  Sig added = m.node("added", add.io("sum").sig());
  s2_r <<= mux(s1_add_en, added, s1_product);
  pass_on(c2r, c1r);
  acc_q <<= mux(last, lit(0, 32), mux(shift & !reduce_add, acc_next, added));
  acc <<= acc_q;
  sum <<= added;

  // Stage 3: round to bf16; tanh takes a's sign (its polynomial is of |a|).
  InstanceRef round = m.instance(Fp32ToBf16({}), "round");
  round.io("in").sig() <<= s2_r;
  Sig rounded = m.node("rounded", round.io("out").sig());
  out_q <<= mux(c2r.use_special, c2r.special, cat({rounded.bit(15) | (sign_from_a & c2r.a_sign), rounded.bits(14, 0)}));
  out <<= out_q;
}

}  // namespace fetta::hw
