// Shared pieces of the arithmetic tests: seeds, operand corner sets, biased random operands and
// a harness that streams vectors through a Verilated unit (combinational or pipelined) and
// compares every result with the golden model.
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace arith_test {

// The seed of a test: `fallback`, or FETTA_SEED from the environment to replay another run.
// Printed either way, under the test's tag, so a failure can be reproduced.
inline uint64_t seed(const std::string& what, uint64_t fallback, const std::string& tag = "arith") {
  uint64_t s = fallback;
  if (const char* env = std::getenv("FETTA_SEED")) s = std::strtoull(env, nullptr, 0);
  std::cout << fmt::format("[{}] {} seed=0x{:x}\n", tag, what, s);
  return s;
}

inline std::string hex(uint64_t v, int digits) { return fmt::format("0x{:0{}x}", v, digits); }

// binary32 patterns: exponents around zero/subnormal, the bottom of the normal range, the
// alignment boundaries (23..28 apart from 1), 1.0, the top of the range and Inf/NaN, crossed
// with mantissas that make ties, carries and cancellations (0, 1, 2, 3, half, half +- 1,
// all ones - 1, all ones), both signs. 20 x 9 x 2 = 360 values.
inline std::vector<uint32_t> fp32_corners() {
  const uint32_t exps[] = {0, 1, 2, 3, 24, 25, 26, 27, 28, 100, 126, 127, 128, 129, 152, 153, 154, 253, 254, 255};
  const uint32_t mans[] = {0, 1, 2, 3, 0x3FFFFF, 0x400000, 0x400001, 0x7FFFFE, 0x7FFFFF};
  std::vector<uint32_t> v;
  for (uint32_t s : {0u, 1u})
    for (uint32_t e : exps)
      for (uint32_t m : mans) v.push_back(s << 31 | e << 23 | m);
  return v;
}

// bf16 patterns: zero/subnormal, the exponents where a product flushes or overflows
// (sums near 127 and 382), 1.0, Inf/NaN; mantissas 0, 1, half, all ones and neighbours.
// 16 x 7 x 2 = 224 values.
inline std::vector<uint16_t> bf16_corners() {
  const uint16_t exps[] = {0, 1, 2, 62, 63, 64, 65, 126, 127, 128, 190, 191, 192, 253, 254, 255};
  const uint16_t mans[] = {0, 1, 2, 0x3F, 0x40, 0x7E, 0x7F};
  std::vector<uint16_t> v;
  for (uint16_t s : {0, 1})
    for (uint16_t e : exps)
      for (uint16_t m : mans) v.push_back(static_cast<uint16_t>(s << 15 | e << 7 | m));
  return v;
}

// A mantissa with a random number of trailing zeros, so alignments often drop exactly half an
// ulp (ties) or nothing at all.
inline uint32_t ragged_mantissa(std::mt19937_64& rng) {
  const int tz = static_cast<int>(rng() % 24);
  uint32_t m = static_cast<uint32_t>(rng()) & 0x7FFFFF;
  m &= ~((1u << tz) - 1);
  if (rng() % 2) m |= (1u << tz) & 0x7FFFFF;
  return m;
}

inline uint32_t fp32(uint32_t sign, uint32_t exp, uint32_t man) { return sign << 31 | (exp & 0xFF) << 23 | (man & 0x7FFFFF); }

// Pairs of binary32 operands biased towards the hard cases of an adder; `kind` cycles through
// the classes.
inline void biased_fp32_pair(std::mt19937_64& rng, int kind, uint32_t& a, uint32_t& b) {
  auto bit = [&] { return static_cast<uint32_t>(rng() & 1); };
  auto normal_exp = [&] { return static_cast<uint32_t>(1 + rng() % 254); };
  switch (kind % 6) {
    case 0: {  // close exponents, opposite signs: cancellation and long normalization shifts
      const uint32_t ea = normal_exp();
      const int d = static_cast<int>(rng() % 5) - 2;
      a = fp32(bit(), ea, ragged_mantissa(rng));
      b = fp32(~a >> 31 & 1, static_cast<uint32_t>(std::clamp<int>(static_cast<int>(ea) + d, 1, 254)), ragged_mantissa(rng));
      break;
    }
    case 1: {  // nearly equal magnitudes of opposite sign (a few ulps apart, or equal)
      a = fp32(bit(), normal_exp(), static_cast<uint32_t>(rng()));
      const int delta = static_cast<int>(rng() % 9) - 4;
      b = (a ^ 0x80000000u) + static_cast<uint32_t>(delta);
      break;
    }
    case 2: {  // alignment around the guard/round/sticky positions, ragged mantissas: ties
      const uint32_t ea = 30 + static_cast<uint32_t>(rng() % 200);
      const uint32_t d = static_cast<uint32_t>(rng() % 30);
      a = fp32(bit(), ea, ragged_mantissa(rng));
      b = fp32(bit(), ea - d, ragged_mantissa(rng));
      break;
    }
    case 3: {  // the bottom of the exponent range: flush to zero after cancellation
      a = fp32(bit(), 1 + static_cast<uint32_t>(rng() % 4), static_cast<uint32_t>(rng()));
      b = fp32(bit(), 1 + static_cast<uint32_t>(rng() % 4), static_cast<uint32_t>(rng()));
      break;
    }
    case 4: {  // the top of the exponent range: overflow to Inf, rounding up into Inf
      a = fp32(bit(), 251 + static_cast<uint32_t>(rng() % 4), 0x7FFFFF - static_cast<uint32_t>(rng() % 4 == 0 ? 0 : rng() % 0x100));
      b = fp32(bit(), 225 + static_cast<uint32_t>(rng() % 30), static_cast<uint32_t>(rng()));
      break;
    }
    default: {  // special operands mixed with random ones
      const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x7F800000u, 0xFF800000u,
                                   0x7FC00000u, 0x7F800001u, 0xFFFFFFFFu, 0x00800000u, 0x7F7FFFFFu};
      a = specials[rng() % std::size(specials)];
      b = static_cast<uint32_t>(rng());
      if (bit()) std::swap(a, b);
      break;
    }
  }
  if (rng() % 2) std::swap(a, b);
}

// Collects mismatches; the test reports the count and the first few.
struct Mismatches {
  size_t count = 0;
  std::string first;
  void note(const std::string& what) {
    if (count++ < 5) first += what + "\n";
  }
};

template <typename Dut>
concept Clocked = requires(Dut& d) { d.clk; };

// Applies vector i with `apply(i)` and checks the result of vector i with `check(i)`, `latency`
// cycles later for a pipelined unit (a new vector every cycle: the pipeline is full).
template <typename Dut>
void stream(Dut& dut, int latency, size_t n, const std::function<void(size_t)>& apply,
            const std::function<void(size_t)>& check) {
  if constexpr (!Clocked<Dut>) {
    (void)latency;
    for (size_t i = 0; i < n; ++i) {
      apply(i);
      dut.eval();
      check(i);
    }
  } else {
    const size_t lat = static_cast<size_t>(latency);
    for (size_t t = 0; t < n + lat; ++t) {
      if (t < n) apply(t);
      dut.clk = 0;
      dut.eval();
      if (t >= lat) check(t - lat);
      dut.clk = 1;
      dut.eval();
    }
  }
}

}  // namespace arith_test
