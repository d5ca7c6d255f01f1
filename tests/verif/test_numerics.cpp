// The arithmetic contract (docs/numerics.md): hand-worked corner cases, and agreement with the
// host FPU (SSE with FTZ|DAZ set, round-to-nearest-even) on millions of random operands.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>

#include "verif/numerics.hpp"

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#define FETTA_HAVE_MXCSR 1
#else
#define FETTA_HAVE_MXCSR 0
#endif

using namespace fetta::verif;

namespace {

// Sets MXCSR flush-to-zero and denormals-are-zero for the scope (SSE arithmetic then follows the
// contract: subnormal inputs read as zero, tiny results flushed, sign kept). Without SSE the
// random comparisons fall back to comparing only when inputs and outputs are normal.
struct FtzDaz {
#if FETTA_HAVE_MXCSR
  unsigned saved_ftz = _MM_GET_FLUSH_ZERO_MODE();
  unsigned saved_daz = _MM_GET_DENORMALS_ZERO_MODE();
  FtzDaz() {
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
  }
  ~FtzDaz() {
    _MM_SET_FLUSH_ZERO_MODE(saved_ftz);
    _MM_SET_DENORMALS_ZERO_MODE(saved_daz);
  }
#endif
  FtzDaz(const FtzDaz&) = delete;
  FtzDaz& operator=(const FtzDaz&) = delete;
};

// The optimizer must not fold host arithmetic at compile time or move it out of the FTZ scope.
float host_mul(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x * y;
}
float host_add(float a, float b) {
  volatile float x = a;
  volatile float y = b;
  return x + y;
}

bool is_normal32(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xFF;
  return e != 0 && e != 0xFF;
}

// Compares our binary32 result with the host's: NaN only as "is NaN" (ours must be canonical).
// Returns true when they agree.
bool agrees(uint32_t ours, float host, bool compare_all) {
  if (std::isnan(host)) return ours == kFp32QuietNaN;
  const uint32_t h = float_to_bits(host);
  if (!compare_all && !is_normal32(h)) return true;
  return ours == h;
}

std::string hex32(uint32_t x) { return fmt::format("0x{:08X}", x); }
std::string hex16(uint16_t x) { return fmt::format("0x{:04X}", x); }

// Independent reference for fp32 -> bf16 (nearest even), by comparing distances in double.
double raw_value(uint32_t bits) {  // |value| of a finite-or-just-overflowed pattern, e >= 1
  const uint32_t e = (bits >> 23) & 0xFF;
  const uint32_t m = bits & 0x7FFFFF;
  return std::ldexp(static_cast<double>(0x800000u | m), static_cast<int>(e) - 150);
}
uint16_t ref_fp32_to_bf16(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xFF;
  const uint32_t m = x & 0x7FFFFF;
  if (e == 0xFF) return m != 0 ? kBf16QuietNaN : static_cast<uint16_t>(x >> 16);
  if (e == 0) return static_cast<uint16_t>((x >> 16) & 0x8000);
  const auto lo = static_cast<uint16_t>(x >> 16);  // truncated: toward zero
  if ((x & 0xFFFF) == 0) return lo;
  const auto hi = static_cast<uint16_t>(lo + 1);  // next magnitude (may be Inf)
  const double v = raw_value(x & 0x7FFFFFFF);
  const double dl = v - raw_value(static_cast<uint32_t>(lo & 0x7FFF) << 16);
  const double dh = raw_value(static_cast<uint32_t>(hi & 0x7FFF) << 16) - v;
  if (dl < dh) return lo;
  if (dh < dl) return hi;
  return (lo & 1) == 0 ? lo : hi;
}

struct Case32 {
  uint32_t a, b, want;
  const char* why;
};
struct CaseMul {
  uint16_t a, b;
  uint32_t want;
  const char* why;
};
struct CaseCvt {
  uint32_t x;
  uint16_t want;
  const char* why;
};

}  // namespace

