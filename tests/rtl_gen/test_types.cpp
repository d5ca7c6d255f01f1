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

namespace {
// A typed view of a handshake bundle, and a parent that reaches its child's ports through Ports
// named once: what hw's interfaces (hw/ports.hpp) are built on.
struct Handshake {
  static Type type(bool with_last) {
    std::vector<Field> f{field("data", UInt(8)), flipped("ready", UInt(1))};
    if (with_last) f.push_back(field("last", UInt(1)));
    return Bundle(f);
  }
  explicit Handshake(const Data& d) : data(d["data"]), ready(d["ready"]), last(d.field_if_any("last")) {}
  Data data, ready, last;
};
struct Sink : Generator<bool> {
  static constexpr Port<Handshake> kIn{"in"};
  using Generator::Generator;
  std::string generator_name() const override { return "test::Sink"; }
  std::string module_name() const override { return p ? "sink_last" : "sink"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    const Handshake in = m.input(kIn, Handshake::type(p));
    in.ready.sig() <<= in.last.valid() ? Expr(in.last.sig()) : lit(1, 1);
    m.output("seen", UInt(8)).sig() <<= in.data.sig();
  }
};
struct Parent : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "test::Parent"; }
  std::string module_name() const override { return "parent"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    InstanceRef s = m.instance(Sink(false), "s");
    connect(s.io_whole(Sink::kIn), m.input("in", Handshake::type(false)));
    CHECK(s.io(Sink::kIn).data.sig().width() == 8);  // the typed view of the same port
    m.output("seen", UInt(8)).sig() <<= s.io("seen").sig();
  }
};
}  // namespace

TEST_CASE("a Port named once gives typed views on both sides; an absent field is an empty handle", "[rtl_gen][types]") {
  Design d;
  auto m = d.elaborate(Parent(0));
  std::string sv = emit_module(*m);
  // The parent's ports reach the instance's through the instance's signals `s_<port>`.
  CHECK_THAT(sv, Catch::Contains("assign s_in_data = in_data;"));
  CHECK_THAT(sv, Catch::Contains("assign in_ready = s_in_ready;"));
  CHECK_THAT(sv, Catch::Contains(".in_ready (s_in_ready)"));
  Design d2;
  auto with_last = d2.elaborate(Sink(true));
  CHECK_THAT(emit_module(*with_last), Catch::Contains("assign in_ready = in_last;"));
  CHECK_FALSE(Data{}.valid());
  CHECK_THROWS_WITH(Data{}.sig(), Catch::Contains("no such field"));
}
