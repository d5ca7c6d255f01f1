// A contraction computed once for every network of a layer that needs it (docs/program.md, "A
// contraction computed once"): each step of each planned network gets a key naming what it
// computes (its operands' keys, an input by name and labels, and its result's labels and sizes);
// a step whose key an earlier network computes is a repeat, not emitted, and its readers read the
// earlier result. What is left counts, per result, the emitted steps that read it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mapper/compile.hpp"

namespace fetta::mapper {

// A network as planned (plan_network) and, per step, its key and whether it is a repeat.
struct PlannedNetwork {
  NetworkPlan plan;
  std::vector<std::string> keys;
  std::vector<bool> repeat;
};

// What step st of problem p computes, given its operands' keys (in either order).
std::string step_key(const Problem& p, const PlannedStep& st, std::string a, std::string b);

// The layer's networks, added in the order they are emitted.
class ReusePlan {
 public:
  // reuse false: no step is a repeat and nothing is counted (ProgramOptions::reuse).
  explicit ReusePlan(bool reuse) : reuse_(reuse) {}
  // The next network of the layer: its keys, and its steps an earlier network computes (never its
  // last: every network's result is its own).
  PlannedNetwork add(NetworkPlan plan);
  // The emitted steps that read the result with this key (0 when unknown).
  int readers(const std::string& key) const;
  // The steps found repeated so far.
  int64_t repeats() const { return repeats_; }

 private:
  bool reuse_ = true;
  std::set<std::string> computed_;
  std::map<std::string, int> readers_;
  int64_t repeats_ = 0;
};

}  // namespace fetta::mapper
