// The parallel-prefix adders, compound adders and leading-zero counts (hw/arith/prefix.hpp) of
// each carry-network kind against `+` and a plain count, at every width of prefix_units.hpp.
#include <catch2/catch.hpp>

#include <bit>
#include <functional>
#include <utility>

#include "Vprefix_units_bk.h"
#include "Vprefix_units_ks.h"
#include "Vprefix_units_sk.h"
#include "arith_test_util.hpp"
#include "hw/arith/prefix.hpp"
#include "prefix_units.hpp"
#include "verilated.h"

using namespace arith_test;

namespace {

struct Vec {
  uint64_t a, b;
  uint8_t cin;
};

// Operands that make every carry chain length: zeros, all ones, a + ~a (all propagate), one
// generate at the bottom of a propagate run, single bits, alternating patterns; each against
// each and with both carries in. Then random operands, and random ones with a random number of
// leading zeros (for the counts) or with b = ~a nudged (long propagate runs).
std::vector<Vec> prefix_vectors(std::mt19937_64& rng, size_t n_random) {
  std::vector<uint64_t> c{0, 1, 2, 3, ~0ull, ~0ull - 1, 0x8000000000000000ull, 0x5555555555555555ull,
                          0xAAAAAAAAAAAAAAAAull, 0x00000000FFFFFFFFull, 0xFFFFFFFF00000000ull, 0x0123456789ABCDEFull};
  for (int k = 0; k < 64; k += 7) c.push_back(1ull << k);
  for (int k = 1; k < 64; k += 5) c.push_back((1ull << k) - 1);
  std::vector<Vec> v;
  for (uint64_t a : c)
    for (uint64_t b : c)
      for (uint8_t cin : {0, 1}) v.push_back({a, b, cin});
  for (uint64_t a : c) v.push_back({a, ~a, 1});
  for (size_t i = 0; i < n_random; ++i) {
    uint64_t a = rng(), b = rng();
    const auto cin = static_cast<uint8_t>(rng() & 1);
    switch (i % 4) {
      case 1: a >>= rng() % 64; break;                           // leading zeros
      case 2: b = ~a ^ (1ull << (rng() % 64)); break;             // one break in a propagate run
      case 3: b = ~a + (rng() % 3); break;                        // long propagate runs
      default: break;
    }
    v.push_back({a, b, cin});
  }
  return v;
}

// (a + b + c) mod 2^w and its carry out, for a, b < 2^w, w <= 64.
std::pair<uint64_t, uint64_t> add_w(uint64_t a, uint64_t b, uint64_t c, int w) {
  if (w < 64) {
    const uint64_t s = a + b + c;
    return {s & ((1ull << w) - 1), s >> w};
  }
  const uint64_t s = a + b, s2 = s + c;
  return {s2, (s < a) || (s2 < s) ? 1u : 0u};
}

template <typename Dut>
void check_prefix_units(Dut& dut, const std::string& what, const std::vector<Vec>& vecs) {
  // The outputs of width w, read as uint64_t (their C++ types differ with the width).
  struct Row {
    int w;
    std::function<uint64_t()> sum, cout, nsum, ncout, csum, ccout, csum1, ccout1, lz;
  };
#define FETTA_PREFIX_ROW(W)                                                                              \
  Row {                                                                                                  \
    W, [&] { return uint64_t{dut.sum_w##W}; }, [&] { return uint64_t{dut.cout_w##W}; },                  \
        [&] { return uint64_t{dut.nsum_w##W}; }, [&] { return uint64_t{dut.ncout_w##W}; },               \
        [&] { return uint64_t{dut.csum_w##W}; }, [&] { return uint64_t{dut.ccout_w##W}; },               \
        [&] { return uint64_t{dut.csum1_w##W}; }, [&] { return uint64_t{dut.ccout1_w##W}; },             \
        [&] { return uint64_t{dut.lz_w##W}; }                                                            \
  }
  const std::vector<Row> rows{FETTA_PREFIX_ROW(1),  FETTA_PREFIX_ROW(2),  FETTA_PREFIX_ROW(3),
                              FETTA_PREFIX_ROW(5),  FETTA_PREFIX_ROW(8),  FETTA_PREFIX_ROW(13),
                              FETTA_PREFIX_ROW(16), FETTA_PREFIX_ROW(24), FETTA_PREFIX_ROW(25),
                              FETTA_PREFIX_ROW(32), FETTA_PREFIX_ROW(33), FETTA_PREFIX_ROW(64)};
#undef FETTA_PREFIX_ROW
  REQUIRE(rows.size() == prefix_unit_widths().size());
  Mismatches bad;
  for (const Vec& t : vecs) {
    dut.a = t.a;
    dut.b = t.b;
    dut.cin = t.cin;
    dut.eval();
    for (const Row& r : rows) {
      const uint64_t mask = r.w == 64 ? ~0ull : (1ull << r.w) - 1;
      const uint64_t a = t.a & mask, b = t.b & mask;
      auto expect = [&](const char* name, uint64_t got, uint64_t want) {
        if (got != want)
          bad.note(fmt::format("w={} {}: a={} b={} cin={}: rtl {} want {}", r.w, name, hex(t.a, 16), hex(t.b, 16), t.cin,
                               hex(got, 16), hex(want, 16)));
      };
      const auto [s, s_c] = add_w(a, b, t.cin, r.w);
      const auto [n, n_c] = add_w(a, b, 0, r.w);
      const auto [s1, s1_c] = add_w(a, b, 1, r.w);
      expect("sum", r.sum(), s);
      expect("cout", r.cout(), s_c);
      expect("nsum", r.nsum(), n);
      expect("ncout", r.ncout(), n_c);
      expect("csum", r.csum(), n);
      expect("ccout", r.ccout(), n_c);
      expect("csum1", r.csum1(), s1);
      expect("ccout1", r.ccout1(), s1_c);
      expect("lz", r.lz(), static_cast<uint64_t>(std::countl_zero(a) - (64 - r.w)));
    }
  }
  INFO(what << ": " << bad.count << " mismatches\n" << bad.first);
  REQUIRE(bad.count == 0);
}

}  // namespace

TEST_CASE("prefix adders, compound adders and leading-zero counts equal + and a count", "[prefix]") {
  std::mt19937_64 rng(seed("prefix", 0x9E3F0001));
  const auto vecs = prefix_vectors(rng, 100000);
  VerilatedContext ctx;
  Vprefix_units_ks ks{&ctx};
  check_prefix_units(ks, "prefix_units_ks", vecs);
  Vprefix_units_sk sk{&ctx};
  check_prefix_units(sk, "prefix_units_sk", vecs);
  Vprefix_units_bk bk{&ctx};
  check_prefix_units(bk, "prefix_units_bk", vecs);
}

TEST_CASE("prefix helpers refuse bad arguments", "[prefix]") {
  using namespace fetta;
  using Catch::Matchers::Contains;
  REQUIRE_THROWS_WITH(hw::prefix_tag(static_cast<hw::PrefixKind>(9)),
                      Contains("prefix = 9 is not a prefix adder; allowed: kogge_stone, sklansky, brent_kung"));
  CHECK(hw::prefix_tag(hw::PrefixKind::brent_kung) == "bk");
  CHECK(hw::prefix_name(hw::PrefixKind::kogge_stone) == "kogge_stone");
}
