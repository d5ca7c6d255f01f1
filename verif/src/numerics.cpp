// Integer-only implementation of the arithmetic contract (docs/numerics.md).
#include "verif/numerics.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace fetta::verif {
namespace {

constexpr uint32_t kF32ExpMask = 0x7F800000u;
constexpr uint32_t kF32ManMask = 0x007FFFFFu;
constexpr uint32_t kF32Sign = 0x80000000u;

// Round a double to `keep_bits` significant bits (nearest even, unbounded exponent), then apply
// the FTZ / overflow rules of a format with exponent range [-126, 127]. Returns the format's bits
// given the mantissa width (keep_bits - 1) and the total width.
template <class U>
U round_double(double v, int keep_bits, U nan_bits) {
  const int man_bits = keep_bits - 1;
  const int total_bits = static_cast<int>(sizeof(U)) * 8;
  const uint64_t u = std::bit_cast<uint64_t>(v);
  const U sign = static_cast<U>(static_cast<U>(u >> 63) << (total_bits - 1));
  const auto e = static_cast<int>((u >> 52) & 0x7FFu);
  const uint64_t m = u & ((uint64_t{1} << 52) - 1);
  const U inf = static_cast<U>(sign | (U{0xFF} << man_bits));
  if (e == 0x7FF) return m != 0 ? nan_bits : inf;
  if (e == 0) return sign;  // zero or a double subnormal: far below 2^-126
  int exponent = e - 1023;
  const uint64_t sig = (uint64_t{1} << 52) | m;
  const int drop = 53 - keep_bits;
  uint64_t keep = sig >> drop;
  const uint64_t rem = sig & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  if (rem > half || (rem == half && (keep & 1u) != 0)) ++keep;
  if (keep >> keep_bits) {
    keep >>= 1;
    ++exponent;
  }
  if (exponent < -126) return sign;
  if (exponent > 127) return inf;
  const uint64_t man = keep & ((uint64_t{1} << man_bits) - 1);
  return static_cast<U>(sign | (static_cast<U>(exponent + 127) << man_bits) | static_cast<U>(man));
}

}  // namespace

uint32_t bf16_mul(uint16_t a, uint16_t b) {
  const uint32_t sign = (static_cast<uint32_t>(a ^ b) & 0x8000u) << 16;
  const uint32_t ea = (a >> 7) & 0xFFu;
  const uint32_t eb = (b >> 7) & 0xFFu;
  const uint32_t ma = a & 0x7Fu;
  const uint32_t mb = b & 0x7Fu;
  if ((ea == 0xFF && ma != 0) || (eb == 0xFF && mb != 0)) return kFp32QuietNaN;
  const bool inf_a = ea == 0xFF;
  const bool inf_b = eb == 0xFF;
  const bool zero_a = ea == 0;  // zero or subnormal (read as zero)
  const bool zero_b = eb == 0;
  if (inf_a || inf_b) {
    if (zero_a || zero_b) return kFp32QuietNaN;  // 0 x Inf
    return sign | kFp32PosInf;
  }
  if (zero_a || zero_b) return sign;
  // Significands 1.m as 8-bit integers; their product is in [2^14, 2^16).
  const uint32_t p = (0x80u | ma) * (0x80u | mb);
  auto exponent = static_cast<int32_t>(ea + eb) - 127;  // biased, for p in [2^14, 2^15)
  uint32_t sig = 0;                                       // 24-bit significand, exact
  if ((p & 0x8000u) != 0) {
    ++exponent;
    sig = p << 8;
  } else {
    sig = p << 9;
  }
  if (exponent <= 0) return sign;                 // |product| < 2^-126: flush
  if (exponent >= 0xFF) return sign | kFp32PosInf;  // overflow
  return sign | (static_cast<uint32_t>(exponent) << 23) | (sig & kF32ManMask);
}

