// The equivalence flow must be able to fail: a simulation view with one output bit flipped for a
// single pair of operands is refused, and the counterexample names that pair.
#include <fmt/core.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "flows/equiv.hpp"
#include "hw/arith/fp_add.hpp"
#include "rtl_gen/emit.hpp"
#include "rtl_gen/rtl.hpp"

namespace {

using namespace fetta;

constexpr uint32_t kPlantedA = 0x3F800001u;  // 1 + 2^-23
constexpr uint32_t kPlantedB = 0xC0000000u;  // -2

struct PlantedParams {};

// The two-path adder's simulation view with bit 0 of the sum inverted for one operand pair.
class PlantedAdder : public rtl::Generator<PlantedParams> {
 public:
  PlantedAdder() : Generator(PlantedParams{}) {}
  std::string generator_name() const override { return "tests::PlantedAdder"; }
  std::string module_name() const override { return "fp32_add_planted"; }
  rtl::ParamList params() const override { return {}; }
  void build(rtl::Module& m) const override {
    rtl::Sig a = m.input("a", rtl::UInt(32));
    rtl::Sig b = m.input("b", rtl::UInt(32));
    rtl::Sig sum = m.output("sum", rtl::UInt(32));
    rtl::InstanceRef add = m.instance(hw::Fp32Add({0, 0, hw::Fp32AddArch::two_path, hw::PrefixKind::sklansky}), "add");
    add.io("a").sig() <<= a;
    add.io("b").sig() <<= b;
    rtl::Sig hit = m.node("planted", (a == rtl::lit(kPlantedA, 32)) & (b == rtl::lit(kPlantedB, 32)));
    sum <<= add.io("sum").sig() ^ rtl::cat({rtl::lit(0, 31), hit});
  }
};

}  // namespace

TEST_CASE("A simulation view that differs in one bit for one operand pair is refused, with that pair", "[equiv]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("fetta_equiv_planted_{}", ::getpid());
  std::filesystem::remove_all(dir);
  rtl::Design synthesis(rtl::View::synthesis), simulation(rtl::View::simulation);
  const hw::Fp32Add adder({0, 0, hw::Fp32AddArch::two_path, hw::PrefixKind::sklansky});
  synthesis.elaborate(adder);
  rtl::write_design(synthesis, adder.module_name(), dir / "synthesis");
  simulation.elaborate(PlantedAdder{});
  rtl::write_design(simulation, "fp32_add_planted", dir / "planted");
  // The unmodified simulation view is the basic datapath under the two-path name.
  REQUIRE(simulation.find(adder.module_name())->simulation_view().find("basic datapath") != std::string::npos);

  const flows::EquivResult r = flows::prove_equivalent({(dir / "synthesis").string(), adder.module_name()},
                                                       {(dir / "planted").string(), "fp32_add_planted"}, 0,
                                                       (dir / "work").string());
  REQUIRE(r.available);
  INFO(r.output);
  CHECK_FALSE(r.proven);
  fmt::print("Yosys' counterexample ({:.1f} s):\n{}", r.seconds, r.counterexample);
  // Yosys prints the model's inputs in hex: the planted pair is the only counterexample.
  CHECK(r.counterexample.find("3f800001") != std::string::npos);
  CHECK(r.counterexample.find("c0000000") != std::string::npos);
  std::filesystem::remove_all(dir);
}
