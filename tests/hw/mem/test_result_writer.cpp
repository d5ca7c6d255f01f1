// ResultWriter (the STORE write-back path) against a model: conversion bit-exact with the golden
// numerics (verif::fp32_to_bf16; arithmetic shift and saturation for the integer types), the
// rotation by dst_lane - src_lane, the segment mask and the padding of a lane-0 move, all
// registered by one cycle. Random moves biased to the corners (NaN, Inf, zeros, subnormals,
// rounding ties, the carry into Inf; saturation edges, shifts past the accumulator width).
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <tuple>
#include <vector>

#include "Vresult_writer_n4_a3_int8.h"
#include "Vresult_writer_n8_a4_bf16.h"
#include "Vresult_writer_n8_a4_int16.h"
#include "mem_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

namespace {

enum class Kind { bf16, int16, int8 };

struct Move {
  bool valid = false;
  unsigned row = 0, src = 0, dst = 0, count_m1 = 0, pad_neg = 0, shift = 0;
  std::vector<uint64_t> data;  // accumulator lane bits (sign-extended for integers)
};

uint64_t random_fp32(std::mt19937_64& rng) {
  static const uint32_t corners[] = {0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x00000000, 0x80000000,
                                     0x00000001, 0x807FFFFF, 0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0xFF7F8000,
                                     0x7F7F7FFF, 0x00800000, 0x3F7FFFFF};
  switch (rng() % 4) {
    case 0: return corners[rng() % std::size(corners)];
    case 1: return static_cast<uint32_t>(rng()) & 0xFFFF8000U | 0x8000U;  // a tie, odd or even LSB
    default: return static_cast<uint32_t>(rng());
  }
}

uint64_t random_int(std::mt19937_64& rng, int acc_bits, int w) {
  const int64_t lim = int64_t{1} << (w - 1);
  int64_t v;
  switch (rng() % 5) {
    case 0: v = (rng() % 2 ? lim : -lim) + static_cast<int64_t>(rng() % 3) - 1; break;  // a saturation edge
    case 1: v = (rng() % 2 ? 1 : -1) * (static_cast<int64_t>(rng() % 4) << (acc_bits - 3)); break;  // large
    case 2: v = acc_bits >= 64 ? 0 : -(int64_t{1} << (acc_bits - 1)); break;  // the most negative
    default: v = static_cast<int64_t>(rng());
  }
  const uint64_t m = mem_test::mask_bits(acc_bits);
  uint64_t u = static_cast<uint64_t>(v) & m;
  if ((u >> (acc_bits - 1)) & 1U) u |= ~m;  // sign-extended, as the model holds it
  return u;
}

template <typename V>
class WriterBench {
 public:
  // `ports` gives the model's data and wr_data port lists.
  WriterBench(Kind kind, int lanes, int row_bits, const std::function<std::pair<mem_test::Ports, mem_test::Ports>(V&)>& ports)
      : kind_(kind), lanes_(lanes), row_bits_(row_bits) {
    std::tie(data_, wr_data_) = ports(dut_);
    acc_bits_ = kind == Kind::bf16 ? 32 : kind == Kind::int16 ? 48 : 32;
    w_ = kind == Kind::int8 ? 8 : 16;
    mem_test::reset(dut_);
  }

  uint64_t convert(uint64_t v, const Move& m) const {
    if (kind_ == Kind::bf16) return fetta::verif::fp32_to_bf16(static_cast<uint32_t>(v));
    const int64_t sh = static_cast<int64_t>(v) >> std::min<unsigned>(m.shift, 63);
    const int64_t lo = -(int64_t{1} << (w_ - 1)), hi = (int64_t{1} << (w_ - 1)) - 1;
    return static_cast<uint64_t>(std::clamp(sh, lo, hi)) & mem_test::mask_bits(w_);
  }

  void step(const Move& m) {
    dut_.valid = m.valid;
    dut_.row = m.row;
    dut_.src_lane = m.src;
    dut_.dst_lane = m.dst;
    dut_.count_m1 = m.count_m1;
    if constexpr (requires { dut_.pad_neg; }) dut_.pad_neg = m.pad_neg;
    if constexpr (requires { dut_.shift; }) dut_.shift = m.shift;
    for (int l = 0; l < lanes_; ++l) data_[static_cast<size_t>(l)].set(m.data[static_cast<size_t>(l)] & mem_test::mask_bits(acc_bits_));
    mem_test::settle(dut_);
    check();
    prev_ = m;
    mem_test::edge(dut_);
    ++cycle_;
  }