uint32_t fp32_mul_bf16(uint32_t x, uint16_t a) {
  const uint32_t sign = ((x >> 16) ^ a) & 0x8000u;
  const uint32_t ex = (x & kF32ExpMask) >> 23;
  const uint32_t ea = (a >> 7) & 0xFFu;
  const uint32_t mx = x & kF32ManMask;
  const uint32_t ma = a & 0x7Fu;
  if ((ex == 0xFF && mx != 0) || (ea == 0xFF && ma != 0)) return kFp32QuietNaN;
  const bool zero_x = ex == 0;  // zero or subnormal (read as zero)
  const bool zero_a = ea == 0;
  if (ex == 0xFF || ea == 0xFF) return zero_x || zero_a ? kFp32QuietNaN : (sign << 16) | kFp32PosInf;
  if (zero_x || zero_a) return sign << 16;
  // 24-bit x 8-bit significands: the product is in [2^30, 2^32), exact in 32 bits.
  const uint64_t p = static_cast<uint64_t>(0x800000u | mx) * (0x80u | ma);
  auto e = static_cast<int32_t>(ex + ea) - 127;  // biased, for p in [2^30, 2^31)
  const int drop = (p >> 31) != 0 ? 8 : 7;       // bits below the 24-bit significand
  if (drop == 8) ++e;
  if (e <= 0) return sign << 16;  // the exact product is below 2^-126: flush
  uint64_t keep = p >> drop;
  const uint64_t rem = p & ((uint64_t{1} << drop) - 1);
  const uint64_t half = uint64_t{1} << (drop - 1);
  if (rem > half || (rem == half && (keep & 1u) != 0)) ++keep;
  if ((keep >> 24) != 0) {
    keep >>= 1;
    ++e;
  }
  if (e >= 0xFF) return (sign << 16) | kFp32PosInf;
  return (sign << 16) | (static_cast<uint32_t>(e) << 23) | (static_cast<uint32_t>(keep) & kF32ManMask);
}

uint32_t fp32_add(uint32_t a, uint32_t b) {
  auto ea = static_cast<int32_t>((a & kF32ExpMask) >> 23);
  auto eb = static_cast<int32_t>((b & kF32ExpMask) >> 23);
  const uint32_t ma = a & kF32ManMask;
  const uint32_t mb = b & kF32ManMask;
  const bool nan_a = ea == 0xFF && ma != 0;
  const bool nan_b = eb == 0xFF && mb != 0;
  if (nan_a || nan_b) return kFp32QuietNaN;
  const bool inf_a = ea == 0xFF;
  const bool inf_b = eb == 0xFF;
  if (inf_a && inf_b) return ((a ^ b) & kF32Sign) != 0 ? kFp32QuietNaN : a;
  if (inf_a) return a;
  if (inf_b) return b;
  const bool zero_a = ea == 0;  // zero or subnormal (read as zero, sign kept)
  const bool zero_b = eb == 0;
  if (zero_a && zero_b) return (a & b & kF32Sign);  // -0 only if both are -0
  if (zero_a) return b;
  if (zero_b) return a;

  // Both normal. Make |a| >= |b|; the result has a's sign unless it is an exact zero.
  uint32_t ua = a;
  uint32_t ub = b;
  if ((ua & ~kF32Sign) < (ub & ~kF32Sign)) {
    std::swap(ua, ub);
    std::swap(ea, eb);
  }
  const uint32_t sign = ua & kF32Sign;
  const bool subtract = ((ua ^ ub) & kF32Sign) != 0;
  // Significands with the leading one at bit 60: 37 bits of guard below the 24-bit significand.
  const uint64_t x = static_cast<uint64_t>(0x800000u | (ua & kF32ManMask)) << 37;
  uint64_t y = static_cast<uint64_t>(0x800000u | (ub & kF32ManMask)) << 37;
  const int32_t d = ea - eb;
  if (d >= 62) {
    y = 1;  // only a sticky bit is left of b
  } else if (d > 0) {
    const uint64_t lost = y & ((uint64_t{1} << d) - 1);
    y = (y >> d) | (lost != 0 ? 1u : 0u);
  }
  uint64_t m = subtract ? x - y : x + y;
  if (m == 0) return 0;  // exact cancellation: +0 in round-to-nearest
  int32_t e = ea;
  if ((m >> 61) != 0) {
    m = (m >> 1) | (m & 1u);
    ++e;
  } else {
    while ((m >> 60) == 0) {
      m <<= 1;
      --e;
    }
  }
  // A result below 2^-126 can only come from cancellation of normal operands and is then exact
  // (a multiple of 2^-149 with fewer than 24 significant bits): flush it, sign kept.
  if (e <= 0) return sign;
  uint64_t keep = m >> 37;
  const uint64_t rem = m & ((uint64_t{1} << 37) - 1);
  constexpr uint64_t half = uint64_t{1} << 36;
  if (rem > half || (rem == half && (keep & 1u) != 0)) ++keep;
  if ((keep >> 24) != 0) {
    keep >>= 1;
    ++e;
  }
  if (e >= 0xFF) return sign | kFp32PosInf;
  return sign | (static_cast<uint32_t>(e) << 23) | (static_cast<uint32_t>(keep) & kF32ManMask);
}

