// MemBank against a row-array model: two registered read ports, masked writes, read-first on a
// same-cycle read and write of one row, data held while a read is off. Both storage forms:
// mem_bank_d16_t2_w16 (shared_port: one RAM per lane, port B reads or writes) and
// mem_bank_d16_t2_w16_2copy (two RAMs per lane). The random traffic of the shared form keeps its
// rule (no port-B read in a cycle with a write); a directed test breaks it on purpose and checks
// the documented outcome (the write is done, rd_b_data holds).
#include <catch2/catch.hpp>

#include <array>
#include <random>

#include "Vmem_bank_d16_t2_w16.h"
#include "Vmem_bank_d16_t2_w16_2copy.h"
#include "mem_test_util.hpp"
#include "verilated.h"

namespace {

constexpr int kDepth = 16, kElems = 2;
using Row = std::array<uint64_t, kElems>;

struct BankInputs {
  bool ra_en = false, rb_en = false, we = false;
  unsigned ra = 0, rb = 0, wa = 0, mask = 0;
  Row wdata{};
};

// The bank seen through its ports, with the model alongside; every step() checks both reads.
// `kShared`: the model of the shared_port form, where a write suppresses a port-B read.
template <typename V, bool kShared>
class BankBench {
 public:
  static constexpr bool shared = kShared;
  BankBench() : dut_(&ctx_), rd_a_(MEM_PORTS2(dut_, rd_a_data)), rd_b_(MEM_PORTS2(dut_, rd_b_data)),
                wdata_(MEM_PORTS2(dut_, wr_data)) {
    mem_test::reset(dut_);
  }

  void step(const BankInputs& in) {
    dut_.rd_a_en = in.ra_en;
    dut_.rd_a_addr = in.ra;
    dut_.rd_b_en = in.rb_en;
    dut_.rd_b_addr = in.rb;
    dut_.wr_en = in.we;
    dut_.wr_addr = in.wa;
    dut_.wr_mask = in.mask;
    for (int e = 0; e < kElems; ++e) wdata_[e].set(in.wdata[e]);
    mem_test::settle(dut_);
    check();
    // Model: reads see the rows before this edge's write (read-first); disabled reads hold, and
    // so does a port-B read of the shared form in a cycle with a write (the write wins).
    if (in.ra_en) exp_a_ = rows_[in.ra], seen_a_ = true;
    if (in.rb_en && !(kShared && in.we)) exp_b_ = rows_[in.rb], seen_b_ = true;
    if (in.we)
      for (int e = 0; e < kElems; ++e)
        if (in.mask >> e & 1) rows_[in.wa][e] = in.wdata[e];
    mem_test::edge(dut_);
    ++cycle_;
  }

  // Both read ports against the model: the value of the last enabled read of each.
  void check() {
    for (int e = 0; e < kElems; ++e) {
      if (seen_a_ && rd_a_[e].get() != exp_a_[e])
        bad.note(fmt::format("cycle {} rd_a_data[{}] = 0x{:x}, expected 0x{:x}", cycle_, e, rd_a_[e].get(), exp_a_[e]));
      if (seen_b_ && rd_b_[e].get() != exp_b_[e])
        bad.note(fmt::format("cycle {} rd_b_data[{}] = 0x{:x}, expected 0x{:x}", cycle_, e, rd_b_[e].get(), exp_b_[e]));
    }
  }

  const Row& row(unsigned r) const { return rows_[r]; }
  uint64_t rd_b(int e) const { return rd_b_[e].get(); }
  mem_test::Mismatches bad;

