// Bf16Mul against verif::bf16_mul (default bf16 -> binary32), and an fp8 E5M2 configuration
// swept exhaustively against an independent double-precision reference.
#include <catch2/catch.hpp>

#include <cmath>

#include "Vfp32_mul_bf16.h"
#include "Vfp_mul_e5m2_o5.h"
#include "Vfp_mul_e8m7_o23.h"
#include "arith_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

using namespace arith_test;
using fetta::verif::bf16_mul;
using fetta::verif::fp32_mul_bf16;

namespace {

// Runs (a, b) pairs through the bf16 multiplier and compares with verif::bf16_mul.
void check_bf16_pairs(Vfp_mul_e8m7_o23& dut, size_t n, const std::function<std::pair<uint16_t, uint16_t>(size_t)>& pair,
                      const std::string& what) {
  Mismatches bad;
  for (size_t i = 0; i < n; ++i) {
    const auto [a, b] = pair(i);
    dut.a = a;
    dut.b = b;
    dut.eval();
    const uint32_t want = bf16_mul(a, b);
    if (dut.product != want)
      bad.note(fmt::format("{} x {}: rtl {} want {}", hex(a, 4), hex(b, 4), hex(dut.product, 8), hex(want, 8)));
  }
  INFO(what << ": " << bad.count << " of " << n << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

// Generic reference for a (1, E, M) x (1, E, M) -> (1, E, O) exact multiplier, computed in
// double (exact for these widths): DAZ, FTZ below 2^(1-bias), Inf at or above 2^(bias+1),
// canonical NaN (exponent all ones, mantissa MSB set).
uint32_t reference_mul(int E, int M, int O, uint32_t a, uint32_t b) {
  const int bias = (1 << (E - 1)) - 1;
  const uint32_t ones = (1u << E) - 1;
  auto decode = [&](uint32_t x, bool& nan, bool& inf) {
    const uint32_t e = (x >> M) & ones, m = x & ((1u << M) - 1);
    nan = e == ones && m != 0;
    inf = e == ones && m == 0;
    if (e == 0) return 0.0;
    return std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -M), static_cast<int>(e) - bias);
  };
  bool nan_a, inf_a, nan_b, inf_b;
  const double va = decode(a, nan_a, inf_a), vb = decode(b, nan_b, inf_b);
  const uint32_t sign = ((a ^ b) >> (E + M)) & 1;
  const uint32_t nan_bits = ones << O | 1u << (O - 1);
  if (nan_a || nan_b || (inf_a && !inf_b && vb == 0) || (inf_b && !inf_a && va == 0)) return nan_bits;
  if ((inf_a && !nan_b) || (inf_b && !nan_a)) return sign << (E + O) | ones << O;
  const double v = va * vb;
  if (v == 0 || v < std::ldexp(1.0, 1 - bias)) return sign << (E + O);
  if (v >= std::ldexp(1.0, bias + 1)) return sign << (E + O) | ones << O;
  int exp2 = 0;
  const double frac = std::frexp(v, &exp2);  // v = frac * 2^exp2, frac in [0.5, 1)
  const double man = std::ldexp(frac * 2 - 1, O);
  REQUIRE(man == std::floor(man));  // the product is exact
  return sign << (E + O) | static_cast<uint32_t>(exp2 - 1 + bias) << O | static_cast<uint32_t>(man);
}

}  // namespace

TEST_CASE("Bf16Mul: every pair of corner operands", "[fp_mul]") {
  VerilatedContext ctx;
  Vfp_mul_e8m7_o23 dut{&ctx};
  const auto c = bf16_corners();
  check_bf16_pairs(dut, c.size() * c.size(), [&](size_t i) { return std::pair{c[i / c.size()], c[i % c.size()]}; },
                   "corner x corner");
}

TEST_CASE("Bf16Mul: 10^6 uniform random pairs", "[fp_mul]") {
  std::mt19937_64 rng(seed("fp_mul uniform", 0xB16F0001));
  VerilatedContext ctx;
  Vfp_mul_e8m7_o23 dut{&ctx};
  check_bf16_pairs(dut, 1000000, [&](size_t) {
    const uint64_t r = rng();
    return std::pair{static_cast<uint16_t>(r), static_cast<uint16_t>(r >> 16)};
  }, "uniform");
}