TEST_CASE("fp32_add: hand-worked corner cases", "[numerics]") {
  const Case32 cases[] = {
      // round to nearest, ties to even
      {0x3F800000, 0x33800000, 0x3F800000, "1 + 2^-24: tie, 1.0 is even -> stays 1.0"},
      {0x3F800001, 0x33800000, 0x3F800002, "(1+2^-23) + 2^-24: tie, odd -> rounds up to even"},
      {0x3F800000, 0x33800001, 0x3F800001, "1 + (2^-24 + 2^-47): above half -> up"},
      {0x3F800000, 0x337FFFFF, 0x3F800000, "1 + (2^-24 - 2^-48): below half -> down"},
      {0x3F800000, 0xB3000000, 0x3F800000, "1 - 2^-25: tie between 1-2^-24 (odd) and 1 (even) -> 1"},
      {0x3F800000, 0xB3800000, 0x3F7FFFFF, "1 - 2^-24: exact"},
      {0x3F800000, 0xB3400000, 0x3F7FFFFF, "1 - 1.5*2^-25: nearest is 1 - 2^-24"},
      {0x4B800000, 0x3F800000, 0x4B800000, "2^24 + 1: tie -> even 2^24"},
      {0x4B800000, 0x40400000, 0x4B800002, "2^24 + 3: tie -> even 2^24+4"},
      {0x3F800000, 0x00800000, 0x3F800000, "1 + min normal: far below half an ulp"},
      // carry into the exponent
      {0x3FFFFFFF, 0x34000000, 0x40000000, "(2 - 2^-23) + 2^-23 = 2 exactly"},
      {0x3FFFFFFF, 0x33800000, 0x40000000, "(2 - 2^-23) + 2^-24: tie -> up to 2.0 (carry)"},
      // overflow
      {0x7F7FFFFF, 0x7F7FFFFF, 0x7F800000, "max + max -> +Inf"},
      {0xFF7FFFFF, 0xFF7FFFFF, 0xFF800000, "-max + -max -> -Inf"},
      {0x7F7FFFFF, 0x73000000, 0x7F800000, "max + half ulp (2^103): tie, max is odd -> Inf"},
      {0x7F7FFFFF, 0x72800000, 0x7F7FFFFF, "max + quarter ulp -> max"},
      {0x7F7FFFFF, 0xF3000000, 0x7F7FFFFE, "max - half ulp: tie -> even (max - ulp)"},
      {0x7F7FFFFF, 0x00000000, 0x7F7FFFFF, "max normal + 0 = max"},
      // underflow (flush to zero, sign kept)
      {0x00C00000, 0x80800000, 0x00000000, "1.5*2^-126 - 2^-126 = 2^-127 -> +0"},
      {0x80C00000, 0x00800000, 0x80000000, "-1.5*2^-126 + 2^-126 = -2^-127 -> -0"},
      {0x01000000, 0x80800000, 0x00800000, "2^-125 - 2^-126 = 2^-126 (min normal) stays"},
      {0x00800001, 0x80800000, 0x00000000, "(2^-126 + 2^-149) - 2^-126 = 2^-149 -> +0"},
      {0x00800000, 0x00800000, 0x01000000, "min normal doubled"},
      // NaN and Inf
      {0x7F800001, 0x3F800000, kFp32QuietNaN, "signalling NaN in -> canonical"},
      {0xFFFFFFFF, 0x3F800000, kFp32QuietNaN, "negative NaN in -> canonical"},
      {0x3F800000, 0x7FC12345, kFp32QuietNaN, "NaN payload dropped"},
      {0x7FC00000, 0x7F800000, kFp32QuietNaN, "NaN + Inf -> NaN"},
      {0x7F800000, 0xFF800000, kFp32QuietNaN, "Inf - Inf -> NaN"},
      {0xFF800000, 0x7F800000, kFp32QuietNaN, "-Inf + Inf -> NaN"},
      {0x7F800000, 0x7F800000, 0x7F800000, "Inf + Inf = Inf"},
      {0xFF800000, 0x7F7FFFFF, 0xFF800000, "-Inf + max = -Inf"},
      {0x7F800000, 0x00000001, 0x7F800000, "Inf + subnormal = Inf"},
      // signed zeros
      {0x3FC00000, 0xBFC00000, 0x00000000, "x + (-x) = +0"},
      {0xBFC00000, 0x3FC00000, 0x00000000, "(-x) + x = +0"},
      {0x80000000, 0x80000000, 0x80000000, "(-0) + (-0) = -0"},
      {0x00000000, 0x80000000, 0x00000000, "(+0) + (-0) = +0"},
      {0x80000000, 0x00000000, 0x00000000, "(-0) + (+0) = +0"},
      {0x80000000, 0x3FC00000, 0x3FC00000, "(-0) + 1.5 = 1.5"},
      {0x80000000, 0xBFC00000, 0xBFC00000, "(-0) + (-1.5) = -1.5"},
      // subnormal inputs read as zero
      {0x00000001, 0x80000001, 0x00000000, "+sub + -sub = (+0) + (-0) = +0"},
      {0x80000001, 0x807FFFFF, 0x80000000, "-sub + -sub = (-0) + (-0) = -0"},
      {0x00400000, 0x3F800000, 0x3F800000, "subnormal + 1 = 1 exactly"},
      {0x807FFFFF, 0x00800000, 0x00800000, "-sub + min normal = min normal"},
      // cancellation
      {0x3F800001, 0xBF800000, 0x34000000, "(1+2^-23) - 1 = 2^-23 exactly"},
      {0x4B000001, 0xCB000000, 0x3F800000, "(2^23+1) - 2^23 = 1"},
      {0x3F7FFFFF, 0xBF800000, 0xB3800000, "(1-2^-24) - 1 = -2^-24"},
      {0x40000000, 0xBFFFFFFF, 0x34000000, "2 - (2-2^-23) = 2^-23 (exponents differ by 1)"},
      // large exponent differences (sticky only)
      {0x3F800000, 0x00800000, 0x3F800000, "1 + 2^-126"},
      {0x3F800000, 0x80800000, 0x3F800000, "1 - 2^-126 rounds back to 1"},
      {0x7F000000, 0x00800000, 0x7F000000, "2^127 + 2^-126"},
  };
  for (const auto& c : cases) {
    INFO(c.why << ": " << hex32(c.a) << " + " << hex32(c.b));
    CHECK(hex32(fp32_add(c.a, c.b)) == hex32(c.want));
    // Addition is commutative, including the signs of zeros.
    CHECK(hex32(fp32_add(c.b, c.a)) == hex32(c.want));
  }
}

