// VectorUnit: the lanes and the sequencer that decodes each operation once per stage
// (hw/vector/vector_unit.hpp, docs/vector.md).
#include "hw/vector/vector_unit.hpp"

#include <fmt/core.h>

#include <bit>
#include <vector>

#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

VectorUnitParams checked(VectorUnitParams p) {
  mem_check::pow2_in("VectorUnit", "lanes", p.lanes, 2, 1024);
  mem_check::in_range("VectorUnit", "tag_bits", p.tag_bits, 1, 32);
  return p;
}

}  // namespace

VectorUnit::VectorUnit(VectorUnitParams params) : Generator(checked(params)) {}

std::string VectorUnit::module_name() const { return fmt::format("vector_unit_n{}_t{}", p.lanes, p.tag_bits); }

ParamList VectorUnit::params() const {
  return {{"lanes", std::to_string(p.lanes)}, {"tag_bits", std::to_string(p.tag_bits)}};
}

void VectorUnit::build(Module& m) const {
  const int N = p.lanes, CB = std::bit_width(static_cast<unsigned>(N - 1));
  m.add_comment(fmt::format("{} vector lanes: bf16 rows in and out, binary32 inside (docs/vector.md). A row is", N));
  m.add_comment(fmt::format("taken with valid & ready; its result leaves {} cycles later ({} for tanh, tanh_bwd) with its tag.",
                            kVectorLatency, kVectorTwoPassLatency));
  Sig valid = m.input("valid", UInt(1));
  Sig op = m.input("op", UInt(kVectorOpBits));
  Data a = m.input("a", Vec(UInt(16), N));
  Data b = m.input("b", Vec(UInt(16), N));
  Sig s = m.input("s", UInt(32));
  Sig tag = m.input("tag", UInt(p.tag_bits));
  Sig ready = m.output("ready", UInt(1));
  Sig out_valid = m.output("out_valid", UInt(1));
  Data out = m.output("out", Vec(UInt(16), N));
  Sig out_tag = m.output("out_tag", UInt(p.tag_bits));
  Sig sum_valid = m.output("sum_valid", UInt(1));
  Sig sum = m.output("sum", UInt(32));
  Sig busy = m.output("busy", UInt(1));

  auto opc = [&](VectorOpcode o, const char* name) {
    return m.constant(name, static_cast<uint64_t>(o), kVectorOpBits);
  };
  const Expr ADD = opc(VectorOpcode::add, "OP_ADD"), SUB = opc(VectorOpcode::sub, "OP_SUB"),
             MUL = opc(VectorOpcode::mul, "OP_MUL"), SCALE = opc(VectorOpcode::scale, "OP_SCALE"),
             AXPY = opc(VectorOpcode::axpy, "OP_AXPY"), RELU = opc(VectorOpcode::relu, "OP_RELU"),
             RELU_BWD = opc(VectorOpcode::relu_bwd, "OP_RELU_BWD"), TANH = opc(VectorOpcode::tanh, "OP_TANH"),
             TANH_BWD = opc(VectorOpcode::tanh_bwd, "OP_TANH_BWD"), SUMSQ = opc(VectorOpcode::sumsq, "OP_SUMSQ"),
             REDUCE = opc(VectorOpcode::reduce, "OP_REDUCE");
  auto two_pass = [&](const Expr& o) { return (o == TANH) | (o == TANH_BWD); };
  auto row_op = [&](const Expr& o) { return o <= TANH_BWD; };

  // The entry in each stage: valid and first-pass flags reset; operation and tag load with it.
  struct Stage {
    Sig valid, first, op, tag;
  };
  auto stage = [&](int k, const Expr& load) {
    const GatedClock g = m.clock_gate(fmt::format("s{}", k), load);
    return Stage{m.reg(fmt::format("s{}_valid", k), UInt(1), reset_to(0)), m.reg(fmt::format("s{}_first", k), UInt(1), reset_to(0)),
                 m.reg(fmt::format("s{}_op", k), UInt(kVectorOpBits), clocked_by(g)),
                 m.reg(fmt::format("s{}_tag", k), UInt(p.tag_bits), clocked_by(g))};
  };
  Sig out_valid_q = m.reg("out_valid_q", UInt(1), reset_to(0));
  Sig reducing = m.reg("reducing", UInt(1), reset_to(0));
  Sig steps = m.reg("steps", UInt(CB), reset_to(0));  // reduce steps left
  Sig sum_q = m.reg("sum_q", UInt(32), reset_to(0));
  Sig sum_valid_q = m.reg("sum_valid_q", UInt(1), reset_to(0));

  // Stage 0 takes a row, or the entry in stage 2 back for its second pass.
  Sig v0_next = m.wire("st0_valid", UInt(1));
  const Stage s0 = stage(0, v0_next);
  const Stage s1 = stage(1, s0.valid);
  const Stage s2 = stage(2, s1.valid);
  Sig pass2 = m.node("pass2", s2.valid & s2.first);
  Sig in_flight = m.node("in_flight", s0.valid | s1.valid | s2.valid);
  ready <<= !(pass2 | reducing | ((op == REDUCE) & in_flight));
  Sig take = m.node("take", valid & ready);
  v0_next <<= pass2 | (take & (op <= SUMSQ));
  Sig st0_op = m.node("st0_op", mux(pass2, s2.op, op));
  s0.valid <<= v0_next;
  s0.op <<= st0_op;
  s0.tag <<= mux(pass2, s2.tag, tag);
  s0.first <<= v0_next & !pass2 & two_pass(st0_op);
  for (const auto& [to, from] : {std::pair{s1, s0}, std::pair{s2, s1}}) {
    to.valid <<= from.valid;
    to.op <<= from.op;
    to.tag <<= from.tag;
    to.first <<= from.valid & from.first;
  }
  Sig row_done = m.node("row_done", s2.valid & !s2.first & row_op(s2.op));
  out_valid_q <<= row_done;
  out_valid <<= out_valid_q;
  Sig out_tag_q = m.reg("out_tag_q", UInt(p.tag_bits), clocked_by(m.clock_gate("out", row_done)));
  out_tag_q <<= s2.tag;
  out_tag <<= out_tag_q;

  // Stage 0's first-pass selects, from the operation taken.
  auto code = [](auto e) { return static_cast<uint64_t>(e); };
  Sig is_tanh = m.node("is_tanh", op == TANH);
  Sig is_tanh_bwd = m.node("is_tanh_bwd", op == TANH_BWD);
  Sig add_or_sub = m.node("add_or_sub", (op == ADD) | (op == SUB));
  Sig m_a_sel = m.node("m_a_sel", mux(is_tanh, lit(code(VectorMulBf16::abs_a), 2),
                                      mux(add_or_sub, lit(code(VectorMulBf16::one), 2), lit(code(VectorMulBf16::a), 2))));
  Sig m_x_sel = m.node(
      "m_x_sel",
      mux(is_tanh, lit(code(VectorMulOperand::c2), 3),
          mux(is_tanh_bwd, lit(code(VectorMulOperand::neg_a), 3),
              mux(add_or_sub | (op == SUMSQ), lit(code(VectorMulOperand::a), 3),
                  mux(op == MUL, lit(code(VectorMulOperand::b), 3), lit(code(VectorMulOperand::s), 3))))));
  Sig z_sel = m.node("z_sel", mux(is_tanh, lit(code(VectorAddend::c1), 2),
                                  mux(is_tanh_bwd, lit(code(VectorAddend::one), 2),
                                      mux(op == SUB, lit(code(VectorAddend::neg_b), 2), lit(code(VectorAddend::b), 2)))));
  // Stage 2's controls, decoded for the entry entering stage 0 (the lanes carry them): add for
  // add, sub, axpy, both passes of tanh and tanh_bwd's first; accumulate for sumsq.
  Sig add_en = m.node("add_en", (st0_op == ADD) | (st0_op == SUB) | (st0_op == AXPY) | (st0_op == TANH) |
                                    ((st0_op == TANH_BWD) & !pass2));
  Sig sumsq = m.node("sumsq", (op == SUMSQ) & !pass2);
  Sig last = m.node("last", reducing & (steps == 1));
  Sig reducing_next = m.node("reducing_next", (take & (op == REDUCE)) | (reducing & !last));

  std::vector<InstanceRef> lanes;
  const VectorLane lane_gen({});
  for (int i = 0; i < N; ++i) lanes.push_back(m.instance(lane_gen, fmt::format("lane_{}", i)));
  for (int i = 0; i < N; ++i) {
    InstanceRef& l = lanes[static_cast<size_t>(i)];
    l.io("a").sig() <<= a[i].sig();
    l.io("b").sig() <<= b[i].sig();
    l.io("s").sig() <<= s;
    l.io("pass2").sig() <<= pass2;
    l.io("m_a_sel").sig() <<= m_a_sel;
    l.io("m_x_sel").sig() <<= m_x_sel;
    l.io("z_sel").sig() <<= z_sel;
    l.io("p2_from_b").sig() <<= is_tanh_bwd;
    l.io("relu").sig() <<= op == RELU;
    l.io("relu_bwd").sig() <<= op == RELU_BWD;
    l.io("tanh").sig() <<= is_tanh;
    l.io("load0").sig() <<= v0_next;
    l.io("load1").sig() <<= s0.valid;
    l.io("add_en").sig() <<= add_en;
    l.io("sumsq").sig() <<= sumsq;
    l.io("load2").sig() <<= s1.valid;
    l.io("reduce_next").sig() <<= reducing_next;
    l.io("reduce_add").sig() <<= lit(i == 0 ? 1 : 0, 1);
    l.io("last").sig() <<= last;
    l.io("load3").sig() <<= row_done;
    l.io("sign_from_a").sig() <<= s2.op == TANH;
    l.io("acc_next").sig() <<= i + 1 < N ? Expr(lanes[static_cast<size_t>(i) + 1].io("acc").sig()) : lit(0, 32);
    out[i].sig() <<= l.io("out").sig();
  }

  // reduce: N - 1 steps, lane 0 adding its neighbour while the accumulators move down a lane.
  reducing <<= reducing_next;
  m.when(take & (op == REDUCE), [&] { steps <<= N - 1; }).elsewhen(reducing, [&] { steps <<= steps - 1; });
  m.when(last, [&] { sum_q <<= lanes[0].io("sum").sig(); });
  sum_valid_q <<= last;
  sum_valid <<= sum_valid_q;
  sum <<= sum_q;
  busy <<= in_flight | reducing;
}

VectorUnitParams vector_unit_params(const arch::ArchConfig& cfg) {
  return {.lanes = cfg.memory.banks * cfg.memory.elems_per_bank,
          .tag_bits = std::countr_zero(static_cast<unsigned>(cfg.memory.unified_depth))};
}

std::string elaborate_vector_unit(Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(VectorUnit(vector_unit_params(cfg)))->name();
}

}  // namespace fetta::hw
