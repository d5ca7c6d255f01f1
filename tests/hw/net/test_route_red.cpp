// The reduction router, its add trees and the functional model against brute force (no RTL).
// Symbolic evaluation: input lane i carries the bit 1 << i and the adder is OR, so every output
// shows exactly which inputs were summed into it (each input reaches an output at most once).
//   N = 4: every control word; every request (disjoint groups of lanes, distinct targets) is
//          routable by the router iff some control word delivers it;
//   N = 8: every permutation (one-lane groups) against brute force, and the counts;
//   N = 16 .. 256: the families docs/networks.md says are always routable.
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <numeric>
#include <random>
#include <set>

#include "route/route.hpp"
#include "verif/numerics.hpp"

using namespace fetta::route;

namespace {

constexpr uint64_t kSeed = 20261123;

const AddFn kOr = [](uint64_t a, uint64_t b) { return a | b; };

std::vector<uint64_t> one_hot(int n) {
  std::vector<uint64_t> v(n);
  for (int i = 0; i < n; ++i) v[i] = uint64_t{1} << i;
  return v;
}

uint64_t mask_of(const std::vector<int>& lanes) {
  uint64_t m = 0;
  for (int l : lanes) m |= uint64_t{1} << l;
  return m;
}

// The control word with index w: 2 bits per switch (level 0 first), then the transpose bits.
RedControl word(const NetGeometry& g, uint64_t w) {
  RedControl c = RedControl::zero(g);
  int b = 0;
  for (auto& lvl : c.level)
    for (auto& m : lvl) m = static_cast<SwitchMode>((w >> b) & 3), b += 2;
  for (auto& t : c.transpose) t = (w >> b++) & 1;
  return c;
}

bool delivers(const std::vector<uint64_t>& out, const std::vector<ReduceGroup>& groups) {
  for (const auto& grp : groups)
    if (out[grp.out] != mask_of(grp.lanes)) return false;
  return true;
}

// A routed request is right: the functional model delivers every group's sum, and each tree adds
// exactly the group's lanes once (|g| - 1 additions).
void check_route(const NetGeometry& g, const std::vector<ReduceGroup>& groups, const RedRoute& r) {
  REQUIRE(r.routable);
  REQUIRE(r.trees.size() == groups.size());
  std::vector<uint64_t> in = one_hot(g.lanes()), out = simulate_red(g, r.control, in, kOr);
  for (size_t i = 0; i < groups.size(); ++i) {
    INFO("group " << i << " -> " << groups[i].out);
    REQUIRE(out[groups[i].out] == mask_of(groups[i].lanes));
    REQUIRE(evaluate(r.trees[i], in, kOr) == mask_of(groups[i].lanes));
    REQUIRE(r.trees[i].adds.size() == groups[i].lanes.size() - 1);
  }
}

std::string describe(const std::vector<ReduceGroup>& groups) {
  std::string s;
  for (const auto& grp : groups) s += fmt::format("{{{}}}->{} ", fmt::join(grp.lanes, ","), grp.out);
  return s;
}

// Every request on n lanes: each lane in no group or in one of up to n groups (canonical
// numbering), then every injective choice of target lanes.
template <typename F>
void for_each_request(int n, F&& f) {
  std::vector<int> label(n, -1);
  std::function<void(int, int)> rec = [&](int lane, int groups) {
    if (lane == n) {
      if (groups == 0) return;
      std::vector<ReduceGroup> req(groups);
      for (int i = 0; i < n; ++i)
        if (label[i] >= 0) req[label[i]].lanes.push_back(i);
      std::vector<int> outs(n);
      std::iota(outs.begin(), outs.end(), 0);
      // Injective targets: the first `groups` entries of each permutation, each choice once.
      std::set<std::vector<int>> seen;
      do {
        std::vector<int> t(outs.begin(), outs.begin() + groups);
        if (!seen.insert(t).second) continue;
        for (int gi = 0; gi < groups; ++gi) req[gi].out = t[gi];
        f(req);
      } while (std::next_permutation(outs.begin(), outs.end()));
      return;
    }
    for (int l = -1; l <= groups && l < n; ++l) {
      label[lane] = l;
      rec(lane + 1, std::max(groups, l + 1));
    }
    label[lane] = -1;
  };
  rec(0, 0);
}

}  // namespace

