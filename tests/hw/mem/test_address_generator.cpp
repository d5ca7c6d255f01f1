// AddressGenerator against a C++ loop nest: for random bounds (1 .. 2^count_bits, including 1
// and the maximum), strides (0, 1, negative, random) and bases, the sequence of addresses of
// every stream, the first/last flags of every level, valid under random `run` stalls, done, and
// restarts.
#include <catch2/catch.hpp>

#include <random>
#include <vector>

#include "Vaddr_gen_l1_s1_a4_c4.h"
#include "Vaddr_gen_l6_s3_a7_c3.h"
#include "mem_test_util.hpp"
#include "verilated.h"

namespace {

struct Nest {
  std::vector<uint64_t> bound;                 // iterations per level, level 0 innermost
  std::vector<uint64_t> base;                  // per stream
  std::vector<std::vector<uint64_t>> stride;   // [stream][level]
};

struct Emitted {
  std::vector<uint64_t> addr;
  uint64_t first = 0, last = 0;
  bool operator==(const Emitted&) const = default;
};

// The reference: the loop nest written as nested loops (an odometer over the indices).
std::vector<Emitted> reference(const Nest& n, int addr_bits) {
  const size_t L = n.bound.size(), S = n.base.size();
  std::vector<uint64_t> i(L, 0);
  std::vector<Emitted> out;
  for (;;) {
    Emitted e;
    for (size_t s = 0; s < S; ++s) {
      uint64_t a = n.base[s];
      for (size_t l = 0; l < L; ++l) a += i[l] * n.stride[s][l];
      e.addr.push_back(a & mem_test::mask_bits(addr_bits));
    }
    for (size_t l = 0; l < L; ++l) {
      e.first |= static_cast<uint64_t>(i[l] == 0) << l;
      e.last |= static_cast<uint64_t>(i[l] == n.bound[l] - 1) << l;
    }
    out.push_back(e);
    size_t l = 0;
    while (l < L && i[l] == n.bound[l] - 1) i[l++] = 0;
    if (l == L) return out;
    ++i[l];
  }
}

struct AgPorts {
  mem_test::Ports bound_m1, base, stride, addr;  // stride: stream-major, [s * L + l]
};

template <typename V>
class AgBench {
 public:
  AgBench(int levels, int streams, int addr_bits, int count_bits, const std::function<AgPorts(V&)>& ports)
      : L_(levels), S_(streams), A_(addr_bits), C_(count_bits), dut_(&ctx_), p_(ports(dut_)) {
    mem_test::reset(dut_);
  }

  void program(const Nest& n) {
    for (int l = 0; l < L_; ++l) p_.bound_m1[l].set(n.bound[l] - 1);
    for (int s = 0; s < S_; ++s) {
      p_.base[s].set(n.base[s]);
      for (int l = 0; l < L_; ++l) p_.stride[s * L_ + l].set(n.stride[s][l]);
    }
  }

  // One clock: inputs applied, outputs sampled before the edge.
  Emitted cycle(bool start, bool run) {
    dut_.start = start;
    dut_.run = run;
    dut_.clk = 0;
    dut_.eval();
    Emitted e;
    for (int s = 0; s < S_; ++s) e.addr.push_back(p_.addr[s].get());
    e.first = dut_.first;
    e.last = dut_.last;
    valid = dut_.valid;
    done = dut_.done;
    dut_.clk = 1;
    dut_.eval();
    return e;
  }

