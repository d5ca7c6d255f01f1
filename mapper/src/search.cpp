#include "mapper/search.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "verif/network.hpp"

namespace fetta::mapper {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

nlohmann::json path_json(const Path& path) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& [i, j] : path) a.push_back({i, j});
  return a;
}

void cost_json(nlohmann::json& j, const std::optional<TreeCost>& c) {
  if (!c) return;
  j["cycles"] = c->cycles;
  j["latency_us"] = c->latency_us;
  j["energy_uj"] = c->energy_uj;
  j["edp"] = c->edp;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : c->steps) {
    steps.push_back({{"dataflow", s.dataflow},
                     {"cycles", s.cycles},
                     {"compute_cycles", s.compute_cycles},
                     {"sram_cycles", s.sram_cycles},
                     {"dram_cycles", s.dram_cycles},
                     {"energy_pj", s.energy_pj},
                     {"utilization", s.utilization}});
  }
  j["steps"] = std::move(steps);
}

void macs_json(nlohmann::json& j, uint64_t macs) {
  if (macs == kSaturated) {
    j["macs"] = nullptr;
    j["flops"] = nullptr;
    j["overflow"] = true;
  } else {
    j["macs"] = macs;
    j["flops"] = static_cast<double>(macs) * 2.0;  // may exceed 2^64
    if (macs <= (kSaturated >> 1)) j["flops"] = macs * 2;
  }
}

}  // namespace

const Baseline& NetworkResult::baseline(const std::string& name) const {
  for (const auto& b : baselines) {
    if (b.name == name) return b;
  }
  throw SearchError(fmt::format("no baseline '{}'", name));
}

NetworkResult search_network(const Problem& p, const SearchOptions& opt) {
  if (opt.metric != Metric::macs && opt.model == nullptr) {
    throw SearchError(fmt::format("metric '{}' needs a hardware cost model", to_string(opt.metric)));
  }
  NetworkResult r;
  r.problem = p;
  r.metric = opt.metric;
  if (opt.model) r.model_name = opt.model->name();

  auto t0 = std::chrono::steady_clock::now();
  std::vector<ContractionTree> trees = k_best_trees(p, opt.top);
  r.stage1_ms = ms_since(t0);
  r.optimum_macs = trees.front().macs;
  if (trees.front().overflow()) {
    throw SearchError(fmt::format("every contraction of {} costs more than 2^64 MACs", p.text()));
  }

  t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < trees.size(); ++i) {
    Candidate c;
    c.path = to_path(trees[i], p.size());
    c.macs_rank = static_cast<int>(i);
    if (opt.model) c.cost = evaluate(p, trees[i], *opt.model);
    c.tree = std::move(trees[i]);
    r.candidates.push_back(std::move(c));
  }
  if (opt.metric != Metric::macs) {
    std::stable_sort(r.candidates.begin(), r.candidates.end(), [&](const Candidate& a, const Candidate& b) {
      return metric_value(*a.cost, opt.metric) < metric_value(*b.cost, opt.metric);
    });
  }
  r.stage2_ms = ms_since(t0);

  auto add_baseline = [&](const std::string& name, ContractionTree t) {
    Baseline b;
    b.name = name;
    b.path = to_path(t, p.size());
    if (opt.model) b.cost = evaluate(p, t, *opt.model);
    b.tree = std::move(t);
    r.baselines.push_back(std::move(b));
  };
  add_baseline("left_to_right", left_to_right(p));
  add_baseline("input_first", input_first(p, true));
  add_baseline("input_first_greedy", input_first(p, false));
  add_baseline("weights_first", weights_first(p));
  return r;
}

NetworkResult search_network(const verif::TensorNetwork& net, const SearchOptions& opt) {
  return search_network(make_problem(net), opt);
}

