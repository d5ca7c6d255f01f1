// The vector unit (docs/vector.md; ARCHITECTURE.md §4.7): `lanes` floating-point lanes for the
// elementwise work of training between contractions (activations, the loss gradient, the weight
// update), exactly verif/vector.hpp: bf16 rows in and out, binary32 inside.
//
// VectorUnit ports (W elements a row, L lanes, B = W / L beats a row, G tag bits):
//   valid, op UInt<4>, a Vec<W, UInt<16>>, b Vec<W, UInt<16>>, s UInt<32>, tag UInt<G>  -> ready
//   -> out_valid, out Vec<L, UInt<16>>, out_beat UInt<log2 B> (only when B > 1), out_tag UInt<G>
//                                        a beat's results: elements out_beat*L .. of the row taken
//                                        with out_tag (where it goes), 4 cycles after the beat
//                                        entered (7 for tanh and tanh_bwd: a beat entering soon
//                                        after one of those may leave before it; never two in
//                                        one cycle)
//   -> sum_valid, sum UInt<32>           reduce's result (sum holds it until the next)
//   -> busy                              an operation is in flight
// A row operation (and sumsq) enters the lanes a beat at a time, elements k*L .. k*L+L-1 in beat k,
// one beat a cycle; ready rises with the last beat, and a row is taken in a cycle with valid &
// ready. With B > 1 a row, once valid, must be held (op, a, b, s, tag) until it is taken. No beat
// enters in the cycle a two-pass operation's second pass takes stage 0 (tanh, tanh_bwd: one beat
// every two cycles at most), while a reduce runs (L - 1 cycles), or for a reduce while beats are
// in flight (it reads the accumulators the sumsq rows before it write); ready is low then.
// reduce and opcodes 11..15 (taken, doing nothing) take one cycle.
//
// Each lane (VectorLane) is a four-stage pipeline: 0. the operand selects (and the results that
// need no arithmetic), 1. the multiplier (Fp32MulBf16), 2. the adder (Fp32Add, two-path) or the
// sum-of-squares accumulator, 3. the rounding to bf16. A second pass re-enters stage 0 from stage
// 2's register. The unit decodes the operation once per stage and drives every lane. Element e of
// a row is lane e mod L's: its sum of squares accumulates there.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// The `op` port's encoding.
enum class VectorOpcode : int {
  add = 0, sub = 1, mul = 2, scale = 3, axpy = 4, relu = 5, relu_bwd = 6, tanh = 7, tanh_bwd = 8, sumsq = 9, reduce = 10
};
inline constexpr int kVectorOpBits = 4;
inline constexpr int kVectorLatency = 4;          // cycles from a beat's entry to out_valid, one pass
inline constexpr int kVectorTwoPassLatency = 7;   // tanh, tanh_bwd

// A lane's first-pass operand selects (VectorLane's m_a_sel, m_x_sel and z_sel ports); a second
// pass multiplies its carried bf16 operand by the first pass's result and adds c0 (tanh).
enum class VectorMulBf16 : int { a = 0, abs_a = 1, one = 2 };          // add and sub multiply a by 1
enum class VectorMulOperand : int { s = 0, b = 1, a = 2, neg_a = 3, c2 = 4 };
enum class VectorAddend : int { b = 0, neg_b = 1, one = 2, c1 = 3 };

struct VectorLaneParams {};

class VectorLane : public rtl::IdentifiedGenerator<VectorLaneParams> {
 public:
  explicit VectorLane(VectorLaneParams params) : IdentifiedGenerator(params) {}
  std::string generator_name() const override { return "hw::VectorLane"; }
  rtl::Identity identity() const override { return rtl::Identity("vector_lane"); }
  void build(rtl::Module& m) const override;  // vector_lane.cpp
};

struct VectorUnitParams {
  int elems = 64;     // W, elements a row: a power of two, 2 .. 1024
  int lanes = 64;     // L: a power of two, 2 .. W
  int tag_bits = 12;  // 1 .. 32: the destination a row carries through (a unified-memory row)
};

class VectorUnit : public rtl::IdentifiedGenerator<VectorUnitParams> {
 public:
  explicit VectorUnit(VectorUnitParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::VectorUnit"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

// Rows of the unified memory (banks x elements per bank) on `vector.lanes` lanes, tagged with a
// row of the unified memory (both halves: log2 unified_depth bits). Its arithmetic is
// bf16 / binary32 whatever the contraction data type (training's elementwise work is float).
VectorUnitParams vector_unit_params(const arch::ArchConfig& cfg);
std::string elaborate_vector_unit(rtl::Design& design, const arch::ArchConfig& cfg);

}  // namespace fetta::hw
