// ReusePlan (mapper/reuse.hpp).
#include "mapper/reuse.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

namespace fetta::mapper {

std::string step_key(const Problem& p, const PlannedStep& st, std::string a, std::string b) {
  if (b < a) std::swap(a, b);
  std::vector<std::string> out;
  for (const std::string& l : st.keep) {
    const auto li = std::find(p.labels.begin(), p.labels.end(), l) - p.labels.begin();
    out.push_back(fmt::format("{}:{}", l, p.dims.at(static_cast<size_t>(li))));
  }
  std::sort(out.begin(), out.end());
  return fmt::format("({} * {} -> {})", a, b, fmt::join(out, ","));
}

PlannedNetwork ReusePlan::add(NetworkPlan plan) {
  PlannedNetwork pn;
  pn.plan = std::move(plan);
  const Problem& p = pn.plan.problem;
  std::map<NodeSet, std::string> key;  // what each node group holds: an input, or what a step computed
  for (int i = 0; i < p.size(); ++i) {
    std::vector<std::string> labels;
    for (int l : p.node_modes[static_cast<size_t>(i)]) labels.push_back(p.labels[static_cast<size_t>(l)]);
    key[NodeSet{1} << i] = fmt::format("{}[{}]", p.node_names[static_cast<size_t>(i)], fmt::join(labels, ","));
  }
  for (const PlannedStep& st : pn.plan.steps) {
    const std::string k = step_key(p, st, key.at(st.left), key.at(st.right));
    const bool repeat = reuse_ && !st.last && computed_.contains(k);
    if (!repeat && reuse_) {  // else every network reads only its own results
      if (!st.last) computed_.insert(k);
      for (NodeSet operand : {st.left, st.right})
        if (std::popcount(operand) > 1) ++readers_[key.at(operand)];
    }
    key[st.left | st.right] = k;
    repeats_ += repeat;
    pn.keys.push_back(k);
    pn.repeat.push_back(repeat);
  }
  return pn;
}

int ReusePlan::readers(const std::string& key) const {
  const auto it = readers_.find(key);
  return it == readers_.end() ? 0 : it->second;
}

}  // namespace fetta::mapper
