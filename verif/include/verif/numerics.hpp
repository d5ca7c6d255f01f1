// The arithmetic contract between the RTL and the golden model (docs/numerics.md).
//
// Every floating-point value is a raw bit pattern: bf16 (1-8-7) in a uint16_t, IEEE binary32 in
// a uint32_t. The functions are written with integer operations only, so they do not depend on
// the host FPU's modes; they are the definition the hardware arithmetic is built to.
//
// Summary of the contract:
//   * subnormal inputs are read as zero of the same sign (DAZ);
//   * results whose magnitude is below 2^-126 are flushed to zero of the same sign (FTZ);
//   * binary32 additions and binary32 -> bf16 conversions round to nearest, ties to even;
//   * the bf16 x bf16 product is exact in binary32 (8-bit x 8-bit significands), so a MAC rounds
//     once, in the addition: fp32_mac(acc, a, b) == fp32_add(acc, bf16_mul(a, b));
//   * overflow gives +-Inf; every NaN produced is the canonical quiet NaN (0x7FC00000 in
//     binary32, 0x7FC0 in bf16), whatever the NaN operands were.
#pragma once

#include <bit>
#include <cstdint>

namespace fetta::verif {

inline constexpr uint32_t kFp32QuietNaN = 0x7FC00000u;
inline constexpr uint16_t kBf16QuietNaN = 0x7FC0u;
inline constexpr uint32_t kFp32PosInf = 0x7F800000u;
inline constexpr uint16_t kBf16PosInf = 0x7F80u;

// bf16 x bf16 -> binary32, exact when in range (see the header comment and docs/numerics.md).
uint32_t bf16_mul(uint16_t a, uint16_t b);

// binary32 x bf16 -> binary32: the exact product (24-bit x 8-bit significands) rounded once, to
// nearest even; DAZ inputs, FTZ judged on the exact product, overflow to +-Inf, canonical NaN
// (the vector unit's multiplier; docs/numerics.md §5b).
uint32_t fp32_mul_bf16(uint32_t x, uint16_t a);

// binary32 + binary32, round to nearest even, DAZ/FTZ, canonical NaN.
uint32_t fp32_add(uint32_t a, uint32_t b);

// The multiply-accumulate of a PE: exactly fp32_add(acc, bf16_mul(a, b)).
uint32_t fp32_mac(uint32_t acc, uint16_t a, uint16_t b);

// binary32 -> bf16, round to nearest even (may round up to +-Inf); subnormal -> signed zero;
// NaN -> 0x7FC0.
uint16_t fp32_to_bf16(uint32_t x);

// bf16 -> binary32, exact widening; subnormal -> signed zero; NaN -> 0x7FC00000.
uint32_t bf16_to_fp32(uint16_t x);

// Round a double to bf16 / binary32 in one step (nearest even, unbounded exponent), then: below
// 2^-126 -> signed zero, above the largest finite value -> +-Inf, NaN -> canonical NaN.
// Helpers for building operands; not part of the hardware datapath.
uint16_t bf16_from_double(double v);
uint32_t fp32_from_double(double v);

// Exact values of the bit patterns as the hardware reads them (subnormals read as signed zero,
// any NaN -> a quiet NaN, Inf -> Inf).
double bf16_to_double(uint16_t x);
double fp32_to_double(uint32_t x);
// Overloads by bit-pattern width (an untyped integer literal is ambiguous on purpose: say which).
inline double to_double(uint16_t bf16_bits) { return bf16_to_double(bf16_bits); }
inline double to_double(uint32_t fp32_bits) { return fp32_to_double(fp32_bits); }

// Host float <-> bits (no flushing; a plain reinterpretation).
inline uint32_t float_to_bits(float f) { return std::bit_cast<uint32_t>(f); }
inline float bits_to_float(uint32_t u) { return std::bit_cast<float>(u); }
inline uint64_t double_to_bits(double d) { return std::bit_cast<uint64_t>(d); }
inline double bits_to_double(uint64_t u) { return std::bit_cast<double>(u); }

// Classification of bit patterns.
inline bool fp32_is_nan(uint32_t x) { return (x & 0x7F800000u) == 0x7F800000u && (x & 0x7FFFFFu) != 0; }
inline bool fp32_is_inf(uint32_t x) { return (x & 0x7FFFFFFFu) == 0x7F800000u; }
inline bool fp32_is_zero_or_subnormal(uint32_t x) { return (x & 0x7F800000u) == 0; }
inline bool bf16_is_nan(uint16_t x) { return (x & 0x7F80u) == 0x7F80u && (x & 0x7Fu) != 0; }
inline bool bf16_is_inf(uint16_t x) { return (x & 0x7FFFu) == 0x7F80u; }
inline bool bf16_is_zero_or_subnormal(uint16_t x) { return (x & 0x7F80u) == 0; }

// Integer MACs. int8: acc + a*b modulo 2^32 (two's complement wrap).
int32_t int8_mac(int32_t acc, int8_t a, int8_t b);
// int16 into a 48-bit accumulator: wrap48(acc + a*b); the result is the 48-bit two's-complement
// value sign-extended to int64. `acc` may be any int64 (it is used modulo 2^48).
int64_t int16_mac48(int64_t acc, int16_t a, int16_t b);
// The low 48 bits of x read as a two's-complement number, sign-extended.
int64_t wrap48(int64_t x);

}  // namespace fetta::verif