uint32_t fp32_mac(uint32_t acc, uint16_t a, uint16_t b) { return fp32_add(acc, bf16_mul(a, b)); }

uint16_t fp32_to_bf16(uint32_t x) {
  const uint32_t e = (x & kF32ExpMask) >> 23;
  const uint32_t m = x & kF32ManMask;
  if (e == 0xFF) return m != 0 ? kBf16QuietNaN : static_cast<uint16_t>(x >> 16);
  if (e == 0) return static_cast<uint16_t>((x >> 16) & 0x8000u);
  // Nearest even on the low 16 bits; a carry may ripple into the exponent (up to Inf).
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7FFFu + lsb) >> 16);
}

uint32_t bf16_to_fp32(uint16_t x) {
  if (bf16_is_nan(x)) return kFp32QuietNaN;
  if (bf16_is_zero_or_subnormal(x)) return static_cast<uint32_t>(x & 0x8000u) << 16;
  return static_cast<uint32_t>(x) << 16;
}

uint16_t bf16_from_double(double v) { return round_double<uint16_t>(v, 8, kBf16QuietNaN); }
uint32_t fp32_from_double(double v) { return round_double<uint32_t>(v, 24, kFp32QuietNaN); }

double fp32_to_double(uint32_t x) {
  const bool negative = (x & kF32Sign) != 0;
  const uint32_t e = (x & kF32ExpMask) >> 23;
  const uint32_t m = x & kF32ManMask;
  if (e == 0xFF) {
    if (m != 0) return std::numeric_limits<double>::quiet_NaN();
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  if (e == 0) return negative ? -0.0 : 0.0;
  const double mag = std::ldexp(static_cast<double>(0x800000u | m), static_cast<int>(e) - 150);
  return negative ? -mag : mag;
}

double bf16_to_double(uint16_t x) { return fp32_to_double(bf16_to_fp32(x)); }

int32_t int8_mac(int32_t acc, int8_t a, int8_t b) {
  const auto product = static_cast<uint32_t>(static_cast<int32_t>(a) * static_cast<int32_t>(b));
  return static_cast<int32_t>(static_cast<uint32_t>(acc) + product);  // modulo 2^32
}

int64_t wrap48(int64_t x) {
  const uint64_t low = static_cast<uint64_t>(x) & ((uint64_t{1} << 48) - 1);
  const uint64_t sign_bit = uint64_t{1} << 47;
  return static_cast<int64_t>(low ^ sign_bit) - static_cast<int64_t>(sign_bit);
}

int64_t int16_mac48(int64_t acc, int16_t a, int16_t b) {
  const auto product = static_cast<uint64_t>(static_cast<int64_t>(a) * static_cast<int64_t>(b));
  return wrap48(static_cast<int64_t>(static_cast<uint64_t>(acc) + product));
}

}  // namespace fetta::verif
