// The whole search of one network: stage 1 + stage 2 + baselines, and its reports.
#include <catch2/catch.hpp>

#include "mapper/einsum.hpp"
#include "mapper/search.hpp"
#include "reference.hpp"

using namespace fetta::mapper;

TEST_CASE("search of the paper's TT layer (FP)", "[search]") {
  const auto net = test::tt_paper_fp();
  SearchOptions opt;
  opt.top = 6;
  const auto r = search_network(net, opt);
  REQUIRE(r.candidates.size() == 6);
  CHECK(r.selected().macs_rank == 0);
  CHECK(r.selected().tree.macs == r.optimum_macs);
  const uint64_t l2r = r.baseline("left_to_right").tree.macs;
  WARN("paper TT FP: optimum " << r.optimum_macs << " MACs, left-to-right " << l2r << ", input-first "
                               << r.baseline("input_first").tree.macs);
  CHECK(r.optimum_macs < l2r);
  CHECK(r.optimum_macs <= r.baseline("input_first").tree.macs);
  for (size_t i = 1; i < r.candidates.size(); ++i) {
    CHECK(r.candidates[i - 1].tree.macs <= r.candidates[i].tree.macs);
  }
  const auto j = to_json(r);
  for (const char* key : {"macs", "flops", "sequence", "baselines", "search_ms", "candidates", "optimum_macs"}) {
    CHECK(j.contains(key));
  }
  CHECK(j["flops"].get<uint64_t>() == 2 * r.optimum_macs);
  CHECK(j["baselines"]["left_to_right"]["macs"].get<uint64_t>() == l2r);
  CHECK(j["sequence"].size() == 6);
  const std::string text = format_result(r);
  CHECK(text.find("optimum") != std::string::npos);
  CHECK(text.find("left-to-right") != std::string::npos);
  CHECK(text.find("1 MAC = 2 FLOPs") != std::string::npos);
}

TEST_CASE("stage 2 re-ranks the candidates by the chosen metric", "[search]") {
  const auto net = test::tt_paper_fp();
  fetta::arch::ArchConfig cfg;
  AnalyticalModel model(cfg);
  for (Metric m : {Metric::latency, Metric::energy, Metric::edp}) {
    SearchOptions opt;
    opt.top = 8;
    opt.metric = m;
    opt.model = &model;
    const auto r = search_network(net, opt);
    REQUIRE(r.candidates.size() == 8);
    for (size_t i = 1; i < r.candidates.size(); ++i) {
      CHECK(metric_value(*r.candidates[i - 1].cost, m) <= metric_value(*r.candidates[i].cost, m));
    }
    for (const auto& b : r.baselines) CHECK(b.cost.has_value());
    const auto j = to_json(r);
    CHECK(j["metric"] == to_string(m));
    CHECK(j.contains("cycles"));
    CHECK(j["candidates"][0]["steps"].size() == 6);
  }
  SearchOptions bad;
  bad.metric = Metric::latency;
  CHECK_THROWS_WITH(search_network(net, bad), "metric 'latency' needs a hardware cost model");
}

TEST_CASE("einsum matrix chain: known optimum", "[search]") {
  // (AB)C = 10*30*5 + 10*5*60 = 4500; A(BC) = 30*5*60 + 10*30*60 = 27000.
  const auto r = search_network(parse_einsum("ab,bc,cd->ad", "a=10,b=30,c=5,d=60"), SearchOptions{});
  CHECK(r.optimum_macs == 4500);
  CHECK(to_json(r)["sequence"] == nlohmann::json::parse("[[0,1],[0,1]]"));
  CHECK(r.baseline("left_to_right").tree.macs == 4500);
  CHECK(group_digits(1234567) == "1,234,567");
  CHECK(group_digits(12) == "12");
  CHECK(group_digits(kSaturated) == "overflow");
  CHECK(format_ratio(13, 4) == "x3.25");
}

TEST_CASE("a network whose every tree overflows is an error", "[search]") {
  const int64_t big = int64_t{1} << 40;
  const auto net = test::network({{"A", {"a", "b"}}, {"B", {"b", "c"}}}, {"a", "c"}, {{"a", big}, {"b", big}, {"c", 2}});
  CHECK_THROWS_AS(search_network(net, SearchOptions{}), SearchError);
}
