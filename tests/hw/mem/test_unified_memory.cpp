// UnifiedMemory (unified_mem_b4_t2_d16_w16_h2: 4 banks x 2 elements, two halves of 8 rows, a host
// port of 2 bank rows) against a model: the TCU ports (IA, IB reads, result writes) address half
// `compute_half`, the host port the other half (the TCU's writes go there instead while wr_other is
// set, and the host's are ignored); reads are registered and read-first. Both storage forms: the
// default shared_port banks (the IB read and the TCU write share a port: the random traffic never
// puts them on one bank of the compute half in one cycle; a directed test does, and checks that
// the write is done and ib_data holds) and two copies (unified_mem_b4_t2_d16_w16_h2_2copy).
#include <catch2/catch.hpp>

#include <array>
#include <functional>
#include <random>

#include "Vunified_mem_b4_t2_d16_w16_h2.h"
#include "Vunified_mem_b4_t2_d16_w16_h2_2copy.h"
#include "mem_test_util.hpp"
#include "verilated.h"

namespace {

constexpr int kBanks = 4, kElems = 2, kLanes = kBanks * kElems, kRows = 8;  // rows per half
constexpr int kHostBanks = 2, kHostLanes = kHostBanks * kElems, kGroups = kBanks / kHostBanks;
constexpr uint64_t kMask = 0xFFFF;

struct TcuInputs {
  unsigned ia_en = 0, ib_en = 0, wr_en = 0, wr_mask = 0;  // bit per bank / per lane
  bool wr_other = false;  // the TCU writes the host's half (host writes ignored)
  std::array<unsigned, kBanks> ia_addr{}, ib_addr{}, wr_addr{};
  std::array<uint64_t, kLanes> wr_data{};
};

struct HostInputs {
  bool we = false, re = false;
  unsigned group = 0, row = 0, wmask = 0;  // banks group*kHostBanks .. +kHostBanks-1
  std::array<uint64_t, kHostLanes> wdata{};
};

// `kShared`: the model of the shared_port form, where a TCU write to the compute half of a bank
// suppresses that bank's IB read (its ib_data holds the bank half's last port-B read).
template <typename V, bool kShared>
class UnifiedBench {
 public:
  static constexpr bool shared = kShared;
  UnifiedBench()
      : dut_(&ctx_),
        ia_addr_(MEM_PORTS4(dut_, ia_addr)), ib_addr_(MEM_PORTS4(dut_, ib_addr)), wr_addr_(MEM_PORTS4(dut_, wr_addr)),
        wr_data_(MEM_PORTS8(dut_, wr_data)), ia_data_(MEM_PORTS8(dut_, ia_data)), ib_data_(MEM_PORTS8(dut_, ib_data)),
        host_wdata_(MEM_PORTS4(dut_, host_wdata)), host_rdata_(MEM_PORTS4(dut_, host_rdata)) {
    mem_test::reset(dut_);
  }

