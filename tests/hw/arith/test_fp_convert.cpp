// Fp32ToBf16 against verif::fp32_to_bf16, bit-exact.
#include <catch2/catch.hpp>

#include "Vfp32_to_bf16.h"
#include "arith_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

using namespace arith_test;
using fetta::verif::fp32_to_bf16;

namespace {

void check_values(Vfp32_to_bf16& dut, uint64_t n, const std::function<uint32_t(uint64_t)>& value, const std::string& what) {
  Mismatches bad;
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t x = value(i);
    dut.in = x;
    dut.eval();
    const uint16_t want = fp32_to_bf16(x);
    if (dut.out != want) bad.note(fmt::format("{}: rtl {} want {}", hex(x, 8), hex(dut.out, 4), hex(want, 4)));
  }
  INFO(what << ": " << bad.count << " of " << n << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

}  // namespace

TEST_CASE("Fp32ToBf16: every upper half with the rounding-critical lower halves", "[fp_convert]") {
  // Every sign/exponent/high-mantissa pattern (zeros, subnormals, Inf, every NaN class, the
  // largest finite values that round up to Inf) with lower halves below, at and above the tie.
  const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
  VerilatedContext ctx;
  Vfp32_to_bf16 dut{&ctx};
  check_values(dut, 0x10000 * std::size(lows), [&](uint64_t i) {
    return static_cast<uint32_t>((i / std::size(lows)) << 16 | lows[i % std::size(lows)]);
  }, "upper x lows");
}

TEST_CASE("Fp32ToBf16: 10^6 uniform random values", "[fp_convert]") {
  std::mt19937_64 rng(seed("fp_convert uniform", 0xC0DE0001));
  VerilatedContext ctx;
  Vfp32_to_bf16 dut{&ctx};
  check_values(dut, 1000000, [&](uint64_t) { return static_cast<uint32_t>(rng()); }, "uniform");
}

// FETTA_LARGE_TESTS: every binary32 pattern.
TEST_CASE("Fp32ToBf16: all 2^32 inputs", "[.large][arith_large]") {
  VerilatedContext ctx;
  Vfp32_to_bf16 dut{&ctx};
  std::cout << "[arith] fp_convert exhaustive over 2^32 inputs\n";
  check_values(dut, uint64_t{1} << 32, [](uint64_t i) { return static_cast<uint32_t>(i); }, "exhaustive");
}