 private:
  VerilatedContext ctx_;
  V dut_;
  mem_test::Ports rd_a_, rd_b_, wdata_;
  std::array<Row, kDepth> rows_{};
  Row exp_a_{}, exp_b_{};
  bool seen_a_ = false, seen_b_ = false;  // a read happened: its data is defined
  long cycle_ = 0;
};

using SharedBench = BankBench<Vmem_bank_d16_t2_w16, true>;
using TwoCopyBench = BankBench<Vmem_bank_d16_t2_w16_2copy, false>;

// Every row written with a known value through the write port, then read on both ports, so
// the model and the RTL start from the same contents.
template <typename B>
void fill(B& b, std::mt19937_64& rng) {
  for (unsigned r = 0; r < kDepth; ++r) {
    BankInputs in;
    in.we = true;
    in.wa = r;
    in.mask = 3;
    in.wdata = {rng() & 0xFFFF, rng() & 0xFFFF};
    b.step(in);
  }
  for (unsigned r = 0; r < kDepth; ++r) b.step({.ra_en = true, .rb_en = true, .ra = r, .rb = kDepth - 1 - r});
}

template <typename B>
void random_ops(long n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  B b;
  fill(b, rng);
  for (long i = 0; i < n; ++i) {
    BankInputs in;
    // Addresses from a few rows half of the time, so reads often meet the write's row.
    auto addr = [&] { return static_cast<unsigned>(rng() % 2 ? rng() % 3 : rng() % kDepth); };
    in.ra_en = rng() % 4 != 0;
    in.rb_en = rng() % 4 != 0;
    in.we = rng() % 2;
    in.ra = addr();
    in.rb = addr();
    in.wa = addr();
    if (rng() % 4 == 0) in.ra = in.wa;
    if (rng() % 4 == 0) in.rb = in.wa;
    in.mask = static_cast<unsigned>(rng() % 4);
    in.wdata = {rng() & 0xFFFF, rng() & 0xFFFF};
    // The shared form's rule: a cycle has the write or the port-B read (half of each).
    if (B::shared && in.we && in.rb_en) (rng() % 2 ? in.we : in.rb_en) = false;
    b.step(in);
  }
  b.step({});  // checks the last cycle's reads
  INFO(b.bad.first);
  REQUIRE(b.bad.count == 0);
}

template <typename B>
void directed(uint64_t seed) {
  std::mt19937_64 rng(seed);
  B b;
  fill(b, rng);
  SECTION("same-cycle read and write of one row returns the old row, then the new one") {
    const Row old = b.row(5);
    // Port A reads the written row in the write's cycle in both forms; port B only with two copies.
    b.step({.ra_en = true, .rb_en = !B::shared, .we = true, .ra = 5, .rb = 5, .wa = 5, .mask = 3,
            .wdata = {0xAAAA, 0x5555}});
    b.step({.ra_en = true, .rb_en = true, .ra = 5, .rb = 5});
    CHECK(b.row(5) == Row{0xAAAA, 0x5555});
    CHECK(old != b.row(5));
  }
  SECTION("a port-B read right before and right after a write of its row") {
    b.step({.rb_en = true, .rb = 9});
    b.step({.we = true, .wa = 9, .mask = 3, .wdata = {0x1111, 0x2222}});
    b.step({.rb_en = true, .rb = 9});
    b.step({.we = true, .wa = 9, .mask = 2, .wdata = {0x3333, 0x4444}});
    b.step({.ra_en = true, .rb_en = true, .ra = 9, .rb = 9});
    CHECK(b.row(9) == Row{0x1111, 0x4444});
  }
  SECTION("a write mask changes only its elements; mask 0 changes nothing") {
    const Row old = b.row(3);
    b.step({.we = true, .wa = 3, .mask = 1, .wdata = {0x1234, 0xFFFF}});
    b.step({.we = true, .wa = 3, .mask = 0, .wdata = {0xFFFF, 0xFFFF}});
    b.step({.ra_en = true, .ra = 3});
    CHECK(b.row(3) == Row{0x1234, old[1]});
    b.step({.we = true, .wa = 3, .mask = 2, .wdata = {0, 0xBEEF}});
    b.step({.rb_en = true, .rb = 3});
    CHECK(b.row(3) == Row{0x1234, 0xBEEF});
  }
  SECTION("read data holds while its enable is low, across writes to the row") {
    b.step({.ra_en = true, .rb_en = true, .ra = 0, .rb = kDepth - 1});
    for (int i = 0; i < 5; ++i)
      b.step({.we = true, .wa = static_cast<unsigned>(i % 2 ? 0 : kDepth - 1), .mask = 3,
              .wdata = {static_cast<uint64_t>(i), static_cast<uint64_t>(i)}});
  }
  SECTION("the top row and all-ones data") {
    b.step({.ra_en = true, .we = true, .ra = kDepth - 1, .wa = kDepth - 1, .mask = 3, .wdata = {0xFFFF, 0xFFFF}});
    b.step({.ra_en = true, .rb_en = true, .ra = kDepth - 1, .rb = kDepth - 1});
  }
  b.step({});
  INFO(b.bad.first);
  REQUIRE(b.bad.count == 0);
}

}  // namespace

TEST_CASE("MemBank: reads, masked writes and read-first collisions match the model", "[mem_bank]") {
  random_ops<SharedBench>(20000L * mem_test::scale(), mem_test::seed("mem_bank random", 0x6d656d62616e6b));
  random_ops<TwoCopyBench>(20000L * mem_test::scale(), mem_test::seed("mem_bank 2copy random", 0x6d656d62616e32));
}

TEST_CASE("MemBank: directed corner cases, shared port", "[mem_bank]") {
  directed<SharedBench>(mem_test::seed("mem_bank directed", 7));
}

TEST_CASE("MemBank: directed corner cases, two copies", "[mem_bank]") {
  directed<TwoCopyBench>(mem_test::seed("mem_bank 2copy directed", 7));
}

TEST_CASE("MemBank shared port: a write and a port-B read in one cycle: the write wins, rd_b_data holds",
          "[mem_bank]") {
  std::mt19937_64 rng(mem_test::seed("mem_bank rule broken", 11));
  SharedBench b;
  fill(b, rng);
  // Port B reads row 4; then, breaking the rule, reads row 6 while writing row 6 (and, again,
  // row 2 while writing row 6 with mask 0): both writes are done, port B's data stays row 4's.
  const Row row4 = b.row(4), row2 = b.row(2);
  b.step({.rb_en = true, .rb = 4});
  b.step({.rb_en = true, .we = true, .rb = 6, .wa = 6, .mask = 3, .wdata = {0xC0DE, 0xF00D}});
  b.step({.rb_en = true, .we = true, .rb = 2, .wa = 6, .mask = 0, .wdata = {0xDEAD, 0xDEAD}});
  b.step({.ra_en = true, .ra = 6});
  for (int e = 0; e < kElems; ++e) CHECK(b.rd_b(e) == row4[e]);  // held through both violations
  CHECK(b.row(6) == Row{0xC0DE, 0xF00D});
  CHECK(b.row(2) == row2);
  // The next port-B read without a write works again (and sees the write).
  b.step({.rb_en = true, .rb = 6});
  b.step({});
  for (int e = 0; e < kElems; ++e) CHECK(b.rd_b(e) == b.row(6)[e]);
  INFO(b.bad.first);
  REQUIRE(b.bad.count == 0);
}

TEST_CASE("MemBank: large random run", "[mem_large]") {
  random_ops<SharedBench>(2000000, mem_test::seed("mem_bank large", 0x6d656d62616e6c));
  random_ops<TwoCopyBench>(2000000, mem_test::seed("mem_bank 2copy large", 0x6d656d62616e33));
}