TEST_CASE("bf16_mul: hand-worked corner cases", "[numerics]") {
  const CaseMul cases[] = {
      {0x3F80, 0x3F80, 0x3F800000, "1 x 1"},
      {0x3F81, 0x3F81, 0x3F820200, "(1+2^-7)^2 = 1 + 2^-6 + 2^-14, exact (not rounded to bf16)"},
      {0x3FC0, 0x3FC0, 0x40100000, "1.5 x 1.5 = 2.25 (significand product >= 2)"},
      {0x3FFF, 0x3FFF, 0x407E0100, "(2-2^-7)^2 = 4 - 2^-5 + 2^-14, exact"},
      {0xBF80, 0x3F80, 0xBF800000, "-1 x 1"},
      {0xBF80, 0xBF80, 0x3F800000, "-1 x -1"},
      // range
      {0x7F7F, 0x3F80, 0x7F7F0000, "max bf16 x 1"},
      {0x7F7F, 0x7F7F, 0x7F800000, "max x max -> +Inf"},
      {0x7F7F, 0xFF7F, 0xFF800000, "max x -max -> -Inf"},
      {0x7F00, 0x4000, 0x7F800000, "2^127 x 2 = 2^128 -> Inf"},
      {0x7F00, 0x3FFF, 0x7F7F0000, "2^127 x (2-2^-7) = largest product below 2^128"},
      {0x2000, 0x2000, 0x00800000, "2^-63 x 2^-63 = 2^-126: min normal"},
      {0x1F80, 0x1F00, 0x00000000, "2^-64 x 2^-65 = 2^-129 -> +0"},
      {0x9F80, 0x1F00, 0x80000000, "-2^-64 x 2^-65 -> -0"},
      {0x1FFF, 0x2000, 0x00000000, "(2-2^-7)2^-64 x 2^-63 = (2-2^-7)2^-127 < 2^-126 -> +0"},
      {0x1FFF, 0x2080, 0x00FF0000, "(2-2^-7)2^-64 x 2^-62 = (2-2^-7)2^-126: normal"},
      // zeros and subnormals
      {0x0000, 0x3F80, 0x00000000, "+0 x 1"},
      {0x8000, 0x3F80, 0x80000000, "-0 x 1"},
      {0x8000, 0xBF80, 0x00000000, "-0 x -1 = +0"},
      {0x0001, 0x3F80, 0x00000000, "+subnormal read as +0"},
      {0x8001, 0x3F80, 0x80000000, "-subnormal read as -0"},
      {0x007F, 0x7F7F, 0x00000000, "subnormal x max = 0 (DAZ), not 2^1"},
      // Inf and NaN
      {0x7F80, 0x0000, kFp32QuietNaN, "Inf x 0 -> NaN"},
      {0x8000, 0xFF80, kFp32QuietNaN, "-0 x -Inf -> NaN"},
      {0x7F80, 0x0001, kFp32QuietNaN, "Inf x subnormal (= 0) -> NaN"},
      {0x7F80, 0xBF80, 0xFF800000, "Inf x -1 = -Inf"},
      {0xFF80, 0xFF80, 0x7F800000, "-Inf x -Inf = +Inf"},
      {0x7FC0, 0x3F80, kFp32QuietNaN, "NaN x 1"},
      {0xFF81, 0x0000, kFp32QuietNaN, "signalling NaN x 0"},
      {0x3F80, 0x7F81, kFp32QuietNaN, "1 x NaN"},
  };
  for (const auto& c : cases) {
    INFO(c.why << ": " << hex16(c.a) << " x " << hex16(c.b));
    const uint32_t want = c.want;
    CHECK(hex32(bf16_mul(c.a, c.b)) == hex32(want));
    CHECK(hex32(bf16_mul(c.b, c.a)) == hex32(want));
  }
}

