// IntMac and IntAdd against verif::int8_mac / int16_mac48 / wrap48, bit-exact.
#include <catch2/catch.hpp>

#include "Vint_add_w32.h"
#include "Vint_add_w48.h"
#include "Vint_mac_i16_acc48_s0.h"
#include "Vint_mac_i16_acc48_s4.h"
#include "Vint_mac_i8_acc32_s0.h"
#include "arith_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

using namespace arith_test;
using fetta::verif::int16_mac48;
using fetta::verif::int8_mac;
using fetta::verif::wrap48;

namespace {

constexpr uint64_t kMask48 = (uint64_t{1} << 48) - 1;

struct MacIn {
  int64_t a, b, acc;
};

// Operand and accumulator corners (the extremes wrap) crossed, then uniform random sets.
std::vector<MacIn> mac_vectors(std::mt19937_64& rng, int operand_bits, int acc_bits, size_t random) {
  const int64_t omax = (int64_t{1} << (operand_bits - 1)) - 1, omin = -omax - 1;
  const int64_t amax = (int64_t{1} << (acc_bits - 1)) - 1, amin = -amax - 1;
  const int64_t ops[] = {omin, omin + 1, -2, -1, 0, 1, 2, omax - 1, omax};
  const int64_t accs[] = {amin, amin + 1, -omin * omin, -1, 0, 1, omin * omin, amax - omin * omin, amax - 1, amax};
  std::vector<MacIn> v;
  for (int64_t a : ops)
    for (int64_t b : ops)
      for (int64_t acc : accs) v.push_back({a, b, acc});
  auto sext = [](uint64_t x, int bits) { return static_cast<int64_t>(x << (64 - bits)) >> (64 - bits); };
  for (size_t i = 0; i < random; ++i) {
    const uint64_t r = rng();
    v.push_back({sext(r, operand_bits), sext(r >> operand_bits, operand_bits), sext(rng(), acc_bits)});
  }
  return v;
}

template <typename Dut>
void check_macs(Dut& dut, int latency, int operand_bits, const std::vector<MacIn>& v, const std::string& what) {
  Mismatches bad;
  stream(dut, latency, v.size(), [&](size_t i) {
    if (operand_bits == 8) {
      dut.a = static_cast<uint8_t>(v[i].a);
      dut.b = static_cast<uint8_t>(v[i].b);
      dut.acc = static_cast<uint32_t>(v[i].acc);
    } else {
      dut.a = static_cast<uint16_t>(v[i].a);
      dut.b = static_cast<uint16_t>(v[i].b);
      dut.acc = static_cast<uint64_t>(v[i].acc) & kMask48;
    }
  }, [&](size_t i) {
    int64_t got = 0, want = 0;
    if (operand_bits == 8) {
      got = static_cast<int32_t>(dut.out);
      want = int8_mac(static_cast<int32_t>(v[i].acc), static_cast<int8_t>(v[i].a), static_cast<int8_t>(v[i].b));
    } else {
      got = wrap48(static_cast<int64_t>(dut.out));
      want = int16_mac48(v[i].acc, static_cast<int16_t>(v[i].a), static_cast<int16_t>(v[i].b));
    }
    if (got != want) bad.note(fmt::format("{} + {} x {}: rtl {} want {}", v[i].acc, v[i].a, v[i].b, got, want));
  });
  INFO(what << ": " << bad.count << " of " << v.size() << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}

}  // namespace

TEST_CASE("IntMac int8 x int8 + int32: corners and 10^6 random sets", "[int_arith]") {
  std::mt19937_64 rng(seed("int_mac i8", 0x1A7C0001));
  VerilatedContext ctx;
  Vint_mac_i8_acc32_s0 dut{&ctx};
  check_macs(dut, 0, 8, mac_vectors(rng, 8, 32, 1000000), "int8");
}

TEST_CASE("IntMac int16 x int16 + int48: corners and 10^6 random sets", "[int_arith]") {
  std::mt19937_64 rng(seed("int_mac i16", 0x1A7C0002));
  VerilatedContext ctx;
  Vint_mac_i16_acc48_s0 dut{&ctx};
  check_macs(dut, 0, 16, mac_vectors(rng, 16, 48, 1000000), "int16");
}

TEST_CASE("IntMac int16, 4 stages: latency 4, one result per cycle", "[int_arith]") {
  std::mt19937_64 rng(seed("int_mac i16 pipelined", 0x1A7C0003));
  VerilatedContext ctx;
  Vint_mac_i16_acc48_s4 dut{&ctx};
  check_macs(dut, 4, 16, mac_vectors(rng, 16, 48, 200000), "int16 pipelined");
}

TEST_CASE("IntAdd 32 and 48 bits wrap like two's complement", "[int_arith]") {
  std::mt19937_64 rng(seed("int_add", 0x1A7C0004));
  VerilatedContext ctx;
  Vint_add_w32 add32{&ctx};
  Vint_add_w48 add48{&ctx};
  const int64_t edges48[] = {-(int64_t{1} << 47), -(int64_t{1} << 47) + 1, -1, 0, 1, (int64_t{1} << 47) - 1};
  const int64_t edges32[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX};
  std::vector<std::pair<int64_t, int64_t>> v32, v48;
  for (int64_t a : edges32)
    for (int64_t b : edges32) v32.push_back({a, b});
  for (int64_t a : edges48)
    for (int64_t b : edges48) v48.push_back({a, b});
  for (int i = 0; i < 1000000; ++i) {
    v32.push_back({static_cast<int32_t>(rng()), static_cast<int32_t>(rng())});
    v48.push_back({wrap48(static_cast<int64_t>(rng())), wrap48(static_cast<int64_t>(rng()))});
  }
  Mismatches bad;
  for (const auto& [a, b] : v32) {
    add32.a = static_cast<uint32_t>(a);
    add32.b = static_cast<uint32_t>(b);
    add32.eval();
    const auto want = static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
    if (static_cast<int32_t>(add32.sum) != want) bad.note(fmt::format("w32 {} + {}: rtl {} want {}", a, b, static_cast<int32_t>(add32.sum), want));
  }
  for (const auto& [a, b] : v48) {
    add48.a = static_cast<uint64_t>(a) & kMask48;
    add48.b = static_cast<uint64_t>(b) & kMask48;
    add48.eval();
    const int64_t want = wrap48(a + b);
    if (wrap48(static_cast<int64_t>(add48.sum)) != want) bad.note(fmt::format("w48 {} + {}: rtl {} want {}", a, b, wrap48(static_cast<int64_t>(add48.sum)), want));
  }
  INFO(bad.count << " differ\n" << bad.first);
  REQUIRE(bad.count == 0);
}
