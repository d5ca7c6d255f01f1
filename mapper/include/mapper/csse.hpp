// CSSE stage 1 (exact search by MACs) and the baselines it is compared with.
#pragma once

#include <cstdint>
#include <vector>

#include "mapper/problem.hpp"

namespace fetta::mapper {

// The k cheapest DISTINCT contraction trees (children unordered, so a tree is counted once),
// cheapest first; fewer when the network has fewer trees. Every binary tree over the nodes is
// in the search space, outer products included. Dynamic program over node subsets with a
// k-best list per subset: O(3^K * k) time, 2^K * k entries of memory. Equal costs keep the
// order in which they were found (deterministic). Throws SearchError if k is out of range or
// the table would need more than 2 GiB.
std::vector<ContractionTree> k_best_trees(const Problem& p, int k);

// Number of distinct binary contraction trees over n leaves: (2n-3)!! (saturating).
uint64_t tree_count(int n);

// Baseline, the fixed left-to-right order of a format: from the first input node (X or dY; node
// 0 without one), sweep the nodes in index order, cyclically from the one absorbed last, and
// absorb the next one connected to the running result: for a TT layer X, then the input-mode
// cores G_{s+1}..G_d, then G_s..G_1. Only when no remaining node is connected is the next one
// absorbed as an outer product.
ContractionTree left_to_right(const Problem& p);

// Baseline, "rebuild W first": every node other than X / dY left to right (node order), then X
// and dY in node order. Without X / dY nodes it is left_to_right.
ContractionTree weights_first(const Problem& p);

// Nodes the "input-first" baseline starts from: those named "X" or "dY"; every node if none is.
std::vector<int> input_nodes(const Problem& p);

// Baseline, TetriX-style: the running result starts at an input node and absorbs one
// remaining node per step. exhaustive = the best such order over all orders and all start
// nodes (exact, by a dynamic program over subsets, O(2^K K)); otherwise greedy: each step
// absorbs the node that minimises that step's cost (ties: lowest index), best start node.
ContractionTree input_first(const Problem& p, bool exhaustive = true);

}  // namespace fetta::mapper
