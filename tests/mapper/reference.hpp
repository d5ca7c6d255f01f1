// Independent references for the search tests: networks built in code and a brute-force
// enumeration of every pair sequence (the published depth-first method), computed on label
// strings, not on the search's bitsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "verif/network.hpp"

namespace fetta::mapper::test {

inline verif::TensorNetwork network(const std::vector<std::pair<std::string, std::vector<std::string>>>& nodes,
                                    std::vector<std::string> output, std::map<std::string, int64_t> dims) {
  verif::TensorNetwork n;
  for (const auto& [name, labels] : nodes) n.nodes.push_back({name, labels});
  n.output_labels = std::move(output);
  n.dims = std::move(dims);
  return n;
}

// Every distinct tree (key: its internal groups as sorted node bitmasks) with its MACs.
// Checks on the way that every order of the same tree costs the same (returns false if not).
struct BruteForce {
  std::map<std::vector<uint32_t>, uint64_t> trees;
  uint64_t sequences = 0;
  bool consistent = true;
};

namespace detail {
struct Op {
  std::vector<std::string> labels;
  uint32_t mask;
};
inline void dfs(const verif::TensorNetwork& net, std::vector<Op> ops, uint64_t cost, std::vector<uint32_t> groups,
                BruteForce& out) {
  if (ops.size() == 1) {
    ++out.sequences;
    std::sort(groups.begin(), groups.end());
    auto [it, fresh] = out.trees.emplace(groups, cost);
    if (!fresh && it->second != cost) out.consistent = false;
    return;
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    for (size_t j = i + 1; j < ops.size(); ++j) {
      std::vector<std::string> uni = ops[i].labels;
      for (const auto& l : ops[j].labels) {
        if (std::find(uni.begin(), uni.end(), l) == uni.end()) uni.push_back(l);
      }
      uint64_t step = 1;
      for (const auto& l : uni) step *= static_cast<uint64_t>(net.dims.at(l));
      std::vector<Op> next;
      for (size_t o = 0; o < ops.size(); ++o) {
        if (o != i && o != j) next.push_back(ops[o]);
      }
      Op r{{}, ops[i].mask | ops[j].mask};
      for (const auto& l : uni) {
        bool needed = std::find(net.output_labels.begin(), net.output_labels.end(), l) != net.output_labels.end();
        for (const auto& o : next) {
          if (std::find(o.labels.begin(), o.labels.end(), l) != o.labels.end()) needed = true;
        }
        if (needed) r.labels.push_back(l);
      }
      next.push_back(r);
      std::vector<uint32_t> g = groups;
      g.push_back(r.mask);
      dfs(net, std::move(next), cost + step, std::move(g), out);
    }
  }
}
}  // namespace detail

inline BruteForce brute_force(const verif::TensorNetwork& net) {
  std::vector<detail::Op> ops;
  for (size_t i = 0; i < net.nodes.size(); ++i) ops.push_back({net.nodes[i].labels, uint32_t{1} << i});
  BruteForce out;
  detail::dfs(net, ops, 0, {}, out);
  return out;
}

// "prefix" + number (written so that GCC 12 does not raise its false -Wrestrict on operator+).
inline std::string name(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

// A random graph: each pair of nodes joined with probability `p_edge` by a fresh label, some
// nodes with a free (output) label, some with a label only they hold and the output lacks.
inline verif::TensorNetwork random_network(int nodes, uint32_t seed, double p_edge = 0.45) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> size(1, 6);
  verif::TensorNetwork n;
  int next = 0;
  auto fresh = [&] {
    std::string l = name("l", next++);
    n.dims[l] = size(rng);
    return l;
  };
  for (int i = 0; i < nodes; ++i) n.nodes.push_back({name("N", i), {}});
  for (int i = 0; i < nodes; ++i) {
    for (int j = i + 1; j < nodes; ++j) {
      if (u(rng) < p_edge) {
        auto l = fresh();
        n.nodes[static_cast<size_t>(i)].labels.push_back(l);
        n.nodes[static_cast<size_t>(j)].labels.push_back(l);
      }
    }
    if (u(rng) < 0.3) {
      auto l = fresh();
      n.nodes[static_cast<size_t>(i)].labels.push_back(l);
      n.output_labels.push_back(l);
    } else if (u(rng) < 0.1) {
      n.nodes[static_cast<size_t>(i)].labels.push_back(fresh());  // summed at its first step
    }
  }
  return n;
}

// A chain "a0 a1, a1 a2, ..." with open ends, and a ring (the last bond closes the loop).
inline verif::TensorNetwork chain(int nodes, bool ring, std::vector<int64_t> bond, int64_t phys) {
  verif::TensorNetwork n;
  auto b = [&](int i) { return name("r", i); };
  for (int i = 0; i < nodes; ++i) {
    std::string p = name("p", i);
    n.dims[p] = phys;
    n.output_labels.push_back(p);
    std::vector<std::string> labels{p};
    if (i > 0 || ring) labels.insert(labels.begin(), b(i == 0 ? nodes - 1 : i - 1));
    if (i + 1 < nodes || ring) labels.push_back(b(i));
    n.nodes.push_back({name("G", i), labels});
  }
  for (int i = 0; i < nodes; ++i) n.dims[b(i)] = bond[static_cast<size_t>(i) % bond.size()];
  return n;
}

// FP of the paper's TT layer: input [128, 768], M = [12, 8, 8], N = [8, 8, 12], ranks
// [1, 8, 8, 8, 8, 8, 1]; nodes X, G1..G6 (output cores first, then input cores).
inline verif::TensorNetwork tt_paper_fp() {
  return network({{"X", {"b", "n1", "n2", "n3"}},
                  {"G1", {"r0", "m1", "r1"}},
                  {"G2", {"r1", "m2", "r2"}},
                  {"G3", {"r2", "m3", "r3"}},
                  {"G4", {"r3", "n1", "r4"}},
                  {"G5", {"r4", "n2", "r5"}},
                  {"G6", {"r5", "n3", "r6"}}},
                 {"b", "m1", "m2", "m3"},
                 {{"b", 128}, {"m1", 12}, {"m2", 8}, {"m3", 8}, {"n1", 8}, {"n2", 8}, {"n3", 12},
                  {"r0", 1}, {"r1", 8}, {"r2", 8}, {"r3", 8}, {"r4", 8}, {"r5", 8}, {"r6", 1}});
}

}  // namespace fetta::mapper::test