TEST_CASE("fp32_to_bf16 and bf16_to_fp32: corner cases", "[numerics]") {
  const CaseCvt cases[] = {
      {0x3F800000, 0x3F80, "1.0 exact"},
      {0x3F808000, 0x3F80, "1 + 2^-8: tie, 0x3F80 even -> down"},
      {0x3F818000, 0x3F82, "tie, 0x3F81 odd -> up to 0x3F82"},
      {0x3F808001, 0x3F81, "just above half -> up"},
      {0x3F807FFF, 0x3F80, "just below half -> down"},
      {0xBF818000, 0xBF82, "negative tie -> even (magnitude up)"},
      {0xBF808000, 0xBF80, "negative tie -> even (magnitude down)"},
      {0x3FFF8000, 0x4000, "(2 - 2^-8): tie, odd -> carry into the exponent: 2.0"},
      {0x3FFFC000, 0x4000, "above half with all-ones mantissa -> 2.0"},
      {0x7F7F7FFF, 0x7F7F, "just below the rounding threshold of max bf16"},
      {0x7F7F8000, 0x7F80, "tie at max bf16 (odd) -> +Inf"},
      {0x7F7FFFFF, 0x7F80, "max binary32 -> +Inf"},
      {0xFF7FFFFF, 0xFF80, "-max binary32 -> -Inf"},
      {0x7F800000, 0x7F80, "+Inf"},
      {0xFF800000, 0xFF80, "-Inf"},
      {0x7F800001, kBf16QuietNaN, "NaN with payload only in the low bits (truncation would give Inf)"},
      {0xFFC12345, kBf16QuietNaN, "negative NaN -> canonical"},
      {0x00000000, 0x0000, "+0"},
      {0x80000000, 0x8000, "-0"},
      {0x007FFFFF, 0x0000, "largest subnormal -> +0"},
      {0x807FFFFF, 0x8000, "negative subnormal -> -0"},
      {0x00800000, 0x0080, "min normal"},
      {0x00FFFFFF, 0x0100, "rounds up to 2^-125"},
  };
  for (const auto& c : cases) {
    INFO(c.why << ": " << hex32(c.x));
    CHECK(hex16(fp32_to_bf16(c.x)) == hex16(c.want));
    CHECK(hex16(ref_fp32_to_bf16(c.x)) == hex16(c.want));
  }
  CHECK(bf16_to_fp32(0x3F80) == 0x3F800000u);
  CHECK(bf16_to_fp32(0xC0A0) == 0xC0A00000u);
  CHECK(bf16_to_fp32(0x0001) == 0x00000000u);
  CHECK(bf16_to_fp32(0x8001) == 0x80000000u);
  CHECK(bf16_to_fp32(0x7F81) == kFp32QuietNaN);
  CHECK(bf16_to_fp32(0xFFC0) == kFp32QuietNaN);
  CHECK(bf16_to_fp32(0xFF80) == 0xFF800000u);
  // Exhaustive: widening is exact and converting back is the identity on non-NaN, non-subnormal.
  for (uint32_t x = 0; x <= 0xFFFF; ++x) {
    const auto b = static_cast<uint16_t>(x);
    const uint32_t w = bf16_to_fp32(b);
    if (bf16_is_nan(b)) {
      REQUIRE(w == kFp32QuietNaN);
    } else if (bf16_is_zero_or_subnormal(b)) {
      REQUIRE(w == (static_cast<uint32_t>(b & 0x8000) << 16));
    } else {
      REQUIRE(fp32_to_bf16(w) == b);
      REQUIRE(bf16_to_double(b) == static_cast<double>(bits_to_float(w)));
    }
  }
}

