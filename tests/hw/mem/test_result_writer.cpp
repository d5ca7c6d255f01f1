// ResultWriter (the STORE write-back path) against a model: conversion bit-exact with the golden
// numerics (verif::fp32_to_bf16; arithmetic shift and saturation for the integer types), the
// rotation by dst_lane - src_lane, the segment mask and the padding of a lane-0 move, and the
// diagonal moves (one element per bank, each bank at row + the strides of the source bank's
// bits), all registered
// by one cycle. Random moves biased to the corners (NaN, Inf, zeros, subnormals, rounding ties,
// the carry into Inf; saturation edges, shifts past the accumulator width; strides that wrap the
// row). Directed diagonal moves are checked against hand-computed masks, rows and data.
#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <vector>

#include "Vresult_writer_n4_b4_a3_int8.h"
#include "Vresult_writer_n8_b2_a4_int16.h"
#include "Vresult_writer_n8_b4_a4_bf16.h"
#include "mem_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

namespace {

enum class Kind { bf16, int16, int8 };

struct Move {
  bool valid = false;
  unsigned row = 0, src = 0, dst = 0, count_m1 = 0, pad_neg = 0, shift = 0;
  std::vector<uint64_t> data;  // accumulator lane bits (sign-extended for integers)
  bool diag = false;
  std::vector<unsigned> strides;  // row_bank_strides: one per bank bit
};

struct BenchPorts {
  mem_test::Ports data, wr_data, wr_row;
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
  // `ports` gives the model's data, wr_data and wr_row port lists.
  WriterBench(Kind kind, int lanes, int banks, int row_bits, const std::function<BenchPorts(V&)>& ports)
      : kind_(kind), lanes_(lanes), banks_(banks), row_bits_(row_bits) {
    ports_ = ports(dut_);
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
    dut_.diag = m.diag;
    dut_.row_bank_strides = packed_strides(m);
    if constexpr (requires { dut_.pad_neg; }) dut_.pad_neg = m.pad_neg;
    if constexpr (requires { dut_.shift; }) dut_.shift = m.shift;
    for (int l = 0; l < lanes_; ++l) ports_.data[static_cast<size_t>(l)].set(m.data[static_cast<size_t>(l)] & mem_test::mask_bits(acc_bits_));
    mem_test::settle(dut_);
    check();
    prev_ = m;
    mem_test::edge(dut_);
    ++cycle_;
  }

  // The row_bank_strides port: bank bit h's stride in bits [h*row_bits +: row_bits].
  uint64_t packed_strides(const Move& m) const {
    uint64_t v = 0;
    for (size_t h = 0; h < m.strides.size(); ++h) v |= uint64_t{m.strides[h]} << (h * static_cast<size_t>(row_bits_));
    return v;
  }

  // The unified row bank d is written at (the same for every bank unless diag).
  unsigned want_row(const Move& m, unsigned d) const {
    if (!m.diag) return m.row;
    const unsigned b = static_cast<unsigned>(banks_), t = static_cast<unsigned>(lanes_ / banks_);
    const unsigned k = (m.dst / t - m.src / t + b) % b;  // destination bank - source bank
    const unsigned s = (d - k + b) % b;                     // the source bank whose element lands in d
    uint64_t row = m.row;
    for (size_t h = 0; h < m.strides.size(); ++h)
      if (s >> h & 1U) row += m.strides[h];
    return static_cast<unsigned>(row & mem_test::mask_bits(row_bits_));
  }

  bool want_mask(const Move& m, unsigned o) const {
    const unsigned n = static_cast<unsigned>(lanes_), b = static_cast<unsigned>(banks_), t = n / b;
    if (m.diag) return o % t == m.dst % t && (o / t - m.dst / t + b) % b <= m.count_m1;
    return (o - m.dst + n) % n <= m.count_m1 || m.dst == 0;
  }

