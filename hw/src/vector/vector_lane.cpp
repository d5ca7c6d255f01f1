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

// Builds one lane, a stage at a time; the members are the lane's ports and registers.
class LaneBuilder {
 public:
  explicit LaneBuilder(Module& m) : m_(m) {}

  void build() {
    ports();
    registers();
    select_stage();
    multiply_stage();
    add_stage();
    round_stage();
  }

 private:
  // What travels with an entry through the stages: the second pass's bf16 operand, a's sign, a
  // result that needs no arithmetic.
  struct Carried {
    Sig p2, a_sign, special, use_special;
  };

  void ports() {
    a_in_ = m_.input("a", UInt(16));
    b_in_ = m_.input("b", UInt(16));
    s_ = m_.input("s", UInt(32));
    pass2_ = m_.input("pass2", UInt(1));          // stage 0 takes stage 2's entry back
    m_a_sel_ = m_.input("m_a_sel", UInt(2));      // VectorMulBf16
    m_x_sel_ = m_.input("m_x_sel", UInt(3));      // VectorMulOperand
    z_sel_ = m_.input("z_sel", UInt(2));          // VectorAddend
    p2_from_b_ = m_.input("p2_from_b", UInt(1));  // the second pass multiplies b (tanh_bwd), else |a|
    relu_ = m_.input("relu", UInt(1));
    relu_bwd_ = m_.input("relu_bwd", UInt(1));
    tanh_ = m_.input("tanh", UInt(1));
    load0_ = m_.input("load0", UInt(1));
    // Stage 2's controls, decoded as an entry enters stage 0 and carried with it, so that the
    // adder stage starts from the lane's own flip-flops.
    add_en0_ = m_.input("add_en", UInt(1));
    sumsq0_ = m_.input("sumsq", UInt(1));
    load1_ = m_.input("load1", UInt(1));
    load2_ = m_.input("load2", UInt(1));
    // A reduce runs from the cycle after reduce_next rises to the one after it falls: the
    // accumulators move one lane down each cycle. Each lane keeps its own copy of the unit's
    // state, so that lane 0's adder selects from a local flip-flop.
    reduce_next_ = m_.input("reduce_next", UInt(1));
    reduce_add_ = m_.input("reduce_add", UInt(1));  // lane 0: it adds its neighbour instead
    last_ = m_.input("last", UInt(1));              // the reduce's last step: accumulators to +0
    load3_ = m_.input("load3", UInt(1));
    sign_from_a_ = m_.input("sign_from_a", UInt(1));
    acc_next_ = m_.input("acc_next", UInt(32));
    acc_ = m_.output("acc", UInt(32));
    sum_ = m_.output("sum", UInt(32));
    out_ = m_.output("out", UInt(16));
  }

  Carried carried(const std::string& stage, const GatedClock& g) {
    return Carried{m_.reg(stage + "_p2", UInt(16), clocked_by(g)), m_.reg(stage + "_a_sign", UInt(1), clocked_by(g)),
                   m_.reg(stage + "_special", UInt(16), clocked_by(g)),
                   m_.reg(stage + "_use_special", UInt(1), clocked_by(g))};
  }
  static void pass_on(const Carried& to, const Carried& from) {
    to.p2 <<= from.p2;
    to.a_sign <<= from.a_sign;
    to.special <<= from.special;
    to.use_special <<= from.use_special;
  }

