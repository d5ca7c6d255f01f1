#include "mapper/layer_search.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace fetta::mapper {

namespace {

const char* const kBaselines[] = {"left_to_right", "input_first", "input_first_greedy", "weights_first"};

std::string format_name(verif::Format f) {
  switch (f) {
    case verif::Format::tt: return "tt";
    case verif::Format::ttm: return "ttm";
    case verif::Format::tr: return "tr";
    case verif::Format::ht: return "ht";
    case verif::Format::bt: return "bt";
  }
  return "?";
}

std::string phase_name(verif::Phase p) {
  switch (p) {
    case verif::Phase::fp: return "fp";
    case verif::Phase::bp: return "bp";
    case verif::Phase::wg: return "wg";
  }
  return "?";
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

}  // namespace

std::vector<verif::Phase> parse_phases(const std::string& text) {
  std::vector<verif::Phase> out;
  for (size_t at = 0; at <= text.size();) {
    const size_t c = std::min(text.find(',', at), text.size());
    const std::string one = text.substr(at, c - at);
    if (one == "fp") out.push_back(verif::Phase::fp);
    else if (one == "bp") out.push_back(verif::Phase::bp);
    else if (one == "wg") out.push_back(verif::Phase::wg);
    else if (one == "all") out.insert(out.end(), {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg});
    else throw SearchError(fmt::format("unknown phase '{}' (expected fp, bp, wg or all)", one));
    at = c + 1;
  }
  return out;
}

uint64_t PhaseResult::macs() const {
  uint64_t s = 0;
  for (const auto& p : problems) s = sat_add(s, p.search.selected().tree.macs);
  return s;
}

uint64_t PhaseResult::baseline_macs(const std::string& name) const {
  uint64_t s = 0;
  for (const auto& p : problems) s = sat_add(s, p.search.baseline(name).tree.macs);
  return s;
}

double PhaseResult::search_ms() const {
  double s = 0;
  for (const auto& p : problems) s += p.search.search_ms();
  return s;
}

LayerResult search_layer(const verif::LayerSpec& spec, const std::vector<verif::Phase>& phases,
                         const SearchOptions& opt) {
  LayerResult r;
  r.spec = spec;
  for (verif::Phase ph : phases) {
    PhaseResult pr;
    pr.phase = ph;
    for (const auto& prob : verif::phase_problems(spec, ph)) {
      for (size_t t = 0; t < prob.terms.size(); ++t) {
        ProblemResult x;
        x.result = prob.result;
        x.result_labels = prob.result_labels;
        x.term = t;
        x.terms = prob.terms.size();
        try {
          x.search = search_network(prob.terms[t], opt);
        } catch (const SearchError& e) {
          throw SearchError(fmt::format("layer '{}' phase {} {} (term {}): {}", spec.name, phase_name(ph),
                                        prob.result, t, e.what()));
        }
        pr.problems.push_back(std::move(x));
      }
    }
    r.phases.push_back(std::move(pr));
  }
  return r;
}

nlohmann::json to_json(const LayerResult& r) {
  nlohmann::json j;
  j["layer"] = r.spec.name;
  j["source"] = r.spec.source;
  j["format"] = format_name(r.spec.format);
  j["batch"] = r.spec.batch;
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& ph : r.phases) {
    nlohmann::json p;
    p["phase"] = phase_name(ph.phase);
    const uint64_t macs = ph.macs();
    p["macs"] = macs;
    p["flops"] = sat_mul(macs, 2);
    p["search_ms"] = ph.search_ms();
    nlohmann::json seqs = nlohmann::json::array();
    nlohmann::json probs = nlohmann::json::array();
    for (const auto& x : ph.problems) {
      nlohmann::json e = to_json(x.search);
      e["result"] = x.result;
      e["result_labels"] = x.result_labels;
      e["term"] = x.term;
      e["terms"] = x.terms;
      seqs.push_back(e["sequence"]);
      if (p.find("metric") == p.end()) p["metric"] = e["metric"];
      probs.push_back(std::move(e));
    }
    p["sequence"] = std::move(seqs);
    nlohmann::json base = nlohmann::json::object();
    for (const char* name : kBaselines) {
      const uint64_t b = ph.baseline_macs(name);
      base[name] = {{"macs", b}, {"flops", sat_mul(b, 2)},
                    {"ratio", static_cast<double>(b) / static_cast<double>(std::max<uint64_t>(macs, 1))}};
    }
    p["baselines"] = std::move(base);
    p["problems"] = std::move(probs);
    phases.push_back(std::move(p));
  }
  j["phases"] = std::move(phases);
  return j;
}

