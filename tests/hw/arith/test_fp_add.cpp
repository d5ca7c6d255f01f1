// Fp32Add (combinational and 5-stage) against verif::fp32_add, bit-exact.
#include <catch2/catch.hpp>

#include <cmath>

#include "Vfp32_add_s0.h"
#include "Vfp32_add_s5.h"
#include "arith_test_util.hpp"
#include "hw/arith/fp_add.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

using namespace arith_test;
using fetta::verif::fp32_add;

namespace {

struct Pair {
  uint32_t a, b;
};

template <typename Dut>
void check_pairs(Dut& dut, int latency, const std::vector<Pair>& v, const std::string& what) {
  Mismatches bad;
  stream(dut, latency, v.size(), [&](size_t i) {
    dut.a = v[i].a;
    dut.b = v[i].b;
  }, [&](size_t i) {
    const uint32_t want = fp32_add(v[i].a, v[i].b);
    if (dut.sum != want)
      bad.note(fmt::format("{} + {}: rtl {} want {}", hex(v[i].a, 8), hex(v[i].b, 8), hex(dut.sum, 8), hex(want, 8)));
  });
  INFO(what << ": " << bad.count << " of " << v.size() << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

std::vector<Pair> corner_pairs() {
  const auto c = fp32_corners();
  std::vector<Pair> v;
  for (uint32_t a : c)
    for (uint32_t b : c) v.push_back({a, b});
  return v;
}

std::vector<Pair> uniform_pairs(std::mt19937_64& rng, size_t n) {
  std::vector<Pair> v(n);
  for (Pair& p : v) {
    const uint64_t r = rng();
    p = {static_cast<uint32_t>(r), static_cast<uint32_t>(r >> 32)};
  }
  return v;
}

std::vector<Pair> biased_pairs(std::mt19937_64& rng, size_t n) {
  std::vector<Pair> v(n);
  for (size_t i = 0; i < n; ++i) biased_fp32_pair(rng, static_cast<int>(i), v[i].a, v[i].b);
  return v;
}

}  // namespace

TEST_CASE("Fp32Add: every pair of corner operands (360 x 360)", "[fp_add]") {
  VerilatedContext ctx;
  Vfp32_add_s0 dut{&ctx};
  check_pairs(dut, 0, corner_pairs(), "corner x corner");
}

TEST_CASE("Fp32Add: 10^6 uniform random pairs", "[fp_add]") {
  std::mt19937_64 rng(seed("fp_add uniform", 0xADD00001));
  VerilatedContext ctx;
  Vfp32_add_s0 dut{&ctx};
  check_pairs(dut, 0, uniform_pairs(rng, 1000000), "uniform");
}

TEST_CASE("Fp32Add: 10^6 biased pairs (cancellation, ties, exponent extremes, specials)", "[fp_add]") {
  std::mt19937_64 rng(seed("fp_add biased", 0xADD00002));
  const auto v = biased_pairs(rng, 1000000);
  // The biased classes do reach the cases they are meant for.
  size_t zero = 0, inf = 0, flushed = 0, ties = 0;
  for (const Pair& p : v) {
    const uint32_t s = fp32_add(p.a, p.b);
    zero += s == 0;
    inf += fetta::verif::fp32_is_inf(s) && !fetta::verif::fp32_is_inf(p.a) && !fetta::verif::fp32_is_inf(p.b);
    flushed += (s & 0x7FFFFFFFu) == 0 && (p.a & 0x7F800000u) != 0 && (p.b & 0x7F800000u) != 0;
    // A tie: the exact sum, as a double, sits halfway between the result and its neighbour.
    const double exact = fetta::verif::fp32_to_double(p.a) + fetta::verif::fp32_to_double(p.b);
    const double got = fetta::verif::fp32_to_double(s);
    if (std::isfinite(exact) && got != 0 && exact != got) {
      const double ulp = std::ldexp(1.0, std::ilogb(got) - 23);
      ties += std::fabs(exact - got) == ulp / 2;
    }
  }
  std::cout << fmt::format("[arith] fp_add biased: {} exact zeros, {} overflows, {} flushed, {} ties\n", zero, inf,
                           flushed, ties);
  CHECK(zero > 10000);
  CHECK(inf > 10000);
  CHECK(flushed > 1000);
  CHECK(ties > 10000);
  VerilatedContext ctx;
  Vfp32_add_s0 dut{&ctx};
  check_pairs(dut, 0, v, "biased");
}

TEST_CASE("Fp32Add, 5 stages: latency 5, one result per cycle", "[fp_add]") {
  REQUIRE(fetta::hw::Fp32Add({5, 0}).cuts() == std::vector<int>{1, 1, 1, 1, 1});
  std::mt19937_64 rng(seed("fp_add pipelined", 0xADD00003));
  VerilatedContext ctx;
  Vfp32_add_s5 dut{&ctx};
  check_pairs(dut, 5, corner_pairs(), "pipelined corner x corner");
  std::vector<Pair> v = uniform_pairs(rng, 200000);
  const auto b = biased_pairs(rng, 200000);
  v.insert(v.end(), b.begin(), b.end());
  check_pairs(dut, 5, v, "pipelined random");
}

// FETTA_LARGE_TESTS: 10^8 uniform and 10^8 biased pairs.
TEST_CASE("Fp32Add: 2 x 10^8 random pairs", "[.large][arith_large]") {
  std::mt19937_64 rng(seed("fp_add large", 0xADD00004));
  VerilatedContext ctx;
  Vfp32_add_s0 dut{&ctx};
  for (int round = 0; round < 100; ++round) {
    check_pairs(dut, 0, uniform_pairs(rng, 1000000), "large uniform");
    check_pairs(dut, 0, biased_pairs(rng, 1000000), "large biased");
  }
}
