// Glue between tensorized layers (verif/layer.hpp) and the search: every phase problem of a
// layer searched, reported as text, JSON and a markdown summary. The search itself
// (search.hpp) knows only tensor networks.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "mapper/search.hpp"
#include "verif/layer.hpp"

namespace fetta::mapper {

// "fp" | "bp" | "wg" | "all" (fp, bp, wg), or a comma-separated list of them ("fp,wg").
// SearchError otherwise.
std::vector<verif::Phase> parse_phases(const std::string& text);

// One network searched: term `term` of `terms` of the phase problem `result`.
struct ProblemResult {
  std::string result;
  std::vector<std::string> result_labels;
  size_t term = 0, terms = 1;
  NetworkResult search;
};

struct PhaseResult {
  verif::Phase phase = verif::Phase::fp;
  std::vector<ProblemResult> problems;
  uint64_t macs() const;                                   // sum of the selected trees
  uint64_t baseline_macs(const std::string& name) const;   // sum of one baseline
  double search_ms() const;
};

struct LayerResult {
  verif::LayerSpec spec;
  std::vector<PhaseResult> phases;
};

LayerResult search_layer(const verif::LayerSpec& spec, const std::vector<verif::Phase>& phases,
                         const SearchOptions& opt);

// {"layer", "source", "format", "metric", "phases": [{"phase", "macs", "flops", "sequence"
//  (one per problem), "baselines": {name: {"macs", "flops", "ratio"}}, "search_ms",
//  "problems": [{"result", "result_labels", "term", "terms", ...to_json(NetworkResult)}]}]}
nlohmann::json to_json(const LayerResult& r);
std::string format_layer(const LayerResult& r);
// Markdown: one row per layer and phase: optimum MACs vs left-to-right, input-first and
// weights-first, search time.
std::string summary_table(const std::vector<LayerResult>& layers);

}  // namespace fetta::mapper
