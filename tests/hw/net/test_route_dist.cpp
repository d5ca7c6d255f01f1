// The distribution router and functional model against brute force (no RTL):
//   N = 4: every control word realises a set of source maps; every one of the 5^4 lane maps is
//          routable by the router iff some control word carries it (the router is exact);
//   N = 8: every permutation, against the set reachable by permutation-preserving control words,
//          and the routable-permutation counts recorded in docs/networks.md;
//   N = 16 .. 256: the families docs/networks.md says are always routable.
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <random>
#include <set>

#include "route/route.hpp"

using namespace fetta::route;

namespace {

constexpr uint64_t kSeed = 20261122;

// The control word with index `w` (bits: transpose lanes first, then level 0, level 1, ...).
DistControl word(const NetGeometry& g, uint64_t w) {
  DistControl c = DistControl::zero(g);
  int b = 0;
  for (int i = 0; i < g.lanes(); ++i) c.transpose[i] = (w >> b++) & 1;
  for (int k = 0; k < g.levels(); ++k)
    for (int i = 0; i < g.lanes(); ++i) c.level[k][i] = (w >> b++) & 1;
  return c;
}

bool is_permutation_of_lanes(const std::vector<int>& v) {
  std::vector<int> s = v;
  std::sort(s.begin(), s.end());
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != static_cast<int>(i)) return false;
  return true;
}

// The permutations reachable at all: every stage must be a bijection, so the two muxes of a
// pair switch together (2^(N/2 * L) butterfly settings x the off-diagonal transpose pairs).
std::set<std::vector<int>> reachable_permutations(const NetGeometry& g) {
  std::vector<std::pair<int, int>> tr_pairs;
  for (int i = 0; i < g.lanes(); ++i)
    if (g.partner(i) > i) tr_pairs.emplace_back(i, g.partner(i));
  const int sw = g.lanes() / 2 * g.levels();
  const int bits = sw + static_cast<int>(tr_pairs.size());
  std::set<std::vector<int>> out;
  for (uint64_t w = 0; w < (uint64_t{1} << bits); ++w) {
    DistControl c = DistControl::zero(g);
    int b = 0;
    for (int k = 0; k < g.levels(); ++k)
      for (int i = 0; i < g.lanes(); ++i)
        if (!((i >> k) & 1)) c.level[k][i] = c.level[k][i | (1 << k)] = (w >> b++) & 1;
    for (auto [x, y] : tr_pairs) c.transpose[x] = c.transpose[y] = (w >> b++) & 1;
    std::vector<int> s = dist_sources(g, c);
    REQUIRE(is_permutation_of_lanes(s));
    out.insert(s);
  }
  return out;
}

// Routable permutations of N lanes, counted through the router (every N! permutation).
int count_routable_permutations(const NetGeometry& g, const std::set<std::vector<int>>* expect) {
  std::vector<int> perm(g.lanes());
  std::iota(perm.begin(), perm.end(), 0);
  int routable = 0;
  do {
    DistRoute r = route_dist(g, perm);
    if (expect) REQUIRE(r.routable == (expect->count(perm) == 1));
    if (r.routable) {
      REQUIRE(satisfies(perm, dist_sources(g, r.control)));
      ++routable;
    }
  } while (std::next_permutation(perm.begin(), perm.end()));
  return routable;
}

void check_routes(const NetGeometry& g, const LaneMap& map) {
  DistRoute r = route_dist(g, map);
  INFO(g.str() << " map " << fmt::format("{}", fmt::join(map, ",")) << ": " << r.message);
  REQUIRE(r.routable);
  REQUIRE(satisfies(map, dist_sources(g, r.control)));
}

}  // namespace

TEST_CASE("geometry: partner and bad parameters", "[route_dist]") {
  NetGeometry g(16, 4);
  CHECK(g.levels() == 4);
  CHECK(g.partner(6) == 9);  // (bank 1, elem 2) <-> (bank 2, elem 1)
  CHECK(g.partner(5) == 5);  // diagonal
  CHECK(g.partner(3) == 12);
  NetGeometry g2(32, 4);
  CHECK(g2.partner(16 + 1) == 16 + 4);  // second block
  for (int i = 0; i < 32; ++i) CHECK(g2.partner(g2.partner(i)) == i);
  CHECK_THROWS_WITH(NetGeometry(12, 2), Catch::Contains("lanes (network.lanes) = 12: must be a power of two"));
  CHECK_THROWS_WITH(NetGeometry(1, 1), Catch::Contains("must be a power of two in [2, 4096]"));
  CHECK_THROWS_WITH(NetGeometry(8192, 4), Catch::Contains("must be a power of two in [2, 4096]"));
  CHECK_THROWS_WITH(NetGeometry(16, 3), Catch::Contains("elems_per_bank (memory.elems_per_bank) = 3"));
  CHECK_THROWS_WITH(NetGeometry(8, 4), Catch::Contains("lanes (network.lanes) = 8 is smaller than elems_per_bank^2 = 16"));
}