  void check() {
    if (dut_.wr_en != prev_.valid) bad.note(fmt::format("cycle {} wr_en = {}", cycle_, dut_.wr_en));
    if (!prev_.valid) return;
    if (dut_.wr_row != prev_.row) bad.note(fmt::format("cycle {} wr_row = {}, expected {}", cycle_, dut_.wr_row, prev_.row));
    const unsigned n = static_cast<unsigned>(lanes_);
    for (unsigned o = 0; o < n; ++o) {
      const unsigned off = (o - prev_.dst + n) % n;
      const bool in_seg = off <= prev_.count_m1;
      const bool mask = in_seg || prev_.dst == 0;
      if (((dut_.wr_mask >> o) & 1U) != (mask ? 1U : 0U))
        bad.note(fmt::format("cycle {} wr_mask lane {} = {}, expected {}", cycle_, o, (dut_.wr_mask >> o) & 1U, mask));
      if (!mask) continue;
      const uint64_t want = in_seg ? convert(prev_.data[(prev_.src + off) % n], prev_) : (prev_.pad_neg ? 0x8000U : 0U);
      const uint64_t got = wr_data_[o].get();
      if (got != want)
        bad.note(fmt::format("cycle {} wr_data lane {} = 0x{:x}, expected 0x{:x} (src lane {}, input 0x{:x}, shift {})", cycle_, o,
                             got, want, (prev_.src + off) % n, prev_.data[(prev_.src + off) % n], prev_.shift));
    }
  }

  Move random_move(std::mt19937_64& rng) const {
    Move m;
    m.valid = rng() % 5 != 0;
    m.row = static_cast<unsigned>(rng() % (1U << row_bits_));
    m.src = static_cast<unsigned>(rng() % static_cast<unsigned>(lanes_));
    m.dst = rng() % 3 == 0 ? 0U : static_cast<unsigned>(rng() % static_cast<unsigned>(lanes_));
    m.count_m1 = static_cast<unsigned>(rng() % static_cast<unsigned>(lanes_));
    if (kind_ == Kind::bf16) m.pad_neg = rng() % 2;
    else m.shift = rng() % 4 == 0 ? static_cast<unsigned>(rng() % 64) : static_cast<unsigned>(rng() % 24);
    for (int l = 0; l < lanes_; ++l)
      m.data.push_back(kind_ == Kind::bf16 ? random_fp32(rng) : random_int(rng, acc_bits_, w_));
    return m;
  }

  mem_test::Mismatches bad;

 private:
  VerilatedContext ctx_;
  V dut_{&ctx_};
  Kind kind_;
  int lanes_, row_bits_, acc_bits_ = 32, w_ = 16;
  mem_test::Ports data_, wr_data_;
  Move prev_;
  long cycle_ = 0;
};

template <typename V>
void run(WriterBench<V>& b, const std::string& what, uint64_t fallback_seed) {
  std::mt19937_64 rng(mem_test::seed(what, fallback_seed));
  const long n = 4000L * mem_test::scale();
  for (long i = 0; i < n; ++i) b.step(b.random_move(rng));
  b.step(Move{false, 0, 0, 0, 0, 0, 0, std::vector<uint64_t>(16, 0)});
  INFO(b.bad.first);
  REQUIRE(b.bad.count == 0);
}

}  // namespace

TEST_CASE("ResultWriter bf16: round to nearest even, rotation, segment, padding", "[result_writer]") {
  WriterBench<Vresult_writer_n8_a4_bf16> b(Kind::bf16, 8, 4, [](auto& d) {
    return std::pair{MEM_PORTS8(d, data), MEM_PORTS8(d, wr_data)};
  });
  run(b, "result_writer_n8_a4_bf16", 0x5701);
}

TEST_CASE("ResultWriter int16: int48 shifted and saturated", "[result_writer]") {
  WriterBench<Vresult_writer_n8_a4_int16> b(Kind::int16, 8, 4, [](auto& d) {
    return std::pair{MEM_PORTS8(d, data), MEM_PORTS8(d, wr_data)};
  });
  run(b, "result_writer_n8_a4_int16", 0x5702);
}

TEST_CASE("ResultWriter int8: int32 shifted and saturated", "[result_writer]") {
  WriterBench<Vresult_writer_n4_a3_int8> b(Kind::int8, 4, 3, [](auto& d) {
    return std::pair{MEM_PORTS4(d, data), MEM_PORTS4(d, wr_data)};
  });
  run(b, "result_writer_n4_a3_int8", 0x5703);
}
