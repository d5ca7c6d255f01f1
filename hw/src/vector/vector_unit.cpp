// VectorUnit: the lanes and the sequencer that decodes each operation once per stage
// (hw/vector/vector_unit.hpp, docs/vector.md).
#include "hw/vector/vector_unit.hpp"

#include <fmt/core.h>

#include <bit>
#include <stdexcept>
#include <vector>

#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

VectorUnitParams checked(VectorUnitParams p) {
  mem_check::pow2_in("VectorUnit", "elems", p.elems, 2, 1024);
  mem_check::pow2_in("VectorUnit", "lanes", p.lanes, 2, 1024);
  if (p.lanes > p.elems)
    throw std::invalid_argument(
        fmt::format("VectorUnit: lanes = {} is more than the {} elements of a row; allowed: a power of two, 2 .. {}", p.lanes,
                    p.elems, p.elems));
  mem_check::in_range("VectorUnit", "tag_bits", p.tag_bits, 1, 32);
  return p;
}

int beats(const VectorUnitParams& p) { return p.elems / p.lanes; }

}  // namespace

VectorUnit::VectorUnit(VectorUnitParams params) : IdentifiedGenerator(checked(params)) {}

Identity VectorUnit::identity() const {
  return Identity("vector_unit")
      .param("elems", p.elems, fmt::format("_n{}", p.elems))
      .param("lanes", p.lanes, p.lanes == p.elems ? "" : fmt::format("_l{}", p.lanes))
      .param("tag_bits", p.tag_bits, fmt::format("_t{}", p.tag_bits));
}

namespace {

// Builds the unit: the ports, the sequencer (which entry each stage holds, ready), the selects
// decoded once for every lane, the lanes, and the reduce.
class UnitBuilder {
 public:
  UnitBuilder(Module& m, const VectorUnitParams& p) : m_(m), p_(p) {}

  void build() {
    ports();
    sequencer();
    decode();
    lanes();
    reduce();
  }

 private:
  // The entry in a stage, one beat of a row: valid and first-pass flags reset; operation, tag and
  // beat (when a row has several) load with it.
  struct Stage {
    Sig valid, first, op, tag, beat;
  };

  Expr opcode(VectorOpcode o, const char* name) { return m_.constant(name, static_cast<uint64_t>(o), kVectorOpBits); }
  Expr two_pass(const Expr& o) const { return (o == op_tanh_) | (o == op_tanh_bwd_); }
  Expr row_op(const Expr& o) const { return o <= op_tanh_bwd_; }

  void ports() {
    valid_ = m_.input("valid", UInt(1));
    op_ = m_.input("op", UInt(kVectorOpBits));
    a_ = m_.input("a", Vec(UInt(16), p_.elems));
    b_ = m_.input("b", Vec(UInt(16), p_.elems));
    s_ = m_.input("s", UInt(32));
    tag_ = m_.input("tag", UInt(p_.tag_bits));
    ready_ = m_.output("ready", UInt(1));
    out_valid_ = m_.output("out_valid", UInt(1));
    out_ = m_.output("out", Vec(UInt(16), p_.lanes));
    if (multi_beat()) out_beat_ = m_.output("out_beat", UInt(beat_bits()));
    out_tag_ = m_.output("out_tag", UInt(p_.tag_bits));
    sum_valid_ = m_.output("sum_valid", UInt(1));
    sum_ = m_.output("sum", UInt(32));
    busy_ = m_.output("busy", UInt(1));
    op_add_ = opcode(VectorOpcode::add, "OP_ADD");
    op_sub_ = opcode(VectorOpcode::sub, "OP_SUB");
    op_mul_ = opcode(VectorOpcode::mul, "OP_MUL");
    op_scale_ = opcode(VectorOpcode::scale, "OP_SCALE");
    op_axpy_ = opcode(VectorOpcode::axpy, "OP_AXPY");
    op_relu_ = opcode(VectorOpcode::relu, "OP_RELU");
    op_relu_bwd_ = opcode(VectorOpcode::relu_bwd, "OP_RELU_BWD");
    op_tanh_ = opcode(VectorOpcode::tanh, "OP_TANH");
    op_tanh_bwd_ = opcode(VectorOpcode::tanh_bwd, "OP_TANH_BWD");
    op_sumsq_ = opcode(VectorOpcode::sumsq, "OP_SUMSQ");
    op_reduce_ = opcode(VectorOpcode::reduce, "OP_REDUCE");
  }