  void step(unsigned half, const TcuInputs& t, const HostInputs& h) {
    dut_.compute_half = half;
    dut_.ia_en = t.ia_en;
    dut_.ib_en = t.ib_en;
    dut_.wr_en = t.wr_en;
    dut_.wr_mask = t.wr_mask;
    dut_.wr_other = t.wr_other;
    for (int b = 0; b < kBanks; ++b) {
      ia_addr_[b].set(t.ia_addr[b]);
      ib_addr_[b].set(t.ib_addr[b]);
      wr_addr_[b].set(t.wr_addr[b]);
    }
    for (int l = 0; l < kLanes; ++l) wr_data_[l].set(t.wr_data[l]);
    dut_.host_group = h.group;
    dut_.host_row = h.row;
    dut_.host_we = h.we;
    dut_.host_re = h.re;
    dut_.host_wmask = h.wmask;
    for (int l = 0; l < kHostLanes; ++l) host_wdata_[l].set(h.wdata[l]);

    mem_test::settle(dut_);
    check();
    // Model: reads sample the rows before this edge's writes.
    const unsigned other = half ^ 1u;
    for (int b = 0; b < kBanks; ++b) {
      p_.ia_valid[b] = t.ia_en >> b & 1;
      p_.ib_valid[b] = t.ib_en >> b & 1;
      const bool ib_read = (t.ib_en >> b & 1) && !(kShared && (t.wr_en >> b & 1) && !t.wr_other);
      for (int e = 0; e < kElems; ++e) {
        p_.ia[b * kElems + e] = mem_[b][half][t.ia_addr[b]][e];
        if (ib_read) last_b_[b][half][e] = mem_[b][half][t.ib_addr[b]][e];
        p_.ib[b * kElems + e] = last_b_[b][half][e];
      }
    }
    p_.host_valid = h.re;
    for (int l = 0; l < kHostLanes; ++l) p_.host[l] = mem_[host_bank(h, l)][other][h.row][l % kElems];
    for (int b = 0; b < kBanks; ++b)
      for (int e = 0; e < kElems; ++e)
        if ((t.wr_en >> b & 1) && (t.wr_mask >> (b * kElems + e) & 1))
          mem_[b][t.wr_other ? other : half][t.wr_addr[b]][e] = t.wr_data[b * kElems + e];
    if (h.we && !t.wr_other)
      for (int l = 0; l < kHostLanes; ++l)
        if (h.wmask >> l & 1) mem_[host_bank(h, l)][other][h.row][l % kElems] = h.wdata[l];
    mem_test::edge(dut_);
    ++cycle_;
  }

  // The reads of the previous cycle, checked while this cycle's inputs (possibly another
  // compute_half or host_bank) are applied.
  void check() {
    for (int b = 0; b < kBanks; ++b)
      for (int e = 0; e < kElems; ++e) {
        const int l = b * kElems + e;
        if (p_.ia_valid[b] && ia_data_[l].get() != p_.ia[l])
          bad.note(fmt::format("cycle {} ia_data[{}] = 0x{:x}, expected 0x{:x}", cycle_, l, ia_data_[l].get(), p_.ia[l]));
        if (p_.ib_valid[b] && ib_data_[l].get() != p_.ib[l])
          bad.note(fmt::format("cycle {} ib_data[{}] = 0x{:x}, expected 0x{:x}", cycle_, l, ib_data_[l].get(), p_.ib[l]));
      }
    if (dut_.host_rvalid != p_.host_valid) bad.note(fmt::format("cycle {} host_rvalid = {}", cycle_, dut_.host_rvalid));
    if (p_.host_valid)
      for (int l = 0; l < kHostLanes; ++l)
        if (host_rdata_[l].get() != p_.host[l])
          bad.note(fmt::format("cycle {} host_rdata[{}] = 0x{:x}, expected 0x{:x}", cycle_, l, host_rdata_[l].get(),
                               p_.host[l]));
  }

  // Reads of one cycle, as the TCU / host saw them (valid the cycle after the enable).
  uint64_t ia(int lane) const { return ia_data_[lane].get(); }
  uint64_t ib(int lane) const { return ib_data_[lane].get(); }
  uint64_t host(int lane) const { return host_rdata_[lane].get(); }
  static int host_bank(const HostInputs& h, int lane) { return static_cast<int>(h.group) * kHostBanks + lane / kElems; }
  uint64_t model(int bank, int half, int row, int e) const { return mem_[bank][half][row][e]; }

  mem_test::Mismatches bad;