TEST_CASE("fp32_mac is fp32_add(acc, bf16_mul(a, b))", "[numerics]") {
  // Product exact (not rounded to bf16 or to binary32 before the addition), one rounding.
  CHECK(fp32_mac(0, 0x3F81, 0x3F81) == 0x3F820200u);
  CHECK(fp32_to_double(fp32_mac(0x3F800000, 0x3F81, 0x3F81)) == 2.0 + std::ldexp(1.0, -6) + std::ldexp(1.0, -14));
  CHECK(fp32_mac(0x3F800000, 0x3380, 0x3F80) == 0x3F800000u);  // 1 + 2^-24: tie -> 1
  CHECK(fp32_mac(0x3F800001, 0x3380, 0x3F80) == 0x3F800002u);  // tie -> even, up
  CHECK(fp32_mac(0x00000000, 0x8000, 0x3F80) == 0x00000000u);  // +0 + (-0) = +0
  CHECK(fp32_mac(0x80000000, 0x8000, 0x3F80) == 0x80000000u);  // -0 + (-0) = -0
  CHECK(fp32_mac(0x7F800000, 0x7F80, 0xBF80) == kFp32QuietNaN);  // Inf + (-Inf)
  CHECK(fp32_mac(0x3F800000, 0x7F7F, 0x7F7F) == 0x7F800000u);    // product overflows
  // docs/numerics.md §5: a tiny product is flushed before the addition (an FMA would give 2^-126).
  CHECK(fp32_mac(0x00C00000, 0x2000, 0x9F80) == 0x00C00000u);
  // ... and an overflowing product is Inf before the addition (the exact value would be 2^104).
  CHECK(fp32_mac(0xFF7FFFFF, 0x7F00, 0x4000) == 0x7F800000u);
  const uint64_t seed = 0x5EED0001;
  std::cout << "[numerics] fp32_mac composition seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 100000; ++i) {
    const auto acc = static_cast<uint32_t>(rng());
    const auto a = static_cast<uint16_t>(rng());
    const auto b = static_cast<uint16_t>(rng());
    REQUIRE(fp32_mac(acc, a, b) == fp32_add(acc, bf16_mul(a, b)));
  }
}

TEST_CASE("bf16_from_double and fp32_from_double", "[numerics]") {
  CHECK(bf16_from_double(1.0) == 0x3F80);
  CHECK(bf16_from_double(-2.5) == 0xC020);
  CHECK(bf16_from_double(1.0 + std::ldexp(1.0, -8)) == 0x3F80);                              // tie -> even
  CHECK(bf16_from_double(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)) == 0x3F81);       // no double rounding
  CHECK(bf16_from_double(1e39) == 0x7F80);
  CHECK(bf16_from_double(-1e39) == 0xFF80);
  CHECK(bf16_from_double(1e-39) == 0x0000);
  CHECK(bf16_from_double(-1e-39) == 0x8000);
  CHECK(bf16_from_double(std::nan("")) == kBf16QuietNaN);
  CHECK(bf16_from_double(std::numeric_limits<double>::infinity()) == 0x7F80);
  CHECK(fp32_from_double(0.1) == float_to_bits(0.1f));
  CHECK(fp32_from_double(1e300) == 0x7F800000u);
  CHECK(fp32_from_double(-1e-300) == 0x80000000u);
  CHECK(fp32_from_double(std::ldexp(1.0, -126)) == 0x00800000u);
  CHECK(fp32_from_double(std::ldexp(1.0, -127)) == 0x00000000u);
  const uint64_t seed = 0x5EED0002;
  std::cout << "[numerics] from_double seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1e6, 1e6);
  for (int i = 0; i < 100000; ++i) {
    const double v = dist(rng);
    // Rounding a double to binary32 directly agrees with the host (normal range).
    REQUIRE(fp32_from_double(v) == float_to_bits(static_cast<float>(v)));
    // One-step rounding to bf16 is the nearest bf16 (check against the two neighbours).
    const uint16_t b = bf16_from_double(v);
    const double bv = bf16_to_double(b);
    const double up = bf16_to_double(static_cast<uint16_t>(b + 1));
    const double down = bf16_to_double(static_cast<uint16_t>(b - 1));
    REQUIRE(std::fabs(bv - v) <= std::fabs(up - v));
    REQUIRE(std::fabs(bv - v) <= std::fabs(down - v));
  }
}

