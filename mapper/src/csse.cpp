#include "mapper/csse.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fetta::mapper {

namespace {

size_t sz(uint64_t v) { return static_cast<size_t>(v); }

// Operand labels of every subset (a single node: all its labels; a group: the labels still
// needed outside it or by the output).
std::vector<LabelSet> operand_table(const Problem& p) {
  const size_t n = size_t{1} << p.size();
  const NodeSet full = p.all();
  std::vector<LabelSet> uni(n);
  for (size_t s = 1; s < n; ++s) {
    uni[s] = uni[s & (s - 1)] | p.node_labels[sz(std::countr_zero(s))];
  }
  std::vector<LabelSet> ops(n);
  for (size_t s = 1; s < n; ++s) {
    if (std::popcount(s) == 1) {
      ops[s] = uni[s];
    } else {
      ops[s] = uni[s] & (uni[full & ~static_cast<NodeSet>(s)] | p.output);
    }
  }
  return ops;
}

struct Entry {
  uint64_t cost;
  NodeSet left;  // the group holding the subset's lowest node; right = subset ^ left
  uint16_t left_rank;
  uint16_t right_rank;
};

// Product of the sizes of the labels of `s`, saturating.
inline uint64_t volume(const std::vector<uint64_t>& dims, LabelSet s) {
  uint64_t v = 1;
  s.for_each([&](int i) { v = sat_mul(v, dims[sz(static_cast<uint64_t>(i))]); });
  return v;
}

void emit(const Problem& p, const std::vector<Entry>& table, size_t k, NodeSet s, size_t rank,
          std::vector<Step>& steps) {
  if (std::popcount(s) == 1) return;
  const Entry& e = table[sz(s) * k + rank];
  NodeSet a = e.left;
  NodeSet b = s ^ a;
  emit(p, table, k, a, e.left_rank, steps);
  emit(p, table, k, b, e.right_rank, steps);
  steps.push_back({a, b, p.step_macs(a, b)});
}

// The search's limits: nodes, the k asked for, and the table's memory.
void check_search(int nodes, int k_in) {
  if (nodes < 1) throw SearchError("the tensor network has no nodes");
  if (nodes > kMaxNodes) throw SearchError(fmt::format("{} nodes: the exact search handles at most {}", nodes, kMaxNodes));
  if (k_in < 1 || k_in > std::numeric_limits<uint16_t>::max()) {
    throw SearchError(fmt::format("top N must be between 1 and {}, got {}", std::numeric_limits<uint16_t>::max(), k_in));
  }
  const double bytes = std::ldexp(static_cast<double>(k_in) * sizeof(Entry), nodes);
  if (bytes > 2.0 * 1024 * 1024 * 1024) {
    throw SearchError(fmt::format("top {} over {} nodes needs a {:.0f} MiB table (limit 2048 MiB); ask for fewer",
                                  k_in, nodes, bytes / 1024 / 1024));
  }
}

// Merges the splits (A's i-th best, B's j-th best) at step cost c into S's k-best list of cnt
// entries, kept sorted by cost; entries of equal cost stay in insertion order (deterministic).
void merge_k_best(Entry* list, uint16_t& cnt, size_t k, const Entry* la, size_t na, const Entry* lb, size_t nb, uint64_t c,
                  NodeSet A) {
  for (size_t i = 0; i < na && i < k; ++i) {
    size_t j = 0;
    for (; j < nb && (i + 1) * (j + 1) <= k; ++j) {
      const uint64_t total = sat_add(c, sat_add(la[i].cost, lb[j].cost));
      if (cnt == k && total >= list[k - 1].cost) break;  // later j cost at least as much
      size_t pos = cnt == k ? k - 1 : cnt;
      while (pos > 0 && list[pos - 1].cost > total) {
        list[pos] = list[pos - 1];
        --pos;
      }
      list[pos] = Entry{total, A, static_cast<uint16_t>(i), static_cast<uint16_t>(j)};
      if (cnt < k) ++cnt;
    }
    if (j == 0) break;  // nothing from row i fits: rows below cost at least as much
  }
}

}  // namespace

