#include "hw/mem/result_writer.hpp"

#include <fmt/core.h>

#include <bit>

#include "hw/arith/fp_convert.hpp"
#include "hw/mem/bank_rows.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

ResultWriterParams checked(ResultWriterParams p) {
  mem_check::pow2_in("ResultWriter", "lanes", p.lanes, 2, 1024);
  mem_check::pow2_in("ResultWriter", "banks", p.banks, 1, p.lanes);
  mem_check::in_range("ResultWriter", "row_bits", p.row_bits, 1, 24);
  (void)accumulator_format(p.dtype);  // throws naming the allowed types
  return p;
}

}  // namespace

ResultWriter::ResultWriter(ResultWriterParams params) : IdentifiedGenerator(checked(params)) {}

Identity ResultWriter::identity() const {
  return Identity("result_writer")
      .param("lanes", p.lanes, fmt::format("_n{}", p.lanes))
      .param("banks", p.banks, fmt::format("_b{}", p.banks))
      .param("row_bits", p.row_bits, fmt::format("_a{}", p.row_bits))
      .param("dtype", arch::to_string(p.dtype), fmt::format("_{}", arch::to_string(p.dtype)));
}

namespace {

// ResultWriter::build in its parts: the conversion, the rotation, the per-bank rows, the diagonal
// lanes, and the write registers.
class ResultWriterBuilder {
 public:
  ResultWriterBuilder(Module& m, const ResultWriterParams& p)
      : m_(m),
        N_(p.lanes),
        L_(clog2(p.lanes)),
        W_(arch::operand_bits(p.dtype)),
        AB_(arch::accumulator_bits(p.dtype)),
        B_(p.banks),
        T_(p.lanes / p.banks),
        LB_(std::countr_zero(static_cast<unsigned>(p.banks))),
        LT_(L_ - LB_),
        HW_(p.row_bits),
        fp_(p.dtype == arch::DataType::bf16) {}

  void build() {
    m_.add_comment(fmt::format("STORE write-back: {} accumulator lanes -> {}-bit operands, rotated by dst_lane - src_lane,",
                               N_, W_));
    m_.add_comment("written where they fall in [dst_lane, dst_lane + count_m1]; a move at lane 0 pads the rest of its row.");
    m_.add_comment(fmt::format("diag: one element per bank, each bank at its own row (B = {} banks of T = {} lanes).", B_, T_));
    valid_ = m_.input("valid", UInt(1));
    row_ = m_.input("row", UInt(HW_));
    src_lane_ = m_.input("src_lane", UInt(L_));
    dst_lane_ = m_.input("dst_lane", UInt(L_));
    count_m1_ = m_.input("count_m1", UInt(L_));
    diag_ = m_.input("diag", UInt(1));
    // Bank bit h's row stride in bits [h*hw +: hw] (none with one bank).
    row_bank_strides_ = B_ > 1 ? m_.input("row_bank_strides", UInt(HW_ * LB_)) : Sig();
    pad_neg_ = fp_ ? m_.input("pad_neg", UInt(1)) : Sig();
    shift_ = fp_ ? Sig() : m_.input("shift", UInt(6));
    Data data = m_.input("data", Vec(fp_ ? UInt(32) : SInt(AB_), N_));
    wr_en_ = m_.output("wr_en", UInt(1));
    wr_row_ = m_.output("wr_row", Vec(UInt(HW_), B_));
    wr_mask_ = m_.output("wr_mask", UInt(N_));
    wr_data_ = m_.output("wr_data", Vec(UInt(W_), N_));

    const std::vector<Expr> rotated = rotate(convert(data));
    const std::vector<Expr> rows = bank_rows();
    diagonal_lanes();
    write_registers(rotated, rows);
  }

 private:
  // Conversion, lane by lane: bf16 rounding, or the integer shift saturated to W bits.
  std::vector<Expr> convert(const Data& data) {
    std::vector<Expr> conv;
    const Fp32ToBf16 to_bf16({});
    for (int i = 0; i < N_; ++i) {
      if (fp_) {
        InstanceRef c = m_.instance(to_bf16, fmt::format("to_bf16_{}", i));
        c.io("in").sig() <<= data[i].sig();
        conv.push_back(c.io("out").sig());
      } else {
        // Saturate the shifted value to W bits: in range when the bits above W-1 all equal its sign.
        Sig sh = m_.node(fmt::format("shifted_{}", i), data[i].sig() >> shift_);
        const Expr hi = sh.bits(AB_ - 1, W_ - 1).as_unsigned();
        const Expr in_range = (hi == 0) | (hi == lit((uint64_t{1} << (AB_ - W_ + 1)) - 1, AB_ - W_ + 1));
        const Expr sat = mux(sh.bit(AB_ - 1), lit(uint64_t{1} << (W_ - 1), W_), lit((uint64_t{1} << (W_ - 1)) - 1, W_));
        conv.push_back(m_.node(fmt::format("conv_{}", i), mux(in_range, sh.bits(W_ - 1, 0).as_unsigned(), sat)));
      }
    }
    return conv;
  }

