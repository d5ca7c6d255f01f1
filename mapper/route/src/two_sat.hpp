// A small 2-SAT solver (implication graph + strongly connected components). Both routers reduce
// "which side of its transpose pair does each request use" to 2-SAT: every conflict in the
// butterfly involves exactly two requests, so it is a clause over two boolean variables.
#pragma once

#include <optional>
#include <vector>

namespace fetta::route::detail {

class TwoSat {
 public:
  explicit TwoSat(int vars) : n_(vars), graph_(2 * vars) {}
  // Forbid (x_a == va && x_b == vb). a == b is allowed (then it forbids one value, or both).
  void forbid(int a, bool va, int b, bool vb);
  // An assignment satisfying every clause, or none.
  std::optional<std::vector<bool>> solve() const;

 private:
  int lit(int v, bool value) const { return 2 * v + (value ? 1 : 0); }
  int n_;
  std::vector<std::vector<int>> graph_;  // literal -> implied literals
};

}  // namespace fetta::route::detail
