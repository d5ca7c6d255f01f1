// GEMM operands for the CE testbench: raw bit patterns (bf16, or two's-complement integers masked
// to the operand width), random generators with corner-case mixes, and the golden results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "hw/ce/ce_timing.hpp"

namespace fetta::sim::ce {

// Row-major matrix of operand or result bit patterns.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<uint64_t> v;

  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0) {}
  uint64_t& at(int64_t r, int64_t c) { return v[static_cast<size_t>(r * cols + c)]; }
  uint64_t at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * cols + c)]; }
  Matrix transposed() const;
};

// C[M,N] = A[M,K] B[K,N].
struct GemmOperands {
  arch::DataType dtype = arch::DataType::bf16;
  Matrix a;  // M x K
  Matrix b;  // K x N
  hw::GemmShape shape() const { return {a.rows, a.cols, b.cols}; }
};

// How random operands are drawn.
//   uniform : bf16 uniform in [-1, 1); ints uniform over the whole type
//   wide    : bf16 with random sign, exponent and mantissa over the normal range (overflow to Inf,
//             products flushed to zero, cancellation); ints biased to the extremes
//   special : mostly uniform with +-0, subnormals, +-min/max normal, +-Inf and NaNs mixed in
//   tiny    : bf16 near 2^-63, so products straddle 2^-126 and sums flush to (signed) zero
enum class OperandMix { uniform, wide, special, tiny };
std::string to_string(OperandMix m);

GemmOperands random_gemm(arch::DataType dtype, const hw::GemmShape& shape, uint64_t seed,
                         OperandMix mix = OperandMix::uniform);

// The golden C (M x N) as bit patterns, from the verif golden model: bf16 -> binary32 in the
// order the CE adds (`stationary_chunk` > 0: columns of that many products from +0, chunk
// results accumulated from +0, i.e. AccumulationOrder::tiled; 0: one sequential chain, i.e. os);
// ints exact (int8 -> int32, int16 -> int48, wrapping).
Matrix golden_gemm(const GemmOperands& ops, int64_t stationary_chunk);

// The accumulator step that combines partial results of one output (the accumulation unit's
// adder): fp32_add, or a wrapping integer add at the accumulator width.
uint64_t accumulate(arch::DataType dtype, uint64_t acc, uint64_t partial);
// Padding values fed to rows/columns outside the GEMM so that they change no result:
// IA gets -0 (bf16) and IB +0: their product is -0, and x + (-0) == x for every value a column
// can hold; ints use 0.
uint64_t ia_padding(arch::DataType dtype);
uint64_t ib_padding(arch::DataType dtype);

}  // namespace fetta::sim::ce
