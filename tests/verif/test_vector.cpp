// The vector unit's golden operations (verif/vector.hpp): hand-worked cases per operation, tanh
// over every bf16 against the host's tanh, and the accumulators' order.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iostream>

#include "verif/numerics.hpp"
#include "verif/vector.hpp"

using namespace fetta::verif;

namespace {

std::string hex16(uint16_t x) { return fmt::format("0x{:04X}", x); }
std::string hex32(uint32_t x) { return fmt::format("0x{:08X}", x); }

// bf16 ulps between two finite patterns of the same sign (or zero).
int ulps_apart(uint16_t x, uint16_t y) {
  auto ordered = [](uint16_t v) { return (v & 0x8000u) != 0 ? -static_cast<int>(v & 0x7FFFu) : static_cast<int>(v); };
  return std::abs(ordered(x) - ordered(y));
}

}  // namespace

TEST_CASE("vector ops: hand-worked cases", "[vector_golden]") {
  struct Case {
    VectorOp op;
    uint16_t a, b;
    uint32_t s;
    uint16_t want;
    const char* why;
  };
  const Case cases[] = {
      {VectorOp::add, 0x3F80, 0x4000, 0, 0x4040, "1 + 2 = 3"},
      {VectorOp::add, 0x3F80, 0x3B80, 0, 0x3F80, "1 + 2^-8: the tie rounds to even in bf16"},
      {VectorOp::add, 0x3F80, 0xBF80, 0, 0x0000, "1 - 1 = +0"},
      {VectorOp::add, 0x8000, 0x8000, 0, 0x8000, "-0 + -0 = -0"},
      {VectorOp::add, 0x7F7F, 0x7F7F, 0, 0x7F80, "overflow -> +Inf"},
      {VectorOp::add, 0x7F80, 0xFF80, 0, 0x7FC0, "Inf - Inf -> NaN"},
      {VectorOp::sub, 0x4040, 0x3F80, 0, 0x4000, "3 - 1 = 2"},
      {VectorOp::sub, 0x3F80, 0x3F80, 0, 0x0000, "1 - 1 = +0"},
      {VectorOp::sub, 0x0000, 0x0000, 0, 0x0000, "0 - 0 = +0"},
      {VectorOp::sub, 0x3F80, 0x7FC1, 0, 0x7FC0, "NaN operand"},
      {VectorOp::mul, 0x4040, 0x4000, 0, 0x40C0, "3 x 2 = 6"},
      {VectorOp::mul, 0x3F81, 0x3F81, 0, 0x3F82, "(1+2^-7)^2 = 1 + 2^-6 + 2^-14 -> bf16 1 + 2^-6"},
      {VectorOp::mul, 0x0040, 0x3F80, 0, 0x0000, "subnormal x 1 -> +0 (DAZ)"},
      {VectorOp::scale, 0x4000, 0x0000, 0x3E800000, 0x3F00, "2 x 0.25 = 0.5"},
      {VectorOp::scale, 0x3F80, 0x0000, 0x3F808000, 0x3F80, "1 x (1 + 2^-8): the binary32 scalar rounds in bf16"},
      {VectorOp::axpy, 0x3F80, 0x4000, 0xBDCCCCCD, 0x3FF3, "2 - 0.1 x 1 = 1.9 (bf16 0x3FF3)"},
      {VectorOp::axpy, 0x3F80, 0x3F80, 0xBF800000, 0x0000, "1 - 1 x 1 = +0"},
      {VectorOp::relu, 0x3F80, 0, 0, 0x3F80, "relu(1) = 1"},
      {VectorOp::relu, 0xBF80, 0, 0, 0x0000, "relu(-1) = +0"},
      {VectorOp::relu, 0x8000, 0, 0, 0x0000, "relu(-0) = +0"},
      {VectorOp::relu, 0x0001, 0, 0, 0x0000, "relu(+subnormal) = +0 (DAZ)"},
      {VectorOp::relu, 0x7F80, 0, 0, 0x7F80, "relu(+Inf) = +Inf"},
      {VectorOp::relu, 0xFFC1, 0, 0, 0x7FC0, "relu(NaN) = NaN"},
      {VectorOp::relu_bwd, 0x3F80, 0xC000, 0, 0xC000, "x > 0 passes dy"},
      {VectorOp::relu_bwd, 0xBF80, 0xC000, 0, 0x0000, "x < 0 blocks dy"},
      {VectorOp::relu_bwd, 0x0000, 0xC000, 0, 0x0000, "x = 0 blocks dy"},
      {VectorOp::relu_bwd, 0x3F80, 0x0001, 0, 0x0000, "a subnormal dy passes as +0 (DAZ)"},
      {VectorOp::relu_bwd, 0x3F80, 0xFFC1, 0, 0x7FC0, "a NaN dy passes as the canonical NaN"},
      {VectorOp::relu_bwd, 0x7FC1, 0x3F80, 0, 0x7FC0, "a NaN x gives NaN"},
      {VectorOp::tanh, 0x0000, 0, 0, 0x0000, "tanh(+0) = +0"},
      {VectorOp::tanh, 0x8001, 0, 0, 0x8000, "tanh(-subnormal) = -0"},
      {VectorOp::tanh, 0x3D00, 0, 0, 0x3D00, "tanh(2^-5) = 2^-5 in bf16"},
      {VectorOp::tanh, 0x4080, 0, 0, 0x3F80, "tanh(4) = 1"},
      {VectorOp::tanh, 0xFF80, 0, 0, 0xBF80, "tanh(-Inf) = -1"},
      {VectorOp::tanh, 0x7FC1, 0, 0, 0x7FC0, "tanh(NaN) = NaN"},
      {VectorOp::tanh, 0x3F80, 0, 0, 0x3F43, "tanh(1) = 0.76159 -> bf16 0x3F43"},
      {VectorOp::tanh_bwd, 0x0000, 0x3F80, 0, 0x3F80, "y = 0: dy x 1"},
      {VectorOp::tanh_bwd, 0x3F00, 0x4000, 0, 0x3FC0, "y = 0.5: 2 x 0.75 = 1.5"},
      {VectorOp::tanh_bwd, 0x3F80, 0x4000, 0, 0x0000, "y = 1: +0"},
      {VectorOp::tanh_bwd, 0xBF80, 0xC000, 0, 0x8000, "y = -1, dy < 0: -0"},
  };
  for (const Case& c : cases) {
    INFO(to_string(c.op) << " " << c.why << ": a " << hex16(c.a) << " b " << hex16(c.b) << " s " << hex32(c.s));
    CHECK(hex16(vector_element(c.op, c.a, c.b, c.s)) == hex16(c.want));
  }
  CHECK_THROWS_WITH(vector_element(VectorOp::sumsq, 0, 0, 0), Catch::Contains("sumsq is not an elementwise operation"));
}

