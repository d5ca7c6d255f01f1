// The vector unit (hw/vector/vector_unit.hpp) cycle by cycle: every beat's result against the
// golden operations (verif::vector_element, tanh_bf16, VectorAccumulators), and ready, busy,
// out_valid with its tag (and beat) and sum_valid against a model of the timing the header states.
// Random streams of every operation (invalid opcodes included) with random gaps, operands biased
// to the corners (NaN, Inf, zeros, subnormals, rounding ties, overflow), on a lane per element and
// on rows of four beats; then every bf16 through tanh.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "../arith/arith_test_util.hpp"
#include "Vvector_unit_n2_t1.h"
#include "Vvector_unit_n4_t6.h"
#include "Vvector_unit_n8_l2_t4.h"
#include "hw/vector/vector_unit.hpp"
#include "verif/numerics.hpp"
#include "verif/vector.hpp"
#include "verilated.h"

using fetta::hw::VectorOpcode;
using fetta::verif::VectorOp;

namespace {

constexpr int kOpcodes = 16;  // 11..15 are taken and do nothing

bool two_pass(int op) { return op == static_cast<int>(VectorOpcode::tanh) || op == static_cast<int>(VectorOpcode::tanh_bwd); }
bool row_op(int op) { return op <= static_cast<int>(VectorOpcode::tanh_bwd); }
bool pipelined(int op) { return op <= static_cast<int>(VectorOpcode::sumsq); }

// The golden operation of an opcode (the hardware's encoding is its own).
VectorOp golden_op(int op) {
  static const VectorOp ops[] = {VectorOp::add,  VectorOp::sub,      VectorOp::mul,  VectorOp::scale,
                                 VectorOp::axpy, VectorOp::relu,     VectorOp::relu_bwd, VectorOp::tanh,
                                 VectorOp::tanh_bwd, VectorOp::sumsq, VectorOp::reduce};
  return ops[op];
}

struct Row {
  bool valid = false;
  int op = 0;
  std::vector<uint16_t> a, b;
  uint32_t s = 0;
  uint32_t tag = 0;
};

// The ports of one configuration: a and b by element, out by lane, out_beat where a row has beats.
struct Ports {
  std::vector<uint16_t*> a, b, out;
  uint8_t* out_beat = nullptr;
};
Ports ports(Vvector_unit_n4_t6& d) {
  return {{&d.a_0, &d.a_1, &d.a_2, &d.a_3}, {&d.b_0, &d.b_1, &d.b_2, &d.b_3}, {&d.out_0, &d.out_1, &d.out_2, &d.out_3}};
}
Ports ports(Vvector_unit_n2_t1& d) { return {{&d.a_0, &d.a_1}, {&d.b_0, &d.b_1}, {&d.out_0, &d.out_1}}; }
Ports ports(Vvector_unit_n8_l2_t4& d) {
  return {{&d.a_0, &d.a_1, &d.a_2, &d.a_3, &d.a_4, &d.a_5, &d.a_6, &d.a_7},
          {&d.b_0, &d.b_1, &d.b_2, &d.b_3, &d.b_4, &d.b_5, &d.b_6, &d.b_7},
          {&d.out_0, &d.out_1},
          &d.out_beat};
}

// Drives a unit and checks every cycle against the golden model and the timing model.
template <typename Dut>
class Bench {
 public:
  Bench(int elems, int lanes, int tag_bits)
      : elems_(elems), lanes_(lanes), tag_mask_((1u << tag_bits) - 1), acc_(lanes), p_(ports(dut_)) {
    dut_.rst = 1;
    cycle(Row{});
    cycle(Row{});
    dut_.rst = 0;
    now_ = 0;
  }

  // One cycle with `row` presented; returns whether it was taken.
  bool step(const Row& row) { return cycle(row) && row.valid; }

  // Idle cycles until nothing is in flight or expected.
  void drain() {
    for (int i = 0; i < 2 * lanes_ + 8; ++i) cycle(Row{});
    CHECK(expected_rows_.empty());
    CHECK(!expected_sum_);
  }

  uint64_t beats_checked = 0, sums_checked = 0, taken = 0;

 private:
  struct InFlight {
    uint64_t t;
    bool two;
  };