 private:
  VerilatedContext ctx_;
  V dut_;
  mem_test::Ports ia_addr_, ib_addr_, wr_addr_, wr_data_, ia_data_, ib_data_, host_wdata_, host_rdata_;
  uint64_t mem_[kBanks][2][kRows][kElems] = {};
  uint64_t last_b_[kBanks][2][kElems] = {};  // each bank half's last port-B read
  struct Pending {  // what the reads of the last cycle must return
    std::array<bool, kBanks> ia_valid{}, ib_valid{};
    std::array<uint64_t, kLanes> ia{}, ib{};
    bool host_valid = false;
    std::array<uint64_t, kHostLanes> host{};
  } p_;
  long cycle_ = 0;
};

using SharedBench = UnifiedBench<Vunified_mem_b4_t2_d16_w16_h2, true>;
using TwoCopyBench = UnifiedBench<Vunified_mem_b4_t2_d16_w16_h2_2copy, false>;

// Both halves filled through the host port (each half while the other is the compute half).
template <typename U>
void fill_by_host(U& u, const std::function<uint64_t(int, int, int, int)>& value) {
  for (unsigned half = 0; half < 2; ++half)
    for (unsigned g = 0; g < kGroups; ++g)
      for (unsigned r = 0; r < kRows; ++r) {
        HostInputs h{.we = true, .group = g, .row = r, .wmask = (1u << kHostLanes) - 1};
        for (int l = 0; l < kHostLanes; ++l)
          h.wdata[l] = value(U::host_bank(h, l), static_cast<int>(half), static_cast<int>(r), l % kElems) & kMask;
        u.step(half ^ 1u, {}, h);
      }
}

template <typename U>
void random_ops(long n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  U u;
  fill_by_host(u, [&](int, int, int, int) { return rng(); });
  unsigned half = 0;
  for (long i = 0; i < n; ++i) {
    if (rng() % 16 == 0) half ^= 1u;
    auto row = [&] { return static_cast<unsigned>(rng() % 2 ? rng() % 2 : rng() % kRows); };
    TcuInputs t;
    t.ia_en = static_cast<unsigned>(rng() % 16);
    t.ib_en = static_cast<unsigned>(rng() % 16);
    t.wr_en = static_cast<unsigned>(rng() % 16);
    t.wr_mask = static_cast<unsigned>(rng() % 256);
    t.wr_other = rng() % 4 == 0;
    for (int b = 0; b < kBanks; ++b) {
      t.ia_addr[b] = row();
      t.ib_addr[b] = row();
      t.wr_addr[b] = rng() % 3 == 0 ? t.ia_addr[b] : row();
    }
    for (auto& d : t.wr_data) d = rng() & kMask;
    // The shared form's rule: per bank, the IB read or a TCU write to the compute half (half of
    // each); with wr_other the write goes to the host's half and both stay.
    if (U::shared && !t.wr_other)
      for (int b = 0; b < kBanks; ++b)
        if ((t.ib_en >> b & 1) && (t.wr_en >> b & 1)) (rng() % 2 ? t.ib_en : t.wr_en) &= ~(1u << b);
    HostInputs h;
    h.we = rng() % 2;
    h.re = rng() % 2;
    h.group = static_cast<unsigned>(rng() % kGroups);
    h.row = row();
    h.wmask = static_cast<unsigned>(rng() % (1u << kHostLanes));
    for (auto& d : h.wdata) d = rng() & kMask;
    u.step(half, t, h);
  }
  u.step(half ^ 1u, {}, {});  // checks the last reads under the other compute_half
  INFO(u.bad.first);
  REQUIRE(u.bad.count == 0);
}

uint64_t pattern(int bank, int half, int row, int e) {
  return static_cast<uint64_t>(half << 12 | bank << 8 | row << 4 | e);
}

template <typename U>
void directed() {
  U u;
  fill_by_host(u, pattern);
  REQUIRE(u.bad.count == 0);

  SECTION("the host hammering the other half never reaches the TCU's reads") {
    for (unsigned r = 0; r < kRows; ++r) {
      // Host writes 0xFFFF everywhere in half 1 while the TCU reads half 0 on both ports.
      TcuInputs t{.ia_en = 0xF, .ib_en = 0xF};
      for (int b = 0; b < kBanks; ++b) t.ia_addr[b] = t.ib_addr[b] = r;
      for (unsigned g = 0; g < kGroups; ++g) {
        u.step(0, t, {.we = true, .group = g, .row = r, .wmask = 0xF, .wdata = {0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF}});
        for (int l = 0; l < kLanes; ++l) {
          CHECK(u.ia(l) == pattern(l / kElems, 0, static_cast<int>(r), l % kElems));
          CHECK(u.ib(l) == pattern(l / kElems, 0, static_cast<int>(r), l % kElems));
        }
      }
    }
    for (int b = 0; b < kBanks; ++b)
      for (int r = 0; r < kRows; ++r) CHECK(u.model(b, 1, r, 0) == 0xFFFF);
  }

  SECTION("TCU result writes stay in the compute half; the host reads only the other half") {
    // TCU writes 0x0BAD to row 2 of every bank of half 0; the host reads row 2 of half 1.
    TcuInputs t{.wr_en = 0xF, .wr_mask = 0xFF};
    for (int b = 0; b < kBanks; ++b) t.wr_addr[b] = 2;
    t.wr_data.fill(0x0BAD);
    for (unsigned g = 0; g < kGroups; ++g) {
      u.step(0, t, {.re = true, .group = g, .row = 2});
      for (int l = 0; l < kHostLanes; ++l)
        CHECK(u.host(l) == pattern(static_cast<int>(g) * kHostBanks + l / kElems, 1, 2, l % kElems));
    }
    // After the swap the host sees the results (half 0), the TCU the host's half 1.
    TcuInputs rd{.ia_en = 0xF};
    for (int b = 0; b < kBanks; ++b) rd.ia_addr[b] = 2;
    for (unsigned g = 0; g < kGroups; ++g) {
      u.step(1, rd, {.re = true, .group = g, .row = 2});
      for (int l = 0; l < kHostLanes; ++l) CHECK(u.host(l) == 0x0BAD);
      for (int l = 0; l < kLanes; ++l) CHECK(u.ia(l) == pattern(l / kElems, 1, 2, l % kElems));
    }
  }

  SECTION("swapping halves every cycle: each read comes from the half named at the read") {
    TcuInputs t{.ia_en = 0xF, .ib_en = 0xF};
    for (int b = 0; b < kBanks; ++b) {
      t.ia_addr[b] = 5;
      t.ib_addr[b] = 6;
    }
    for (unsigned i = 0; i < 8; ++i) {
      const unsigned half = i & 1u;
      const unsigned g = i / 2 % kGroups;
      u.step(half, t, {.re = true, .group = g, .row = 7});
      for (int l = 0; l < kLanes; ++l) {
        CHECK(u.ia(l) == pattern(l / kElems, static_cast<int>(half), 5, l % kElems));
        CHECK(u.ib(l) == pattern(l / kElems, static_cast<int>(half), 6, l % kElems));
      }
      for (int l = 0; l < kHostLanes; ++l)
        CHECK(u.host(l) == pattern(static_cast<int>(g) * kHostBanks + l / kElems, static_cast<int>(half ^ 1u), 7, l % kElems));
    }
  }
  u.step(0, {}, {});
  u.step(1, {}, {});
  INFO(u.bad.first);
  REQUIRE(u.bad.count == 0);
}

}  // namespace