  bool multi_beat() const { return p_.lanes < p_.elems; }
  int beat_bits() const { return std::countr_zero(static_cast<unsigned>(beats(p_))); }

  Stage stage(int k, const Expr& load) {
    const GatedClock g = m_.clock_gate(fmt::format("s{}", k), load);
    return Stage{m_.reg(fmt::format("s{}_valid", k), UInt(1), reset_to(0)),
                 m_.reg(fmt::format("s{}_first", k), UInt(1), reset_to(0)),
                 m_.reg(fmt::format("s{}_op", k), UInt(kVectorOpBits), clocked_by(g)),
                 m_.reg(fmt::format("s{}_tag", k), UInt(p_.tag_bits), clocked_by(g)),
                 multi_beat() ? m_.reg(fmt::format("s{}_beat", k), UInt(beat_bits()), clocked_by(g)) : Sig{}};
  }

  // Stage 0 takes a row's next beat, or the entry in stage 2 back for its second pass.
  void sequencer() {
    out_valid_q_ = m_.reg("out_valid_q", UInt(1), reset_to(0));
    reducing_ = m_.reg("reducing", UInt(1), reset_to(0));
    steps_ = m_.reg("steps", UInt(std::bit_width(static_cast<unsigned>(p_.lanes - 1))), reset_to(0));  // left
    sum_q_ = m_.reg("sum_q", UInt(32), reset_to(0));
    sum_valid_q_ = m_.reg("sum_valid_q", UInt(1), reset_to(0));
    v0_next_ = m_.wire("st0_valid", UInt(1));
    s0_ = stage(0, v0_next_);
    s1_ = stage(1, s0_.valid);
    s2_ = stage(2, s1_.valid);
    pass2_ = m_.node("pass2", s2_.valid & s2_.first);
    in_flight_ = m_.node("in_flight", s0_.valid | s1_.valid | s2_.valid);
    Sig accept = m_.node("accept", !(pass2_ | reducing_ | ((op_ == op_reduce_) & in_flight_)));
    beat_go_ = m_.node("beat_go", valid_ & accept & (op_ <= op_sumsq_));
    if (multi_beat()) {
      // The beat the row's next entry is; reduce and the idle opcodes are taken whole.
      beat_in_ = m_.reg("beat_in", UInt(beat_bits()), reset_to(0));
      m_.when(beat_go_, [&] { beat_in_ <<= beat_in_ + 1; });  // wraps after the last beat
      ready_ <<= accept & ((op_ > op_sumsq_) | (beat_in_ == beats(p_) - 1));
    } else {
      ready_ <<= accept;
    }
    take_ = m_.node("take", valid_ & ready_);
    v0_next_ <<= pass2_ | beat_go_;
    st0_op_ = m_.node("st0_op", mux(pass2_, s2_.op, op_));
    s0_.valid <<= v0_next_;
    s0_.op <<= st0_op_;
    s0_.tag <<= mux(pass2_, s2_.tag, tag_);
    if (multi_beat()) s0_.beat <<= mux(pass2_, s2_.beat, beat_in_);
    s0_.first <<= v0_next_ & !pass2_ & two_pass(st0_op_);
    for (const auto& [to, from] : {std::pair{s1_, s0_}, std::pair{s2_, s1_}}) {
      to.valid <<= from.valid;
      to.op <<= from.op;
      to.tag <<= from.tag;
      if (multi_beat()) to.beat <<= from.beat;
      to.first <<= from.valid & from.first;
    }
    row_done_ = m_.node("row_done", s2_.valid & !s2_.first & row_op(s2_.op));
    out_valid_q_ <<= row_done_;
    out_valid_ <<= out_valid_q_;
    const GatedClock out_clock = m_.clock_gate("out", row_done_);
    Sig out_tag_q = m_.reg("out_tag_q", UInt(p_.tag_bits), clocked_by(out_clock));
    out_tag_q <<= s2_.tag;
    out_tag_ <<= out_tag_q;
    if (multi_beat()) {
      Sig out_beat_q = m_.reg("out_beat_q", UInt(beat_bits()), clocked_by(out_clock));
      out_beat_q <<= s2_.beat;
      out_beat_ <<= out_beat_q;
    }
  }

