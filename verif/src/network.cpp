#include "verif/network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace fetta::verif {

std::string TensorNetwork::to_string() const {
  bool single = true;
  for (const auto& n : nodes)
    for (const auto& l : n.labels) single = single && l.size() == 1;
  for (const auto& l : output_labels) single = single && l.size() == 1;
  // "bi,ijr,r->bj" when every label is one character, else "b n1, n1 m1 r1 -> b m1".
  const char* label_sep = single ? "" : " ";
  const char* node_sep = single ? "," : ", ";
  const char* arrow = single ? "->" : " -> ";
  std::vector<std::string> parts;
  for (const auto& n : nodes) parts.push_back(fmt::format("{}", fmt::join(n.labels, label_sep)));
  return fmt::format("{}{}{}", fmt::join(parts, node_sep), arrow, fmt::join(output_labels, label_sep));
}

void validate(const TensorNetwork& net) {
  std::set<std::string> names;
  std::map<std::string, std::vector<std::string>> owners;  // label -> node names
  for (const auto& n : net.nodes) {
    if (!names.insert(n.name).second) throw NetworkError(fmt::format("network: node name '{}' repeated", n.name));
    for (size_t i = 0; i < n.labels.size(); ++i) {
      const std::string& l = n.labels[i];
      for (size_t j = 0; j < i; ++j)
        if (n.labels[j] == l)
          throw NetworkError(fmt::format("network: node '{}' has label '{}' twice", n.name, l));
      auto& o = owners[l];
      o.push_back(n.name);
      if (o.size() > 2)
        throw NetworkError(fmt::format("network: label '{}' appears in nodes {} (at most two allowed)", l,
                                       fmt::join(o, ", ")));
      const auto it = net.dims.find(l);
      if (it == net.dims.end())
        throw NetworkError(fmt::format("network: no size for label '{}' of node '{}'", l, n.name));
      if (it->second < 1)
        throw NetworkError(fmt::format("network: label '{}' has size {} (must be >= 1)", l, it->second));
    }
  }
  for (size_t i = 0; i < net.output_labels.size(); ++i) {
    const std::string& l = net.output_labels[i];
    if (!owners.contains(l)) throw NetworkError(fmt::format("network: output label '{}' is in no node", l));
    for (size_t j = 0; j < i; ++j)
      if (net.output_labels[j] == l) throw NetworkError(fmt::format("network: output label '{}' repeated", l));
  }
}

}  // namespace fetta::verif