  void check() {
    if (dut_.wr_en != prev_.valid) bad.note(fmt::format("cycle {} wr_en = {}", cycle_, dut_.wr_en));
    if (!prev_.valid) return;
    for (unsigned d = 0; d < static_cast<unsigned>(banks_); ++d) {
      const uint64_t got = ports_.wr_row[d].get();
      if (got != want_row(prev_, d))
        bad.note(fmt::format("cycle {} wr_row[{}] = {}, expected {} (row {}, strides 0x{:x}, diag {}, src {}, dst {})", cycle_,
                             d, got, want_row(prev_, d), prev_.row, packed_strides(prev_), prev_.diag, prev_.src, prev_.dst));
    }
    const unsigned n = static_cast<unsigned>(lanes_);
    for (unsigned o = 0; o < n; ++o) {
      const unsigned off = (o - prev_.dst + n) % n;
      const bool in_seg = off <= prev_.count_m1;
      const bool mask = want_mask(prev_, o);
      if (((dut_.wr_mask >> o) & 1U) != (mask ? 1U : 0U))
        bad.note(fmt::format("cycle {} wr_mask lane {} = {}, expected {} (diag {})", cycle_, o, (dut_.wr_mask >> o) & 1U, mask,
                             prev_.diag));
      if (!mask) continue;
      const bool moved = prev_.diag || in_seg;  // else padding
      const uint64_t want = moved ? convert(prev_.data[(prev_.src + off) % n], prev_) : (prev_.pad_neg ? 0x8000U : 0U);
      const uint64_t got = ports_.wr_data[o].get();
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
    m.diag = rng() % 3 == 0;
    // count_m1 counts banks in a diagonal move.
    m.count_m1 = static_cast<unsigned>(rng() % static_cast<unsigned>(m.diag ? banks_ : lanes_));
    const unsigned rows = 1U << row_bits_;
    const bool linear = rng() % 3 == 0;  // stride << h, a transposition's
    const unsigned first = static_cast<unsigned>(rng() % rows);
    for (int h = 0; (1 << h) < banks_; ++h) {
      unsigned st = 0;
      switch (rng() % 4) {
        case 0: st = 0; break;
        case 1: st = rows - 1 - static_cast<unsigned>(rng() % 2); break;  // wraps past the last row
        default: st = static_cast<unsigned>(rng() % rows);
      }
      m.strides.push_back(linear ? (first << h) & (rows - 1) : st);
    }
    if (kind_ == Kind::bf16) m.pad_neg = rng() % 2;
    else m.shift = rng() % 4 == 0 ? static_cast<unsigned>(rng() % 64) : static_cast<unsigned>(rng() % 24);
    for (int l = 0; l < lanes_; ++l)
      m.data.push_back(kind_ == Kind::bf16 ? random_fp32(rng) : random_int(rng, acc_bits_, w_));
    return m;
  }

  // The registered outputs after a step (the move stepped last).
  uint64_t mask() const { return dut_.wr_mask; }
  uint64_t row_of(unsigned bank) const { return ports_.wr_row[bank].get(); }
  uint64_t data_of(unsigned lane) const { return ports_.wr_data[lane].get(); }

  mem_test::Mismatches bad;

 private:
  VerilatedContext ctx_;
  V dut_{&ctx_};
  Kind kind_;
  int lanes_, banks_, row_bits_, acc_bits_ = 32, w_ = 16;
  BenchPorts ports_;
  Move prev_;
  long cycle_ = 0;
};

template <typename V>
void run(WriterBench<V>& b, const std::string& what, uint64_t fallback_seed) {
  std::mt19937_64 rng(mem_test::seed(what, fallback_seed));
  const long n = 4000L * mem_test::scale();
  for (long i = 0; i < n; ++i) b.step(b.random_move(rng));
  Move idle;
  idle.data.assign(16, 0);
  b.step(idle);
  INFO(b.bad.first);
  REQUIRE(b.bad.count == 0);
}

}  // namespace

TEST_CASE("ResultWriter bf16: round to nearest even, rotation, segment, padding, diagonal", "[result_writer]") {
  WriterBench<Vresult_writer_n8_b4_a4_bf16> b(Kind::bf16, 8, 4, 4, [](auto& d) {
    return BenchPorts{MEM_PORTS8(d, data), MEM_PORTS8(d, wr_data), MEM_PORTS4(d, wr_row)};
  });
  run(b, "result_writer_n8_b4_a4_bf16", 0x5701);
}

TEST_CASE("ResultWriter int16: int48 shifted and saturated, diagonal", "[result_writer]") {
  WriterBench<Vresult_writer_n8_b2_a4_int16> b(Kind::int16, 8, 2, 4, [](auto& d) {
    return BenchPorts{MEM_PORTS8(d, data), MEM_PORTS8(d, wr_data), MEM_PORTS2(d, wr_row)};
  });
  run(b, "result_writer_n8_b2_a4_int16", 0x5702);
}

TEST_CASE("ResultWriter int8: int32 shifted and saturated, diagonal with one lane per bank", "[result_writer]") {
  WriterBench<Vresult_writer_n4_b4_a3_int8> b(Kind::int8, 4, 4, 3, [](auto& d) {
    return BenchPorts{MEM_PORTS4(d, data), MEM_PORTS4(d, wr_data), MEM_PORTS4(d, wr_row)};
  });
  run(b, "result_writer_n4_b4_a3_int8", 0x5703);
}

// Hand-computed expectations (not the model): 8 lanes = 4 banks x 2 elements, 16 rows. Lane l of
// the accumulator row holds bf16 0x3F80 + l exactly (as binary32), so the data shows which source
// lane landed where.
TEST_CASE("ResultWriter diagonal: a full transposition step, by hand", "[result_writer]") {
  WriterBench<Vresult_writer_n8_b4_a4_bf16> b(Kind::bf16, 8, 4, 4, [](auto& d) {
    return BenchPorts{MEM_PORTS8(d, data), MEM_PORTS8(d, wr_data), MEM_PORTS4(d, wr_row)};
  });
  // One stride per bank: bank bit h steps stride << h rows.
  auto move = [](unsigned row, unsigned src, unsigned dst, unsigned count_m1, bool diag, unsigned stride) {
    Move m;
    m.valid = true;
    m.row = row, m.src = src, m.dst = dst, m.count_m1 = count_m1, m.diag = diag;
    m.strides = {stride & 15U, (stride << 1) & 15U};  // 4 banks, 4 row bits
    for (uint64_t l = 0; l < 8; ++l) m.data.push_back((0x3F80 + l) << 16);
    return m;
  };
  auto rows = [&] { return std::vector<uint64_t>{b.row_of(0), b.row_of(1), b.row_of(2), b.row_of(3)}; };
  using R = std::vector<uint64_t>;

  // Source lane 3 (bank 1, element 1) to lane 4 (bank 2, element 0), all 4 banks: element 0 of
  // every bank; rotation by 1, so lane o holds source lane o - 1; bank d holds source bank d - 1,
  // at row 5 + 3 * (d - 1 mod 4).
  b.step(move(5, 3, 4, 3, true, 3));
  CHECK(b.mask() == 0x55);
  CHECK(rows() == R{14, 5, 8, 11});
  CHECK(b.data_of(0) == 0x3F87);
  CHECK(b.data_of(2) == 0x3F81);
  CHECK(b.data_of(4) == 0x3F83);
  CHECK(b.data_of(6) == 0x3F85);

  // The same from source lane 0 to lane 7 (bank 3, element 1): element 1 of every bank, source
  // bank d - 3 = d + 1 at row 12 + 7 * (d + 1 mod 4) modulo 16.
  b.step(move(12, 0, 7, 3, true, 7));
  CHECK(b.mask() == 0xAA);
  CHECK(rows() == R{3, 10, 1, 12});
  CHECK(b.data_of(1) == 0x3F82);
  CHECK(b.data_of(3) == 0x3F84);
  CHECK(b.data_of(5) == 0x3F86);
  CHECK(b.data_of(7) == 0x3F80);

  // Two banks, bank 3 wrapping to bank 0: lanes 7 and 1 only. k = 3 - 0, so bank d is at
  // 2 + 15 * (d + 1 mod 4) modulo 16. Then one element to lane 0: no padding in a diagonal move.
  b.step(move(2, 1, 7, 1, true, 15));
  CHECK(b.mask() == 0x82);
  CHECK(rows() == R{1, 0, 15, 2});
  b.step(move(2, 0, 0, 0, true, 4));
  CHECK(b.mask() == 0x01);
  CHECK(rows() == R{2, 6, 10, 14});
  CHECK(b.data_of(0) == 0x3F80);

  // A stride per bank bit, not one per bank (label digits in mixed radix): bit 0 steps 1 row,
  // bit 1 steps 8; source bank s = destination bank d here (k = 0).
  Move mixed = move(2, 0, 0, 3, true, 0);
  mixed.strides = {1, 8};
  b.step(mixed);
  CHECK(b.mask() == 0x55);
  CHECK(rows() == R{2, 3, 10, 11});

  // Not diagonal: one row for all banks whatever the stride, and a lane-0 move pads.
  b.step(move(9, 2, 0, 1, false, 5));
  CHECK(b.mask() == 0xFF);
  CHECK(rows() == R{9, 9, 9, 9});
  CHECK(b.data_of(0) == 0x3F82);
  CHECK(b.data_of(1) == 0x3F83);
  CHECK(b.data_of(2) == 0);
  INFO(b.bad.first);
  CHECK(b.bad.count == 0);  // the model agrees
}