  void registers() {
    const GatedClock stage0 = m_.clock_gate("stage0", load0_);
    const GatedClock stage1 = m_.clock_gate("stage1", load1_);
    const GatedClock stage2 = m_.clock_gate("stage2", load2_);
    c0_ = carried("s0", stage0);
    c1_ = carried("s1", stage1);
    c2_ = carried("s2", stage2);
    s0_m_a_ = m_.reg("s0_m_a", UInt(16), clocked_by(stage0));
    s0_m_x_ = m_.reg("s0_m_x", UInt(32), clocked_by(stage0));
    s0_z_ = m_.reg("s0_z", UInt(32), clocked_by(stage0));
    s1_product_ = m_.reg("s1_product", UInt(32), clocked_by(stage1));
    s1_z_ = m_.reg("s1_z", UInt(32), clocked_by(stage1));
    s2_r_ = m_.reg("s2_r", UInt(32), clocked_by(stage2));
    out_q_ = m_.reg("out_q", UInt(16), clocked_by(m_.clock_gate("stage3", load3_)));
    Sig s0_add_en = m_.reg("s0_add_en", UInt(1), clocked_by(stage0));
    s1_add_en_ = m_.reg("s1_add_en", UInt(1), clocked_by(stage1));
    shift_ = m_.reg("reducing", UInt(1), reset_to(0));
    shift_ <<= reduce_next_;
    // High exactly while a sumsq entry is in the stage: with a reduce step, it clocks the accumulator.
    Sig s0_sumsq = m_.reg("s0_sumsq", UInt(1), reset_to(0));
    s1_sumsq_ = m_.reg("s1_sumsq", UInt(1), reset_to(0));
    acc_q_ = m_.reg("acc_q", UInt(32), reset_to(0).clocked_by(m_.clock_gate("acc", s1_sumsq_ | shift_)));
    s0_add_en <<= add_en0_;
    s1_add_en_ <<= s0_add_en;
    s0_sumsq <<= load0_ & sumsq0_;
    s1_sumsq_ <<= s0_sumsq;
  }

  // tanh's coefficients by segment: binade (2^-4 .. 2^1) and the top two mantissa bits of |x|.
  Sig coefficient(const std::string& name, size_t k, const Expr& x) {
    std::vector<Expr> items;
    for (const auto& row : kTanhSegments) items.push_back(lit(row[k], 32));
    Sig seg = m_.node(name + "_seg", cat({(x.bits(14, 7) - kTanhLowExp).trunc(3), x.bits(6, 5)}));
    return m_.node(name, select(items, seg));
  }

  void select_stage() {
    // Stage 0, first pass: the operands of the row taken. A bf16 read as binary32 is its bits over
    // 16 zeros: the multiplier and the adder read subnormals as zero and any NaN as NaN, as
    // bf16_to_fp32 would.
    Expr zeros16 = lit(0, 16);
    Sig a32 = m_.node("a32", cat({a_in_, zeros16}));
    Sig b32 = m_.node("b32", cat({b_in_, zeros16}));
    Sig abs_a = m_.node("abs_a", cat({lit(0, 1), a_in_.bits(14, 0)}));
    Expr fp32_one = m_.constant("FP32_ONE", 0x3F800000, 32);
    Sig m_a1 = m_.node("m_a1", select({a_in_, abs_a, m_.constant("BF16_ONE", 0x3F80, 16)}, m_a_sel_));
    Sig m_x1 = m_.node("m_x1", select({s_, b32, a32, cat({~a_in_.bit(15), a_in_.bits(14, 0), zeros16}),
                                      coefficient("tanh_c2", 2, a_in_)},
                                     m_x_sel_));
    Sig z1 = m_.node("z1", select({b32, cat({~b_in_.bit(15), b_in_.bits(14, 0), zeros16}), fp32_one,
                                  coefficient("tanh_c1", 1, a_in_)},
                                 z_sel_));

    // Results that need no arithmetic: relu, its backward mask, and tanh's ends (|a| < 2^-4: a;
    // |a| >= 4: +-1).
    Expr qnan = m_.constant("BF16_QNAN", 0x7FC0, 16);
    Sig a_exp = m_.node("a_exp", a_in_.bits(14, 7));
    Sig a_nan = m_.node("a_nan", a_exp.and_reduce() & (a_in_.bits(6, 0) != 0));
    Sig a_positive = m_.node("a_positive", (a_exp != 0) & !a_in_.bit(15));  // +Inf counts; NaN is taken first
    Sig b_exp = m_.node("b_exp", b_in_.bits(14, 7));
    Sig b_read = m_.node("b_read", mux(b_exp.and_reduce() & (b_in_.bits(6, 0) != 0), qnan,
                                      mux(b_exp == 0, cat({b_in_.bit(15), lit(0, 15)}), b_in_)));
    Sig tanh_small = m_.node("tanh_small", a_exp < kTanhLowExp);
    Sig tanh_big = m_.node("tanh_big", a_exp >= kTanhHighExp);
    Sig tanh_end = m_.node("tanh_end", mux(tanh_small, mux(a_exp == 0, cat({a_in_.bit(15), lit(0, 15)}), a_in_),
                                          cat({a_in_.bit(15), lit(0x3F80, 15)})));
    Sig special1 = m_.node("special1", mux(a_nan, qnan, mux(relu_, mux(a_positive, a_in_, lit(0, 16)),
                                                            mux(relu_bwd_, mux(a_positive, b_read, lit(0, 16)), tanh_end))));

    // Stage 0, second pass: the carried operand times the first pass's result, plus tanh's c0.
    s0_m_a_ <<= mux(pass2_, c2_.p2, m_a1);
    s0_m_x_ <<= mux(pass2_, s2_r_, m_x1);
    s0_z_ <<= mux(pass2_, coefficient("tanh_c0", 0, c2_.p2), z1);
    m_.when(pass2_, [&] { pass_on(c0_, c2_); }).otherwise([&] {
      c0_.p2 <<= mux(p2_from_b_, b_in_, abs_a);
      c0_.a_sign <<= a_in_.bit(15);
      c0_.special <<= special1;
      c0_.use_special <<= relu_ | relu_bwd_ | (tanh_ & (a_nan | tanh_small | tanh_big));
    });
  }

