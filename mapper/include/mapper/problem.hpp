// The contraction problem as the search sees it: K nodes over a set of labels, each label with a
// size, and the labels the result keeps. Built (and validated) from a verif::TensorNetwork.
//
// Cost convention used everywhere in mapper/: a pairwise step costs the product of the sizes of
// all DISTINCT labels of its two operands, in multiply-accumulates (MACs); 1 MAC = 2 FLOPs.
// A label is summed away at a step when no other remaining operand and not the output has it.
// Costs are exact unsigned 64-bit integers; a product or sum that would exceed 2^64 - 1
// saturates to kSaturated ("overflow"), which ranks after every finite cost.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fetta::verif {
struct TensorNetwork;
}

namespace fetta::mapper {

// Every error of the search front ends (bad network, bad einsum text, bad --dims, too large).
class SearchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kMaxNodes = 20;     // 3^20 splits: minutes; 16 nodes take well under a second
inline constexpr int kMaxLabels = 128;   // LabelSet width
inline constexpr uint64_t kSaturated = ~uint64_t{0};

using NodeSet = uint32_t;  // bit i = node i of the network

inline uint64_t sat_mul(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}
inline uint64_t sat_add(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

// A set of label indices (at most kMaxLabels).
struct LabelSet {
  std::array<uint64_t, 2> w{};

  void set(int i) { w[static_cast<size_t>(i >> 6)] |= uint64_t{1} << (i & 63); }
  bool test(int i) const { return (w[static_cast<size_t>(i >> 6)] >> (i & 63)) & 1U; }
  bool empty() const { return (w[0] | w[1]) == 0; }
  int count() const { return std::popcount(w[0]) + std::popcount(w[1]); }
  template <class F>
  void for_each(F&& f) const {
    for (int k = 0; k < 2; ++k) {
      for (uint64_t b = w[static_cast<size_t>(k)]; b != 0; b &= b - 1) f(k * 64 + std::countr_zero(b));
    }
  }
  friend LabelSet operator|(LabelSet a, LabelSet b) { return {{a.w[0] | b.w[0], a.w[1] | b.w[1]}}; }
  friend LabelSet operator&(LabelSet a, LabelSet b) { return {{a.w[0] & b.w[0], a.w[1] & b.w[1]}}; }
  // a \ b
  friend LabelSet minus(LabelSet a, LabelSet b) { return {{a.w[0] & ~b.w[0], a.w[1] & ~b.w[1]}}; }
  bool operator==(const LabelSet&) const = default;
};

struct Problem {
  std::vector<std::string> node_names;  // node i
  std::vector<LabelSet> node_labels;    // every label of node i (all its modes)
  std::vector<std::vector<int>> node_modes;  // label indices of node i in storage order
  std::vector<std::string> labels;      // label index -> name
  std::vector<uint64_t> dims;           // label index -> size (>= 1)
  LabelSet output;                      // labels of the result
  std::vector<int> output_order;        // output labels in the network's order

  int size() const { return static_cast<int>(node_names.size()); }
  NodeSet all() const { return (NodeSet{1} << size()) - 1; }

  LabelSet labels_of(NodeSet s) const;  // union of the nodes' labels
  // Labels of the tensor that contracting all of `s` produces: those still needed by a node
  // outside `s` or by the output.
  LabelSet kept_labels(NodeSet s) const;
  // Labels of `s` as an operand: a single node keeps all its modes (a label only it has is
  // summed at its first step), a contracted group has kept_labels(s).
  LabelSet operand_labels(NodeSet s) const;
  uint64_t volume(LabelSet s) const;  // product of the sizes, saturating
  // Cost of contracting the results of the disjoint groups a and b (MACs, saturating).
  uint64_t step_macs(NodeSet a, NodeSet b) const;
  // einsum-like text of the network: "ab,bc->ac" (labels joined when all are one character,
  // otherwise separated by spaces).
  std::string text() const;
  std::string set_text(LabelSet s) const;  // "[b,m1,r2]"
};

// Validates the network (at least one node, at most kMaxNodes; every label sized and positive;
// no label twice in one node or in the output; every output label present in some node) and
// builds the bitset form. Throws SearchError naming the offending node or label.
Problem make_problem(const verif::TensorNetwork& net);

// One pairwise step: the groups of original nodes whose results are contracted.
struct Step {
  NodeSet left = 0;
  NodeSet right = 0;
  uint64_t macs = 0;
};

// A contraction tree, as its steps in an executable order (every group exists before it is used).
struct ContractionTree {
  std::vector<Step> steps;
  uint64_t macs = 0;  // sum of the steps, kSaturated on overflow
  bool overflow() const { return macs == kSaturated; }
};

// Builds a tree (and its costs) from the groups merged at each step; checks that the steps are
// a valid contraction of all nodes (disjoint, existing groups; one group left at the end).
ContractionTree make_tree(const Problem& p, const std::vector<std::pair<NodeSet, NodeSet>>& merges);

// numpy.einsum_path convention: each pair names two positions in the CURRENT operand list
// (i < j); both are removed and the result is appended at the end.
using Path = std::vector<std::pair<int, int>>;
Path to_path(const ContractionTree& t, int nodes);
ContractionTree tree_from_path(const Problem& p, const Path& path);
std::string format_path(const Path& path);  // "[(0, 1), (0, 2)]"

// Identity of a tree regardless of child order and step order: its internal groups, sorted.
std::vector<NodeSet> canonical_key(const ContractionTree& t);

}  // namespace fetta::mapper