  // Runs nest `n` with `run` high with probability run_pct %, checks it against the reference.
  // restart_at >= 0: pulse start again after that many addresses were consumed (the sequence
  // must begin again).
  void check_nest(const Nest& n, int run_pct, std::mt19937_64& rng, long restart_at = -1) {
    const std::vector<Emitted> ref = reference(n, A_);
    program(n);
    cycle(true, rng() % 2);  // start wins over run
    size_t k = 0;
    long consumed = 0, guard = 0;
    bool restarted = false;
    while (k < ref.size()) {
      if (++guard > static_cast<long>(ref.size()) * 100 + 1000) {
        bad.note("timeout waiting for addresses");
        return;
      }
      if (!restarted && restart_at >= 0 && consumed == restart_at) {
        restarted = true;
        cycle(true, true);
        k = 0;
        continue;
      }
      const bool run = static_cast<int>(rng() % 100) < run_pct;
      const Emitted got = cycle(false, run);
      if (!valid || done) {
        bad.note(fmt::format("address {} of {}: valid = {}, done = {}", k, ref.size(), valid, done));
        return;
      }
      if (!(got == ref[k])) {
        bad.note(fmt::format("address {} of {}: got addr0 {} first {:b} last {:b}, expected addr0 {} first {:b} last {:b}",
                             k, ref.size(), got.addr[0], got.first, got.last, ref[k].addr[0], ref[k].first,
                             ref[k].last));
        return;
      }
      if (run) ++k, ++consumed;
    }
    cycle(false, rng() % 2);
    if (valid || !done) bad.note(fmt::format("after the last address: valid = {}, done = {}", valid, done));
    ++nests;
    addresses += static_cast<long>(ref.size());
  }

  Nest random_nest(std::mt19937_64& rng) const {
    const uint64_t max_bound = 1ull << C_;
    Nest n;
    for (int l = 0; l < L_; ++l) {
      const unsigned k = static_cast<unsigned>(rng() % 4);
      n.bound.push_back(k == 0 ? 1 : k == 1 ? max_bound : 1 + rng() % max_bound);
    }
    auto addr_value = [&] {
      const unsigned k = static_cast<unsigned>(rng() % 5);
      const uint64_t m = mem_test::mask_bits(A_);
      return k == 0 ? 0 : k == 1 ? 1 : k == 2 ? m /* -1 */ : rng() & m;
    };
    n.stride.resize(static_cast<size_t>(S_));
    for (int s = 0; s < S_; ++s) {
      n.base.push_back(rng() & mem_test::mask_bits(A_));
      for (int l = 0; l < L_; ++l) n.stride[static_cast<size_t>(s)].push_back(addr_value());
    }
    return n;
  }

  Nest uniform_nest(uint64_t bound) const {
    Nest n;
    n.bound.assign(static_cast<size_t>(L_), bound);
    n.base.assign(static_cast<size_t>(S_), 3);
    n.stride.resize(static_cast<size_t>(S_));
    for (int s = 0; s < S_; ++s)
      for (int l = 0; l < L_; ++l) n.stride[static_cast<size_t>(s)].push_back(static_cast<uint64_t>(s + 1) << l);
    return n;
  }

  bool valid = false, done = false;
  long nests = 0, addresses = 0;
  mem_test::Mismatches bad;

 private:
  int L_, S_, A_, C_;
  VerilatedContext ctx_;
  V dut_;
  AgPorts p_;
};

using Ag6 = AgBench<Vaddr_gen_l6_s3_a7_c3>;
using Ag1 = AgBench<Vaddr_gen_l1_s1_a4_c4>;

AgPorts ag6_ports(Vaddr_gen_l6_s3_a7_c3& d) {
  AgPorts p{MEM_PORTS6(d, bound_m1), MEM_PORTS3(d, base), {}, MEM_PORTS3(d, addr)};
  for (const auto& s : {MEM_PORTS6(d, stride_0), MEM_PORTS6(d, stride_1), MEM_PORTS6(d, stride_2)})
    p.stride.insert(p.stride.end(), s.begin(), s.end());
  return p;
}

AgPorts ag1_ports(Vaddr_gen_l1_s1_a4_c4& d) {
  return {MEM_PORTS1(d, bound_m1), MEM_PORTS1(d, base), MEM_PORTS1(d, stride_0), MEM_PORTS1(d, addr)};
}

void random_nests(Ag6& ag, long n, std::mt19937_64& rng) {
  for (long i = 0; i < n; ++i) {
    Nest nest = ag.random_nest(rng);
    // Keep the default run short: cap the nest at 4096 addresses by shrinking outer levels.
    for (int l = 5; l >= 0; --l) {
      uint64_t total = 1;
      for (uint64_t b : nest.bound) total *= b;
      if (total <= 4096) break;
      nest.bound[static_cast<size_t>(l)] = 1 + rng() % 2;
    }
    ag.check_nest(nest, rng() % 2 ? 100 : 20 + static_cast<int>(rng() % 80), rng);
    if (ag.bad.count) return;
  }
}

}  // namespace

