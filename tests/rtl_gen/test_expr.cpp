// Expression building: width rules are enforced where the expression is written.
#include <catch2/catch.hpp>

#include "rtl_gen/rtl.hpp"

using namespace fetta::rtl;

namespace {
// Runs `body` inside a module under construction and returns the emitted text.
struct Scratch : Generator<std::function<void(Module&)>> {
  using Generator::Generator;
  std::string generator_name() const override { return "test::Scratch"; }
  std::string module_name() const override { return "scratch"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override { p(m); }
};

std::string emit(const std::function<void(Module&)>& body) {
  Design d;
  return emit_module(*d.elaborate(Scratch(body)));
}
}  // namespace

TEST_CASE("operators compute result widths", "[rtl_gen][expr]") {
  emit([](Module& m) {
    Sig a = m.input("a", UInt(8)), b = m.input("b", UInt(8)), s = m.input("s", SInt(6));
    CHECK((a + b).width() == 8);
    CHECK((a * b).width() == 16);
    CHECK((a == b).width() == 1);
    CHECK(cat({a, b, s}).width() == 22);
    CHECK(repl(a.bit(0), 5).width() == 5);
    CHECK(a.bits(6, 3).width() == 4);
    CHECK(a.zext(12).width() == 12);
    CHECK(s.sext(9).is_signed());
    CHECK(a.and_reduce().width() == 1);
    CHECK((a + 3).width() == 8);
    CHECK(select({a, b, a}, b.bits(1, 0)).width() == 8);
    Sig y = m.output("y", UInt(8));
    y <<= a ^ b ^ s.as_unsigned().zext(8);
  });
}

TEST_CASE("width and type mismatches throw with the source line", "[rtl_gen][expr][errors]") {
  emit([](Module& m) {
    Sig a = m.input("a", UInt(8)), c = m.input("c", UInt(4)), s = m.input("s", SInt(8));
    int line = __LINE__ + 1;
    CHECK_THROWS_WITH(a + c, Catch::Contains("width mismatch: 'a': operands of '+' have widths 8 and 4 ('c')") &&
                                 Catch::Contains("test_expr.cpp:" + std::to_string(line)));
    CHECK_THROWS_WITH(a & s, Catch::Contains("operands of '&' are UInt and SInt"));
    CHECK_THROWS_WITH(a + 256, Catch::Contains("the constant does not fit the other operand's type UInt<8>"));
    CHECK_THROWS_WITH(a.bits(8, 0), Catch::Contains("slice [8:0] is outside the 8 bits [7:0]"));
    CHECK_THROWS_WITH(a.zext(4), Catch::Contains("zext to 4 bits would shrink a 8-bit value"));
    CHECK_THROWS_WITH(mux(a, a, a), Catch::Contains("mux select must be UInt<1>, is 8 bits"));
    CHECK_THROWS_WITH(lit(16, 4), Catch::Contains("the constant does not fit UInt<4>"));
    CHECK_THROWS_WITH(select({a, a, a}, a.bit(0)), Catch::Contains("a 1-bit index cannot address 3 items"));
    Sig y = m.output("y", UInt(8));
    CHECK_THROWS_WITH(y <<= c, Catch::Contains("width mismatch: 'y': 4-bit value assigned to a 8-bit signal"));
    CHECK_THROWS_WITH(y <<= s, Catch::Contains("SInt value assigned to a UInt signal"));
    y <<= a;
  });
}

TEST_CASE("constants print sized and signed as SystemVerilog expects", "[rtl_gen][expr]") {
  CHECK(BitVec::from_int(5, 8).to_sv(false) == "8'd5");
  CHECK(BitVec::from_int(-128, 8).to_sv(true) == "8'sh80");
  CHECK(BitVec::from_int(3, 8).to_sv(true) == "8'sd3");
  CHECK(BitVec::from_int(-1, 70).to_sv(false) == "70'h3f_ffff_ffff_ffff_ffff");
  // Decimal below 1024, hex (grouped by four digits) from there: large values are bit patterns.
  CHECK(BitVec::from_int(1023, 16).to_sv(false) == "16'd1023");
  CHECK(BitVec::from_int(1024, 16).to_sv(false) == "16'h400");
  CHECK(BitVec::from_int(0x7fc00000, 32).to_sv(false) == "32'h7fc0_0000");
  CHECK(BitVec::from_int(2047, 11).to_sv(false) == "11'h7ff");
  CHECK(BitVec(308).to_sv(false) == "308'd0");
  CHECK(BitVec::from_int(1, 308).to_sv(false) == "308'd1");
  CHECK(BitVec::from_int(-1, 70).to_sv(true) == "70'sh3f_ffff_ffff_ffff_ffff");
  CHECK(BitVec::from_int(1000, 16).to_sv(true) == "16'sd1000");
  CHECK(BitVec::from_int(5000, 16).to_sv(true) == "16'sh1388");
  CHECK(BitVec::fits(-4, 3, true));
  CHECK_FALSE(BitVec::fits(4, 3, true));
  CHECK_FALSE(BitVec::fits(-1, 8, false));
}
