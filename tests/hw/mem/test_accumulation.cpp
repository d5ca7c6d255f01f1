// AccumulationUnit against a sequential model: every operation (write, accumulate, read) sees
// all earlier ones, at one operation per bank per cycle, also back-to-back on one row (the
// pipeline's read-after-write hazards, closed by forwarding). Accumulation is bit-exact against
// the golden numerics: verif::fp32_add for fp32, wrap-around adds for int32 / int48.
// With pipeline = 3 one rule changes (the read rule, docs/memory.md §3): a read does not see a
// write or accumulate of its row issued in the cycle right before it. The model knows the rule,
// the random operations respect it, and a directed sequence checks it with hand-computed rows.
#include <catch2/catch.hpp>

#include <array>
#include <functional>
#include <optional>
#include <random>
#include <vector>

#include "Vaccum_unit_b2_t1_d4_int48.h"
#include "Vaccum_unit_b2_t1_d4_int48_p3.h"
#include "Vaccum_unit_b2_t2_d8_fp32.h"
#include "Vaccum_unit_b2_t2_d8_fp32_p3_twopath_sk.h"
#include "Vaccum_unit_b4_t2_d8_int32.h"
#include "Vaccum_unit_b4_t2_d8_int32_p3.h"
#include "mem_test_util.hpp"
#include "verif/numerics.hpp"
#include "verilated.h"

namespace {

enum Op : unsigned { kIdle = 0, kWrite = 1, kAcc = 2, kRead = 3 };

struct BankOp {
  unsigned op = kIdle, row = 0, mask = 0;
  std::vector<uint64_t> data;  // elems values (bit patterns of the lane width)
};

// What a configuration is: its sizes, lane width and the golden addition on bit patterns.
struct AccumSpec {
  int banks, elems, depth, width;
  std::function<uint64_t(uint64_t, uint64_t)> add;
  std::function<uint64_t(std::mt19937_64&)> value;  // a random operand, biased to corners
  int pipeline = 2;                                  // the unit's read-modify-write depth

  AccumSpec with_pipeline(int p) const {
    AccumSpec s = *this;
    s.pipeline = p;
    return s;
  }
};

// The unit through its ports, with a sequential model alongside; step() applies one operation
// per bank and checks the reads of the previous step.
template <typename V>
class AccumBench {
 public:
  struct PortSet {
    mem_test::Ports op, addr, data, rd_data;
  };
  AccumBench(const AccumSpec& spec, const std::function<PortSet(V&)>& ports)
      : s_(spec), dut_(&ctx_), ports_(ports(dut_)),
        rows_(static_cast<size_t>(spec.banks * spec.depth), std::vector<uint64_t>(static_cast<size_t>(spec.elems), 0)),
        expect_(static_cast<size_t>(spec.banks)) {
    mem_test::reset(dut_);
  }

  void step(const std::vector<BankOp>& ops) {
    uint64_t mask = 0;
    for (int b = 0; b < s_.banks; ++b) {
      const BankOp& o = ops[static_cast<size_t>(b)];
      ports_.op[b].set(o.op);
      ports_.addr[b].set(o.row);
      mask |= static_cast<uint64_t>(o.mask) << (b * s_.elems);
      for (int e = 0; e < s_.elems; ++e)
        ports_.data[b * s_.elems + e].set(o.data.empty() ? 0 : o.data[static_cast<size_t>(e)]);
    }
    dut_.mask = mask;
    mem_test::settle(dut_);
    check();
    for (int b = 0; b < s_.banks; ++b) {
      const BankOp& o = ops[static_cast<size_t>(b)];
      // Model: applied in issue order.
      std::vector<uint64_t>& row = rows_[static_cast<size_t>(b * s_.depth + static_cast<int>(o.row))];
      const bool writes = o.op == kWrite || o.op == kAcc;
      const bool after_write = last_was_write_[b] && last_row_[b] == static_cast<int>(o.row);
      expect_[static_cast<size_t>(b)].reset();
      if (o.op == kRead) {
        // The read rule of pipeline 3: the write of the cycle before, to this row, is not visible.
        const bool lag = s_.pipeline == 3 && after_write;
        expect_[static_cast<size_t>(b)] = lag ? before_last_[b] : row;
        if (lag) ++lagged_reads;
        if (prev_was_write_[b] && prev_row_[b] == static_cast<int>(o.row)) ++reads_at_2;
      }
      if (writes) before_last_[b] = row;
      if (writes)
        for (int e = 0; e < s_.elems; ++e) {
          if (!(o.mask >> e & 1)) continue;
          uint64_t& cell = row[static_cast<size_t>(e)];
          const uint64_t d = o.data[static_cast<size_t>(e)] & mem_test::mask_bits(s_.width);
          if (o.op == kAcc) {
            if (last_row_[b] == static_cast<int>(o.row) && last_was_write_[b]) ++hazards;
            cell = s_.add(cell, d) & mem_test::mask_bits(s_.width);
          } else {
            cell = d;
          }
        }
      prev_row_[b] = last_row_[b];
      prev_was_write_[b] = last_was_write_[b];
      last_row_[b] = static_cast<int>(o.row);
      last_was_write_[b] = writes;
    }
    mem_test::edge(dut_);
    ++cycle_;
  }