std::vector<ContractionTree> k_best_trees(const Problem& p, int k_in) {
  const int K = p.size();
  check_search(K, k_in);
  if (K == 1) return {ContractionTree{}};
  const size_t k = static_cast<size_t>(k_in);
  const size_t n = size_t{1} << K;

  const std::vector<LabelSet> ops = operand_table(p);
  // Volume of every operand: a step's labels include both operands' and the result's, so
  // max(volume(A), volume(B), volume(result)) is a lower bound of its cost, used to skip splits
  // that cannot enter the k-best list before computing their exact cost.
  std::vector<uint64_t> ops_volume(n, 1);
  for (size_t s = 1; s < n; ++s) ops_volume[s] = volume(p.dims, ops[s]);
  std::vector<Entry> table(n * k);
  std::vector<uint16_t> count(n, 0);
  for (int i = 0; i < K; ++i) {
    table[(size_t{1} << i) * k] = Entry{0, 0, 0, 0};
    count[size_t{1} << i] = 1;
  }

  for (size_t s = 3; s < n; ++s) {
    if (std::popcount(s) < 2) continue;
    const NodeSet S = static_cast<NodeSet>(s);
    const LabelSet kept = ops[s];
    const uint64_t kept_volume = ops_volume[s];
    const NodeSet low = S & (~S + 1);
    const NodeSet rest = S ^ low;
    Entry* list = &table[s * k];
    uint16_t& cnt = count[s];
    for (NodeSet sub = (rest - 1) & rest;; sub = (sub - 1) & rest) {
      const NodeSet A = low | sub;
      const NodeSet B = S ^ A;
      const Entry* la = &table[sz(A) * k];
      const Entry* lb = &table[sz(B) * k];
      if (cnt == k) {
        const uint64_t bound = std::max({kept_volume, ops_volume[A], ops_volume[B]});
        if (sat_add(bound, sat_add(la[0].cost, lb[0].cost)) >= list[k - 1].cost) {
          if (sub == 0) break;
          continue;
        }
      }
      // Labels of the step = kept labels of S plus those summed away here.
      const LabelSet summed = minus(ops[A] | ops[B], kept);
      const uint64_t c = sat_mul(kept_volume, volume(p.dims, summed));
      if (k == 1) {
        const uint64_t total = sat_add(c, sat_add(la[0].cost, lb[0].cost));
        if (cnt == 0 || total < list[0].cost) {
          list[0] = Entry{total, A, 0, 0};
          cnt = 1;
        }
      } else {
        merge_k_best(list, cnt, k, la, count[A], lb, count[B], c, A);
      }
      if (sub == 0) break;
    }
  }

  const NodeSet full = p.all();
  std::vector<ContractionTree> out;
  for (size_t r = 0; r < count[full]; ++r) {
    ContractionTree t;
    emit(p, table, k, full, r, t.steps);
    t.macs = table[sz(full) * k + r].cost;
    out.push_back(std::move(t));
  }
  return out;
}

uint64_t tree_count(int n) {
  uint64_t c = 1;
  for (int i = 3; i <= n; ++i) c = sat_mul(c, static_cast<uint64_t>(2 * i - 3));
  return c;
}

ContractionTree left_to_right(const Problem& p) {
  // Start at the first input node (node 0 without one) and sweep the nodes in index order,
  // cyclically from the one absorbed last, taking the next node connected to what has been
  // contracted so far: along a chain or ring of cores this is the left-to-right walk from where
  // the input attaches (TT: X, G_{s+1}..G_d, then G_s..G_1). A node is taken disconnected (an
  // outer product) only when no remaining node is connected.
  const int n = p.size();
  int last = input_nodes(p).front();  // every node when none is an input: node 0
  std::vector<std::pair<NodeSet, NodeSet>> merges;
  NodeSet acc = NodeSet{1} << last;
  auto remaining = [&](int i) { return !(acc >> i & 1); };
  auto connected = [&](int i) {
    return !(p.node_labels[sz(static_cast<uint64_t>(i))] & p.labels_of(acc)).empty();
  };
  while (acc != p.all()) {
    int next = -1;
    for (int k = 1; k <= n && next < 0; ++k)
      if (int i = (last + k) % n; remaining(i) && connected(i)) next = i;
    for (int k = 1; k <= n && next < 0; ++k)
      if (int i = (last + k) % n; remaining(i)) next = i;
    merges.emplace_back(acc, NodeSet{1} << next);
    acc |= NodeSet{1} << next;
    last = next;
  }
  return make_tree(p, merges);
}

