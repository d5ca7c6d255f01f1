// Each corpus generator, Verilated, against a C++ model over random stimulus (seed printed).
#include <catch2/catch.hpp>

#include <deque>
#include <iostream>
#include <random>

#include "Vadder_tree_n8_w8.h"
#include "Vdp_ram_w16_d32.h"
#include "Vfifo_w5_d3.h"
#include "Vfifo_w8_d4.h"
#include "Vgated_regs_cells.h"
#include "Vgated_regs_enables.h"
#include "Vseq_detect_4b_b.h"
#include "Vshift_reg_w8_d3.h"
#include "verilated.h"

namespace {

constexpr uint64_t kSeed = 20261122;
constexpr int kCycles = 20000;

template <typename V>
void tick(V& dut) {
  dut.clk = 0;
  dut.eval();
  dut.clk = 1;
  dut.eval();
}

template <typename V>
void reset(V& dut) {
  dut.rst = 1;
  tick(dut);
  tick(dut);
  dut.rst = 0;
}

template <typename V>
void fifo_vs_model(int width, int depth) {
  std::mt19937_64 rng(kSeed + width);
  std::cout << "fifo w" << width << " d" << depth << " seed=" << kSeed + width << "\n";
  VerilatedContext ctx;
  V dut{&ctx};
  reset(dut);
  std::deque<unsigned> model;
  for (int c = 0; c < kCycles; ++c) {
    unsigned push = rng() % 2, pop = rng() % 2, data = rng() & ((1u << width) - 1);
    dut.push = push;
    dut.pop = pop;
    dut.push_data = data;
    dut.eval();
    INFO("cycle " << c);
    REQUIRE(dut.empty == model.empty());
    REQUIRE(dut.full == (model.size() == static_cast<size_t>(depth)));
    REQUIRE(dut.count == model.size());
    if (!model.empty()) REQUIRE(dut.pop_data == model.front());
    bool do_push = push && model.size() < static_cast<size_t>(depth);
    bool do_pop = pop && !model.empty();
    if (do_pop) model.pop_front();
    if (do_push) model.push_back(data);
    tick(dut);
  }
}

}  // namespace

TEST_CASE("FIFO matches a deque model", "[corpus][fifo]") {
  fifo_vs_model<Vfifo_w8_d4>(8, 4);
  fifo_vs_model<Vfifo_w5_d3>(5, 3);
}

TEST_CASE("pipelined adder tree sums 8 inputs with 3 cycles of latency", "[corpus][adder_tree]") {
  std::mt19937_64 rng(kSeed);
  std::cout << "adder tree seed=" << kSeed << "\n";
  VerilatedContext ctx;
  Vadder_tree_n8_w8 dut{&ctx};
  reset(dut);
  std::deque<unsigned> expected{0, 0, 0};
  for (int c = 0; c < kCycles; ++c) {
    unsigned in[8], sum = 0;
    for (auto& v : in) sum += (v = rng() & 0xff);
    // Corner cases: all zeros and all ones now and then.
    if (c % 97 == 0) sum = 0, std::fill(std::begin(in), std::end(in), 0u);
    if (c % 89 == 0) sum = 8 * 255, std::fill(std::begin(in), std::end(in), 255u);
    dut.in_0 = in[0], dut.in_1 = in[1], dut.in_2 = in[2], dut.in_3 = in[3];
    dut.in_4 = in[4], dut.in_5 = in[5], dut.in_6 = in[6], dut.in_7 = in[7];
    tick(dut);
    expected.push_back(sum);
    dut.eval();
    INFO("cycle " << c);
    REQUIRE(dut.sum == expected[expected.size() - 3]);
  }
}

TEST_CASE("shift register with enable delays by 3 enabled cycles", "[corpus][shift_reg]") {
  std::mt19937_64 rng(kSeed + 1);
  std::cout << "shift reg seed=" << kSeed + 1 << "\n";
  VerilatedContext ctx;
  Vshift_reg_w8_d3 dut{&ctx};
  reset(dut);
  std::deque<unsigned> model{0, 0, 0};
  for (int c = 0; c < kCycles; ++c) {
    unsigned in = rng() & 0xff, en = rng() % 3 != 0;
    dut.in = in;
    dut.en = en;
    dut.eval();
    INFO("cycle " << c);
    REQUIRE(dut.out == model.front());
    if (en) {
      model.pop_front();
      model.push_back(in);
    }
    tick(dut);
  }
}