TEST_CASE("Bf16Mul: 10^6 pairs near the flush and overflow thresholds", "[fp_mul]") {
  std::mt19937_64 rng(seed("fp_mul thresholds", 0xB16F0002));
  VerilatedContext ctx;
  Vfp_mul_e8m7_o23 dut{&ctx};
  check_bf16_pairs(dut, 1000000, [&](size_t i) {
    // Exponent sums within +-8 of the flush (127) or overflow (382) boundary, random mantissas.
    const int target = (i % 2 ? 127 : 382) + static_cast<int>(rng() % 17) - 8;
    const int lo = std::max(1, target - 254), hi = std::min(254, target - 1);
    const int ea = lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
    const int eb = target - ea;
    const uint64_t r = rng();
    return std::pair{static_cast<uint16_t>((r & 0x807F) | static_cast<uint64_t>(ea) << 7),
                     static_cast<uint16_t>((r >> 16 & 0x807F) | static_cast<uint64_t>(eb) << 7)};
  }, "thresholds");
}

TEST_CASE("Bf16Mul fp8 E5M2 -> E5M5: all 2^16 pairs against a double reference", "[fp_mul]") {
  VerilatedContext ctx;
  Vfp_mul_e5m2_o5 dut{&ctx};
  Mismatches bad;
  size_t specials = 0;
  for (uint32_t a = 0; a < 256; ++a)
    for (uint32_t b = 0; b < 256; ++b) {
      dut.a = static_cast<uint8_t>(a);
      dut.b = static_cast<uint8_t>(b);
      dut.eval();
      const uint32_t want = reference_mul(5, 2, 5, a, b);
      if ((want & 0x3FF) == 0 || (want >> 5 & 0x1F) == 0x1F) ++specials;
      if (dut.product != want) bad.note(fmt::format("{} x {}: rtl {} want {}", hex(a, 2), hex(b, 2), hex(dut.product, 3), hex(want, 3)));
    }
  INFO(bad.count << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
  REQUIRE(specials > 1000);  // the sweep does reach zeros, Infs and NaNs
}

// FETTA_LARGE_TESTS: every one of the 2^32 bf16 x bf16 pairs.
TEST_CASE("Bf16Mul: all 2^32 pairs", "[.large][arith_large]") {
  VerilatedContext ctx;
  Vfp_mul_e8m7_o23 dut{&ctx};
  std::cout << "[arith] fp_mul exhaustive over 2^32 pairs\n";
  check_bf16_pairs(dut, size_t{1} << 32, [](size_t i) {
    return std::pair{static_cast<uint16_t>(i >> 16), static_cast<uint16_t>(i)};
  }, "exhaustive");
}

namespace {

// Runs (x, a) pairs through Fp32MulBf16 and compares with verif::fp32_mul_bf16.
void check_mixed_pairs(Vfp32_mul_bf16& dut, size_t n, const std::function<std::pair<uint32_t, uint16_t>(size_t)>& pair,
                       const std::string& what) {
  Mismatches bad;
  for (size_t i = 0; i < n; ++i) {
    const auto [x, a] = pair(i);
    dut.x = x;
    dut.a = a;
    dut.eval();
    const uint32_t want = fp32_mul_bf16(x, a);
    if (dut.product != want)
      bad.note(fmt::format("{} x {}: rtl {} want {}", hex(x, 8), hex(a, 4), hex(dut.product, 8), hex(want, 8)));
  }
  INFO(what << ": " << bad.count << " of " << n << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

}  // namespace

TEST_CASE("Fp32MulBf16: every binary32 corner x every bf16 corner", "[fp_mul]") {
  VerilatedContext ctx;
  Vfp32_mul_bf16 dut{&ctx};
  const auto x = fp32_corners();
  const auto a = bf16_corners();
  check_mixed_pairs(dut, x.size() * a.size(), [&](size_t i) { return std::pair{x[i / a.size()], a[i % a.size()]}; },
                    "corner x corner");
}

TEST_CASE("Fp32MulBf16: 10^6 random pairs, half of them near the ends of the exponent range", "[fp_mul]") {
  std::mt19937_64 rng(seed("fp32_mul_bf16 random", 0xB16F0003));
  VerilatedContext ctx;
  Vfp32_mul_bf16 dut{&ctx};
  check_mixed_pairs(dut, 1000000, [&](size_t i) {
    auto x = static_cast<uint32_t>(rng());
    auto a = static_cast<uint16_t>(rng());
    if (i % 2 == 1) {  // exponent sums near the flush (127) and overflow (382) thresholds
      const auto ex = static_cast<uint32_t>(1 + rng() % 254);
      const auto ea = static_cast<uint32_t>(std::clamp<int64_t>(
          (rng() % 2 ? 127 : 382) - static_cast<int64_t>(ex) + static_cast<int64_t>(rng() % 5) - 2, 1, 254));
      x = (x & 0x807FFFFFu) | ex << 23;
      a = static_cast<uint16_t>((a & 0x807Fu) | ea << 7);
    }
    return std::pair{x, a};
  }, "random");
}