  // A beat entering at t holds a stage register in cycles t+1 .. t+3, a two-pass one t+1 .. t+6
  // (its first pass is in stage 2's register at t+3, the cycle its second pass takes stage 0).
  bool model_in_flight(uint64_t c) const {
    for (const InFlight& e : flight_)
      if (c > e.t && c <= e.t + (e.two ? 6 : 3)) return true;
    return false;
  }
  bool model_pass2(uint64_t c) const {
    for (const InFlight& e : flight_)
      if (e.two && c == e.t + 3) return true;
    return false;
  }
  bool model_reducing(uint64_t c) const { return reduce_from_ && c >= *reduce_from_ && c < *reduce_from_ + lanes_ - 1; }

  bool cycle(const Row& row) {
    dut_.valid = row.valid;
    dut_.op = static_cast<uint8_t>(row.op);
    for (int i = 0; i < elems_; ++i) {
      *p_.a[static_cast<size_t>(i)] = row.valid ? row.a[static_cast<size_t>(i)] : 0;
      *p_.b[static_cast<size_t>(i)] = row.valid ? row.b[static_cast<size_t>(i)] : 0;
    }
    dut_.s = row.s;
    dut_.tag = static_cast<std::remove_reference_t<decltype(dut_.tag)>>(row.tag & tag_mask_);
    dut_.clk = 0;
    dut_.eval();
    const bool ready = dut_.ready != 0;
    if (!dut_.rst) check(row, ready);
    dut_.clk = 1;
    dut_.eval();
    ++now_;
    return ready;
  }

  void check(const Row& row, bool ready) {
    const uint64_t c = now_;
    while (!flight_.empty() && flight_.front().t + 7 < c) flight_.pop_front();
    const bool reducing = model_reducing(c);
    const bool in_flight = model_in_flight(c);
    const bool accept = !(model_pass2(c) || reducing || (row.op == static_cast<int>(VectorOpcode::reduce) && in_flight));
    const bool whole = !pipelined(row.op);  // reduce and the idle opcodes: one cycle
    const bool want_ready = accept && (whole || beat_in_ == elems_ / lanes_ - 1);
    REQUIRE(fmt::format("cycle {}: ready {}", c, ready) == fmt::format("cycle {}: ready {}", c, want_ready));
    REQUIRE(fmt::format("cycle {}: busy {}", c, dut_.busy) == fmt::format("cycle {}: busy {}", c, int(in_flight || reducing)));

    // Outputs of this cycle.
    const bool row_due = !expected_rows_.empty() && expected_rows_.front().first == c;
    INFO(history());
    REQUIRE(fmt::format("cycle {}: out_valid {}", c, dut_.out_valid) == fmt::format("cycle {}: out_valid {}", c, int(row_due)));
    if (row_due) {
      const auto& [when, want] = expected_rows_.front();
      std::string got_s, want_s;
      for (int i = 0; i < lanes_; ++i) {
        got_s += arith_test::hex(*p_.out[static_cast<size_t>(i)], 4) + " ";
        want_s += arith_test::hex(want.values[static_cast<size_t>(i)], 4) + " ";
      }
      INFO(fmt::format("cycle {}: {} beat {} (a {}, b {}, s {})", c, fetta::verif::to_string(golden_op(want.op)), want.beat,
                       want.a_text, want.b_text, arith_test::hex(want.s, 8)));
      REQUIRE(got_s == want_s);
      REQUIRE(dut_.out_tag == want.tag);
      if (p_.out_beat) REQUIRE(int(*p_.out_beat) == want.beat);
      expected_rows_.pop_front();
      ++beats_checked;
    }
    const bool sum_due = expected_sum_ && expected_sum_->first == c;
    REQUIRE(fmt::format("cycle {}: sum_valid {}", c, dut_.sum_valid) == fmt::format("cycle {}: sum_valid {}", c, int(sum_due)));
    if (sum_due) {
      REQUIRE(arith_test::hex(dut_.sum, 8) == arith_test::hex(expected_sum_->second, 8));
      expected_sum_.reset();
      ++sums_checked;
    }

    if (!row.valid || !accept) return;
    if (pipelined(row.op)) {
      // A beat enters: what it will produce, and when.
      const int beat = beat_in_;
      beat_in_ = (beat_in_ + 1) % (elems_ / lanes_);
      flight_.push_back({c, two_pass(row.op)});
      if (row_op(row.op)) {
        Expected e{row.op, row.tag & tag_mask_, beat, {}, "", "", row.s};
        for (int i = 0; i < lanes_; ++i) {
          const auto k = static_cast<size_t>(beat * lanes_ + i);
          e.values.push_back(fetta::verif::vector_element(golden_op(row.op), row.a[k], row.b[k], row.s));
          e.a_text += arith_test::hex(row.a[k], 4) + " ";
          e.b_text += arith_test::hex(row.b[k], 4) + " ";
        }
        const uint64_t due = c + (two_pass(row.op) ? fetta::hw::kVectorTwoPassLatency : fetta::hw::kVectorLatency);
        // A one-pass beat entering right after a two-pass one leaves first.
        auto it = expected_rows_.end();
        while (it != expected_rows_.begin() && std::prev(it)->first > due) --it;
        expected_rows_.insert(it, {due, e});
      }
    }
    if (!ready) return;
    // Taken.
    ++taken;
    history_.push_back({c, row.op});
    if (history_.size() > 8) history_.pop_front();
    if (row.op == static_cast<int>(VectorOpcode::sumsq)) {
      acc_.sumsq(row.a);  // the whole row, a beat at a time
    } else if (row.op == static_cast<int>(VectorOpcode::reduce)) {
      reduce_from_ = c + 1;
      expected_sum_ = {c + static_cast<uint64_t>(lanes_), acc_.reduce()};
    }
  }

