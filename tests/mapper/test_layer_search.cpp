// The layer glue: every phase problem of a tensorized layer searched and reported.
#include <catch2/catch.hpp>

#include "mapper/csse.hpp"
#include "mapper/layer_search.hpp"
#include "reference.hpp"

using namespace fetta;
using namespace fetta::mapper;

namespace {

const char* const kPaperTT = R"(name: paper_tt
format: tt
batch: 128
out_modes: [12, 8, 8]
in_modes: [8, 8, 12]
ranks: [1, 8, 8, 8, 8, 8, 1]
)";

}  // namespace

TEST_CASE("phases parse", "[layer]") {
  CHECK(parse_phases("all").size() == 3);
  CHECK(parse_phases("wg") == std::vector<verif::Phase>{verif::Phase::wg});
  CHECK_THROWS_WITH(parse_phases("fwd"), "unknown phase 'fwd' (expected fp, bp, wg or all)");
  CHECK(parse_phases("fp,wg") == std::vector<verif::Phase>{verif::Phase::fp, verif::Phase::wg});
  CHECK_THROWS_WITH(parse_phases("fp,,wg"), "unknown phase '' (expected fp, bp, wg or all)");
}

TEST_CASE("the paper's TT layer: every phase searched", "[layer]") {
  const auto spec = verif::parse_layer(kPaperTT, "<paper>");
  SearchOptions opt;
  opt.top = 3;
  const auto r = search_layer(spec, parse_phases("all"), opt);
  REQUIRE(r.phases.size() == 3);
  const auto& fp = r.phases[0];
  REQUIRE(fp.problems.size() == 1);
  // The FP network is the one reference.hpp builds by hand (end ranks of size 1 omitted by verif).
  const uint64_t ref = k_best_trees(make_problem(test::tt_paper_fp()), 1).front().macs;
  CHECK(fp.macs() == ref);
  CHECK(fp.macs() < fp.baseline_macs("input_first"));
  CHECK(fp.baseline_macs("input_first") <= fp.baseline_macs("left_to_right"));
  const auto& wg = r.phases[2];
  CHECK(wg.problems.size() == 6);  // one per core
  uint64_t sum = 0;
  for (const auto& p : wg.problems) {
    sum += p.search.selected().tree.macs;
    CHECK(p.result.substr(0, 2) == "dG");
    CHECK(p.search.problem.size() == 7);  // X, dY and the 5 other cores
  }
  CHECK(wg.macs() == sum);

  const auto j = to_json(r);
  CHECK(j["layer"] == "paper_tt");
  REQUIRE(j["phases"].size() == 3);
  for (const auto& ph : j["phases"]) {
    for (const char* key : {"phase", "macs", "flops", "sequence", "baselines", "search_ms", "problems"}) {
      CHECK(ph.contains(key));
    }
    CHECK(ph["sequence"].size() == ph["problems"].size());
    CHECK(ph["flops"].get<uint64_t>() == 2 * ph["macs"].get<uint64_t>());
    CHECK(ph["baselines"]["left_to_right"].contains("ratio"));
  }
  CHECK(j["phases"][2]["problems"][0]["result"] == "dG1");

  const std::string text = format_layer(r);
  CHECK(text.find("phase wg") != std::string::npos);
  CHECK(text.find("dG6") != std::string::npos);
  const std::string table = summary_table({r});
  CHECK(table.find("| paper_tt | tt | fp | 1 | " + group_digits(ref) + " |") != std::string::npos);
}

TEST_CASE("block-term layer: one network per term", "[layer]") {
  const auto spec = verif::parse_layer(
      "name: bt\nformat: bt\nbatch: 4\nout_modes: [2, 3]\nin_modes: [3, 2]\nranks: [2, 2]\nterms: 2\n", "<bt>");
  const auto r = search_layer(spec, parse_phases("fp"), SearchOptions{});
  REQUIRE(r.phases[0].problems.size() == 2);
  CHECK(r.phases[0].problems[1].term == 1);
  CHECK(r.phases[0].problems[1].terms == 2);
  CHECK(format_layer(r).find("Y[1]") != std::string::npos);
}
