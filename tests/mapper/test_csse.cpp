// Stage 1 of the contraction sequence search against brute-force enumeration of every tree.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <set>

#include "mapper/csse.hpp"
#include "reference.hpp"

using namespace fetta::mapper;
using fetta::mapper::test::brute_force;
using fetta::mapper::test::network;

namespace {

// The DP's full k-best list must be exactly the brute force's trees, sorted by cost.
void check_against_brute_force(const fetta::verif::TensorNetwork& net) {
  const Problem p = make_problem(net);
  const auto bf = brute_force(net);
  REQUIRE(bf.consistent);
  REQUIRE(bf.trees.size() == tree_count(p.size()));
  std::vector<uint64_t> costs;
  for (const auto& [key, c] : bf.trees) costs.push_back(c);
  std::sort(costs.begin(), costs.end());

  // Exact minimum.
  const auto best = k_best_trees(p, 1);
  REQUIRE(best.size() == 1);
  CHECK(best[0].macs == costs.front());
  CHECK(bf.trees.at(canonical_key(best[0])) == best[0].macs);

  // Every tree, once, cheapest first, each with its brute-force cost.
  const int all = static_cast<int>(costs.size());
  const auto trees = k_best_trees(p, all + 3);
  REQUIRE(trees.size() == costs.size());
  std::set<std::vector<NodeSet>> seen;
  for (size_t i = 0; i < trees.size(); ++i) {
    CHECK(trees[i].macs == costs[i]);
    const auto key = canonical_key(trees[i]);
    CHECK(seen.insert(key).second);
    REQUIRE(bf.trees.count(key) == 1);
    CHECK(bf.trees.at(key) == trees[i].macs);
    uint64_t sum = 0;
    for (const auto& s : trees[i].steps) sum += s.macs;
    CHECK(sum == trees[i].macs);
    // The emitted path replays to the same tree.
    CHECK(canonical_key(tree_from_path(p, to_path(trees[i], p.size()))) == key);
  }
  // A short k-best list is the head of the full one.
  for (int k : {2, 3, 7}) {
    const auto head = k_best_trees(p, k);
    REQUIRE(head.size() == std::min<size_t>(static_cast<size_t>(k), costs.size()));
    for (size_t i = 0; i < head.size(); ++i) CHECK(head[i].macs == costs[i]);
  }
}

}  // namespace

TEST_CASE("tree counts are (2n-3)!!", "[csse]") {
  CHECK(tree_count(1) == 1);
  CHECK(tree_count(2) == 1);
  CHECK(tree_count(3) == 3);
  CHECK(tree_count(4) == 15);
  CHECK(tree_count(6) == 945);
  CHECK(tree_count(7) == 10395);
}

TEST_CASE("k-best DP equals brute force on chains and rings", "[csse]") {
  SECTION("matrix chain") {
    check_against_brute_force(network({{"A", {"a", "b"}}, {"B", {"b", "c"}}, {"C", {"c", "d"}}, {"D", {"d", "e"}}},
                                      {"a", "e"}, {{"a", 10}, {"b", 3}, {"c", 7}, {"d", 2}, {"e", 9}}));
  }
  SECTION("tensor train of 6") { check_against_brute_force(test::chain(6, false, {3, 5, 2, 4}, 2)); }
  SECTION("tensor ring of 6") { check_against_brute_force(test::chain(6, true, {2, 3, 4}, 3)); }
  SECTION("paper TT layer, FP (7 nodes)") { check_against_brute_force(test::tt_paper_fp()); }
}

TEST_CASE("k-best DP equals brute force on random graphs", "[csse]") {
  for (uint32_t seed : {11U, 12U, 13U, 14U, 15U, 16U}) {
    const int nodes = 4 + static_cast<int>(seed % 3);  // 6, 4, 5, 6, 4, 5 nodes
    INFO("seed " << seed << ", " << nodes << " nodes");
    const auto net = test::random_network(nodes, seed);
    INFO(make_problem(net).text());
    check_against_brute_force(net);
  }
}

TEST_CASE("outer products, scalars, traces and hyperedges are in the search space", "[csse]") {
  SECTION("an outer product first is optimal") {
    // i,j,ijk->k with i=2, j=10, k=100: (i x j) first: 20 + 2000; any other order >= 2200.
    const auto net = network({{"A", {"i"}}, {"B", {"j"}}, {"C", {"i", "j", "k"}}}, {"k"},
                             {{"i", 2}, {"j", 10}, {"k", 100}});
    const Problem p = make_problem(net);
    const auto t = k_best_trees(p, 1).front();
    CHECK(t.macs == 2020);
    CHECK(to_path(t, 3) == Path{{0, 1}, {0, 1}});
    check_against_brute_force(net);
  }
  SECTION("disconnected network and a scalar node") {
    check_against_brute_force(network({{"A", {"a", "b"}}, {"B", {"b"}}, {"S", {}}, {"C", {"c", "d"}}, {"D", {"d"}}},
                                      {"a", "c"}, {{"a", 3}, {"b", 5}, {"c", 2}, {"d", 7}}));
  }
  SECTION("label only one node holds, not in the output, is summed at its first step") {
    const auto net = network({{"A", {"t", "a"}}, {"B", {"a", "b"}}}, {"b"}, {{"t", 5}, {"a", 3}, {"b", 2}});
    CHECK(k_best_trees(make_problem(net), 1).front().macs == 30);
    check_against_brute_force(net);
  }
  SECTION("batch label kept by two operands, and a hyperedge over three") {
    check_against_brute_force(network({{"X", {"b", "i"}}, {"Y", {"b", "i", "j"}}, {"Z", {"b", "j", "k"}}, {"W", {"k"}}},
                                      {"b"}, {{"b", 4}, {"i", 3}, {"j", 5}, {"k", 2}}));
  }
  SECTION("single node: nothing to contract") {
    const auto t = k_best_trees(make_problem(network({{"A", {"a"}}}, {"a"}, {{"a", 3}})), 4);
    REQUIRE(t.size() == 1);
    CHECK(t[0].steps.empty());
    CHECK(t[0].macs == 0);
  }
}

