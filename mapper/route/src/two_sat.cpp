#include "two_sat.hpp"

#include <algorithm>

namespace fetta::route::detail {

void TwoSat::forbid(int a, bool va, int b, bool vb) {
  // Clause (x_a != va) || (x_b != vb): x_a == va implies x_b == !vb, and vice versa.
  graph_[lit(a, va)].push_back(lit(b, !vb));
  graph_[lit(b, vb)].push_back(lit(a, !va));
}

std::optional<std::vector<bool>> TwoSat::solve() const {
  // Tarjan's SCC, iterative so that large instances cannot overflow the stack. Components are
  // numbered in reverse topological order, so x = true iff comp(x) < comp(!x).
  const int m = 2 * n_;
  std::vector<int> index(m, -1), low(m, 0), comp(m, -1), stack;
  std::vector<bool> on_stack(m, false);
  int counter = 0, comps = 0;
  struct Frame { int v; size_t next; };
  for (int root = 0; root < m; ++root) {
    if (index[root] >= 0) continue;
    std::vector<Frame> call{{root, 0}};
    index[root] = low[root] = counter++;
    stack.push_back(root);
    on_stack[root] = true;
    while (!call.empty()) {
      Frame& f = call.back();
      if (f.next < graph_[f.v].size()) {
        int w = graph_[f.v][f.next++];
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          on_stack[w] = true;
          call.push_back({w, 0});
        } else if (on_stack[w]) {
          low[f.v] = std::min(low[f.v], index[w]);
        }
        continue;
      }
      int v = f.v;
      call.pop_back();
      if (!call.empty()) low[call.back().v] = std::min(low[call.back().v], low[v]);
      if (low[v] == index[v]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = comps;
        } while (w != v);
        ++comps;
      }
    }
  }
  std::vector<bool> value(n_);
  for (int v = 0; v < n_; ++v) {
    if (comp[lit(v, true)] == comp[lit(v, false)]) return std::nullopt;
    value[v] = comp[lit(v, true)] < comp[lit(v, false)];
  }
  return value;
}

}  // namespace fetta::route::detail
