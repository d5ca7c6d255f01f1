// FpMac (combinational and 6-stage, with the basic and the two-path adder) against
// verif::fp32_mac, bit-exact.
#include <catch2/catch.hpp>

#include "Vfp_mac_bf16_fp32_s0.h"
#include "Vfp_mac_bf16_fp32_s6.h"
#include "Vfp_mac_bf16_fp32_twopath_sk_s0.h"
#include "Vfp_mac_bf16_fp32_twopath_sk_s6.h"
#include "arith_test_util.hpp"
#include "hw/arith/fp_mac.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

using namespace arith_test;
using fetta::verif::bf16_mul;
using fetta::verif::fp32_mac;

namespace {

struct MacIn {
  uint16_t a, b;
  uint32_t acc;
};

template <typename Dut>
void check_macs(Dut& dut, int latency, const std::vector<MacIn>& v, const std::string& what) {
  Mismatches bad;
  stream(dut, latency, v.size(), [&](size_t i) {
    dut.a = v[i].a;
    dut.b = v[i].b;
    dut.acc = v[i].acc;
  }, [&](size_t i) {
    const uint32_t want = fp32_mac(v[i].acc, v[i].a, v[i].b);
    if (dut.out != want)
      bad.note(fmt::format("{} + {} x {}: rtl {} want {}", hex(v[i].acc, 8), hex(v[i].a, 4), hex(v[i].b, 4),
                           hex(dut.out, 8), hex(want, 8)));
  });
  INFO(dut.modelName() << " " << what << ": " << bad.count << " of " << v.size() << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

// The same operand sets through both combinational MACs.
void check_combinational(const std::vector<MacIn>& v, const std::string& what) {
  VerilatedContext ctx;
  Vfp_mac_bf16_fp32_s0 basic{&ctx};
  check_macs(basic, 0, v, what);
  Vfp_mac_bf16_fp32_twopath_sk_s0 two_path{&ctx};
  check_macs(two_path, 0, v, what);
}

// bf16 corners x bf16 corners x a set of accumulator corners.
std::vector<MacIn> corner_macs() {
  const auto c = bf16_corners();
  const uint32_t accs[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u,
                           0x3F800000u, 0xBF800000u, 0x3F800001u, 0xBF7FFFFFu, 0x33800000u, 0xB3800000u,
                           0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFF800001u,
                           0x4B000001u, 0xCB000001u, 0x01000000u, 0x81000000u};
  std::vector<MacIn> v;
  for (uint16_t a : c)
    for (uint16_t b : c)
      for (uint32_t acc : accs) v.push_back({a, b, acc});
  return v;
}

std::vector<MacIn> uniform_macs(std::mt19937_64& rng, size_t n) {
  std::vector<MacIn> v(n);
  for (MacIn& m : v) {
    const uint64_t r = rng();
    m = {static_cast<uint16_t>(r), static_cast<uint16_t>(r >> 16), static_cast<uint32_t>(r >> 32)};
  }
  return v;
}

// Accumulators close to -a*b (cancellation), of a nearby magnitude (ties), or at the ends of
// the exponent range, for finite random operands.
std::vector<MacIn> biased_macs(std::mt19937_64& rng, size_t n) {
  std::vector<MacIn> v(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = rng();
    auto a = static_cast<uint16_t>(r & 0x807F | (1 + (r >> 8) % 254) << 7);
    auto b = static_cast<uint16_t>((r >> 16) & 0x807F | (1 + (r >> 24) % 254) << 7);
    if (i % 4 == 3) {  // products near the top or bottom of the range
      a = static_cast<uint16_t>((a & 0x807F) | (i % 8 == 3 ? 200 : 50) << 7);
      b = static_cast<uint16_t>((b & 0x807F) | (60 + (r >> 40) % 20) << 7);
    }
    const uint32_t p = bf16_mul(a, b);
    uint32_t acc = 0;
    switch (i % 3) {
      case 0:  // -(a*b) a few ulps off: massive cancellation, exact zeros
        acc = (p ^ 0x80000000u) + static_cast<uint32_t>(static_cast<int>((r >> 48) % 9) - 4);
        break;
      case 1: {  // same exponent region, ragged mantissa: ties and carries
        const auto e = static_cast<int>(p >> 23 & 0xFF) + static_cast<int>((r >> 48) % 31) - 15;
        acc = fp32(static_cast<uint32_t>(r >> 63), static_cast<uint32_t>(std::clamp(e, 1, 254)), ragged_mantissa(rng));
        break;
      }
      default:  // random accumulator
        acc = static_cast<uint32_t>(rng());
        break;
    }
    v[i] = {a, b, acc};
  }
  return v;
}

}  // namespace

TEST_CASE("FpMac: every combination of corner operands and accumulators", "[fp_mac]") {
  check_combinational(corner_macs(), "corners");
}

TEST_CASE("FpMac: 10^6 uniform random operand sets", "[fp_mac]") {
  std::mt19937_64 rng(seed("fp_mac uniform", 0x3AC00001));
  check_combinational(uniform_macs(rng, 1000000), "uniform");
}

TEST_CASE("FpMac: 10^6 biased operand sets (cancellation, ties, range ends)", "[fp_mac]") {
  std::mt19937_64 rng(seed("fp_mac biased", 0x3AC00002));
  const auto v = biased_macs(rng, 1000000);
  size_t zeros = 0;
  for (const MacIn& m : v) zeros += fp32_mac(m.acc, m.a, m.b) == 0;
  std::cout << fmt::format("[arith] fp_mac biased: {} exact cancellations\n", zeros);
  CHECK(zeros > 10000);
  check_combinational(v, "biased");
}

TEST_CASE("FpMac, 6 stages: product register, adder cuts, latency 6", "[fp_mac]") {
  using fetta::hw::FpMac, fetta::hw::Fp32AddArch, fetta::hw::PrefixKind;
  for (const FpMac& mac : {FpMac({6}), FpMac({6, Fp32AddArch::two_path, PrefixKind::sklansky})}) {
    REQUIRE(mac.product_registered());
    REQUIRE(mac.adder_stages() == 5);
  }
  std::mt19937_64 rng(seed("fp_mac pipelined", 0x3AC00003));
  std::vector<MacIn> v = uniform_macs(rng, 200000);
  const auto b = biased_macs(rng, 200000);
  v.insert(v.end(), b.begin(), b.end());
  const auto c = corner_macs();
  v.insert(v.end(), c.begin(), c.begin() + 200000);
  VerilatedContext ctx;
  Vfp_mac_bf16_fp32_s6 basic{&ctx};
  check_macs(basic, 6, v, "pipelined");
  Vfp_mac_bf16_fp32_twopath_sk_s6 two_path{&ctx};
  check_macs(two_path, 6, v, "pipelined");
}

// FETTA_LARGE_TESTS: 2 x 10^8 random operand sets.
TEST_CASE("FpMac: 2 x 10^8 random operand sets", "[.large][arith_large]") {
  std::mt19937_64 rng(seed("fp_mac large", 0x3AC00004));
  VerilatedContext ctx;
  Vfp_mac_bf16_fp32_s0 basic{&ctx};
  Vfp_mac_bf16_fp32_twopath_sk_s0 two_path{&ctx};
  for (int round = 0; round < 100; ++round) {
    const auto u = uniform_macs(rng, 1000000), b = biased_macs(rng, 1000000);
    check_macs(basic, 0, u, "large uniform");
    check_macs(basic, 0, b, "large biased");
    check_macs(two_path, 0, u, "large uniform");
    check_macs(two_path, 0, b, "large biased");
  }
}