  // The last operations taken, for a failure's message.
  std::string history() const {
    std::string h = "taken before:";
    for (const auto& [t, op] : history_) h += fmt::format(" {}@{}", op, t);
    return h;
  }
  std::deque<std::pair<uint64_t, int>> history_;

  struct Expected {
    int op;
    uint32_t tag;
    int beat;
    std::vector<uint16_t> values;
    std::string a_text, b_text;
    uint32_t s;
  };

  Dut dut_;
  int elems_, lanes_;
  uint32_t tag_mask_;
  fetta::verif::VectorAccumulators acc_;
  Ports p_;
  int beat_in_ = 0;  // the beat of the row presented that enters next
  uint64_t now_ = 0;
  std::deque<InFlight> flight_;
  std::deque<std::pair<uint64_t, Expected>> expected_rows_;
  std::optional<std::pair<uint64_t, uint32_t>> expected_sum_;
  std::optional<uint64_t> reduce_from_;
};

// bf16 operands: the arithmetic corners, values of training's size, and any pattern.
uint16_t operand(std::mt19937_64& rng) {
  static const std::vector<uint16_t> corners = arith_test::bf16_corners();
  switch (rng() % 4) {
    case 0: return corners[rng() % corners.size()];
    case 1: return fetta::verif::bf16_from_double(std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, -9));
    default: return static_cast<uint16_t>(rng());
  }
}

// The binary32 scalar: corners, learning rates and momenta, 2/n, any pattern.
uint32_t scalar(std::mt19937_64& rng) {
  static const uint32_t usual[] = {0xBC23D70A /* -0.01 */, 0x3F666666 /* 0.9 */, 0x3C000000 /* 2/256 */,
                                   0x3F800000, 0xBF800000, 0x00000000, 0x80000000, 0x7F800000,
                                   0x7FC00000, 0x00400000, 0x7F7FFFFF, 0x00800000};
  static const std::vector<uint32_t> corners = arith_test::fp32_corners();
  switch (rng() % 3) {
    case 0: return usual[rng() % std::size(usual)];
    case 1: return corners[rng() % corners.size()];
    default: return static_cast<uint32_t>(rng());
  }
}

Row random_row(std::mt19937_64& rng, int lanes) {
  Row r;
  r.valid = true;
  const uint64_t pick = rng() % 100;
  r.op = pick < 80 ? static_cast<int>(rng() % 9) : pick < 92 ? static_cast<int>(VectorOpcode::sumsq)
                                                 : pick < 96 ? static_cast<int>(VectorOpcode::reduce)
                                                             : static_cast<int>(11 + rng() % 5);
  for (int i = 0; i < lanes; ++i) {
    r.a.push_back(operand(rng));
    r.b.push_back(operand(rng));
  }
  r.s = scalar(rng);
  r.tag = static_cast<uint32_t>(rng());
  return r;
}