  // Stage 0's first-pass selects from the operation taken, and stage 2's controls for the entry
  // entering stage 0 (the lanes carry them): add for add, sub, axpy, both passes of tanh and
  // tanh_bwd's first; accumulate for sumsq.
  void decode() {
    auto code = [](auto e) { return static_cast<uint64_t>(e); };
    is_tanh_ = m_.node("is_tanh", op_ == op_tanh_);
    is_tanh_bwd_ = m_.node("is_tanh_bwd", op_ == op_tanh_bwd_);
    Sig add_or_sub = m_.node("add_or_sub", (op_ == op_add_) | (op_ == op_sub_));
    m_a_sel_ = m_.node("m_a_sel", mux(is_tanh_, lit(code(VectorMulBf16::abs_a), 2),
                                      mux(add_or_sub, lit(code(VectorMulBf16::one), 2), lit(code(VectorMulBf16::a), 2))));
    m_x_sel_ = m_.node(
        "m_x_sel",
        mux(is_tanh_, lit(code(VectorMulOperand::c2), 3),
            mux(is_tanh_bwd_, lit(code(VectorMulOperand::neg_a), 3),
                mux(add_or_sub | (op_ == op_sumsq_), lit(code(VectorMulOperand::a), 3),
                    mux(op_ == op_mul_, lit(code(VectorMulOperand::b), 3), lit(code(VectorMulOperand::s), 3))))));
    z_sel_ = m_.node("z_sel", mux(is_tanh_, lit(code(VectorAddend::c1), 2),
                                  mux(is_tanh_bwd_, lit(code(VectorAddend::one), 2),
                                      mux(op_ == op_sub_, lit(code(VectorAddend::neg_b), 2), lit(code(VectorAddend::b), 2)))));
    add_en_ = m_.node("add_en", (st0_op_ == op_add_) | (st0_op_ == op_sub_) | (st0_op_ == op_axpy_) | (st0_op_ == op_tanh_) |
                                    ((st0_op_ == op_tanh_bwd_) & !pass2_));
    sumsq_ = m_.node("sumsq", (op_ == op_sumsq_) & !pass2_);
    last_ = m_.node("last", reducing_ & (steps_ == 1));
    reducing_next_ = m_.node("reducing_next", (take_ & (op_ == op_reduce_)) | (reducing_ & !last_));
  }

  // Lane i's operand of the beat entering: element k*L + i of the row in beat k.
  Expr beat_operand(const Data& row, int i) {
    if (!multi_beat()) return row[i].sig();
    std::vector<Expr> items;
    for (int k = 0; k < beats(p_); ++k) items.push_back(row[k * p_.lanes + i].sig());
    return select(items, beat_in_);
  }