TEST_CASE("node order does not change the optimum", "[csse]") {
  auto net = test::random_network(7, 21);
  INFO("seed 21");
  const uint64_t ref = k_best_trees(make_problem(net), 1).front().macs;
  std::reverse(net.nodes.begin(), net.nodes.end());
  CHECK(k_best_trees(make_problem(net), 1).front().macs == ref);
  std::rotate(net.nodes.begin(), net.nodes.begin() + 3, net.nodes.end());
  CHECK(k_best_trees(make_problem(net), 1).front().macs == ref);
}

TEST_CASE("costs saturate instead of wrapping", "[csse]") {
  // Three 2^22-sized labels on each pair: every tree costs at least 2^66 MACs.
  const int64_t big = int64_t{1} << 22;
  const auto net = network({{"A", {"a", "b", "c"}}, {"B", {"b", "c", "d"}}, {"C", {"d", "a", "e"}}}, {"e"},
                           {{"a", big}, {"b", big}, {"c", big}, {"d", big}, {"e", 2}});
  const auto t = k_best_trees(make_problem(net), 3);
  REQUIRE(t.size() == 3);
  for (const auto& x : t) CHECK(x.overflow());
  CHECK(sat_mul(kSaturated, 0) == 0);
  CHECK(sat_mul(uint64_t{1} << 32, uint64_t{1} << 32) == kSaturated);
  CHECK(sat_add(kSaturated - 1, 2) == kSaturated);
}

TEST_CASE("paths follow the numpy.einsum_path convention", "[csse]") {
  const Problem p = make_problem(test::chain(5, false, {2}, 2));
  const auto l2r = left_to_right(p);
  // [0 1 2 3 4] -(0,1)-> [2 3 4 R] -(0,3)-> [3 4 R'] -(0,2)-> [4 R''] -(0,1)-> [R''']
  CHECK(to_path(l2r, 5) == Path{{0, 1}, {0, 3}, {0, 2}, {0, 1}});
  CHECK(format_path(to_path(l2r, 5)) == "[(0, 1), (0, 3), (0, 2), (0, 1)]");
  CHECK(canonical_key(tree_from_path(p, to_path(l2r, 5))) == canonical_key(l2r));
  CHECK_THROWS_WITH(tree_from_path(p, Path{{0, 5}}), "path step (0, 5) is out of range for 5 operands");
  CHECK_THROWS_WITH(tree_from_path(p, Path{{0, 1}}), "the contraction leaves 4 operands; it must end with one");
  CHECK_THROWS_AS(k_best_trees(p, 0), SearchError);
}

TEST_CASE("baselines: left-to-right and input-first", "[csse]") {
  const auto net = test::tt_paper_fp();
  const Problem p = make_problem(net);
  const auto bf = brute_force(net);
  const uint64_t opt = k_best_trees(p, 1).front().macs;
  const auto l2r = left_to_right(p);
  const auto inf = input_first(p, true);
  const auto greedy = input_first(p, false);
  REQUIRE(input_nodes(p) == std::vector<int>{0});
  // Input-first (exhaustive) is the best left-deep tree starting at X: check it by brute force.
  uint64_t best_chain = kSaturated;
  for (const auto& [key, c] : bf.trees) {
    bool chain_from_x = true;  // every internal group holds X and grows by one node
    for (size_t i = 0; i < key.size(); ++i) {
      if (!(key[i] & 1U)) chain_from_x = false;
    }
    if (chain_from_x) best_chain = std::min(best_chain, c);
  }
  CHECK(inf.macs == best_chain);
  CHECK(bf.trees.at(canonical_key(l2r)) == l2r.macs);
  CHECK(opt <= inf.macs);
  CHECK(inf.macs <= greedy.macs);
  CHECK(inf.macs <= l2r.macs);  // X is node 0: left-to-right is one of the input-first orders
  for (const auto& t : {l2r, inf, greedy}) {
    CHECK((t.steps.front().left == 1U || t.steps.front().right == 1U));  // starts at X
  }
  // Without X/dY every node may start.
  const Problem q = make_problem(test::chain(5, true, {3}, 2));
  CHECK(input_nodes(q).size() == 5);
}

TEST_CASE("a 14-node tensor ring is searched exactly in well under a second", "[csse][speed]") {
  const Problem p = make_problem(test::chain(14, true, {8, 4, 16}, 4));
  const auto t0 = std::chrono::steady_clock::now();
  const auto t = k_best_trees(p, 1);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  WARN("14-node ring exact search: " << ms << " ms");
  CHECK(ms < 1000.0);
  CHECK(t.front().macs <= left_to_right(p).macs);
  CHECK(t.front().macs <= input_first(p).macs);
}
