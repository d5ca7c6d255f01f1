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

ResultWriter::ResultWriter(ResultWriterParams params) : Generator(checked(params)) {}

std::string ResultWriter::module_name() const {
  return fmt::format("result_writer_n{}_b{}_a{}_{}", p.lanes, p.banks, p.row_bits, arch::to_string(p.dtype));
}

ParamList ResultWriter::params() const {
  return {{"lanes", std::to_string(p.lanes)},
          {"banks", std::to_string(p.banks)},
          {"row_bits", std::to_string(p.row_bits)},
          {"dtype", arch::to_string(p.dtype)}};
}

void ResultWriter::build(Module& m) const {
  const int N = p.lanes, L = clog2(N), W = arch::operand_bits(p.dtype), AB = arch::accumulator_bits(p.dtype);
  const int B = p.banks, T = N / B, LB = std::countr_zero(static_cast<unsigned>(B)), LT = L - LB, HW = p.row_bits;
  const bool fp = p.dtype == arch::DataType::bf16;
  m.add_comment(fmt::format("STORE write-back: {} accumulator lanes -> {}-bit operands, rotated by dst_lane - src_lane,", N, W));
  m.add_comment("written where they fall in [dst_lane, dst_lane + count_m1]; a move at lane 0 pads the rest of its row.");
  m.add_comment(fmt::format("diag: one element per bank, each bank at its own row (B = {} banks of T = {} lanes).", B, T));
  Sig valid = m.input("valid", UInt(1));
  Sig row = m.input("row", UInt(HW));
  Sig src_lane = m.input("src_lane", UInt(L));
  Sig dst_lane = m.input("dst_lane", UInt(L));
  Sig count_m1 = m.input("count_m1", UInt(L));
  Sig diag = m.input("diag", UInt(1));
  // Bank bit h's row stride in bits [h*hw +: hw] (none with one bank).
  Sig row_bank_strides = B > 1 ? m.input("row_bank_strides", UInt(HW * LB)) : Sig();
  Sig pad_neg = fp ? m.input("pad_neg", UInt(1)) : Sig();
  Sig shift = fp ? Sig() : m.input("shift", UInt(6));
  Data data = m.input("data", Vec(fp ? UInt(32) : SInt(AB), N));
  Sig wr_en = m.output("wr_en", UInt(1));
  Data wr_row = m.output("wr_row", Vec(UInt(HW), B));
  Sig wr_mask = m.output("wr_mask", UInt(N));
  Data wr_data = m.output("wr_data", Vec(UInt(W), N));

  // Conversion, lane by lane.
  std::vector<Expr> conv;
  const Fp32ToBf16 to_bf16({});
  for (int i = 0; i < N; ++i) {
    if (fp) {
      InstanceRef c = m.instance(to_bf16, fmt::format("to_bf16_{}", i));
      c.io("in").sig() <<= data[i].sig();
      conv.push_back(c.io("out").sig());
    } else {
      // Saturate the shifted value to W bits: in range when the bits above W-1 all equal its sign.
      Sig sh = m.node(fmt::format("shifted_{}", i), data[i].sig() >> shift);
      const Expr hi = sh.bits(AB - 1, W - 1).as_unsigned();
      const Expr in_range = (hi == 0) | (hi == lit((uint64_t{1} << (AB - W + 1)) - 1, AB - W + 1));
      const Expr sat = mux(sh.bit(AB - 1), lit(uint64_t{1} << (W - 1), W), lit((uint64_t{1} << (W - 1)) - 1, W));
      conv.push_back(m.node(fmt::format("conv_{}", i), mux(in_range, sh.bits(W - 1, 0).as_unsigned(), sat)));
    }
  }
  // Rotation by dst_lane - src_lane: log2 N stages, stage s moves lanes up by 2^s when its bit is set.
  Sig rot = m.node("rot", dst_lane - src_lane);
  std::vector<Expr> cur = conv;
  for (int s = 0; s < L; ++s) {
    std::vector<Expr> next;
    for (int o = 0; o < N; ++o)
      next.push_back(m.node(fmt::format("rot_s{}_{}", s, o),
                            mux(rot.bit(s), cur[static_cast<size_t>((o - (1 << s) + N) % N)], cur[static_cast<size_t>(o)])));
    cur = std::move(next);
  }
  const Expr pad = fp ? mux(pad_neg, m.constant("NEG_ZERO", 0x8000, W), lit(0, W)) : lit(0, W);  // bf16 -0
  Sig pad_row = m.node("pad_row", dst_lane == 0);

  // Rows: source bank s's element belongs in row + the strides of s's bits (0 unless diag); the
  // data rotation carries it to bank s + k, so the rows rotate by k = bd - bs too.
  std::vector<Expr> rows{row};
  if (B > 1) {
    std::vector<Expr> strides;
    for (int h = 0; h < LB; ++h)
      strides.push_back(m.node(fmt::format("stride_b{}", h), mux(diag, row_bank_strides.bits(h * HW + HW - 1, h * HW), lit(0, HW))));
    Sig k = m.node("bank_rot", dst_lane.bits(L - 1, LT) - src_lane.bits(L - 1, LT));
    rows = diagonal_bank_rows(m, "row", row, strides, k, B);
  }
  // Diagonal lanes: element dst_lane % T of banks bd .. bd + count_m1 (modulo B).
  std::vector<Expr> diag_elem, diag_bank;
  for (int e = 0; e < T && LT > 0; ++e)
    diag_elem.push_back(m.node(fmt::format("diag_elem_{}", e), dst_lane.bits(LT - 1, 0) == e));
  for (int d = 0; d < B && LB > 0; ++d)
    diag_bank.push_back(m.node(fmt::format("diag_bank_{}", d),
                               (lit(static_cast<uint64_t>(d), LB) - dst_lane.bits(L - 1, LT)).zext(L) <= count_m1));
  auto diag_hit = [&](int o) {
    if (LT == 0) return diag_bank[static_cast<size_t>(o)];
    if (LB == 0) return diag_elem[static_cast<size_t>(o)];
    return diag_elem[static_cast<size_t>(o % T)] & diag_bank[static_cast<size_t>(o / T)];
  };

  Sig en_q = m.reg("en_q", UInt(1), reset_to(0));
  en_q <<= valid;
  // The write registers clock only in the cycles a row is written.
  const GatedClock writing = m.clock_gate("writing", valid);
  for (int d = 0; d < B; ++d) {
    Sig r = m.reg(fmt::format("row_q_{}", d), UInt(HW), clocked_by(writing));
    r <<= rows[static_cast<size_t>(d)];
    wr_row[d].sig() <<= r;
  }
  std::vector<Expr> mask_bits;  // lane N-1 first
  for (int o = N - 1; o >= 0; --o) {
    Sig in_seg = m.node(fmt::format("in_seg_{}", o), (lit(static_cast<uint64_t>(o), L) - dst_lane) <= count_m1);
    mask_bits.push_back(mux(diag, diag_hit(o), in_seg | pad_row));
    Sig d = m.reg(fmt::format("data_q_{}", o), UInt(W), clocked_by(writing));
    d <<= mux(in_seg | diag, cur[static_cast<size_t>(o)], pad);
    wr_data[o].sig() <<= d;
  }
  Sig mask_q = m.reg("mask_q", UInt(N), clocked_by(writing));
  mask_q <<= cat(mask_bits);
  wr_en <<= en_q;
  wr_mask <<= mask_q;
}

}  // namespace fetta::hw