  void lanes() {
    const int N = p_.lanes;
    const VectorLane lane_gen({});
    for (int i = 0; i < N; ++i) lanes_.push_back(m_.instance(lane_gen, fmt::format("lane_{}", i)));
    for (int i = 0; i < N; ++i) {
      InstanceRef& l = lanes_[static_cast<size_t>(i)];
      l.io("a").sig() <<= beat_operand(a_, i);
      l.io("b").sig() <<= beat_operand(b_, i);
      l.io("s").sig() <<= s_;
      l.io("pass2").sig() <<= pass2_;
      l.io("m_a_sel").sig() <<= m_a_sel_;
      l.io("m_x_sel").sig() <<= m_x_sel_;
      l.io("z_sel").sig() <<= z_sel_;
      l.io("p2_from_b").sig() <<= is_tanh_bwd_;
      l.io("relu").sig() <<= op_ == op_relu_;
      l.io("relu_bwd").sig() <<= op_ == op_relu_bwd_;
      l.io("tanh").sig() <<= is_tanh_;
      l.io("load0").sig() <<= v0_next_;
      l.io("load1").sig() <<= s0_.valid;
      l.io("add_en").sig() <<= add_en_;
      l.io("sumsq").sig() <<= sumsq_;
      l.io("load2").sig() <<= s1_.valid;
      l.io("reduce_next").sig() <<= reducing_next_;
      l.io("reduce_add").sig() <<= lit(i == 0 ? 1 : 0, 1);
      l.io("last").sig() <<= last_;
      l.io("load3").sig() <<= row_done_;
      l.io("sign_from_a").sig() <<= s2_.op == op_tanh_;
      l.io("acc_next").sig() <<= i + 1 < N ? Expr(lanes_[static_cast<size_t>(i) + 1].io("acc").sig()) : lit(0, 32);
      out_[i].sig() <<= l.io("out").sig();
    }
  }

  // reduce: N - 1 steps, lane 0 adding its neighbour while the accumulators move down a lane.
  void reduce() {
    reducing_ <<= reducing_next_;
    m_.when(take_ & (op_ == op_reduce_), [&] { steps_ <<= p_.lanes - 1; }).elsewhen(reducing_, [&] { steps_ <<= steps_ - 1; });
    m_.when(last_, [&] { sum_q_ <<= lanes_[0].io("sum").sig(); });
    sum_valid_q_ <<= last_;
    sum_valid_ <<= sum_valid_q_;
    sum_ <<= sum_q_;
    busy_ <<= in_flight_ | reducing_;
  }

  Module& m_;
  const VectorUnitParams& p_;
  Sig valid_, op_, s_, tag_, ready_, out_valid_, out_beat_, out_tag_, sum_valid_, sum_, busy_;
  Data a_, b_, out_;
  Expr op_add_, op_sub_, op_mul_, op_scale_, op_axpy_, op_relu_, op_relu_bwd_, op_tanh_, op_tanh_bwd_, op_sumsq_, op_reduce_;
  Sig out_valid_q_, reducing_, steps_, sum_q_, sum_valid_q_, v0_next_, pass2_, in_flight_, take_, st0_op_, row_done_;
  Sig beat_go_, beat_in_;
  Stage s0_, s1_, s2_;
  Sig is_tanh_, is_tanh_bwd_, m_a_sel_, m_x_sel_, z_sel_, add_en_, sumsq_, last_, reducing_next_;
  std::vector<InstanceRef> lanes_;
};

}  // namespace

void VectorUnit::build(Module& m) const {
  m.add_comment(fmt::format("{} vector lanes for rows of {}: bf16 in and out, binary32 inside (docs/vector.md). A row", p.lanes,
                            p.elems));
  m.add_comment(fmt::format("enters a beat of {} elements a cycle; a beat's results leave {} cycles later ({} for tanh,",
                            p.lanes, kVectorLatency, kVectorTwoPassLatency));
  m.add_comment("tanh_bwd) with the row's tag.");
  UnitBuilder(m, p).build();
}

VectorUnitParams vector_unit_params(const arch::ArchConfig& cfg) {
  return {.elems = cfg.memory.banks * cfg.memory.elems_per_bank,
          .lanes = arch::vector_lanes(cfg),
          .tag_bits = std::countr_zero(static_cast<unsigned>(cfg.memory.unified_depth))};
}

std::string elaborate_vector_unit(Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(VectorUnit(vector_unit_params(cfg)))->name();
}

}  // namespace fetta::hw