ContractionTree weights_first(const Problem& p) {
  std::vector<int> order, inputs;
  for (int i = 0; i < p.size(); ++i) {
    const auto& n = p.node_names[sz(static_cast<uint64_t>(i))];
    (n == "X" || n == "dY" ? inputs : order).push_back(i);
  }
  order.insert(order.end(), inputs.begin(), inputs.end());
  std::vector<std::pair<NodeSet, NodeSet>> merges;
  NodeSet acc = NodeSet{1} << order.front();
  for (size_t i = 1; i < order.size(); ++i) {
    merges.emplace_back(acc, NodeSet{1} << order[i]);
    acc |= NodeSet{1} << order[i];
  }
  return make_tree(p, merges);
}

std::vector<int> input_nodes(const Problem& p) {
  std::vector<int> out;
  for (int i = 0; i < p.size(); ++i) {
    const auto& n = p.node_names[sz(static_cast<uint64_t>(i))];
    if (n == "X" || n == "dY") out.push_back(i);
  }
  if (out.empty()) {
    for (int i = 0; i < p.size(); ++i) out.push_back(i);
  }
  return out;
}

ContractionTree input_first(const Problem& p, bool exhaustive) {
  const int K = p.size();
  if (K == 1) return ContractionTree{};
  ContractionTree best;
  bool have = false;
  auto consider = [&](ContractionTree t) {
    if (!have || t.macs < best.macs) {
      best = std::move(t);
      have = true;
    }
  };
  if (!exhaustive) {
    for (int s : input_nodes(p)) {
      std::vector<std::pair<NodeSet, NodeSet>> merges;
      NodeSet acc = NodeSet{1} << s;
      while (acc != p.all()) {
        int pick = -1;
        uint64_t pick_cost = 0;
        for (int j = 0; j < K; ++j) {
          if (acc & (NodeSet{1} << j)) continue;
          uint64_t c = p.step_macs(acc, NodeSet{1} << j);
          if (pick < 0 || c < pick_cost) {
            pick = j;
            pick_cost = c;
          }
        }
        merges.emplace_back(acc, NodeSet{1} << pick);
        acc |= NodeSet{1} << pick;
      }
      consider(make_tree(p, merges));
    }
    return best;
  }
  // best[T] over subsets T holding the start node: the cheapest chain that absorbed T's nodes.
  const std::vector<LabelSet> ops = operand_table(p);
  const size_t n = size_t{1} << K;
  for (int s : input_nodes(p)) {
    const NodeSet start = NodeSet{1} << s;
    std::vector<uint64_t> cost(n, kSaturated);
    std::vector<int8_t> last(n, -1);
    std::vector<bool> reached(n, false);
    cost[start] = 0;
    reached[start] = true;
    for (size_t t = 0; t < n; ++t) {
      const NodeSet T = static_cast<NodeSet>(t);
      if (!(T & start) || T == start) continue;
      for (NodeSet b = T & ~start; b != 0; b &= b - 1) {
        const NodeSet j = b & (~b + 1);
        const NodeSet prev = T ^ j;
        const uint64_t c = sat_add(cost[prev], volume(p.dims, ops[prev] | ops[j]));
        if (!reached[t] || c < cost[t]) {
          cost[t] = c;
          last[t] = static_cast<int8_t>(std::countr_zero(j));
          reached[t] = true;
        }
      }
    }
    std::vector<std::pair<NodeSet, NodeSet>> merges;
    for (NodeSet T = p.all(); T != start;) {
      const NodeSet j = NodeSet{1} << last[T];
      merges.emplace_back(T ^ j, j);
      T ^= j;
    }
    std::reverse(merges.begin(), merges.end());
    consider(make_tree(p, merges));
  }
  return best;
}

}  // namespace fetta::mapper
