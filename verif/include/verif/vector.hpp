// The vector unit's operations (docs/vector.md), the contract its RTL is built to: bf16 rows in
// and out, binary32 inside, every rounding stated (docs/numerics.md for the arithmetic).
//
// Per element, with A = bf16_to_fp32(a), B = bf16_to_fp32(b), s the binary32 scalar register:
//   add       bf16(A + B)                sub      bf16(A - B)
//   mul       bf16(B x a)                scale    bf16(s x a)
//   axpy      bf16(s x a + B)            (SGD: a = g, s = -lr, b = w; momentum: a = v, s = mu, b = g)
//   relu      a if a > 0, else +0        relu_bwd b if a > 0, else +0   (a: the forward input)
//   tanh      the piecewise polynomial below                            (NaN -> canonical NaN)
//   tanh_bwd  bf16(b x (1 - a x A))      (a: the forward output y, b: dy)
//   sumsq     each lane's accumulator += a x A (exact); element e of a row is lane e mod lanes's,
//             in element order; reduce sums the lanes' accumulators in lane order into one
//             binary32 value and clears them
// x is fp32_mul_bf16, + is fp32_add, bf16(.) is fp32_to_bf16; "a > 0" reads a as the hardware
// does (DAZ: a positive subnormal is +0; +Inf is > 0; a NaN a gives the canonical NaN).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fetta::verif {

enum class VectorOp { add, sub, mul, scale, axpy, relu, relu_bwd, tanh, tanh_bwd, sumsq, reduce };
std::string to_string(VectorOp op);

// One element of a row operation (every op but sumsq and reduce).
uint16_t vector_element(VectorOp op, uint16_t a, uint16_t b, uint32_t s);

// tanh on bf16: |x| < 2^-4 -> x; |x| >= 4 -> +-1; otherwise, with t = |x| and the segment of t
// (its binade, 2^-4 .. 2^1, and the top two mantissa bits: 24 pieces), u = c2 x t + c1 and
// v = u x t + c0 in binary32, and the result is sign(x) bf16(v). kTanhSegments holds (c0, c1, c2).
inline constexpr int kTanhLowExp = 123;   // biased exponent of 2^-4
inline constexpr int kTanhHighExp = 129;  // biased exponent of 4
struct TanhSegment {
  uint32_t c0, c1, c2;
};
extern const std::array<TanhSegment, 24> kTanhSegments;
uint16_t tanh_bf16(uint16_t x);

// The lanes' sum-of-squares accumulators (binary32, +0 at reset and after each reduce).
class VectorAccumulators {
 public:
  explicit VectorAccumulators(int lanes) : acc_(static_cast<size_t>(lanes), 0) {}
  void sumsq(const std::vector<uint16_t>& row);  // row.size(): a multiple of the lanes (a beat each)
  uint32_t reduce();                              // (((acc0 + acc1) + acc2) + ...), then all +0
  const std::vector<uint32_t>& values() const { return acc_; }

 private:
  std::vector<uint32_t> acc_;
};

}  // namespace fetta::verif
