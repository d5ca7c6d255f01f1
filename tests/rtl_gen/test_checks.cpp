// Every elaboration check, with the message a generator author sees.
#include <catch2/catch.hpp>

#include "corpus.hpp"
#include "rtl_gen/rtl.hpp"

using namespace fetta::rtl;

namespace {
struct Body : Generator<std::function<void(Module&)>> {
  std::string name = "dut";
  Body(std::function<void(Module&)> f, std::string n = "dut") : Generator(std::move(f)), name(std::move(n)) {}
  std::string generator_name() const override { return "test::Body"; }
  std::string module_name() const override { return name; }
  ParamList params() const override { return {{"name", name}}; }
  void build(Module& m) const override { p(m); }
};

std::shared_ptr<const Module> elaborate(const std::function<void(Module&)>& f) {
  static Design* keep = nullptr;  // modules must outlive the test for emission checks
  delete keep;
  keep = new Design;
  return keep->elaborate(Body(f));
}

// A child with a combinational path from `in` to `out`, for loops through hierarchy.
struct PassThrough : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "test::PassThrough"; }
  std::string module_name() const override { return "pass_through"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    Sig in = m.input("in", UInt(4));
    Sig out = m.output("out", UInt(4));
    out <<= ~in;
  }
};
}  // namespace

TEST_CASE("undriven outputs, wires, registers and instance inputs", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) { m.output("y", UInt(3)); }),
                    Catch::Contains("undriven signal: 'y': output is never driven") && Catch::Contains("test_checks.cpp:"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      m.wire("w", UInt(3));
                      m.output("y", UInt(1)).sig() <<= 0;
                    }),
                    Catch::Contains("undriven signal: 'w': wire is never driven"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig r = m.reg("r", UInt(2), reset_to(0));
                      m.output("y", UInt(2)).sig() <<= r;
                    }),
                    Catch::Contains("'r': register is never assigned"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      InstanceRef u = m.instance(PassThrough(0), "u_pass");
                      m.output("y", UInt(4)).sig() <<= u.io("out").sig();
                    }),
                    Catch::Contains("'u_pass_in': input port 'in' of instance 'u_pass' is not connected"));
}

TEST_CASE("multiple drivers", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig y = m.output("y", UInt(1));
                      y <<= 0;
                      y <<= 1;
                    }),
                    Catch::Contains("multiple drivers: 'y': driven unconditionally twice (first at tests/rtl_gen/test_checks.cpp:"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig c = m.input("c", UInt(1));
                      Sig y = m.output("y", UInt(1));
                      m.when(c, [&] { y <<= 1; });
                      y <<= 0;
                    }),
                    Catch::Contains("unconditional connect overrides the conditional connect"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig a = m.input("a", UInt(1));
                      a <<= 0;
                    }),
                    Catch::Contains("'a': is an input port of this module"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      InstanceRef u = m.instance(PassThrough(0), "u");
                      u.io("in").sig() <<= 0;
                      u.io("out").sig() <<= 0;
                    }),
                    Catch::Contains("'u_out': is driven by an output of instance u"));
}

TEST_CASE("latches: combinational signals assigned on some paths only", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig c = m.input("c", UInt(1));
                      Sig y = m.output("y", UInt(1));
                      m.when(c, [&] { y <<= 1; });
                    }),
                    Catch::Contains("latch: 'y': combinational signal is not assigned on every path"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig s = m.input("s", UInt(2));
                      Sig y = m.output("y", UInt(1));
                      m.switch_on(s).is(0, [&] { y <<= 1; }).is(1, [&] { y <<= 0; });
                    }),
                    Catch::Contains("latch: 'y'"));
  // A default first, an otherwise, or a switch covering every value are all complete.
  CHECK_NOTHROW(elaborate([](Module& m) {
    Sig c = m.input("c", UInt(1)), s = m.input("s", UInt(1));
    Sig y = m.output("y", UInt(1)), z = m.output("z", UInt(1)), w = m.output("w", UInt(1));
    y <<= 0;
    m.when(c, [&] { y <<= 1; });
    m.when(c, [&] { z <<= 1; }).otherwise([&] { z <<= 0; });
    m.switch_on(s).is(0, [&] { w <<= 1; }).is(1, [&] { w <<= 0; });
  }));
}

