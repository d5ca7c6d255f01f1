// The reduction network (CE outputs -> accumulation unit): its control, a functional model, the
// router and the order in which it adds. Stage order from input to output: butterfly levels
// 0, 1, ..., L-1, then the transpose level.
//
// Level k has N/2 adder switches; switch j joins the left lane l = j with a 0 inserted at bit k
// and the right lane r = l | 2^k. Modes (2 bits):
//   pass (0):      left out = left in,            right out = right in
//   swap (1):      left out = right in,           right out = left in
//   add_left (2):  left out = left in + right in, right out = 0
//   add_right (3): left out = 0,                  right out = left in + right in
// (the sum is add(a = left in, b = right in); 0 is the all-zero pattern: +0.0 for binary32).
// The transpose level: output lane i takes lane partner(i) when its bit is 1.
// Below NetGeometry::red_first_add_level() the switches have no adder: they read the low mode
// bit alone (add_left passes, add_right swaps), and the router never asks them to add.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "route/geometry.hpp"

namespace fetta::route {

enum class SwitchMode : uint8_t { pass = 0, swap = 1, add_left = 2, add_right = 3 };
const char* to_string(SwitchMode m);

// The lanes switch j of level k joins.
int switch_left_lane(int j, int k);
inline int switch_right_lane(int j, int k) { return switch_left_lane(j, k) | (1 << k); }

struct RedControl {
  std::vector<std::vector<SwitchMode>> level;  // [L][N/2]
  std::vector<uint8_t> transpose;              // [N]: 1 = output lane i takes lane partner(i)

  static RedControl zero(const NetGeometry& g);  // every switch pass: the identity
  bool operator==(const RedControl&) const = default;
};

// Bit patterns in, bit patterns out; `add` is the element adder (wrapping integer add, or
// verif::fp32_add for binary32).
using AddFn = std::function<uint64_t(uint64_t, uint64_t)>;
std::vector<uint64_t> simulate_red(const NetGeometry& g, const RedControl& c, const std::vector<uint64_t>& in,
                                   const AddFn& add);

// A request: the lanes of `lanes` summed, the sum delivered to output lane `out`. Groups are
// disjoint; inputs in no group and outputs no group names are don't-care.
struct ReduceGroup {
  std::vector<int> lanes;
  int out = 0;
};

// The order of additions of one group: a binary tree, children before parents. An operand is an
// input lane or an earlier node of the same tree.
struct TreeRef {
  bool is_node = false;
  int index = 0;  // input lane, or index into GroupTree::adds
};
struct AddNode {
  int level = 0;  // the butterfly level whose switch adds
  int lane = 0;   // the left lane of that switch
  TreeRef left, right;  // add(a = left, b = right)
};
struct GroupTree {
  std::vector<AddNode> adds;
  TreeRef result;  // a lane for a one-lane group
};
// The value of a tree for the given inputs (mirrors the hardware's order bit-exactly).
uint64_t evaluate(const GroupTree& t, const std::vector<uint64_t>& in, const AddFn& add);

// Why a request is unroutable: partial sums of two groups need the same lane after one level.
struct RedConflict {
  int level = 0;
  int lane = 0;
  int group_a = 0, group_b = 0;
  int in_a = 0, in_b = 0;  // one input lane of each partial sum
};

struct RedRoute {
  bool routable = false;
  RedControl control;                   // routable: switches no group uses are pass
  std::vector<GroupTree> trees;         // routable: one per group, in request order
  std::optional<RedConflict> conflict;  // unroutable: the first conflict without transposing
  std::string message;
};

// Exact (see docs/networks.md). Throws std::invalid_argument for lanes out of range, a lane in
// two groups, an empty group, or two groups delivered to the same output.
RedRoute route_red(const NetGeometry& g, const std::vector<ReduceGroup>& groups);
// The same, throwing RouteError with the reason when unroutable.
RedRoute route_red_or_throw(const NetGeometry& g, const std::vector<ReduceGroup>& groups);

}  // namespace fetta::route