TEST_CASE("red N=4: the router is exact over every request", "[route_red]") {
  NetGeometry g(4, 2);
  std::vector<std::vector<uint64_t>> reach;
  for (uint64_t w = 0; w < 4096; ++w) reach.push_back(simulate_red(g, word(g, w), one_hot(4), kOr));
  int routable = 0, total = 0;
  for_each_request(4, [&](const std::vector<ReduceGroup>& req) {
    bool brute = std::any_of(reach.begin(), reach.end(), [&](const auto& out) { return delivers(out, req); });
    RedRoute r = route_red(g, req);
    INFO(describe(req) << r.message);
    REQUIRE(r.routable == brute);
    if (r.routable) {
      check_route(g, req, r);
      ++routable;
    } else {
      REQUIRE(r.conflict.has_value());
      REQUIRE_THROWS_AS(route_red_or_throw(g, req), RouteError);
    }
    ++total;
  });
  std::cout << "red N=4 T=2: " << routable << " of " << total << " requests routable\n";
  CHECK(total == 624);
  CHECK(routable == 592);
}

TEST_CASE("red: routable permutations for N=4 and N=8, exhaustively", "[route_red]") {
  for (auto [n, t, expect_count] : {std::tuple{4, 2, 24}, {8, 2, 11776}, {4, 1, 16}, {8, 1, 4096}}) {
    NetGeometry g(n, t);
    // Brute force: permutations need pass/swap only (an add merges two inputs), and any
    // transpose setting.
    std::set<std::vector<uint64_t>> reach;
    const int sw = n / 2 * g.levels();
    for (uint64_t w = 0; w < (uint64_t{1} << sw); ++w)
      for (uint64_t tr = 0; tr < (uint64_t{1} << n); ++tr) {
        RedControl c = RedControl::zero(g);
        int b = 0;
        for (auto& lvl : c.level)
          for (auto& m : lvl) m = ((w >> b++) & 1) ? SwitchMode::swap : SwitchMode::pass;
        for (int i = 0; i < n; ++i) c.transpose[i] = (tr >> i) & 1;
        reach.insert(simulate_red(g, c, one_hot(n), kOr));
      }
    std::vector<int> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    int routable = 0;
    do {
      // Input lane i to output lane perm[i].
      std::vector<ReduceGroup> req;
      std::vector<uint64_t> want(n);
      for (int i = 0; i < n; ++i) req.push_back({{i}, perm[i]}), want[perm[i]] = uint64_t{1} << i;
      RedRoute r = route_red(g, req);
      REQUIRE(r.routable == (reach.count(want) == 1));
      if (r.routable) {
        check_route(g, req, r);
        ++routable;
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
    std::cout << "red routable permutations N=" << n << " T=" << t << ": " << routable << "\n";
    CHECK(routable == expect_count);
  }
}

TEST_CASE("red: reduction families are always routable (N = 16 .. 256)", "[route_red]") {
  std::mt19937_64 rng(kSeed);
  std::cout << "red families seed=" << kSeed << "\n";
  for (auto [n, t] : {std::pair{16, 4}, {64, 4}, {256, 4}}) {
    NetGeometry g(n, t);
    auto check = [&](const std::vector<ReduceGroup>& req) {
      RedRoute r = route_red(g, req);
      INFO(g.str() << " " << describe(req) << r.message);
      if (n <= 64) {
        check_route(g, req, r);
      } else {
        REQUIRE(r.routable);
      }
    };
    for (int b = 0; (1 << b) <= n; ++b) {
      const int size = 1 << b;
      // Aligned blocks of 2^b lanes, each to a random lane of its block, or of the partner lane.
      for (int pass = 0; pass < 4; ++pass) {
        std::vector<ReduceGroup> req;
        for (int base = 0; base < n; base += size) {
          ReduceGroup grp;
          for (int i = 0; i < size; ++i) grp.lanes.push_back(base + i);
          grp.out = base + static_cast<int>(rng() % size);
          if (pass == 3) grp.out = g.partner(grp.out);
          req.push_back(grp);
        }
        if (pass == 3) {
          // Partner targets are distinct but may not stay in the block: still routable (the
          // transpose level undoes them).
        }
        check(req);
      }
      // Strided groups {r + c * 2^b}: the reduction across CEs, each to one of its own lanes.
      std::vector<ReduceGroup> req;
      for (int r0 = 0; r0 < size; ++r0) {
        ReduceGroup grp;
        for (int l = r0; l < n; l += size) grp.lanes.push_back(l);
        grp.out = grp.lanes[rng() % grp.lanes.size()];
        req.push_back(grp);
      }
      check(req);
    }
    // Mixed sizes: aligned blocks of random sizes tiling the lanes.
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<ReduceGroup> req;
      for (int base = 0; base < n;) {
        int size = 1 << (rng() % 4);
        while (base % size) size /= 2;
        ReduceGroup grp;
        for (int i = 0; i < size && base + i < n; ++i) grp.lanes.push_back(base + i);
        grp.out = grp.lanes[rng() % grp.lanes.size()];
        base += size;
        req.push_back(grp);
      }
      check(req);
    }
  }
}

TEST_CASE("red: add trees mirror the hardware order, bit-exactly in binary32", "[route_red]") {
  using namespace fetta::verif;
  NetGeometry g(4, 2);
  RedRoute r = route_red(g, {{{0, 1, 2, 3}, 0}});
  REQUIRE(r.routable);
  const GroupTree& t = r.trees[0];
  REQUIRE(t.adds.size() == 3);
  // Level 0 adds the pairs (0,1) and (2,3), level 1 adds the two partial sums.
  CHECK(t.adds[0].level == 0);
  CHECK((!t.adds[0].left.is_node && t.adds[0].left.index == 0 && t.adds[0].right.index == 1));
  CHECK((t.adds[1].level == 0 && t.adds[1].left.index == 2 && t.adds[1].right.index == 3));
  CHECK((t.adds[2].level == 1 && t.adds[2].left.is_node && t.adds[2].left.index == 0 && t.adds[2].right.index == 1));
  CHECK((t.result.is_node && t.result.index == 2));
  // 1e8 + 1 + (-1e8) + 1: the tree gives (1e8 + 1) + (-1e8 + 1) = 0 in binary32, not 1 or 2.
  std::vector<uint64_t> in{fp32_from_double(1e8), fp32_from_double(1), fp32_from_double(-1e8), fp32_from_double(1)};
  const AddFn add = [](uint64_t a, uint64_t b) { return fp32_add(static_cast<uint32_t>(a), static_cast<uint32_t>(b)); };
  CHECK(evaluate(t, in, add) == fp32_from_double(0));
  CHECK(simulate_red(g, r.control, in, add)[0] == fp32_from_double(0));
  // Random requests from random control words: the tree and the functional model agree.
  std::mt19937_64 rng(kSeed + 1);
  NetGeometry g64(64, 4);
  for (int trial = 0; trial < 200; ++trial) {
    RedControl c = RedControl::zero(g64);
    for (auto& lvl : c.level)
      for (auto& m : lvl) m = static_cast<SwitchMode>(rng() & 3);
    for (auto& b : c.transpose) b = rng() & 1;
    std::vector<uint64_t> sym = simulate_red(g64, c, one_hot(64), kOr);
    // The transpose level may copy a sum to two outputs: keep the first copy of each.
    std::vector<ReduceGroup> req;
    uint64_t taken = 0;
    for (int o = 0; o < 64; ++o)
      if (sym[o] && !(sym[o] & taken)) {
        taken |= sym[o];
        ReduceGroup grp{{}, o};
        for (int i = 0; i < 64; ++i)
          if ((sym[o] >> i) & 1) grp.lanes.push_back(i);
        req.push_back(grp);
      }
    RedRoute rr = route_red(g64, req);
    check_route(g64, req, rr);
    std::vector<uint64_t> vals(64);
    for (auto& v : vals) v = fp32_from_double(std::ldexp(static_cast<double>(rng() % 2000) - 1000, -(int)(rng() % 20)));
    std::vector<uint64_t> out = simulate_red(g64, rr.control, vals, add);
    for (size_t i = 0; i < req.size(); ++i) REQUIRE(out[req[i].out] == evaluate(rr.trees[i], vals, add));
  }
}

TEST_CASE("red: bad and unroutable requests give clear errors", "[route_red]") {
  NetGeometry plain(8, 1);
  RedRoute r = route_red(plain, {{{0, 4}, 4}, {{1, 6}, 6}});
  REQUIRE_FALSE(r.routable);
  CHECK(r.message ==
        "reduction request unroutable (N=8 T=1): after butterfly level 0, the partial sum of group 0 (input lanes "
        "including 0, to output lane 4) and that of group 1 (including 1, to output lane 6) both need lane 0; no "
        "setting of the transpose level avoids every such conflict");
  CHECK_THROWS_AS(route_red_or_throw(plain, {{{0, 4}, 4}, {{1, 6}, 6}}), RouteError);
  // The transpose level rescues it for T = 2: group 1 leaves the butterfly at lane 5 = partner(6).
  NetGeometry g(8, 2);
  RedRoute ok = route_red(g, {{{0, 4}, 4}, {{1, 6}, 6}});
  REQUIRE(ok.routable);
  CHECK(ok.control.transpose[6] == 1);
  CHECK_THROWS_WITH(route_red(g, {{{}, 0}}), "reduction group 0: has no lanes");
  CHECK_THROWS_WITH(route_red(g, {{{0, 1}, 0}, {{1, 2}, 3}}), "reduction groups 0 and 1: both contain input lane 1");
  CHECK_THROWS_WITH(route_red(g, {{{0}, 2}, {{1}, 2}}), "reduction groups 0 and 1: both deliver to output lane 2");
  CHECK_THROWS_WITH(route_red(g, {{{0, 8}, 0}}), "reduction group 0: input lane 8 out of range; allowed: 0..7");
  CHECK_THROWS_WITH(route_red(g, {{{0}, -1}}), "reduction group 0: output lane -1 out of range; allowed: 0..7");
}

TEST_CASE("red: a network with adders only from level f refuses sums below it and routes the rest",
          "[route_red]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(NetGeometry(16, 4, 5), Contains("red_first_add_level = 5") && Contains("allowed 0 .. 4"));
  const NetGeometry g(16, 4, 2);
  CHECK(g.red_first_add_level() == 2);
  // Lanes 1 and 3 meet at level 1: no adder there.
  RedRoute r = route_red(g, {{{1, 3}, 1}});
  REQUIRE_FALSE(r.routable);
  CHECK(r.message ==
        "reduction request unroutable (N=16 T=4 adders from level 2): group 0 (to output lane 1) adds input lanes 1 "
        "and 3 at butterfly level 1, below level 2, the first with adders (levels 0 .. 1 only pass or swap)");
  // The reduction across CEs of 4 columns (lanes 4 apart) adds at levels 2 and 3 only: routable,
  // the same trees and results as the full network.
  std::vector<ReduceGroup> across;
  for (int col = 0; col < 4; ++col) across.push_back({{col, col + 4, col + 8, col + 12}, col});
  RedRoute ok = route_red(g, across);
  REQUIRE(ok.routable);
  RedRoute full = route_red(NetGeometry(16, 4), across);
  for (size_t i = 0; i < across.size(); ++i)
    for (const AddNode& a : ok.trees[i].adds) CHECK(a.level >= 2);
  CHECK(ok.control == full.control);
  // Below level 2 a switch reads the low mode bit alone: add_left passes, add_right swaps.
  RedControl c = RedControl::zero(g);
  c.level[0][0] = SwitchMode::add_right;  // lanes 0 and 1
  c.level[1][0] = SwitchMode::add_left;   // lanes 0 and 2
  std::vector<uint64_t> in(16);
  std::iota(in.begin(), in.end(), 100);
  const AddFn add = [](uint64_t a, uint64_t b) { return a + b; };
  const std::vector<uint64_t> out = simulate_red(g, c, in, add);
  CHECK(out[0] == 101);  // swapped at level 0, passed at level 1
  CHECK(out[1] == 100);
  CHECK(out[2] == 102);
}