  // Rotation by dst_lane - src_lane: log2 N stages, stage s moves lanes up by 2^s when its bit is set.
  std::vector<Expr> rotate(std::vector<Expr> cur) {
    Sig rot = m_.node("rot", dst_lane_ - src_lane_);
    for (int s = 0; s < L_; ++s) {
      std::vector<Expr> next;
      for (int o = 0; o < N_; ++o)
        next.push_back(m_.node(fmt::format("rot_s{}_{}", s, o), mux(rot.bit(s), cur[static_cast<size_t>((o - (1 << s) + N_) % N_)],
                                                                    cur[static_cast<size_t>(o)])));
      cur = std::move(next);
    }
    return cur;
  }

  // Rows: source bank s's element belongs in row + the strides of s's bits (0 unless diag); the
  // data rotation carries it to bank s + k, so the rows rotate by k = bd - bs too.
  std::vector<Expr> bank_rows() {
    pad_ = fp_ ? mux(pad_neg_, m_.constant("NEG_ZERO", 0x8000, W_), lit(0, W_)) : lit(0, W_);  // bf16 -0
    pad_row_ = m_.node("pad_row", dst_lane_ == 0);
    if (B_ == 1) return {row_};
    std::vector<Expr> strides;
    for (int h = 0; h < LB_; ++h)
      strides.push_back(m_.node(fmt::format("stride_b{}", h),
                                mux(diag_, row_bank_strides_.bits(h * HW_ + HW_ - 1, h * HW_), lit(0, HW_))));
    Sig k = m_.node("bank_rot", dst_lane_.bits(L_ - 1, LT_) - src_lane_.bits(L_ - 1, LT_));
    return diagonal_bank_rows(m_, "row", row_, strides, k, B_);
  }

  // Diagonal lanes: element dst_lane % T of banks bd .. bd + count_m1 (modulo B).
  void diagonal_lanes() {
    for (int e = 0; e < T_ && LT_ > 0; ++e)
      diag_elem_.push_back(m_.node(fmt::format("diag_elem_{}", e), dst_lane_.bits(LT_ - 1, 0) == e));
    for (int d = 0; d < B_ && LB_ > 0; ++d)
      diag_bank_.push_back(m_.node(fmt::format("diag_bank_{}", d),
                                   (lit(static_cast<uint64_t>(d), LB_) - dst_lane_.bits(L_ - 1, LT_)).zext(L_) <= count_m1_));
  }
  Expr diag_hit(int o) const {
    if (LT_ == 0) return diag_bank_[static_cast<size_t>(o)];
    if (LB_ == 0) return diag_elem_[static_cast<size_t>(o)];
    return diag_elem_[static_cast<size_t>(o % T_)] & diag_bank_[static_cast<size_t>(o / T_)];
  }

  // The write registers clock only in the cycles a row is written.
  void write_registers(const std::vector<Expr>& cur, const std::vector<Expr>& rows) {
    Sig en_q = m_.reg("en_q", UInt(1), reset_to(0));
    en_q <<= valid_;
    const GatedClock writing = m_.clock_gate("writing", valid_);
    for (int d = 0; d < B_; ++d) {
      Sig r = m_.reg(fmt::format("row_q_{}", d), UInt(HW_), clocked_by(writing));
      r <<= rows[static_cast<size_t>(d)];
      wr_row_[d].sig() <<= r;
    }
    std::vector<Expr> mask_bits;  // lane N-1 first
    for (int o = N_ - 1; o >= 0; --o) {
      Sig in_seg = m_.node(fmt::format("in_seg_{}", o), (lit(static_cast<uint64_t>(o), L_) - dst_lane_) <= count_m1_);
      mask_bits.push_back(mux(diag_, diag_hit(o), in_seg | pad_row_));
      Sig d = m_.reg(fmt::format("data_q_{}", o), UInt(W_), clocked_by(writing));
      d <<= mux(in_seg | diag_, cur[static_cast<size_t>(o)], pad_);
      wr_data_[o].sig() <<= d;
    }
    Sig mask_q = m_.reg("mask_q", UInt(N_), clocked_by(writing));
    mask_q <<= cat(mask_bits);
    wr_en_ <<= en_q;
    wr_mask_ <<= mask_q;
  }

  Module& m_;
  const int N_, L_, W_, AB_, B_, T_, LB_, LT_, HW_;
  const bool fp_;
  Sig valid_, row_, src_lane_, dst_lane_, count_m1_, diag_, row_bank_strides_, pad_neg_, shift_;
  Sig wr_en_, wr_mask_;
  Data wr_row_, wr_data_;
  Expr pad_;
  Sig pad_row_;
  std::vector<Expr> diag_elem_, diag_bank_;
};

}  // namespace

void ResultWriter::build(Module& m) const { ResultWriterBuilder(m, p).build(); }

}  // namespace fetta::hw