nlohmann::json to_json(const NetworkResult& r) {
  nlohmann::json j;
  j["network"] = r.problem.text();
  j["nodes"] = r.problem.node_names;
  const Candidate& sel = r.selected();
  macs_json(j, sel.tree.macs);
  j["sequence"] = path_json(sel.path);
  cost_json(j, sel.cost);
  j["optimum_macs"] = r.optimum_macs;
  j["metric"] = to_string(r.metric);
  if (!r.model_name.empty()) j["model"] = r.model_name;
  j["search_ms"] = r.search_ms();
  j["stage1_ms"] = r.stage1_ms;
  j["stage2_ms"] = r.stage2_ms;
  nlohmann::json base = nlohmann::json::object();
  for (const auto& b : r.baselines) {
    nlohmann::json e;
    macs_json(e, b.tree.macs);
    e["sequence"] = path_json(b.path);
    e["ratio"] = static_cast<double>(b.tree.macs) / static_cast<double>(std::max<uint64_t>(sel.tree.macs, 1));
    cost_json(e, b.cost);
    base[b.name] = std::move(e);
  }
  j["baselines"] = std::move(base);
  nlohmann::json cands = nlohmann::json::array();
  for (size_t i = 0; i < r.candidates.size(); ++i) {
    const auto& c = r.candidates[i];
    nlohmann::json e;
    e["rank"] = i;
    e["macs_rank"] = c.macs_rank;
    macs_json(e, c.tree.macs);
    e["sequence"] = path_json(c.path);
    cost_json(e, c.cost);
    cands.push_back(std::move(e));
  }
  j["candidates"] = std::move(cands);
  return j;
}

std::string group_digits(uint64_t v) {
  if (v == kSaturated) return "overflow";
  std::string s = std::to_string(v);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i != 0 && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

std::string format_ratio(uint64_t num, uint64_t den) {
  if (num == kSaturated) return "overflow";
  return fmt::format("x{:.2f}", static_cast<double>(num) / static_cast<double>(std::max<uint64_t>(den, 1)));
}

std::string format_result(const NetworkResult& r, const std::string& in) {
  const Candidate& sel = r.selected();
  std::string out;
  out += fmt::format("{}network        {}  ({} nodes; 1 MAC = 2 FLOPs)\n", in, r.problem.text(), r.problem.size());
  out += fmt::format("{}optimum        {} MACs  {} FLOPs\n", in, group_digits(r.optimum_macs),
                     group_digits(sat_mul(r.optimum_macs, 2)));
  if (sel.macs_rank != 0) {
    out += fmt::format("{}selected       {} MACs  {} FLOPs  (best {} of the top {}; MACs rank {})\n", in,
                       group_digits(sel.tree.macs), group_digits(sat_mul(sel.tree.macs, 2)), to_string(r.metric),
                       r.candidates.size(), sel.macs_rank + 1);
  }
  out += fmt::format("{}sequence       {}\n", in, format_path(sel.path));
  if (sel.cost) {
    out += fmt::format("{}model          {:.0f} cycles  {:.3f} us  {:.4f} uJ  EDP {:.4g} uJ*us\n", in, sel.cost->cycles,
                       sel.cost->latency_us, sel.cost->energy_uj, sel.cost->edp);
  }
  for (const auto& b : r.baselines) {
    std::string name = b.name == "left_to_right"        ? "left-to-right"
                       : b.name == "input_first"        ? "input-first"
                       : b.name == "input_first_greedy" ? "greedy input"
                                                        : "weights-first";
    std::string line = fmt::format("{}{:<14} {} MACs  {}", in, name, group_digits(b.tree.macs),
                                   format_ratio(b.tree.macs, sel.tree.macs));
    if (b.cost) line += fmt::format("  {:.0f} cycles  {:.4f} uJ", b.cost->cycles, b.cost->energy_uj);
    out += line + fmt::format("  {}\n", format_path(b.path));
  }
  out += fmt::format("{}search         {:.3f} ms  (stage 1, top {}: {:.3f} ms; stage 2: {:.3f} ms)\n", in, r.search_ms(),
                     r.candidates.size(), r.stage1_ms, r.stage2_ms);
  if (r.candidates.size() > 1 || sel.cost) {
    out += fmt::format("{}candidates (ranked by {}{}{}):\n", in, to_string(r.metric),
                       r.model_name.empty() ? "" : ", ", r.model_name);
    for (size_t i = 0; i < r.candidates.size(); ++i) {
      const auto& c = r.candidates[i];
      std::string line = fmt::format("{}  {:>3} {:>18} MACs {:>8}", in, i + 1, group_digits(c.tree.macs),
                                     format_ratio(c.tree.macs, r.optimum_macs));
      if (c.cost) {
        std::string dfs;
        for (const auto& s : c.cost->steps) {
          if (!dfs.empty()) dfs += ',';
          dfs += s.dataflow;
        }
        line += fmt::format(" {:>12.0f} cyc {:>10.4f} uJ  [{}]", c.cost->cycles, c.cost->energy_uj, dfs);
      }
      out += line + fmt::format("  {}\n", format_path(c.path));
    }
  }
  return out;
}

}  // namespace fetta::mapper