TEST_CASE("integer MACs wrap", "[numerics]") {
  CHECK(int8_mac(0, -128, -128) == 16384);
  CHECK(int8_mac(0, 127, -128) == -16256);
  CHECK(int8_mac(std::numeric_limits<int32_t>::max(), 1, 1) == std::numeric_limits<int32_t>::min());
  CHECK(int8_mac(std::numeric_limits<int32_t>::min(), -1, 1) == std::numeric_limits<int32_t>::max());
  const int64_t two47 = int64_t{1} << 47;
  CHECK(wrap48(two47) == -two47);
  CHECK(wrap48(two47 - 1) == two47 - 1);
  CHECK(wrap48(-two47) == -two47);
  CHECK(wrap48(-two47 - 1) == two47 - 1);
  CHECK(wrap48(int64_t{1} << 48) == 0);
  CHECK(wrap48(-1) == -1);
  CHECK(int16_mac48(two47 - 1, 1, 1) == -two47);
  CHECK(int16_mac48(0, -32768, -32768) == (int64_t{1} << 30));
  CHECK(int16_mac48(-two47, -1, 1) == two47 - 1);
  const uint64_t seed = 0x5EED0003;
  std::cout << "[numerics] integer MAC seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 1000000; ++i) {
    const auto acc32 = static_cast<int32_t>(rng());
    const auto a8 = static_cast<int8_t>(rng());
    const auto b8 = static_cast<int8_t>(rng());
    const int64_t exact32 = int64_t{acc32} + int64_t{a8} * b8;
    REQUIRE(int8_mac(acc32, a8, b8) == static_cast<int32_t>(static_cast<uint32_t>(exact32)));
    const int64_t acc48 = wrap48(static_cast<int64_t>(rng()));
    const auto a16 = static_cast<int16_t>(rng());
    const auto b16 = static_cast<int16_t>(rng());
    const int64_t exact48 = acc48 + int64_t{a16} * b16;  // no int64 overflow
    const int64_t m = ((exact48 % (int64_t{1} << 48)) + (int64_t{1} << 48)) % (int64_t{1} << 48);
    REQUIRE(int16_mac48(acc48, a16, b16) == (m >= two47 ? m - (int64_t{1} << 48) : m));
  }
}

namespace {

// Random operand generators. Each returns binary32 / bf16 bit patterns.
uint32_t random_fp32_near(std::mt19937_64& rng, uint32_t a, int max_delta) {
  const int ea = static_cast<int>((a >> 23) & 0xFF);
  std::uniform_int_distribution<int> delta(-max_delta, max_delta);
  const int eb = std::clamp(ea + delta(rng), 0, 255);
  const auto sign = static_cast<uint32_t>(rng() & 1u) << 31;
  return sign | (static_cast<uint32_t>(eb) << 23) | (static_cast<uint32_t>(rng()) & 0x7FFFFF);
}

void host_compare_add(uint64_t seed, int64_t n) {
  std::cout << "[numerics] fp32_add vs host seed=" << seed << " n=" << n << "\n";
  std::mt19937_64 rng(seed);
  const FtzDaz mode;
  int64_t compared = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto a = static_cast<uint32_t>(rng());
    uint32_t b = 0;
    switch (i % 4) {
      case 0:
        b = static_cast<uint32_t>(rng());  // unrelated operand (mostly a large exponent gap)
        break;
      case 1:
        b = random_fp32_near(rng, a, 2);  // heavy rounding and cancellation
        break;
      case 2:
        b = random_fp32_near(rng, a, 26);  // every alignment distance
        break;
      default: {
        // b = -(a +- a few ulps): near-total cancellation, tiny results
        const auto k = static_cast<uint32_t>(rng() % 9);
        b = (a ^ 0x80000000u) + k - 4;
        break;
      }
    }
    const uint32_t ours = fp32_add(a, b);
    const float host = host_add(bits_to_float(a), bits_to_float(b));
    const bool all = FETTA_HAVE_MXCSR != 0;
    if (!all && (!is_normal32(a) || !is_normal32(b))) continue;
    ++compared;
    if (!agrees(ours, host, all)) {
      FAIL(fmt::format("fp32_add({}, {}) = {}, host {}", hex32(a), hex32(b), hex32(ours), hex32(float_to_bits(host))));
    }
  }
  CHECK(compared > n / 2);
}