  // The reads issued last cycle: rd_valid and rd_data of every bank.
  void check() {
    for (int b = 0; b < s_.banks; ++b) {
      const auto& ex = expect_[static_cast<size_t>(b)];
      const bool valid = dut_.rd_valid >> b & 1;
      if (valid != ex.has_value()) bad.note(fmt::format("cycle {} bank {} rd_valid = {}", cycle_, b, valid));
      if (!ex) continue;
      ++reads;
      rd_[static_cast<size_t>(b)].assign(static_cast<size_t>(s_.elems), 0);
      for (int e = 0; e < s_.elems; ++e) {
        const uint64_t got = ports_.rd_data[b * s_.elems + e].get() & mem_test::mask_bits(s_.width);
        rd_[static_cast<size_t>(b)][static_cast<size_t>(e)] = got;
        if (got != (*ex)[static_cast<size_t>(e)])
          bad.note(fmt::format("cycle {} bank {} rd_data[{}] = 0x{:x}, expected 0x{:x}", cycle_, b, e, got,
                               (*ex)[static_cast<size_t>(e)]));
      }
    }
  }

  BankOp op(unsigned code, unsigned row, unsigned mask, std::mt19937_64& rng) const {
    BankOp o{code, row, mask, {}};
    for (int e = 0; e < s_.elems; ++e) o.data.push_back(s_.value(rng) & mem_test::mask_bits(s_.width));
    return o;
  }
  std::vector<BankOp> idle() const { return std::vector<BankOp>(static_cast<size_t>(s_.banks)); }
  unsigned full_mask() const { return (1u << s_.elems) - 1; }

  // Every row written, so the model and the RTL start equal.
  void fill(std::mt19937_64& rng) {
    for (int r = 0; r < s_.depth; ++r) {
      std::vector<BankOp> ops;
      for (int b = 0; b < s_.banks; ++b) ops.push_back(op(kWrite, static_cast<unsigned>(r), full_mask(), rng));
      step(ops);
    }
  }

  void random_ops(long n, std::mt19937_64& rng) {
    for (long i = 0; i < n; ++i) {
      std::vector<BankOp> ops;
      for (int b = 0; b < s_.banks; ++b) {
        // Rows 0 and 1 most of the time: back-to-back and distance-2 hits on one row.
        unsigned row = static_cast<unsigned>(rng() % 4 ? rng() % 2 : rng() % static_cast<unsigned>(s_.depth));
        const unsigned pick = static_cast<unsigned>(rng() % 10);
        const unsigned code = pick < 5 ? kAcc : pick < 7 ? kRead : pick < 8 ? kWrite : kIdle;
        // Pipeline 3: the read rule, as a controller keeps it: no read of the row written or
        // accumulated in the cycle before (read the other hot row instead, often the one
        // written two cycles before).
        if (s_.pipeline == 3 && code == kRead && last_was_write_[b] && last_row_[b] == static_cast<int>(row)) row ^= 1;
        const unsigned mask = rng() % 3 ? full_mask() : static_cast<unsigned>(rng()) & full_mask();
        ops.push_back(op(code, row, mask, rng));
      }
      step(ops);
    }
  }

