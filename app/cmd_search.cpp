// fetta search: the contraction sequence search (CSSE) of a tensorized layer's training phases,
// or of an einsum expression. docs/search.md describes the search and the cost model.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "commands.hpp"
#include "mapper/einsum.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/search.hpp"
#include "verif/layer.hpp"

namespace fetta::app {

void add_search_command(CLI::App& app) {
  struct Opts {
    std::vector<std::string> layers;
    std::string einsum;
    std::string dims;
    std::string phase = "all";
    int top = 5;
    std::string metric = "macs";
    std::string config;
    bool json = false;
    bool summary = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("search", "Search the contraction sequence of a layer's phases or of an einsum");
  auto* layer = cmd->add_option("--layer", o->layers, "Layer description(s) (YAML, configs/layers/*.yaml)");
  auto* einsum = cmd->add_option("--einsum", o->einsum, "Einsum expression, e.g. \"ab,bc,cd->ad\"");
  auto* dims = cmd->add_option("--dims", o->dims, "Label sizes for --einsum, e.g. a=4,b=8,c=8,d=4");
  layer->excludes(einsum);
  dims->needs(einsum);
  cmd->add_option("--phase", o->phase, "Training phase(s) of --layer: fp|bp|wg|all")->capture_default_str();
  cmd->add_option("--top", o->top, "N: candidates kept by stage 1 (distinct trees) and re-ranked by stage 2")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--metric", o->metric, "Stage-2 ranking: macs|latency|energy|edp")->capture_default_str();
  cmd->add_option("--config", o->config, "Architecture configuration (YAML) of the cost model (default: built-in)");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->add_flag("--summary", o->summary, "Print a markdown table per layer and phase: optimum vs baselines");
  cmd->callback([o] {
    if (o->layers.empty() && o->einsum.empty()) throw CLI::ValidationError("search", "give --layer FILE or --einsum EXPR");
    arch::ArchConfig cfg;
    if (!o->config.empty()) cfg = arch::load_arch_config(o->config);
    const mapper::AnalyticalModel model(cfg);
    mapper::SearchOptions opt;
    opt.top = o->top;
    opt.metric = mapper::parse_metric(o->metric);
    opt.model = &model;

    if (!o->einsum.empty()) {
      const auto net = mapper::parse_einsum(o->einsum, o->dims);
      const auto r = mapper::search_network(net, opt);
      if (o->json) {
        auto j = mapper::to_json(r);
        j["einsum"] = o->einsum;
        j["dims"] = net.dims;
        fmt::print("{}\n", j.dump(2));
      } else {
        fmt::print("einsum {}\n{}", o->einsum, mapper::format_result(r));
      }
      return;
    }

    const auto phases = mapper::parse_phases(o->phase);
    std::vector<mapper::LayerResult> results;
    for (const auto& path : o->layers) results.push_back(mapper::search_layer(verif::load_layer(path), phases, opt));
    if (o->json) {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& r : results) j.push_back(mapper::to_json(r));
      fmt::print("{}\n", (results.size() == 1 ? j[0] : j).dump(2));
    } else if (o->summary) {
      fmt::print("{}", mapper::summary_table(results));
    } else {
      for (size_t i = 0; i < results.size(); ++i) fmt::print("{}{}", i ? "\n" : "", mapper::format_layer(results[i]));
    }
  });
}

}  // namespace fetta::app
