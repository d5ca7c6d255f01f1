// Fp32Add against verif::fp32_add, bit-exact: the basic and the two-path datapath (with each
// prefix-adder kind) combinational on the same vectors, and both 5-stage pipelines.
#include <catch2/catch.hpp>

#include <cmath>

#include "Vfp32_add_s0.h"
#include "Vfp32_add_s5.h"
#include "Vfp32_add_twopath_bk_s0.h"
#include "Vfp32_add_twopath_ks_s0.h"
#include "Vfp32_add_twopath_sk_s0.h"
#include "Vfp32_add_twopath_sk_s5.h"
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
  INFO(dut.modelName() << " " << what << ": " << bad.count << " of " << v.size() << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

// The same vectors through every combinational adder model.
void check_combinational(const std::vector<Pair>& v, const std::string& what) {
  VerilatedContext ctx;
  Vfp32_add_s0 basic{&ctx};
  check_pairs(basic, 0, v, what);
  Vfp32_add_twopath_sk_s0 sk{&ctx};
  check_pairs(sk, 0, v, what);
  Vfp32_add_twopath_ks_s0 ks{&ctx};
  check_pairs(ks, 0, v, what);
  Vfp32_add_twopath_bk_s0 bk{&ctx};
  check_pairs(bk, 0, v, what);
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

// Every exponent distance from 0 to 34 (the near/far boundary at 2, the sticky-only alignment
// from 26, the 5-bit shift's wrap at 32) and a few far beyond, `per` pairs each: random base
// exponent, signs and ragged mantissas, the larger exponent on either side.
std::vector<Pair> distance_pairs(std::mt19937_64& rng, int per) {
  std::vector<int> dists;
  for (int d = 0; d <= 34; ++d) dists.push_back(d);
  for (int d : {40, 63, 64, 100, 127, 128, 200, 253}) dists.push_back(d);
  std::vector<Pair> v;
  for (int d : dists)
    for (int i = 0; i < per; ++i) {
      const auto lo = static_cast<uint32_t>(1 + rng() % (254 - d));
      const uint32_t x = fp32(static_cast<uint32_t>(rng() & 1), lo + static_cast<uint32_t>(d), ragged_mantissa(rng));
      const uint32_t y = fp32(static_cast<uint32_t>(rng() & 1), lo, ragged_mantissa(rng));
      v.push_back(i % 2 ? Pair{x, y} : Pair{y, x});
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
  check_combinational(corner_pairs(), "corner x corner");
}

TEST_CASE("Fp32Add: exponent distances 0..34 and beyond", "[fp_add]") {
  std::mt19937_64 rng(seed("fp_add distances", 0xADD00005));
  check_combinational(distance_pairs(rng, 4000), "distances");
}

TEST_CASE("Fp32Add: 10^6 uniform random pairs", "[fp_add]") {
  std::mt19937_64 rng(seed("fp_add uniform", 0xADD00001));
  check_combinational(uniform_pairs(rng, 1000000), "uniform");
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
  check_combinational(v, "biased");
}

TEST_CASE("Fp32Add, 5 stages: latency 5, one result per cycle", "[fp_add]") {
  using fetta::hw::Fp32Add, fetta::hw::Fp32AddArch, fetta::hw::PrefixKind;
  REQUIRE(Fp32Add({5, 0}).cuts() == std::vector<int>{1, 1, 1, 1, 1});
  REQUIRE(Fp32Add({5, 0, Fp32AddArch::two_path, PrefixKind::sklansky}).cuts() == std::vector<int>{1, 1, 1, 1, 1});
  std::mt19937_64 rng(seed("fp_add pipelined", 0xADD00003));
  std::vector<Pair> v = uniform_pairs(rng, 200000);
  const auto b = biased_pairs(rng, 200000);
  v.insert(v.end(), b.begin(), b.end());
  const auto d = distance_pairs(rng, 500);
  v.insert(v.end(), d.begin(), d.end());
  VerilatedContext ctx;
  Vfp32_add_s5 basic{&ctx};
  check_pairs(basic, 5, corner_pairs(), "pipelined corner x corner");
  check_pairs(basic, 5, v, "pipelined random");
  Vfp32_add_twopath_sk_s5 two_path{&ctx};
  check_pairs(two_path, 5, corner_pairs(), "pipelined corner x corner");
  check_pairs(two_path, 5, v, "pipelined random");
}

// FETTA_LARGE_TESTS: 10^8 uniform and 10^8 biased pairs.
TEST_CASE("Fp32Add: 2 x 10^8 random pairs", "[.large][arith_large]") {
  std::mt19937_64 rng(seed("fp_add large", 0xADD00004));
  VerilatedContext ctx;
  Vfp32_add_s0 basic{&ctx};
  Vfp32_add_twopath_sk_s0 two_path{&ctx};
  for (int round = 0; round < 100; ++round) {
    const auto u = uniform_pairs(rng, 1000000), b = biased_pairs(rng, 1000000);
    check_pairs(basic, 0, u, "large uniform");
    check_pairs(basic, 0, b, "large biased");
    check_pairs(two_path, 0, u, "large uniform");
    check_pairs(two_path, 0, b, "large biased");
  }
}