  const AccumSpec& spec() const { return s_; }
  // The data bank b returned for the read it was given in the step before the last step().
  const std::vector<uint64_t>& read_data(int b) const { return rd_[static_cast<size_t>(b)]; }
  mem_test::Mismatches bad;
  long hazards = 0;       // accumulates issued right after a write/accumulate of the same row
  long reads = 0;
  long reads_at_2 = 0;    // reads issued two cycles after a write/accumulate of the same row
  long lagged_reads = 0;  // pipeline 3: reads issued right after one (the read rule applies)

 private:
  AccumSpec s_;
  VerilatedContext ctx_;
  V dut_;
  PortSet ports_;
  std::vector<std::vector<uint64_t>> rows_;
  std::vector<std::optional<std::vector<uint64_t>>> expect_;
  std::array<int, 64> last_row_{}, prev_row_{};  // the rows of the last two operations per bank
  std::array<bool, 64> last_was_write_{}, prev_was_write_{};
  std::array<std::vector<uint64_t>, 64> before_last_{};  // the row the last write/accumulate changed, before it
  std::vector<std::vector<uint64_t>> rd_ = std::vector<std::vector<uint64_t>>(64);
  long cycle_ = 0;
};

// Directed sequences on bank 0 (the other banks idle, then the same on every bank at once):
// each targets one distance of the read-after-write hazard.
template <typename V>
void hazard_sequences(AccumBench<V>& a, std::mt19937_64& rng) {
  const unsigned F = a.full_mask();
  const int B = a.spec().banks;
  auto all = [&](unsigned code, unsigned row, unsigned mask) {
    std::vector<BankOp> ops;
    for (int b = 0; b < B; ++b) ops.push_back(a.op(code, row, mask, rng));
    a.step(ops);
  };
  auto one = [&](unsigned code, unsigned row, unsigned mask) {
    std::vector<BankOp> ops = a.idle();
    ops[0] = a.op(code, row, mask, rng);
    a.step(ops);
  };
  for (auto issue : {std::function<void(unsigned, unsigned, unsigned)>(one), std::function<void(unsigned, unsigned, unsigned)>(all)}) {
    // write then accumulate back-to-back, then read right away (distance 1 everywhere)
    issue(kWrite, 1, F);
    issue(kAcc, 1, F);
    issue(kAcc, 1, F);
    issue(kRead, 1, F);
    // distance 2: one idle (or other-row) cycle between
    issue(kAcc, 1, F);
    issue(kIdle, 0, 0);
    issue(kAcc, 1, F);
    issue(kAcc, 0, F);
    issue(kRead, 1, F);
    // alternating rows: every access two cycles after the previous one to its row
    for (int i = 0; i < 6; ++i) issue(kAcc, static_cast<unsigned>(i & 1), F);
    issue(kRead, 0, F);
    issue(kRead, 1, F);
    // partial masks back-to-back: the forwarded row must merge per element
    issue(kAcc, 1, 1);
    issue(kAcc, 1, F & ~1u);
    issue(kWrite, 1, 1);
    issue(kAcc, 1, F);
    issue(kAcc, 1, 0);
    issue(kRead, 1, F);
    // a write directly after a read-modify-write, then read
    issue(kAcc, 0, F);
    issue(kWrite, 0, F);
    issue(kRead, 0, F);
    // a long burst into one row (the fp32 sum is order-exact), read mid-way and at the end
    for (int i = 0; i < 40; ++i) issue(i == 20 ? kRead : kAcc, 1, F);
    issue(kRead, 1, F);
    issue(kRead, 1, F);
    issue(kIdle, 0, 0);
  }
}

// The read rule and the forwarding distances with rows computed here, by hand, on bank 0 (the
// other banks idle): independent of the bench's model. With pipeline 3 a read right after a
// write or accumulate of its row returns the row before it, and two cycles after, the new row;
// with pipeline 2 both return the new row. Back-to-back accumulates must sum exactly, in order,
// and partial masks must merge per element through the distance-1 forwarding (stage 2) and the
// distance-2 forwarding (stage 1), also both at once with complementary masks.
template <typename V>
mem_test::Mismatches read_rule_sequence(AccumBench<V>& a, std::mt19937_64& rng) {
  mem_test::Mismatches bad;  // against the rows computed here (the bench checks its model too)
  const AccumSpec& s = a.spec();
  const int T = s.elems;
  const bool lag = s.pipeline == 3;
  const unsigned F = a.full_mask();
  const unsigned lo = T == 1 ? 1u : (1u << (T / 2)) - 1;  // the low half of the elements
  const unsigned hi = F & ~lo;                             // the high half (none if T = 1)
  const unsigned r = 1, other = 0;
  using Row = std::vector<uint64_t>;
  Row row(static_cast<size_t>(T), 0);  // row r of bank 0, as sequential semantics leave it
  std::optional<std::pair<Row, std::string>> due;  // the read issued in the last cycle
  long checked = 0;
  auto go = [&](unsigned code, unsigned target, unsigned mask, const std::string& what = "") {
    BankOp o = a.op(code, target, mask, rng);
    std::vector<BankOp> ops = a.idle();
    ops[0] = o;
    a.step(ops);
    if (due) {
      ++checked;
      const Row& got = a.read_data(0);
      for (int e = 0; e < T; ++e)
        if (got.size() != row.size() || got[static_cast<size_t>(e)] != due->first[static_cast<size_t>(e)]) {
          bad.note(fmt::format("{}: bank 0 row {} element {} = 0x{:x}, expected 0x{:x}", due->second, r, e,
                                 got.empty() ? 0 : got[static_cast<size_t>(e)], due->first[static_cast<size_t>(e)]));
          break;
        }
    }
    due.reset();
    if (code == kRead) due.emplace(row, what);
    if (target == r && (code == kWrite || code == kAcc))
      for (int e = 0; e < T; ++e)
        if (mask >> e & 1) {
          const uint64_t d = o.data[static_cast<size_t>(e)];
          uint64_t& cell = row[static_cast<size_t>(e)];
          cell = code == kWrite ? d : s.add(cell, d) & mem_test::mask_bits(s.width);
        }
  };
  // Reads: what is due is `row` at issue time, except under the rule, where the caller passes
  // the row before the last operation. go() records `row` before applying the issued op, and
  // reads apply nothing, so a read issued right after a write sees `row` = the new row: replace
  // it by the old one when the rule applies.
  auto read = [&](const Row& before, bool right_after, const std::string& what) {
    go(kRead, r, F, what);
    if (lag && right_after) due->first = before;
  };
  auto idle = [&] { go(kIdle, other, 0); };
  Row before;

  go(kWrite, r, F);
  before = row;
  go(kAcc, r, F);
  read(before, true, "read 1 cycle after an accumulate");
  read(row, false, "read 2 cycles after an accumulate (the one before it a read)");
  go(kAcc, r, F);
  idle();
  read(row, false, "read 2 cycles after an accumulate (stage-1 forwarding)");
  go(kAcc, r, F);
  idle();
  idle();
  read(row, false, "read 3 cycles after an accumulate (from the memory)");
  go(kAcc, other, F);
  idle();
  read(row, false, "read 2 cycles after an accumulate of another row");
  go(kWrite, other, F);
  read(row, false, "read 1 cycle after a write of another row");
  before = row;
  go(kWrite, r, F);
  read(before, true, "read 1 cycle after a write");
  read(row, false, "read 2 cycles after a write");
  // back-to-back accumulates into one row: exact, in order
  for (int i = 0; i < 24; ++i) {
    before = row;
    go(kAcc, r, F);
  }
  read(before, true, "read 1 cycle after a burst of 24 accumulates");
  read(row, false, "read 2 cycles after a burst of 24 accumulates");
  // partial masks, distance 1: lo then hi then lo, back-to-back
  go(kWrite, r, F);
  go(kAcc, r, lo);
  go(kAcc, r, hi);
  before = row;
  go(kAcc, r, lo);
  read(before, true, "read 1 cycle after partial-mask accumulates lo, hi, lo");
  read(row, false, "read 2 cycles after partial-mask accumulates lo, hi, lo");
  // partial masks, distance 2 (another row's accumulate between)
  go(kAcc, r, lo);
  go(kAcc, other, F);
  go(kAcc, r, hi);
  go(kAcc, other, F);
  go(kAcc, r, F);
  go(kAcc, other, F);
  read(row, false, "read after partial-mask accumulates two cycles apart");
  // both distances at once: the write of two cycles before covers lo, the one of the cycle
  // before hi; then a full accumulate needs both, element by element
  go(kAcc, r, lo);
  go(kAcc, r, hi);
  go(kAcc, r, F);
  idle();
  read(row, false, "read after accumulates lo, hi, full");
  go(kWrite, r, hi);
  go(kAcc, r, lo);
  before = row;
  go(kWrite, r, lo);
  read(before, true, "read 1 cycle after a partial write");
  go(kAcc, other, F);
  read(row, false, "read 2 cycles after a partial write");
  before = row;
  go(kAcc, r, hi);
  read(before, true, "read 1 cycle after a partial accumulate");
  idle();
  REQUIRE(checked == 17);  // every read above
  return bad;
}

template <typename V>
void run_accum(const AccumSpec& spec, const std::function<typename AccumBench<V>::PortSet(V&)>& ports,
               const std::string& name, uint64_t fallback_seed, long n) {
  std::mt19937_64 rng(mem_test::seed(name, fallback_seed));
  AccumBench<V> a(spec, ports);
  a.fill(rng);
  hazard_sequences(a, rng);
  const mem_test::Mismatches rule = read_rule_sequence(a, rng);
  {
    INFO("directed read-rule sequence (pipeline " << spec.pipeline << "):\n" << rule.first);
    REQUIRE(rule.count == 0);
  }
  const long lagged_directed = a.lagged_reads;
  const long at2_before = a.reads_at_2;
  a.random_ops(n, rng);
  a.step(a.idle());  // checks the last reads
  std::cout << fmt::format(
      "[mem] {} (pipeline {}): {} reads checked, {} back-to-back read-modify-writes of one row, {} random reads two "
      "cycles after a write of their row, {} directed reads under the read rule\n",
      name, spec.pipeline, a.reads, a.hazards, a.reads_at_2 - at2_before, a.lagged_reads);
  INFO(a.bad.first);
  REQUIRE(a.bad.count == 0);
  REQUIRE(a.hazards > n / 20);
  REQUIRE(a.reads_at_2 - at2_before > n / 50);
  // The random operations keep the read rule; the directed ones break it on purpose.
  REQUIRE(a.lagged_reads == lagged_directed);
  if (spec.pipeline == 3) REQUIRE(lagged_directed > 0);
}

// Operands: fp32 patterns clustered in a few binades (sums round, cancel and carry), with
// zeros, infinities, NaNs, subnormals and the extremes mixed in.
uint64_t fp32_value(std::mt19937_64& rng) {
  static const uint32_t specials[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807FFFFFu, 0x00800000u,
                                      0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F800000u, 0xFF800000u,
                                      0x7FC00000u, 0xFF800001u, 0x3F800000u, 0xBF800000u};
  const unsigned k = static_cast<unsigned>(rng() % 16);
  if (k == 0) return specials[rng() % std::size(specials)];
  if (k == 1) return static_cast<uint32_t>(rng());
  const uint32_t exp = 124 + static_cast<uint32_t>(rng() % 8);
  return static_cast<uint32_t>((rng() & 1) << 31 | exp << 23 | (rng() & 0x7FFFFF));
}

uint64_t int_value(std::mt19937_64& rng, int width) {
  const uint64_t m = mem_test::mask_bits(width);
  const uint64_t top = 1ull << (width - 1);
  const uint64_t corners[] = {0, 1, m, top, top - 1, top + 1, m - 1};  // 0, 1, -1, MIN, MAX, ...
  const unsigned k = static_cast<unsigned>(rng() % 8);
  if (k == 0) return corners[rng() % std::size(corners)];
  if (k < 4) return (rng() % 7 - 3) & m;  // small values: sums stay readable
  return rng() & m;
}

const AccumSpec kInt32{4, 2, 8, 32,
                       [](uint64_t a, uint64_t b) { return (a + b) & 0xFFFFFFFFull; },
                       [](std::mt19937_64& r) { return int_value(r, 32); }};
const AccumSpec kFp32{2, 2, 8, 32,
                      [](uint64_t a, uint64_t b) {
                        return static_cast<uint64_t>(
                            fetta::verif::fp32_add(static_cast<uint32_t>(a), static_cast<uint32_t>(b)));
                      },
                      fp32_value};
const AccumSpec kInt48{2, 1, 4, 48,
                       [](uint64_t a, uint64_t b) {
                         return static_cast<uint64_t>(fetta::verif::wrap48(static_cast<int64_t>(a + b))) &
                                mem_test::mask_bits(48);
                       },
                       [](std::mt19937_64& r) { return int_value(r, 48); }};

// Port lists: one function per port layout, for every model of that layout (same banks, elems).
template <typename V>
typename AccumBench<V>::PortSet ports_b4_t2(V& d) {
  return {MEM_PORTS4(d, op), MEM_PORTS4(d, addr), MEM_PORTS8(d, data), MEM_PORTS8(d, rd_data)};
}
template <typename V>
typename AccumBench<V>::PortSet ports_b2_t2(V& d) {
  return {MEM_PORTS2(d, op), MEM_PORTS2(d, addr), MEM_PORTS4(d, data), MEM_PORTS4(d, rd_data)};
}
template <typename V>
typename AccumBench<V>::PortSet ports_b2_t1(V& d) {
  return {MEM_PORTS2(d, op), MEM_PORTS2(d, addr), MEM_PORTS2(d, data), MEM_PORTS2(d, rd_data)};
}

using Int32 = Vaccum_unit_b4_t2_d8_int32;
using Fp32 = Vaccum_unit_b2_t2_d8_fp32;
using Int48 = Vaccum_unit_b2_t1_d4_int48;
using Int32P3 = Vaccum_unit_b4_t2_d8_int32_p3;
using Fp32P3 = Vaccum_unit_b2_t2_d8_fp32_p3_twopath_sk;  // pipeline 3 with the two-path adder
using Int48P3 = Vaccum_unit_b2_t1_d4_int48_p3;

}  // namespace