  void multiply_stage() {
    // Stage 1: the multiplier.
    InstanceRef mul = m_.instance(Fp32MulBf16({}), "mul");
    mul.io("a").sig() <<= s0_m_a_;
    mul.io("x").sig() <<= s0_m_x_;
    s1_product_ <<= mul.io("product").sig();
    s1_z_ <<= s0_z_;
    pass_on(c1_, c0_);
  }

  void add_stage() {
    // Stage 2: the adder, shared by the row operations, sumsq's accumulation and (lane 0) the
    // reduce's sum of the accumulators.
    Sig reducing = m_.node("lane0_reducing", shift_ & reduce_add_);
    InstanceRef add = m_.instance(Fp32Add({0, 0, Fp32AddArch::two_path, PrefixKind::sklansky}), "add");
    add.io("a").sig() <<= mux(reducing, acc_q_, s1_product_);
    add.io("b").sig() <<= mux(reducing, acc_next_, mux(s1_sumsq_, acc_q_, s1_z_));
    Sig added = m_.node("added", add.io("sum").sig());
    s2_r_ <<= mux(s1_add_en_, added, s1_product_);
    pass_on(c2_, c1_);
    acc_q_ <<= mux(last_, lit(0, 32), mux(shift_ & !reduce_add_, acc_next_, added));
    acc_ <<= acc_q_;
    sum_ <<= added;
  }

  void round_stage() {
    // Stage 3: round to bf16; tanh takes a's sign (its polynomial is of |a|).
    InstanceRef round = m_.instance(Fp32ToBf16({}), "round");
    round.io("in").sig() <<= s2_r_;
    Sig rounded = m_.node("rounded", round.io("out").sig());
    out_q_ <<= mux(c2_.use_special, c2_.special, cat({rounded.bit(15) | (sign_from_a_ & c2_.a_sign), rounded.bits(14, 0)}));
    out_ <<= out_q_;
  }

  Module& m_;
  Sig a_in_, b_in_, s_, pass2_, m_a_sel_, m_x_sel_, z_sel_, p2_from_b_, relu_, relu_bwd_, tanh_, load0_, add_en0_, sumsq0_;
  Sig load1_, load2_, reduce_next_, reduce_add_, last_, load3_, sign_from_a_, acc_next_, acc_, sum_, out_;
  Carried c0_, c1_, c2_;
  Sig s0_m_a_, s0_m_x_, s0_z_, s1_product_, s1_z_, s2_r_, out_q_, s1_add_en_, shift_, s1_sumsq_, acc_q_;
};

}  // namespace

void VectorLane::build(Module& m) const {
  m.add_comment("One vector lane: 0. operand selects, 1. the binary32 x bf16 multiplier, 2. the adder or the");
  m.add_comment("sum-of-squares accumulator, 3. rounding to bf16. A two-pass operation (tanh, tanh_bwd) comes");
  m.add_comment("back to stage 0 from stage 2's register (pass2) with its partial result (docs/vector.md).");
  LaneBuilder(m).build();
}

}  // namespace fetta::hw