std::string format_layer(const LayerResult& r) {
  const auto& s = r.spec;
  auto ints = [](const std::vector<int64_t>& v) {
    std::string out = "[";
    for (auto x : v) {
      if (out.size() > 1) out += ',';
      out += std::to_string(x);
    }
    return out += ']';
  };
  std::string out = fmt::format("layer {} ({}): {}, batch {}, out_modes {}, in_modes {}, ranks {}\n", s.name,
                                s.source, format_name(s.format), s.batch, ints(s.out_modes), ints(s.in_modes),
                                ints(s.ranks));
  for (const auto& ph : r.phases) {
    const uint64_t macs = ph.macs();
    out += fmt::format("\nphase {}: {} MACs, {} FLOPs (1 MAC = 2 FLOPs), {} network(s), search {:.3f} ms\n",
                       phase_name(ph.phase), group_digits(macs), group_digits(sat_mul(macs, 2)), ph.problems.size(),
                       ph.search_ms());
    out += fmt::format("  {:<10} {:>4} {:>18} {:>22} {:>22} {:>22} {:>9}\n", "result", "K", "optimum MACs",
                       "left-to-right", "input-first", "weights-first", "ms");
    for (const auto& x : ph.problems) {
      const auto& n = x.search;
      const uint64_t m = n.selected().tree.macs;
      auto col = [&](const char* name) {
        const uint64_t b = n.baseline(name).tree.macs;
        return fmt::format("{} {}", group_digits(b), format_ratio(b, m));
      };
      std::string res = x.terms > 1 ? fmt::format("{}[{}]", x.result, x.term) : x.result;
      out += fmt::format("  {:<10} {:>4} {:>18} {:>22} {:>22} {:>22} {:>9.3f}\n", res, n.problem.size(),
                         group_digits(m), col("left_to_right"), col("input_first"), col("weights_first"),
                         n.search_ms());
    }
    for (const auto& x : ph.problems) {
      std::string res = x.terms > 1 ? fmt::format("{}[{}]", x.result, x.term) : x.result;
      out += fmt::format("\n  {}[{}] = {}{}\n", res, join(x.result_labels),
                         x.terms > 1 ? fmt::format("term {} of {}: ", x.term, x.terms) : "", x.search.problem.text());
      out += format_result(x.search, "    ");
    }
  }
  return out;
}

std::string summary_table(const std::vector<LayerResult>& layers) {
  std::string out =
      "| layer | format | phase | networks | optimum MACs | left-to-right MACs | ratio | input-first MACs | ratio | "
      "weights-first MACs | ratio | search ms |\n"
      "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
  for (const auto& l : layers) {
    for (const auto& ph : l.phases) {
      const uint64_t m = ph.macs();
      const uint64_t a = ph.baseline_macs("left_to_right");
      const uint64_t b = ph.baseline_macs("input_first");
      const uint64_t c = ph.baseline_macs("weights_first");
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} |\n", l.spec.name,
                         format_name(l.spec.format), phase_name(ph.phase), ph.problems.size(), group_digits(m),
                         group_digits(a), format_ratio(a, m), group_digits(b), format_ratio(b, m), group_digits(c),
                         format_ratio(c, m), ph.search_ms());
    }
  }
  return out;
}

}  // namespace fetta::mapper