void host_compare_mul(uint64_t seed, int64_t n) {
  std::cout << "[numerics] bf16_mul vs host seed=" << seed << " n=" << n << "\n";
  std::mt19937_64 rng(seed);
  const FtzDaz mode;
  for (int64_t i = 0; i < n; ++i) {
    auto a = static_cast<uint16_t>(rng());
    auto b = static_cast<uint16_t>(rng());
    if (i % 2 == 1) {
      // exponents in the middle of the range: the product is a normal number most of the time
      a = static_cast<uint16_t>((a & 0x807F) | (static_cast<uint16_t>(64 + rng() % 128) << 7));
      b = static_cast<uint16_t>((b & 0x807F) | (static_cast<uint16_t>(64 + rng() % 128) << 7));
    }
    const uint32_t ours = bf16_mul(a, b);
    const float fa = bits_to_float(static_cast<uint32_t>(a) << 16);
    const float fb = bits_to_float(static_cast<uint32_t>(b) << 16);
    const float host = host_mul(fa, fb);
    const bool all = FETTA_HAVE_MXCSR != 0;
    if (!all && (!is_normal32(float_to_bits(fa)) || !is_normal32(float_to_bits(fb)))) continue;
    if (!agrees(ours, host, all))
      FAIL(fmt::format("bf16_mul({}, {}) = {}, host {}", hex16(a), hex16(b), hex32(ours), hex32(float_to_bits(host))));
  }
}

void compare_to_bf16(uint64_t seed, int64_t n) {
  std::cout << "[numerics] fp32_to_bf16 vs reference seed=" << seed << " n=" << n << "\n";
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    auto x = static_cast<uint32_t>(rng());
    if (i % 2 == 1) x = (x & 0xFFFF0000u) | 0x8000u | (static_cast<uint32_t>(rng() % 3) - 1);  // near ties
    const uint16_t ours = fp32_to_bf16(x);
    const uint16_t ref = ref_fp32_to_bf16(x);
    if (ours != ref) FAIL(fmt::format("fp32_to_bf16({}) = {}, reference {}", hex32(x), hex16(ours), hex16(ref)));
  }
}

}  // namespace

TEST_CASE("fp32_add agrees with the host FPU (FTZ|DAZ) on 10^6 random pairs", "[numerics]") {
  host_compare_add(0xADD00001, 1000000);
}

TEST_CASE("bf16_mul agrees with the host FPU (FTZ|DAZ) on 10^6 random pairs", "[numerics]") {
  host_compare_mul(0x3D100001, 1000000);
}

TEST_CASE("bf16_mul: 256 random multiplicands x every bf16 against the host", "[numerics]") {
  const uint64_t seed = 0x3D100002;
  std::cout << "[numerics] bf16_mul sweep seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  const FtzDaz mode;
  for (int i = 0; i < 256; ++i) {
    const auto a = static_cast<uint16_t>(rng());
    const float fa = bits_to_float(static_cast<uint32_t>(a) << 16);
    for (uint32_t bb = 0; bb <= 0xFFFF; ++bb) {
      const auto b = static_cast<uint16_t>(bb);
      const float host = host_mul(fa, bits_to_float(bb << 16));
      const uint32_t ours = bf16_mul(a, b);
      if (!agrees(ours, host, FETTA_HAVE_MXCSR != 0))
        FAIL(fmt::format("bf16_mul({}, {}) = {}, host {}", hex16(a), hex16(b), hex32(ours), hex32(float_to_bits(host))));
    }
  }
}

TEST_CASE("fp32_mul_bf16: hand-worked corner cases", "[numerics]") {
  struct Case {
    uint32_t x;
    uint16_t a;
    uint32_t want;
    const char* why;
  };
  const Case cases[] = {
      {0x3F800000, 0x3F80, 0x3F800000, "1 x 1"},
      {0x3F800001, 0x3F81, 0x3F810001, "(1+2^-23)(1+2^-7) = 1 + 2^-7 + 2^-23 + 2^-30: rounds down"},
      {0x3FFFFFFF, 0x3FFF, 0x407EFFFF, "(2-2^-23)(2-2^-7) = 4 - 2^-6 - 2^-22 + 2^-30: rounds down"},
      {0x3F800003, 0x3FC0, 0x3FC00004, "(1+3*2^-23)*1.5 = 1.5 + 4.5*2^-23: tie rounds to even (4)"},
      {0x3F800001, 0x3FC0, 0x3FC00002, "(1+2^-23)*1.5 = 1.5 + 1.5*2^-23: tie rounds to even (2)"},
      {0x7F7FFFFF, 0x3F80, 0x7F7FFFFF, "largest finite x 1"},
      {0x7F7FFFFF, 0x3F81, 0x7F800000, "overflow -> +Inf"},
      {0x7F7FFFFF, 0x3FFF, 0x7F800000, "overflow by far -> +Inf"},
      {0x00800000, 0x3F80, 0x00800000, "smallest normal x 1"},
      {0x00800000, 0x3F00, 0x00000000, "2^-127: flushed"},
      {0x00FFFFFF, 0x3F00, 0x00000000, "(2-2^-23)*2^-127 < 2^-126: flushed"},
      {0x00FE03F8, 0x3F01, 0x00000000, "exact product 2^-126 (1 - 2^-28): flushed, though it rounds to 2^-126"},
      {0x80800000, 0x3F80, 0x80800000, "sign kept"},
      {0x80800000, 0x3F00, 0x80000000, "negative flush keeps the sign"},
      {0x00400000, 0x3F80, 0x00000000, "subnormal x -> 0 (DAZ)"},
      {0x3F800000, 0x0040, 0x00000000, "subnormal a -> 0 (DAZ)"},
      {0xBF800000, 0x0040, 0x80000000, "-1 x +subnormal -> -0"},
      {0x7F800000, 0x0000, kFp32QuietNaN, "Inf x 0"},
      {0x00000000, 0xFF80, kFp32QuietNaN, "0 x -Inf"},
      {0x7F800000, 0xBF80, 0xFF800000, "Inf x -1"},
      {0x7F800001, 0x3F80, kFp32QuietNaN, "NaN x"},
      {0x3F800000, 0xFFC1, kFp32QuietNaN, "NaN a"},
  };
  for (const Case& c : cases) {
    INFO(c.why << ": " << hex32(c.x) << " x " << hex16(c.a));
    CHECK(hex32(fp32_mul_bf16(c.x, c.a)) == hex32(c.want));
  }
  // The bf16 x bf16 products it shares with bf16_mul are exact, so both give the same bits.
  CHECK(fp32_mul_bf16(bf16_to_fp32(0x3F81), 0x3F81) == bf16_mul(0x3F81, 0x3F81));
}