TEST_CASE("UnifiedMemory: random TCU and host traffic matches the model", "[unified_mem]") {
  random_ops<SharedBench>(20000L * mem_test::scale(), mem_test::seed("unified_mem random", 0x756e6966));
  random_ops<TwoCopyBench>(20000L * mem_test::scale(), mem_test::seed("unified_mem 2copy random", 0x756e6932));
}

TEST_CASE("UnifiedMemory: ping-pong isolation and host read-back, shared port", "[unified_mem]") {
  (void)mem_test::seed("unified_mem directed (no randomness)", 0);
  directed<SharedBench>();
}

TEST_CASE("UnifiedMemory: ping-pong isolation and host read-back, two copies", "[unified_mem]") {
  (void)mem_test::seed("unified_mem 2copy directed (no randomness)", 0);
  directed<TwoCopyBench>();
}

TEST_CASE("UnifiedMemory shared port: IB and a TCU write on one bank of the compute half", "[unified_mem]") {
  (void)mem_test::seed("unified_mem rule (no randomness)", 0);
  SharedBench u;
  fill_by_host(u, pattern);
  // IB reads row 1 of every bank of half 0.
  TcuInputs rd{.ib_en = 0xF};
  for (int b = 0; b < kBanks; ++b) rd.ib_addr[b] = 1;
  u.step(0, rd, {});
  for (int l = 0; l < kLanes; ++l) CHECK(u.ib(l) == pattern(l / kElems, 0, 1, l % kElems));

  SECTION("broken rule: banks 0 and 2 write row 3 while IB reads row 4: the writes are done, their ib_data holds") {
    TcuInputs t{.ib_en = 0xF, .wr_en = 0x5, .wr_mask = 0xFF};
    for (int b = 0; b < kBanks; ++b) {
      t.ib_addr[b] = 4;
      t.wr_addr[b] = 3;
    }
    t.wr_data.fill(0x0ACE);
    u.step(0, t, {});
    for (int l = 0; l < kLanes; ++l) {
      const int b = l / kElems;
      CHECK(u.ib(l) == pattern(b, 0, b % 2 == 0 ? 1 : 4, l % kElems));  // banks 0, 2 hold row 1
    }
    for (int b = 0; b < kBanks; ++b) CHECK(u.model(b, 0, 3, 1) == (b % 2 == 0 ? 0x0ACE : pattern(b, 0, 3, 1)));
    // Held also across an idle cycle and a flip of the compute half and back.
    u.step(1, {}, {});
    u.step(0, {}, {});
    for (int l = 0; l < kLanes; ++l) CHECK(u.ib(l) == pattern(l / kElems, 0, l / kElems % 2 == 0 ? 1 : 4, l % kElems));
    TcuInputs again{.ib_en = 0xF};
    for (int b = 0; b < kBanks; ++b) again.ib_addr[b] = 3;
    u.step(0, again, {});
    for (int l = 0; l < kLanes; ++l)
      CHECK(u.ib(l) == (l / kElems % 2 == 0 ? 0x0ACE : pattern(l / kElems, 0, 3, l % kElems)));
  }

  SECTION("allowed: with wr_other the TCU write goes to the host's half while IB reads the compute half") {
    TcuInputs t{.ib_en = 0xF, .wr_en = 0xF, .wr_mask = 0xFF, .wr_other = true};
    for (int b = 0; b < kBanks; ++b) t.ib_addr[b] = t.wr_addr[b] = 5;
    t.wr_data.fill(0x0BEE);
    u.step(0, t, {});
    for (int l = 0; l < kLanes; ++l) CHECK(u.ib(l) == pattern(l / kElems, 0, 5, l % kElems));
    for (int b = 0; b < kBanks; ++b) CHECK(u.model(b, 1, 5, 0) == 0x0BEE);
  }

  SECTION("allowed: IB and the TCU write one cycle apart, on the same row") {
    TcuInputs w{.wr_en = 0xF, .wr_mask = 0xFF};
    for (int b = 0; b < kBanks; ++b) w.wr_addr[b] = 6;
    w.wr_data.fill(0x0DAD);
    TcuInputs r6{.ib_en = 0xF};
    for (int b = 0; b < kBanks; ++b) r6.ib_addr[b] = 6;
    u.step(0, r6, {});
    for (int l = 0; l < kLanes; ++l) CHECK(u.ib(l) == pattern(l / kElems, 0, 6, l % kElems));
    u.step(0, w, {});
    u.step(0, r6, {});
    for (int l = 0; l < kLanes; ++l) CHECK(u.ib(l) == 0x0DAD);
  }
  u.step(0, {}, {});
  INFO(u.bad.first);
  REQUIRE(u.bad.count == 0);
}

TEST_CASE("UnifiedMemory: large random run", "[mem_large]") {
  random_ops<SharedBench>(1000000, mem_test::seed("unified_mem large", 0x756e6967));
  random_ops<TwoCopyBench>(1000000, mem_test::seed("unified_mem 2copy large", 0x756e6933));
}