TEST_CASE("AddressGenerator (6 levels, 3 streams): random nests match the loop nest", "[addr_gen]") {
  std::mt19937_64 rng(mem_test::seed("addr_gen random", 0x61646472));
  Ag6 ag(6, 3, 7, 3, ag6_ports);
  random_nests(ag, 400L * mem_test::scale(), rng);
  std::cout << fmt::format("[mem] addr_gen: {} nests, {} addresses checked\n", ag.nests, ag.addresses);
  INFO(ag.bad.first);
  REQUIRE(ag.bad.count == 0);
}

TEST_CASE("AddressGenerator: corner nests", "[addr_gen]") {
  std::mt19937_64 rng(mem_test::seed("addr_gen corners", 0x61646473));
  Ag6 ag(6, 3, 7, 3, ag6_ports);
  SECTION("every bound 1: one address, all levels first and last") { ag.check_nest(ag.uniform_nest(1), 100, rng); }
  SECTION("every bound maximal (8^6 = 262144 addresses, strides wrap the 7-bit address)") {
    ag.check_nest(ag.uniform_nest(8), 100, rng);
  }
  SECTION("maximal bounds under random stalls, restarted after 1000 addresses") {
    Nest n = ag.uniform_nest(8);
    n.bound[5] = 2;
    ag.check_nest(n, 60, rng, 1000);
  }
  SECTION("back-to-back nests, restart right after start, run low for long stretches") {
    for (int i = 0; i < 20; ++i) ag.check_nest(ag.random_nest(rng), 5, rng, i % 3 == 0 ? 0 : -1);
  }
  SECTION("reading a row-major [I=4, J=6] tensor at base 10 as [J, I] (docs/memory.md)") {
    // Level 0 walks i (stride J = 6), level 1 walks j (stride 1): element (i, j) is at 10 + 6i + j.
    Nest n{{4, 6, 1, 1, 1, 1}, {10, 10, 0}, {{6, 1, 0, 0, 0, 0}, {6, 1, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}}};
    std::vector<Emitted> ref = reference(n, 7);
    REQUIRE(ref.size() == 24);
    size_t k = 0;
    for (uint64_t j = 0; j < 6; ++j)
      for (uint64_t i = 0; i < 4; ++i) CHECK(ref[k++].addr[0] == 10 + 6 * i + j);
    ag.check_nest(n, 100, rng);
  }
  SECTION("a reshape and permutation: [I=4, J=6] viewed as [I, J1=2, J2=3], read in order (j2, i, j1)") {
    // j = 3*j1 + j2; innermost j1 (stride 3), then i (stride 6), then j2 (stride 1).
    Nest n{{2, 4, 3, 1, 1, 1}, {0, 0, 0}, {{3, 6, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0}}};
    std::vector<Emitted> ref = reference(n, 7);
    size_t k = 0;
    for (uint64_t j2 = 0; j2 < 3; ++j2)
      for (uint64_t i = 0; i < 4; ++i)
        for (uint64_t j1 = 0; j1 < 2; ++j1) CHECK(ref[k++].addr[0] == 6 * i + 3 * j1 + j2);
    ag.check_nest(n, 100, rng);
  }
  INFO(ag.bad.first);
  REQUIRE(ag.bad.count == 0);
}

TEST_CASE("AddressGenerator with one level: every bound 1 .. 16, wrapping strides", "[addr_gen]") {
  std::mt19937_64 rng(mem_test::seed("addr_gen one level", 0x61646474));
  Ag1 ag(1, 1, 4, 4, ag1_ports);
  for (uint64_t bound = 1; bound <= 16; ++bound)
    for (uint64_t stride : std::initializer_list<uint64_t>{0, 1, 5, 15}) ag.check_nest(Nest{{bound}, {rng() & 15}, {{stride}}}, 70, rng);
  INFO(ag.bad.first);
  REQUIRE(ag.bad.count == 0);
  REQUIRE(ag.nests == 64);
}

TEST_CASE("AddressGenerator: large random run", "[mem_large]") {
  std::mt19937_64 rng(mem_test::seed("addr_gen large", 0x61646475));
  Ag6 ag(6, 3, 7, 3, ag6_ports);
  random_nests(ag, 40000, rng);
  INFO(ag.bad.first);
  REQUIRE(ag.bad.count == 0);
}