TEST_CASE("tanh: every bf16 within one ulp of the correctly rounded tanh, odd, bounded, monotonic", "[vector_golden]") {
  int worst = 0, off_by_one = 0, finite = 0;
  uint16_t worst_x = 0, prev = 0;
  for (uint32_t xi = 0; xi <= 0xFFFF; ++xi) {
    const auto x = static_cast<uint16_t>(xi);
    const uint16_t y = tanh_bf16(x);
    if (bf16_is_nan(x)) {
      REQUIRE(y == kBf16QuietNaN);
      continue;
    }
    REQUIRE(hex16(tanh_bf16(x ^ 0x8000u)) == hex16(y ^ 0x8000u));  // odd, signed zeros included
    REQUIRE((y & 0x7FFFu) <= 0x3F80u);                            // |tanh| <= 1
    if ((x & 0x8000u) == 0 && x <= 0x7F80u) {                       // monotonic over +0 .. +Inf
      REQUIRE(y >= prev);
      prev = y;
    }
    const uint16_t want = bf16_from_double(std::tanh(bf16_to_double(x)));
    const int d = ulps_apart(y, want);
    ++finite;
    if (d > 0) ++off_by_one;
    if (d > worst) {
      worst = d;
      worst_x = x;
    }
  }
  std::cout << fmt::format("[vector] tanh: {} of {} inputs off the correctly rounded value, at most {} ulp (at {})\n",
                           off_by_one, finite, worst, hex16(worst_x));
  CHECK(worst <= 1);
}

TEST_CASE("vector accumulators: sums of squares per lane, reduced in lane order", "[vector_golden]") {
  VectorAccumulators acc(4);
  acc.sumsq({0x3F80, 0x4000, 0xC040, 0x0000});  // 1, 4, 9, 0
  acc.sumsq({0x3F80, 0x3F80, 0x3F80, 0x3F80});  // +1 each
  CHECK(acc.values() == std::vector<uint32_t>{0x40000000, 0x40A00000, 0x41200000, 0x3F800000});
  CHECK(hex32(acc.reduce()) == hex32(0x41900000));  // 2 + 5 + 10 + 1 = 18
  CHECK(acc.values() == std::vector<uint32_t>(4, 0));
  // The order is part of the contract: 2^24 + 1 + 1 in lane order loses both ones.
  acc.sumsq({0x4580, 0x3F80, 0x3F80, 0x0000});  // 4096^2 = 2^24, 1, 1, 0
  CHECK(hex32(acc.reduce()) == hex32(0x4B800000));
  CHECK_THROWS_WITH(acc.sumsq({0x3F80}), "VectorAccumulators::sumsq: a row of 1 elements on 4 lanes; allowed: a non-zero "
                                        "multiple of the lanes");
  CHECK_THROWS_WITH(acc.sumsq({}), Catch::Contains("a row of 0 elements"));
}

TEST_CASE("vector accumulators: a row of several beats, element e on lane e mod lanes", "[vector_golden]") {
  VectorAccumulators acc(2);
  // Beats (1, 2), (3, 4), (2^12, 1): lane 0 takes 1, 9, 2^24; lane 1 takes 4, 16, 1 in that order.
  acc.sumsq({0x3F80, 0x4000, 0x4040, 0x4080, 0x4580, 0x3F80});
  CHECK(acc.values() == std::vector<uint32_t>{0x4B800005, 0x41A80000});  // 2^24 + 10 (exact: ulp 2), 21
  CHECK(hex32(acc.reduce()) == hex32(0x4B800010));                       // 2^24 + 31, a tie: to even, 2^24 + 32
}