TEST_CASE("combinational loops, also through instances", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig a = m.wire("a", UInt(4)), b = m.wire("b", UInt(4));
                      a <<= b + 1;
                      b <<= a;
                      m.output("y", UInt(4)).sig() <<= a;
                    }),
                    Catch::Contains("combinational loop: 'a': combinational loop: a <- b <- a"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      InstanceRef u = m.instance(PassThrough(0), "u");
                      u.io("in").sig() <<= u.io("out").sig();
                      m.output("y", UInt(4)).sig() <<= u.io("out").sig();
                    }),
                    Catch::Contains("combinational loop") && Catch::Contains("u_in"));
  // Through a register is fine.
  CHECK_NOTHROW(elaborate([](Module& m) {
    Sig r = m.reg("r", UInt(4), reset_to(0));
    InstanceRef u = m.instance(PassThrough(0), "u");
    u.io("in").sig() <<= r;
    r <<= u.io("out").sig();
    m.output("y", UInt(4)).sig() <<= r;
  }));
}

TEST_CASE("ports, names and hierarchy", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      InstanceRef u = m.instance(PassThrough(0), "u");
                      u.io("inn");
                    }),
                    Catch::Contains("port error: 'u.inn': module 'pass_through' has no port 'inn'; its ports: in, out"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      InstanceRef u = m.instance(PassThrough(0), "u");
                      u.io("in").sig() <<= lit(1, 8);
                    }),
                    Catch::Contains("'u_in': 8-bit value assigned to a 4-bit signal"));
  CHECK_THROWS_WITH(elaborate([](Module& m) { m.input("reg", UInt(1)); }),
                    Catch::Contains("name error: 'reg'") && Catch::Contains("SystemVerilog keyword"));
  CHECK_THROWS_WITH(elaborate([](Module& m) { m.input("9lives", UInt(1)); }),
                    Catch::Contains("must start with a letter"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      m.input("a", UInt(1));
                      m.input("a", UInt(1));
                    }),
                    Catch::Contains("name already used in module 'dut'"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      m.memory("mem", UInt(8), 4).write_port(lit(0, 2), lit(0, 8), lit(1, 1));
                    }),
                    Catch::Contains("'mem': memory has no read port"));
}

TEST_CASE("named constants: names, widths, owners and case labels", "[rtl_gen][checks][errors]") {
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      m.input("S_IDLE", UInt(1));
                      m.constant("S_IDLE", 0, 2);
                    }),
                    Catch::Contains("name already used in module 'dut'"));
  CHECK_THROWS_WITH(elaborate([](Module& m) { m.constant("BIG", 4, 2); }),
                    Catch::Contains("'BIG': the constant 4 does not fit UInt<2>"));
  CHECK_THROWS_WITH(elaborate([](Module& m) { m.constant("WIDE", 0, 65); }), Catch::Contains("widths 1..64"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig s = m.input("s", UInt(2));
                      Sig y = m.output("y", UInt(1));
                      y <<= 0;
                      m.switch_on(s).is(Expr(s), [&] { y <<= 1; });
                    }),
                    Catch::Contains("a case label must be a constant"));
  CHECK_THROWS_WITH(elaborate([](Module& m) {
                      Sig s = m.input("s", UInt(2));
                      Sig y = m.output("y", UInt(1));
                      y <<= 0;
                      m.switch_on(s).is(m.constant("ONE", 1, 3), [&] { y <<= 1; });
                    }),
                    Catch::Contains("case label is 3 bits, the switch subject 2"));
  // A named constant belongs to the module that declares it: another module would not see its
  // localparam.
  Design d;
  Expr outer;
  auto child = [&](Module& m) {
    Sig y = m.output("y", UInt(2));
    y <<= outer;
  };
  auto parent = [&](Module& m) {
    outer = m.constant("K", 1, 2);
    m.output("y", UInt(2)).sig() <<= outer;
    d.elaborate(Body(child, "child"));
  };
  CHECK_THROWS_WITH(d.elaborate(Body(parent, "parent")),
                    Catch::Contains("named constant of module 'parent' used in module 'child'"));
}

TEST_CASE("same parameters give one module definition; a name clash is an error", "[rtl_gen][checks]") {
  Design d;
  auto tree = d.elaborate(corpus::AdderTree({8, 8}));
  // 4 + 2 + 1 adders, but one definition per stage width.
  CHECK(tree->instances().size() == 7);
  CHECK(d.hierarchy(tree->name()).size() == 4);
  CHECK(d.elaborate(corpus::AdderTree({8, 8})) == tree);
  struct Impostor : Body {
    using Body::Body;
    std::string module_name() const override { return "adder_tree_n8_w8"; }
  };
  CHECK_THROWS_WITH(d.elaborate(Impostor([](Module&) {})),
                    Catch::Contains("two different generators/parameter sets map to this module name"));
}