TEST_CASE("dist N=4: the router is exact over every lane map", "[route_dist]") {
  NetGeometry g(4, 2);
  // Every control word (4 transpose + 2 x 4 level bits) and the sources it gives.
  std::vector<std::vector<int>> reach;
  for (uint64_t w = 0; w < 4096; ++w) {
    DistControl c = word(g, w);
    std::vector<int> s = dist_sources(g, c);
    // The functional model moves values, not indices: check it on distinct values too.
    std::vector<uint64_t> in{0xA0, 0xB1, 0xC2, 0xD3}, out = simulate_dist(g, c, in);
    for (int o = 0; o < 4; ++o) REQUIRE(out[o] == in[s[o]]);
    reach.push_back(s);
  }
  int routable = 0, total = 0;
  LaneMap map(4);
  for (int code = 0; code < 625; ++code) {
    for (int o = 0, c = code; o < 4; ++o, c /= 5) map[o] = c % 5 - 1;
    bool brute = std::any_of(reach.begin(), reach.end(), [&](const auto& s) { return satisfies(map, s); });
    DistRoute r = route_dist(g, map);
    INFO("map " << fmt::format("{}", fmt::join(map, ",")) << " " << r.message);
    REQUIRE(r.routable == brute);
    if (r.routable) {
      REQUIRE(satisfies(map, dist_sources(g, r.control)));
      ++routable;
    } else {
      REQUIRE(r.conflict.has_value());
      REQUIRE(map[r.conflict->out_a] == r.conflict->in_a);
      REQUIRE(map[r.conflict->out_b] == r.conflict->in_b);
      REQUIRE(r.conflict->in_a != r.conflict->in_b);
      REQUIRE_THROWS_AS(route_dist_or_throw(g, map), RouteError);
    }
    // The cheap router is exact over the 2^5 cheap words.
    bool cheap_brute = false;
    for (uint32_t sel = 0; sel < 4; ++sel)
      for (uint32_t mask = 0; mask < 4; ++mask)
        for (int t = 0; t < 2; ++t)
          cheap_brute = cheap_brute || satisfies(map, dist_sources(g, expand(g, {sel, mask, t == 1})));
    auto cheap = route_dist_cheap(g, map);
    REQUIRE(cheap.has_value() == cheap_brute);
    if (cheap) REQUIRE(satisfies(map, dist_sources(g, expand(g, *cheap))));
    ++total;
  }
  std::cout << "dist N=4 T=2: " << routable << " of " << total << " lane maps (with don't-cares) routable\n";
  CHECK(routable == 609);
}

TEST_CASE("dist: routable permutations for N=4 and N=8, exhaustively", "[route_dist]") {
  // With the transpose level (T = 2), against brute force over the control words.
  NetGeometry g4(4, 2), g8(8, 2);
  auto r4 = reachable_permutations(g4);
  auto r8 = reachable_permutations(g8);
  int n4 = count_routable_permutations(g4, &r4);
  int n8 = count_routable_permutations(g8, &r8);
  // The butterfly alone (T = 1: every lane is its own partner): 2^(N/2 log2 N).
  int b4 = count_routable_permutations(NetGeometry(4, 1), nullptr);
  int b8 = count_routable_permutations(NetGeometry(8, 1), nullptr);
  std::cout << "dist routable permutations: N=4 T=2 " << n4 << "/24, N=8 T=2 " << n8 << "/40320; butterfly alone: N=4 "
            << b4 << ", N=8 " << b8 << "\n";
  CHECK(static_cast<int>(r4.size()) == n4);
  CHECK(static_cast<int>(r8.size()) == n8);
  CHECK(b4 == 16);
  CHECK(b8 == 4096);
  CHECK(n4 == 24);
  CHECK(n8 == 9216);
}

TEST_CASE("dist: pattern families are always routable (N = 16 .. 256)", "[route_dist]") {
  for (auto [n, t] : {std::pair{16, 4}, {64, 4}, {256, 4}, {256, 16}}) {
    NetGeometry g(n, t);
    LaneMap map(n);
    for (int c = 0; c < n; ++c) {
      for (int o = 0; o < n; ++o) map[o] = (o + c) % n;  // cyclic shift
      check_routes(g, map);
      for (int o = 0; o < n; ++o) map[o] = g.partner((o + c) % n);  // transpose, then shift
      check_routes(g, map);
      for (int o = 0; o < n; ++o) map[o] = o ^ c;  // XOR permutation
      check_routes(g, map);
      for (int o = 0; o < n; ++o) map[o] = c;  // broadcast of one lane
      check_routes(g, map);
    }
    for (int b = 0; b < n / t; ++b) {
      for (int o = 0; o < n; ++o) map[o] = b * t + o % t;  // one bank row to every bank
      check_routes(g, map);
      for (int o = 0; o < n; ++o) map[o] = g.partner(b * t + o % t);  // ... its transposed column
      check_routes(g, map);
    }
    for (int s = 1; s < n; s *= 2)
      for (int c = 0; c < s; ++c) {
        for (int o = 0; o < n; ++o) map[o] = (o / s) * s + (o % s + c) % s;  // shift inside aligned blocks
        check_routes(g, map);
      }
  }
}

