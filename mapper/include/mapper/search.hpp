// The whole contraction sequence search of one tensor network: stage 1 (k best trees by MACs),
// stage 2 (re-rank by a hardware cost model), and the baselines, with JSON and text reports.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "mapper/cost_model.hpp"
#include "mapper/csse.hpp"
#include "mapper/problem.hpp"

namespace fetta::verif {
struct TensorNetwork;
}

namespace fetta::mapper {

struct SearchOptions {
  int top = 5;                         // N: candidates kept by stage 1
  Metric metric = Metric::macs;        // stage-2 ranking (macs: stage 1 order)
  const CostModel* model = nullptr;    // required unless metric == macs; when given, every
                                       // candidate and baseline is costed with it
};

struct Candidate {
  ContractionTree tree;
  Path path;
  int macs_rank = 0;               // position in the stage-1 list (0 = minimum MACs)
  std::optional<TreeCost> cost;    // with a model
};

struct Baseline {
  std::string name;  // "left_to_right", "input_first", "input_first_greedy", "weights_first"
  ContractionTree tree;
  Path path;
  std::optional<TreeCost> cost;
};

struct NetworkResult {
  Problem problem;
  Metric metric = Metric::macs;
  std::string model_name;            // empty without a model
  std::vector<Candidate> candidates; // ranked by the metric; candidates[0] is the selected tree
  uint64_t optimum_macs = 0;         // stage-1 minimum
  std::vector<Baseline> baselines;
  double stage1_ms = 0, stage2_ms = 0;
  double search_ms() const { return stage1_ms + stage2_ms; }
  const Candidate& selected() const { return candidates.front(); }
  const Baseline& baseline(const std::string& name) const;
};

NetworkResult search_network(const Problem& p, const SearchOptions& opt);
NetworkResult search_network(const verif::TensorNetwork& net, const SearchOptions& opt);

// {"network", "nodes", "macs", "flops", "sequence", "optimum_macs", "baselines": {name: {...}},
//  "candidates": [...], "search_ms", "stage1_ms", "stage2_ms", "metric", "model"}; macs, flops
// and sequence describe the selected tree.
nlohmann::json to_json(const NetworkResult& r);
// Human-readable block, every line prefixed by `indent`.
std::string format_result(const NetworkResult& r, const std::string& indent = "  ");

std::string group_digits(uint64_t v);   // 1234567 -> "1,234,567"; kSaturated -> "overflow"
std::string format_ratio(uint64_t num, uint64_t den);  // "x3.25"; "overflow" when num saturated

}  // namespace fetta::mapper
