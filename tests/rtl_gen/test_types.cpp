// Types and IR building: aggregates flatten predictably, directions follow flips.
#include <catch2/catch.hpp>

#include "rtl_gen/rtl.hpp"

using namespace fetta::rtl;

TEST_CASE("ground, vector and bundle types flatten to named leaves", "[rtl_gen][types]") {
  Type handshake = Bundle({field("data", UInt(8)), field("valid", UInt(1)), flipped("ready", UInt(1))});
  Type t = Bundle({field("req", handshake), field("lanes", Vec(SInt(4), 3))});
  std::vector<Leaf> leaves = t.leaves();
  REQUIRE(leaves.size() == 6);
  CHECK(leaves[0].suffix == "_req_data");
  CHECK(leaves[2].suffix == "_req_ready");
  CHECK(leaves[2].flipped);
  CHECK_FALSE(leaves[1].flipped);
  CHECK(leaves[5].suffix == "_lanes_2");
  CHECK(leaves[5].is_signed);
  CHECK(t.width() == 8 + 1 + 1 + 3 * 4);
  CHECK(t.str() == "Bundle{req: Bundle{data: UInt<8>, valid: UInt<1>, flip ready: UInt<1>}, lanes: Vec<3, SInt<4>>}");
  CHECK(flip(handshake).leaves()[0].flipped);
  CHECK(clog2(1) == 1);
  CHECK(clog2(4) == 2);
  CHECK(clog2(5) == 3);
}

TEST_CASE("bad types are rejected", "[rtl_gen][types]") {
  CHECK_THROWS_WITH(UInt(0), Catch::Contains("width of at least 1"));
  CHECK_THROWS_WITH(Vec(UInt(1), 0), Catch::Contains("at least one element"));
  CHECK_THROWS_WITH(Bundle({field("a", UInt(1)), field("a", UInt(2))}), Catch::Contains("declared twice"));
}

namespace {
struct TwoSided : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "test::TwoSided"; }
  std::string module_name() const override { return "two_sided"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    Type hs = Bundle({field("data", UInt(8)), flipped("ready", UInt(1))});
    Data in = m.input("in", hs);
    Data out = m.output("out", hs);
    connect(out, in);  // data flows in -> out, ready flows out -> in
  }
};
}  // namespace

TEST_CASE("bundle ports get directions from flips and connect both ways", "[rtl_gen][types]") {
  Design d;
  auto m = d.elaborate(TwoSided(0));
  std::vector<std::pair<std::string, SigKind>> ports;
  for (const auto& s : m->signals()) ports.emplace_back(s->name, s->kind);
  REQUIRE(ports.size() == 4);
  CHECK(ports[0] == std::make_pair(std::string("in_data"), SigKind::input));
  CHECK(ports[1] == std::make_pair(std::string("in_ready"), SigKind::output));
  CHECK(ports[2] == std::make_pair(std::string("out_data"), SigKind::output));
  CHECK(ports[3] == std::make_pair(std::string("out_ready"), SigKind::input));
  std::string sv = emit_module(*m);
  CHECK_THAT(sv, Catch::Contains("assign in_ready = out_ready;"));
  CHECK_THAT(sv, Catch::Contains("assign out_data = in_data;"));
}