TEST_CASE("fp32_mul_bf16 agrees with the host FPU on 10^6 random pairs (FTZ on the exact product)", "[numerics]") {
  const uint64_t seed = 0x3D100004;
  std::cout << "[numerics] fp32_mul_bf16 vs host seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  const FtzDaz mode;
  for (int i = 0; i < 1000000; ++i) {
    auto x = static_cast<uint32_t>(rng());
    auto a = static_cast<uint16_t>(rng());
    if (i % 2 == 1) {  // exponents whose sum is near the bottom or the top of the range
      const auto ex = static_cast<uint32_t>(1 + rng() % 254);
      const uint32_t ea = rng() % 2 ? std::clamp<uint32_t>(128 - ex + static_cast<uint32_t>(rng() % 5), 1, 254)
                                    : std::clamp<uint32_t>(381 - ex + static_cast<uint32_t>(rng() % 5), 1, 254);
      x = (x & 0x807FFFFFu) | ex << 23;
      a = static_cast<uint16_t>((a & 0x807Fu) | ea << 7);
    }
    const uint32_t ours = fp32_mul_bf16(x, a);
    const float fa = bits_to_float(static_cast<uint32_t>(a) << 16);
    const float host = host_mul(bits_to_float(x), fa);
    // The host judges tininess after rounding; the contract before: an exact product below 2^-126
    // is a signed zero even where it rounds up to 2^-126 (exact in double: 24 x 8 bits).
    const double exact = std::fabs(static_cast<double>(bits_to_float(x)) * static_cast<double>(fa));
    const bool daz = (x & 0x7F800000u) == 0 || (a & 0x7F80u) == 0;
    if (!daz && !std::isnan(exact) && exact < std::ldexp(1.0, -126)) {
      REQUIRE(hex32(ours) == hex32(((x ^ (static_cast<uint32_t>(a) << 16)) & 0x80000000u)));
      continue;
    }
    if (!agrees(ours, host, FETTA_HAVE_MXCSR != 0))
      FAIL(fmt::format("fp32_mul_bf16({}, {}) = {}, host {}", hex32(x), hex16(a), hex32(ours), hex32(float_to_bits(host))));
  }
}

TEST_CASE("fp32_to_bf16 agrees with an independent reference on 10^6 values", "[numerics]") {
  compare_to_bf16(0xB16B0001, 1000000);
}

// FETTA_LARGE_TESTS: 10^8 random pairs each, every binary32 through fp32_to_bf16.
TEST_CASE("numerics: large random runs", "[.large][numerics_large]") {
  host_compare_add(0xADD00002, 100000000);
  host_compare_mul(0x3D100003, 100000000);
  std::cout << "[numerics] fp32_to_bf16 exhaustive over 2^32 inputs\n";
  for (uint64_t x = 0; x <= 0xFFFFFFFFull; ++x) {
    const auto v = static_cast<uint32_t>(x);
    if (fp32_to_bf16(v) != ref_fp32_to_bf16(v)) FAIL(fmt::format("fp32_to_bf16({})", hex32(v)));
  }
}