TEST_CASE("dist: the cheap control carries broadcasts and XOR permutations", "[route_dist]") {
  NetGeometry g(16, 4);
  for (uint32_t sel = 0; sel < 16; ++sel)
    for (uint32_t mask = 0; mask < 16; ++mask)
      for (int t = 0; t < 2; ++t) {
        DistCheapControl c{sel, mask, t == 1};
        std::vector<int> s = dist_sources(g, expand(g, c));
        // The documented formula: bit k of the butterfly's entry lane is sel[k] (mask[k] = 1) or
        // o_k ^ sel[k]; the transpose then maps the entry lane to its partner.
        for (int o = 0; o < 16; ++o) {
          int q = 0;
          for (int k = 0; k < 4; ++k) q |= (((mask >> k) & 1) ? ((sel >> k) & 1) : (((o >> k) ^ (sel >> k)) & 1)) << k;
          REQUIRE(s[o] == (t ? g.partner(q) : q));
        }
        auto back = route_dist_cheap(g, s);
        REQUIRE(back.has_value());
        REQUIRE(dist_sources(g, expand(g, *back)) == s);
        check_routes(g, s);
      }
}

TEST_CASE("dist: random control words give maps the router routes (N = 16 .. 256)", "[route_dist]") {
  std::mt19937_64 rng(kSeed);
  std::cout << "dist random control words seed=" << kSeed << "\n";
  for (auto [n, t] : {std::pair{16, 4}, {64, 4}, {256, 4}}) {
    NetGeometry g(n, t);
    for (int trial = 0; trial < 300; ++trial) {
      DistControl c = DistControl::zero(g);
      for (auto& b : c.transpose) b = rng() & 1;
      for (auto& l : c.level)
        for (auto& b : l) b = rng() & 1;
      LaneMap map = dist_sources(g, c);
      for (auto& m : map)
        if (rng() % 4 == 0) m = -1;
      check_routes(g, map);
    }
  }
}

TEST_CASE("dist: blocked patterns name the conflicting lanes and level", "[route_dist]") {
  // Without a transpose level, outputs 0 and 2 both need lane 0 after level 0 for inputs 0, 1.
  NetGeometry plain(4, 1);
  DistRoute r = route_dist(plain, {0, -1, 1, -1});
  REQUIRE_FALSE(r.routable);
  CHECK(r.conflict->stage == 0);
  CHECK(r.conflict->node == 0);
  CHECK(r.message ==
        "distribution pattern blocked (N=4 T=1): at butterfly level 0 (lane XOR 1), output lane 0 (wants input 0) and "
        "output lane 2 (wants input 1) both need the mux output of lane 0; no setting of the transpose level avoids "
        "every such conflict");
  CHECK_THROWS_WITH(route_dist_or_throw(plain, {0, -1, 1, -1}), Catch::Contains("output lane 0 (wants input 0)"));
  // With T = 2 the transpose level fixes it: input 1 enters the butterfly at its partner, lane 2.
  NetGeometry g(4, 2);
  DistRoute ok = route_dist(g, {0, -1, 1, -1});
  REQUIRE(ok.routable);
  CHECK(ok.control.transpose[2] == 1);
  // Blocked even with the transpose level: a multicast of input 0 plus input 1 below it.
  DistRoute t = route_dist(g, {0, 0, 1, 2});
  CHECK_FALSE(t.routable);
  CHECK(t.message ==
        "distribution pattern blocked (N=4 T=2): at butterfly level 0 (lane XOR 1), output lane 0 (wants input 0) and "
        "output lane 2 (wants input 1) both need the mux output of lane 0; no setting of the transpose level avoids "
        "every such conflict");
  // Bad maps.
  CHECK_THROWS_WITH(route_dist(g, {0, 1, 2}), "lane map: has 3 entries, the network has 4 output lanes");
  CHECK_THROWS_WITH(route_dist(g, {0, 1, 2, 4}),
                    "lane map: output 3 asks for input 4; allowed: -1 (don't care) or 0..3");
  CHECK_THROWS_WITH(route_dist(g, {0, -2, 2, 3}), Catch::Contains("output 1 asks for input -2"));
}
