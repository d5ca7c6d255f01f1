// ResultWriter: the write-back path of the STORE instruction (docs/isa.md §store), between the
// accumulation unit's read data and the unified memory's TCU write port. One move per cycle:
// lanes src_lane .. src_lane + count_m1 of an accumulator row are converted to the operand type
// and written to lanes dst_lane .. dst_lane + count_m1 (modulo N) of unified-memory row `row`.
// A move with dst_lane 0 also writes the pad value into every other lane of the row.
//
// Diagonal moves (diag = 1) let a STORE transpose B elements per cycle instead of one: upstream,
// accumulator bank s was read at its own row, so its element src_lane % T holds the value for
// unified row row + S(s), S(s) the sum of the strides of the bits set in s. The data is rotated
// as above, which lands source bank s in destination bank d = s + (bd - bs) mod B at element
// dst_lane % T; each destination bank is written at that one element, and at its own row. count_m1 then counts banks: destination banks
// bd .. bd + count_m1 (modulo B) are written, no padding.
//
// Conversion (the golden model's, bit for bit): bf16 accumulators (binary32) round to nearest
// even through Fp32ToBf16; integer accumulators shift right arithmetically by `shift` and
// saturate to the operand width (the runner's requantization, docs/architecture.md).
//
// Ports (N lanes = B banks x T elements, lane b*T + e = bank b element e as in UnifiedMemory,
// L = log2 N, hw row bits, A = accumulator lane type, W = operand width,
// bs = src_lane / T, bd = dst_lane / T, k = (bd - bs) mod B):
//   valid UInt<1>, row UInt<hw>, src_lane UInt<L>, dst_lane UInt<L>, count_m1 UInt<L>,
//   diag UInt<1>, row_bank_strides UInt<hw * log2 B> (bank bit h's stride in bits [h*hw +: hw]; no
//   port with one bank),
//   pad_neg UInt<1> (bf16) or shift UInt<6> (integers), data Vec<N, A>
//   -> wr_en UInt<1>, wr_row Vec<B, UInt<hw>>, wr_mask UInt<N>, wr_data Vec<N, UInt<W>>, registered:
//      the move presented in one cycle is on the outputs in the next.
//   wr_row[d] = row, or with diag row + S((d - k) mod B) modulo 2^hw (the source bank whose
//   element lands in bank d). Lanes outside wr_mask carry unspecified data.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct ResultWriterParams {
  int lanes = 64;     // a power of two, 2 .. 1024
  int banks = 16;     // unified-memory banks (B) the lanes split into: a power of two, 1 .. lanes
  int row_bits = 11;  // unified-memory row address bits (one half): 1 .. 24
  arch::DataType dtype = arch::DataType::bf16;
};

class ResultWriter : public rtl::IdentifiedGenerator<ResultWriterParams> {
 public:
  explicit ResultWriter(ResultWriterParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::ResultWriter"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
