#include "hw/mem/result_writer.hpp"

#include <fmt/core.h>

#include "hw/arith/fp_convert.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

ResultWriterParams checked(ResultWriterParams p) {
  mem_check::pow2_in("ResultWriter", "lanes", p.lanes, 2, 1024);
  mem_check::in_range("ResultWriter", "row_bits", p.row_bits, 1, 24);
  (void)accumulator_format(p.dtype);  // throws naming the allowed types
  return p;
}

}  // namespace

ResultWriter::ResultWriter(ResultWriterParams params) : Generator(checked(params)) {}

std::string ResultWriter::module_name() const {
  return fmt::format("result_writer_n{}_a{}_{}", p.lanes, p.row_bits, arch::to_string(p.dtype));
}

ParamList ResultWriter::params() const {
  return {{"lanes", std::to_string(p.lanes)}, {"row_bits", std::to_string(p.row_bits)}, {"dtype", arch::to_string(p.dtype)}};
}

void ResultWriter::build(Module& m) const {
  const int N = p.lanes, L = clog2(N), W = arch::operand_bits(p.dtype), AB = arch::accumulator_bits(p.dtype);
  const bool fp = p.dtype == arch::DataType::bf16;
  m.add_comment(fmt::format("STORE write-back: {} accumulator lanes -> {}-bit operands, rotated by dst_lane - src_lane,", N, W));
  m.add_comment("written where they fall in [dst_lane, dst_lane + count_m1]; a move at lane 0 pads the rest of its row.");
  Sig valid = m.input("valid", UInt(1));
  Sig row = m.input("row", UInt(p.row_bits));
  Sig src_lane = m.input("src_lane", UInt(L));
  Sig dst_lane = m.input("dst_lane", UInt(L));
  Sig count_m1 = m.input("count_m1", UInt(L));
  Sig pad_neg = fp ? m.input("pad_neg", UInt(1)) : Sig();
  Sig shift = fp ? Sig() : m.input("shift", UInt(6));
  Data data = m.input("data", Vec(fp ? UInt(32) : SInt(AB), N));
  Sig wr_en = m.output("wr_en", UInt(1));
  Sig wr_row = m.output("wr_row", UInt(p.row_bits));
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
  const Expr pad = fp ? mux(pad_neg, lit(0x8000, W), lit(0, W)) : lit(0, W);
  Sig pad_row = m.node("pad_row", dst_lane == 0);

  Sig en_q = m.reg("en_q", UInt(1), reset_to(0));
  en_q <<= valid;
  Sig row_q = m.reg("row_q", UInt(p.row_bits), enabled_by(valid));
  row_q <<= row;
  std::vector<Expr> mask_bits;  // lane N-1 first
  for (int o = N - 1; o >= 0; --o) {
    Sig in_seg = m.node(fmt::format("in_seg_{}", o), (lit(static_cast<uint64_t>(o), L) - dst_lane) <= count_m1);
    mask_bits.push_back(in_seg | pad_row);
    Sig d = m.reg(fmt::format("data_q_{}", o), UInt(W), enabled_by(valid));
    d <<= mux(in_seg, cur[static_cast<size_t>(o)], pad);
    wr_data[o].sig() <<= d;
  }
  Sig mask_q = m.reg("mask_q", UInt(N), enabled_by(valid));
  mask_q <<= cat(mask_bits);
  wr_en <<= en_q;
  wr_row <<= row_q;
  wr_mask <<= mask_q;
}

}  // namespace fetta::hw