TEST_CASE("AccumulationUnit int32 (4 banks x 2): hazards and random operations", "[accum]") {
  run_accum<Int32>(kInt32, ports_b4_t2<Int32>, "accum int32", 0x616363753332, 20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit fp32 (2 banks x 2): order-exact fp32_add, hazards, specials", "[accum]") {
  run_accum<Fp32>(kFp32, ports_b2_t2<Fp32>, "accum fp32", 0x616363666633, 20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit int48 (2 banks x 1): 48-bit wrap-around", "[accum]") {
  run_accum<Int48>(kInt48, ports_b2_t1<Int48>, "accum int48", 0x616363753438, 20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit int32 pipeline 3 (4 banks x 2): the read rule and both forwarding distances", "[accum]") {
  run_accum<Int32P3>(kInt32.with_pipeline(3), ports_b4_t2<Int32P3>, "accum int32 p3", 0x616333753332,
                     20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit fp32 pipeline 3 two-path adder (2 banks x 2): order-exact sums and the read rule", "[accum]") {
  run_accum<Fp32P3>(kFp32.with_pipeline(3), ports_b2_t2<Fp32P3>, "accum fp32 p3 two_path", 0x616333666633,
                    20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit int48 pipeline 3 (2 banks x 1): one element per bank", "[accum]") {
  run_accum<Int48P3>(kInt48.with_pipeline(3), ports_b2_t1<Int48P3>, "accum int48 p3", 0x616333753438,
                     20000L * mem_test::scale());
}

TEST_CASE("AccumulationUnit: large random runs", "[mem_large]") {
  run_accum<Int32>(kInt32, ports_b4_t2<Int32>, "accum int32 large", 0x616363753333, 1000000);
  run_accum<Fp32>(kFp32, ports_b2_t2<Fp32>, "accum fp32 large", 0x616363666634, 1000000);
  run_accum<Int48>(kInt48, ports_b2_t1<Int48>, "accum int48 large", 0x616363753439, 1000000);
  run_accum<Int32P3>(kInt32.with_pipeline(3), ports_b4_t2<Int32P3>, "accum int32 p3 large", 0x616333753333, 1000000);
  run_accum<Fp32P3>(kFp32.with_pipeline(3), ports_b2_t2<Fp32P3>, "accum fp32 p3 two_path large", 0x616333666634,
                    1000000);
  run_accum<Int48P3>(kInt48.with_pipeline(3), ports_b2_t1<Int48P3>, "accum int48 p3 large", 0x616333753439, 1000000);
}
