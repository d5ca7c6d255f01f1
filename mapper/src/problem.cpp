#include "mapper/problem.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "verif/network.hpp"

namespace fetta::mapper {

LabelSet Problem::labels_of(NodeSet s) const {
  LabelSet r;
  for (NodeSet b = s; b != 0; b &= b - 1) r = r | node_labels[static_cast<size_t>(std::countr_zero(b))];
  return r;
}

LabelSet Problem::kept_labels(NodeSet s) const {
  return labels_of(s) & (labels_of(all() & ~s) | output);
}

LabelSet Problem::operand_labels(NodeSet s) const {
  if (std::popcount(s) == 1) return node_labels[static_cast<size_t>(std::countr_zero(s))];
  return kept_labels(s);
}

uint64_t Problem::volume(LabelSet s) const {
  uint64_t v = 1;
  s.for_each([&](int i) { v = sat_mul(v, dims[static_cast<size_t>(i)]); });
  return v;
}

uint64_t Problem::step_macs(NodeSet a, NodeSet b) const {
  return volume(operand_labels(a) | operand_labels(b));
}

std::string Problem::text() const {
  bool single = std::all_of(labels.begin(), labels.end(), [](const std::string& l) { return l.size() == 1; });
  const char* sep = single ? "" : " ";
  auto list = [&](const std::vector<int>& idx) {
    std::string out;
    for (size_t i = 0; i < idx.size(); ++i) {
      if (i != 0) out += sep;
      out += labels[static_cast<size_t>(idx[i])];
    }
    return out;
  };
  std::string out;
  for (size_t n = 0; n < node_labels.size(); ++n) {
    if (n != 0) out += ",";
    out += list(node_modes[n]);
  }
  return out + "->" + list(output_order);
}

std::string Problem::set_text(LabelSet s) const {
  std::string out = "[";
  bool first = true;
  s.for_each([&](int i) {
    if (!first) out += ",";
    first = false;
    out += labels[static_cast<size_t>(i)];
  });
  return out + "]";
}

Problem make_problem(const verif::TensorNetwork& net) {
  if (net.nodes.empty()) throw SearchError("the tensor network has no nodes");
  if (net.nodes.size() > static_cast<size_t>(kMaxNodes)) {
    throw SearchError(fmt::format("the tensor network has {} nodes; the exact search handles at most {}",
                                  net.nodes.size(), kMaxNodes));
  }
  Problem p;
  std::map<std::string, int> index;
  auto label_index = [&](const std::string& name, const std::string& where) {
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    auto d = net.dims.find(name);
    if (d == net.dims.end()) throw SearchError(fmt::format("label '{}' ({}) has no size", name, where));
    if (d->second <= 0) {
      throw SearchError(fmt::format("size of label '{}' must be positive, got {}", name, d->second));
    }
    if (p.labels.size() >= static_cast<size_t>(kMaxLabels)) {
      throw SearchError(fmt::format("the tensor network has more than {} distinct labels", kMaxLabels));
    }
    int i = static_cast<int>(p.labels.size());
    index.emplace(name, i);
    p.labels.push_back(name);
    p.dims.push_back(static_cast<uint64_t>(d->second));
    return i;
  };
  for (size_t n = 0; n < net.nodes.size(); ++n) {
    const auto& node = net.nodes[n];
    std::string name = node.name.empty() ? fmt::format("#{}", n) : node.name;
    LabelSet s;
    std::vector<int> modes;
    for (const auto& l : node.labels) {
      if (l.empty()) throw SearchError(fmt::format("node '{}' has an empty label", name));
      int i = label_index(l, fmt::format("in node '{}'", name));
      if (s.test(i)) throw SearchError(fmt::format("label '{}' appears twice in node '{}'", l, name));
      s.set(i);
      modes.push_back(i);
    }
    p.node_names.push_back(name);
    p.node_modes.push_back(std::move(modes));
    p.node_labels.push_back(s);
  }
  for (const auto& l : net.output_labels) {
    auto it = index.find(l);
    if (it == index.end()) throw SearchError(fmt::format("output label '{}' does not appear in any input", l));
    if (p.output.test(it->second)) throw SearchError(fmt::format("output label '{}' appears twice", l));
    p.output.set(it->second);
    p.output_order.push_back(it->second);
  }
  return p;
}

ContractionTree make_tree(const Problem& p, const std::vector<std::pair<NodeSet, NodeSet>>& merges) {
  std::vector<NodeSet> live;
  for (int i = 0; i < p.size(); ++i) live.push_back(NodeSet{1} << i);
  ContractionTree t;
  for (const auto& [a, b] : merges) {
    auto ia = std::find(live.begin(), live.end(), a);
    auto ib = std::find(live.begin(), live.end(), b);
    if (a == 0 || b == 0 || (a & b) != 0 || ia == live.end() || ib == live.end()) {
      throw SearchError("invalid contraction step: the groups are not two distinct live operands");
    }
    uint64_t c = p.step_macs(a, b);
    t.steps.push_back({a, b, c});
    t.macs = sat_add(t.macs, c);
    live.erase(std::find(live.begin(), live.end(), a));
    live.erase(std::find(live.begin(), live.end(), b));
    live.push_back(a | b);
  }
  if (live.size() != 1) {
    throw SearchError(fmt::format("the contraction leaves {} operands; it must end with one", live.size()));
  }
  return t;
}

Path to_path(const ContractionTree& t, int nodes) {
  std::vector<NodeSet> live;
  for (int i = 0; i < nodes; ++i) live.push_back(NodeSet{1} << i);
  Path path;
  for (const auto& s : t.steps) {
    int i = static_cast<int>(std::find(live.begin(), live.end(), s.left) - live.begin());
    int j = static_cast<int>(std::find(live.begin(), live.end(), s.right) - live.begin());
    if (i > j) std::swap(i, j);
    path.emplace_back(i, j);
    live.erase(live.begin() + j);
    live.erase(live.begin() + i);
    live.push_back(s.left | s.right);
  }
  return path;
}

ContractionTree tree_from_path(const Problem& p, const Path& path) {
  std::vector<NodeSet> live;
  for (int i = 0; i < p.size(); ++i) live.push_back(NodeSet{1} << i);
  std::vector<std::pair<NodeSet, NodeSet>> merges;
  for (const auto& [i, j] : path) {
    int n = static_cast<int>(live.size());
    if (i < 0 || j < 0 || i >= n || j >= n || i == j) {
      throw SearchError(fmt::format("path step ({}, {}) is out of range for {} operands", i, j, n));
    }
    merges.emplace_back(live[static_cast<size_t>(i)], live[static_cast<size_t>(j)]);
    NodeSet m = live[static_cast<size_t>(i)] | live[static_cast<size_t>(j)];
    live.erase(live.begin() + std::max(i, j));
    live.erase(live.begin() + std::min(i, j));
    live.push_back(m);
  }
  return make_tree(p, merges);
}

std::string format_path(const Path& path) {
  std::string out = "[";
  for (size_t i = 0; i < path.size(); ++i) {
    if (i != 0) out += ", ";
    out += fmt::format("({}, {})", path[i].first, path[i].second);
  }
  return out + "]";
}

std::vector<NodeSet> canonical_key(const ContractionTree& t) {
  std::vector<NodeSet> key;
  for (const auto& s : t.steps) key.push_back(s.left | s.right);
  std::sort(key.begin(), key.end());
  return key;
}

}  // namespace fetta::mapper