template <typename Dut>
void random_streams(int elems, int lanes, int tag_bits, const std::string& name) {
  std::mt19937_64 rng(arith_test::seed("vector unit " + name, 0x7EC70001, "vector"));
  Bench<Dut> bench(elems, lanes, tag_bits);
  for (int batch = 0; batch < 40; ++batch) {
    const int p_valid = batch % 4 == 0 ? 100 : 20 + static_cast<int>(rng() % 80);
    for (int n = 0; n < 500; ++n) {
      Row r = random_row(rng, elems);
      r.valid = static_cast<int>(rng() % 100) < p_valid;
      // Hold a row until it is taken, as a master on a valid/ready port does; with a beat per row
      // a master may also withdraw it, here half the time.
      while (!bench.step(r) && r.valid && (lanes < elems || rng() % 2 == 0)) {
      }
    }
    bench.drain();
  }
  std::cout << fmt::format("[vector] {}: {} taken, {} beats and {} sums checked\n", name, bench.taken, bench.beats_checked,
                           bench.sums_checked);
  CHECK(bench.beats_checked > 8000);
  CHECK(bench.sums_checked > 50);
}

}  // namespace

TEST_CASE("vector unit: random operation streams, every result and every cycle's handshake checked", "[vector_unit]") {
  random_streams<Vvector_unit_n4_t6>(4, 4, 6, "n4_t6");
  random_streams<Vvector_unit_n2_t1>(2, 2, 1, "n2_t1");
  random_streams<Vvector_unit_n8_l2_t4>(8, 2, 4, "n8_l2_t4");
}

TEST_CASE("vector unit: every bf16 through tanh back to back, and tanh_bwd", "[vector_unit]") {
  Bench<Vvector_unit_n4_t6> bench(4, 4, 6);
  uint32_t x = 0;
  while (x <= 0xFFFF) {
    Row r;
    r.valid = true;
    r.op = static_cast<int>(VectorOpcode::tanh);
    for (int i = 0; i < 4; ++i) {
      r.a.push_back(static_cast<uint16_t>(x + static_cast<uint32_t>(i)));
      r.b.push_back(0);
    }
    r.tag = x / 4;
    if (bench.step(r)) x += 4;
  }
  std::mt19937_64 rng(arith_test::seed("vector unit tanh_bwd", 0x7EC70002, "vector"));
  for (int n = 0; n < 20000;) {
    Row r;
    r.valid = true;
    r.op = static_cast<int>(n % 3 == 0 ? VectorOpcode::add : VectorOpcode::tanh_bwd);  // one-pass rows in between
    for (int i = 0; i < 4; ++i) {
      r.a.push_back(rng() % 2 ? fetta::verif::tanh_bf16(operand(rng)) : operand(rng));
      r.b.push_back(operand(rng));
    }
    if (bench.step(r)) ++n;
  }
  bench.drain();
  CHECK(bench.beats_checked == 16384 + 20000);
}

TEST_CASE("vector unit: parameters, names and refusals", "[vector_params]") {
  using fetta::hw::VectorUnit;
  CHECK(VectorUnit({}).module_name() == "vector_unit_n64_t12");
  // The default configuration's: a lane per element of a unified-memory row, a row of it as the tag.
  fetta::arch::ArchConfig cfg;
  const fetta::hw::VectorUnitParams d = fetta::hw::vector_unit_params(cfg);
  CHECK(d.elems == 64);
  CHECK(d.lanes == 64);
  CHECK(d.tag_bits == 12);
  cfg.vector.lanes = 16;  // vector.lanes: rows in four beats
  CHECK(VectorUnit(fetta::hw::vector_unit_params(cfg)).module_name() == "vector_unit_n64_l16_t12");
  CHECK(VectorUnit({.elems = 2, .lanes = 2, .tag_bits = 32}).module_name() == "vector_unit_n2_t32");
  CHECK_THROWS_WITH(VectorUnit({.lanes = 3}), "VectorUnit: lanes = 3 is not allowed; allowed: a power of two, 2 .. 1024");
  CHECK_THROWS_WITH(VectorUnit({.elems = 2048, .lanes = 2048}),
                    "VectorUnit: elems = 2048 is not allowed; allowed: a power of two, 2 .. 1024");
  CHECK_THROWS_WITH(VectorUnit({.elems = 32, .lanes = 64}),
                    "VectorUnit: lanes = 64 is more than the 32 elements of a row; allowed: a power of two, 2 .. 32");
  CHECK_THROWS_WITH(VectorUnit({.elems = 4, .lanes = 4, .tag_bits = 0}), "VectorUnit: tag_bits = 0 is out of range; allowed: 1 .. 32");
  CHECK_THROWS_WITH(VectorUnit({.elems = 4, .lanes = 4, .tag_bits = 33}),
                    "VectorUnit: tag_bits = 33 is out of range; allowed: 1 .. 32");
}