TEST_CASE("Moore FSM detects overlapping 1011", "[corpus][fsm]") {
  std::mt19937_64 rng(kSeed + 2);
  std::cout << "fsm seed=" << kSeed + 2 << "\n";
  VerilatedContext ctx;
  Vseq_detect_4b_b dut{&ctx};
  reset(dut);
  unsigned history = 0;
  int matches = 0;
  for (int c = 0; c < kCycles; ++c) {
    // Bias towards the pattern so matches, overlaps and near misses all happen.
    unsigned bit = (c % 7 < 4) ? ((0b1011 >> (3 - c % 7)) & 1) : rng() % 2;
    dut.bit_in = bit;
    tick(dut);
    history = ((history << 1) | bit) & 0xf;
    bool expect = c >= 3 && history == 0b1011;
    matches += expect;
    dut.eval();
    INFO("cycle " << c);
    REQUIRE(dut.found == expect);
  }
  REQUIRE(matches > 100);
}

TEST_CASE("dual-port RAM has a registered read and read-before-write", "[corpus][ram]") {
  std::mt19937_64 rng(kSeed + 3);
  std::cout << "ram seed=" << kSeed + 3 << "\n";
  VerilatedContext ctx;
  Vdp_ram_w16_d32 dut{&ctx};
  std::vector<unsigned> model(32, 0);
  // Fill first: the RAM has no reset.
  for (unsigned a = 0; a < 32; ++a) {
    dut.we = 1, dut.waddr = a, dut.wdata = 0, dut.re = 0;
    tick(dut);
  }
  unsigned expect = 0;
  bool have = false;
  for (int c = 0; c < kCycles; ++c) {
    unsigned we = rng() % 2, re = rng() % 2, wa = rng() % 32, ra = rng() % 32, wd = rng() & 0xffff;
    if (c % 5 == 0) ra = wa;  // same-address read and write
    dut.we = we, dut.waddr = wa, dut.wdata = wd, dut.re = re, dut.raddr = ra;
    unsigned before = model[ra];
    tick(dut);
    if (we) model[wa] = wd;
    if (re) expect = before, have = true;
    dut.eval();
    INFO("cycle " << c);
    if (have) REQUIRE(dut.rdata == expect);
  }
}

// The registers a clock gate clocks load exactly in the cycles its enable is 1, whether the gate
// is a latch-based cell (its own derived clock in Verilator) or a load enable; reset loads
// through a closed gate. Enables are random, long runs of 0 and 1 included.
TEST_CASE("gated registers load only while their gate's enable is 1, as cells and as enables", "[corpus][clock_gate]") {
  std::mt19937_64 rng(kSeed + 4);
  std::cout << "clock gate seed=" << kSeed + 4 << "\n";
  VerilatedContext ctx;
  Vgated_regs_cells cells{&ctx};
  Vgated_regs_enables enables{&ctx};
  unsigned cnt = 0, ra = 0, ra2 = 0, rb = 0;  // the model (ra2 and rb have no reset: set before compared)
  bool ra2_known = false, rb_known = false;
  auto drive = [&](unsigned rst, unsigned a, unsigned b, unsigned own, unsigned d) {
    cells.rst = enables.rst = rst;
    cells.en_a = enables.en_a = a;
    cells.en_b = enables.en_b = b;
    cells.own_en = enables.own_en = own;
    cells.d = enables.d = d;
  };
  int loads_a = 0, holds_a = 0;
  for (int c = 0; c < kCycles; ++c) {
    const bool in_reset = c < 2 || c % 5000 == 2500;  // a reset in the middle, with the gates closed
    unsigned a = rng() % 2, b = rng() % 2;
    if ((c / 200) % 3 == 1) a = b = 0;  // long idle stretches
    if ((c / 300) % 4 == 2) a = b = 1;
    const unsigned own = rng() % 2, d = rng() & 0xff;
    if (in_reset) a = b = 0;
    drive(in_reset, a, b, own, d);
    tick(cells);
    tick(enables);
    if (in_reset) {
      cnt = 0, ra = 0;
    } else {
      if (a) ra = (d ^ cnt) & 0xff, ++loads_a; else ++holds_a;
      if (a && own) ra2 = (d + cnt) & 0xff, ra2_known = true;
      if (b) rb = cnt == 0 ? d : (rb + d) & 0xff, rb_known = rb_known || cnt == 0;
      cnt = (cnt + 1) & 0xff;
    }
    INFO("cycle " << c);
    for (auto* v : {&cells.cnt, &enables.cnt}) REQUIRE(*v == cnt);
    REQUIRE(cells.qa == ra);
    REQUIRE(enables.qa == ra);
    if (ra2_known) REQUIRE(cells.qa2 == ra2);
    if (ra2_known) REQUIRE(enables.qa2 == ra2);
    if (rb_known) REQUIRE(cells.qb == rb);
    if (rb_known) REQUIRE(enables.qb == rb);
  }
  REQUIRE(loads_a > 1000);
  REQUIRE(holds_a > 1000);
}
