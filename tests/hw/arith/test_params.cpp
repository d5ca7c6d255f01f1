// Parameters of the arithmetic generators: bad values are refused with a message naming the
// field and the allowed values; module names and ports are stable; pipeline cuts are balanced;
// the data-type factory picks the right MAC; generation is deterministic.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "arch/config.hpp"
#include "hw/arith/arith.hpp"

using namespace fetta;
using namespace fetta::hw;
using Catch::Matchers::Contains;

namespace {

// Port name -> (width, signed) of a generator's module.
std::map<std::string, std::pair<int, bool>> ports_of(const rtl::GeneratorBase& g) {
  rtl::Design d;
  auto m = d.elaborate(g);
  std::map<std::string, std::pair<int, bool>> ports;
  for (const auto& p : m->ports()) ports[p.name] = {p.type.width(), p.type.is_signed()};
  return ports;
}

std::string emit_all(const rtl::GeneratorBase& g) {
  rtl::Design d;
  auto top = d.elaborate(g);
  std::string text;
  for (const auto& m : d.hierarchy(top->name())) text += rtl::emit_module(*m);
  return text;
}

}  // namespace

TEST_CASE("bad arithmetic parameters name the field and the allowed values", "[arith_params]") {
  REQUIRE_THROWS_WITH(Bf16Mul({0, 7, 23}), Contains("exp_bits = 0") && Contains("allowed: 2..11"));
  REQUIRE_THROWS_WITH(Bf16Mul({8, 0, 23}), Contains("man_bits = 0") && Contains("allowed: 1..23"));
  REQUIRE_THROWS_WITH(Bf16Mul({8, 7, 14}), Contains("out_man_bits = 14") && Contains("allowed: 15..52"));
  REQUIRE_THROWS_WITH(Fp32Add({-1, 0}), Contains("stages = -1") && Contains("allowed: 0 (combinational) .. 16"));
  REQUIRE_THROWS_WITH(Fp32Add({2, -3}), Contains("lead_levels = -3") && Contains("allowed: 0..64"));
  REQUIRE_THROWS_WITH(FpMac({-1}), Contains("FpMac: stages = -1") && Contains("allowed: 0 (combinational) .. 8"));
  REQUIRE_THROWS_WITH(IntMac({12, 32, 0}), Contains("operand_bits = 12") && Contains("allowed: 8, 16"));
  REQUIRE_THROWS_WITH(IntMac({16, 24, 0}),
                      Contains("acc_bits = 24 is narrower than the 32-bit product") && Contains("allowed: 32..64"));
  REQUIRE_THROWS_WITH(IntMac({8, 65, 0}), Contains("acc_bits = 65") && Contains("allowed: 16..64"));
  REQUIRE_THROWS_WITH(IntMac({8, 32, -2}), Contains("stages = -2") && Contains("allowed: 0 (combinational) .. 8"));
  REQUIRE_THROWS_WITH(IntAdd({1}), Contains("bits = 1") && Contains("allowed: 2..64"));
  REQUIRE_THROWS_WITH(place_cuts({}, 1), Contains("step_levels is empty"));
  REQUIRE_THROWS_WITH(place_cuts({3, 4}, -1), Contains("stages = -1") && Contains("allowed: 0 or more"));
  REQUIRE_THROWS_AS(Fp32Add({17, 0}), std::invalid_argument);
  REQUIRE_THROWS_WITH(Fp32Add({0, 0, static_cast<Fp32AddArch>(5)}),
                      Contains("Fp32Add: arch = 5 is not an adder architecture; allowed: basic, two_path"));
  REQUIRE_THROWS_WITH(Fp32Add({0, 0, Fp32AddArch::two_path, static_cast<PrefixKind>(7)}),
                      Contains("Fp32Add: prefix = 7 is not a prefix adder; allowed: kogge_stone, sklansky, brent_kung"));
  REQUIRE_THROWS_WITH(FpMac({0, static_cast<Fp32AddArch>(-1)}),
                      Contains("FpMac: adder_arch = -1") && Contains("allowed: basic, two_path"));
  REQUIRE_THROWS_WITH(FpMac({0, Fp32AddArch::two_path, static_cast<PrefixKind>(3)}),
                      Contains("FpMac: adder_prefix = 3") && Contains("allowed: kogge_stone, sklansky, brent_kung"));
  REQUIRE_THROWS_WITH(FpMac({0, Fp32AddArch::basic, PrefixKind::sklansky, 5}),
                      Contains("FpMac: product_stages = 5") && Contains("allowed: 0 .. 4"));
  REQUIRE_THROWS_WITH(IntMac({8, 32, 0, -1}), Contains("IntMac: product_stages = -1") && Contains("allowed: 0 .. 4"));
  // One rule for the MAC's stages: the configuration's (arch::limits), which FpMac once put at 16.
  const int over = arch::limits::kMacPipelineStages.hi + 1;
  const std::string range = fmt::format("allowed: 0 (combinational) .. {}", over - 1);
  REQUIRE_THROWS_WITH(FpMac({over}), Contains(fmt::format("FpMac: stages = {}", over)) && Contains(range));
  REQUIRE_THROWS_WITH(IntMac({8, 32, over}), Contains(fmt::format("IntMac: stages = {}", over)) && Contains(range));
  REQUIRE_NOTHROW(FpMac({over - 1}));
  REQUIRE_NOTHROW(IntMac({8, 32, over - 1}));
  REQUIRE_THROWS_WITH(FpMac({0, Fp32AddArch::basic, PrefixKind::sklansky, 0, true}),
                      Contains("FpMac: product_valid needs product_stages > 0"));
  REQUIRE_THROWS_WITH(IntMac({8, 32, 0, 0, true}), Contains("IntMac: product_valid needs product_stages > 0"));
}

TEST_CASE("the data-type factory picks the MAC, its widths and the adder", "[arith_params]") {
  MacChoice bf16 = make_mac(arch::DataType::bf16, 2);
  CHECK(bf16.generator->module_name() == "fp_mac_bf16_fp32_s2");
  CHECK(bf16.operand_bits == 16);
  CHECK(bf16.acc_bits == 32);
  CHECK_FALSE(bf16.is_signed);
  MacChoice i8 = make_mac(arch::DataType::int8);
  CHECK(i8.generator->module_name() == "int_mac_i8_acc32_s0");
  CHECK(i8.is_signed);
  MacChoice i16 = make_mac(arch::DataType::int16, 1);
  CHECK(i16.generator->module_name() == "int_mac_i16_acc48_s1");
  CHECK(i16.acc_bits == 48);
  for (auto t : {arch::DataType::bf16, arch::DataType::int8, arch::DataType::int16})
    CHECK(mac_accumulator_bits(t) == arch::accumulator_bits(t));
  CHECK(make_adder(arch::DataType::bf16, 3)->module_name() == "fp32_add_s3");
  CHECK(make_adder(arch::DataType::int16)->module_name() == "int_add_w48");
  const auto bogus = static_cast<arch::DataType>(7);
  REQUIRE_THROWS_WITH(make_mac(bogus), Contains("dtype: unknown data type 7; allowed: bf16, int8, int16"));
  REQUIRE_THROWS_WITH(mac_accumulator_bits(bogus), Contains("allowed: bf16, int8, int16"));
  REQUIRE_THROWS_WITH(make_adder(bogus), Contains("allowed: bf16, int8, int16"));
  REQUIRE_THROWS_WITH(make_mac(arch::DataType::int8, -1), Contains("stages = -1"));
  REQUIRE_THROWS_WITH(make_adder(arch::DataType::int8, 2), Contains("stages = 2") && Contains("allowed: 0"));
}

TEST_CASE("module names and ports other generators instantiate by name", "[arith_params]") {
  using P = std::map<std::string, std::pair<int, bool>>;
  CHECK(Bf16Mul({}).module_name() == "fp_mul_e8m7_o23");
  CHECK(ports_of(Bf16Mul({})) == P{{"a", {16, false}}, {"b", {16, false}}, {"product", {32, false}}});
  CHECK(Fp32Add({}).module_name() == "fp32_add_s0");
  CHECK(Fp32Add({0, 20}).module_name() == "fp32_add_s0");  // no cuts: the lead is irrelevant
  CHECK(Fp32Add({2, 16}).module_name() == "fp32_add_s2_lead16");
  CHECK(ports_of(Fp32Add({})) == P{{"a", {32, false}}, {"b", {32, false}}, {"sum", {32, false}}});
  // The architecture and prefix kind are in the name; the prefix of a basic adder is ignored.
  constexpr auto two_path = Fp32AddArch::two_path;
  CHECK(Fp32Add({0, 0, two_path, PrefixKind::sklansky}).module_name() == "fp32_add_twopath_sk_s0");
  CHECK(Fp32Add({2, 16, two_path, PrefixKind::brent_kung}).module_name() == "fp32_add_twopath_bk_s2_lead16");
  CHECK(Fp32Add({0, 0, Fp32AddArch::basic, PrefixKind::kogge_stone}).module_name() == "fp32_add_s0");
  CHECK(Fp32Add({}).params() == rtl::ParamList{{"stages", "0"}, {"lead_levels", "0"}});
  CHECK(Fp32Add({1, 0, two_path, PrefixKind::kogge_stone}).params() ==
        rtl::ParamList{{"arch", "two_path"}, {"prefix", "kogge_stone"}, {"stages", "1"}, {"lead_levels", "0"}});
  CHECK(emit_all(Fp32Add({0, 0, Fp32AddArch::basic, PrefixKind::brent_kung})) == emit_all(Fp32Add({})));
  CHECK(ports_of(Fp32Add({0, 0, two_path})) == ports_of(Fp32Add({})));
  CHECK(ports_of(Fp32Add({3, 0, two_path})) == ports_of(Fp32Add({3, 0})));
  CHECK(FpMac({0, two_path, PrefixKind::kogge_stone}).module_name() == "fp_mac_bf16_fp32_twopath_ks_s0");
  CHECK(FpMac({3, Fp32AddArch::basic, PrefixKind::brent_kung}).module_name() == "fp_mac_bf16_fp32_s3");
  CHECK(FpMac({}).params() == rtl::ParamList{{"stages", "0"}});
  // Product stages: the product alone registered, acc late (the PE's MAC; docs/arith.md).
  CHECK(FpMac({0, two_path, PrefixKind::sklansky, 1}).module_name() == "fp_mac_bf16_fp32_twopath_sk_p1_s0");
  CHECK(FpMac({0, Fp32AddArch::basic, PrefixKind::sklansky, 2}).module_name() == "fp_mac_bf16_fp32_p2_s0");
  CHECK_FALSE(FpMac({1, Fp32AddArch::basic, PrefixKind::sklansky, 1}).product_registered());  // no acc_s1
  CHECK(IntMac({8, 32, 0, 1}).module_name() == "int_mac_i8_acc32_p1_s0");
  // With `valid`: the product registers on gated clocks, a valid bit along the stages.
  CHECK(FpMac({0, two_path, PrefixKind::sklansky, 1, true}).module_name() == "fp_mac_bf16_fp32_twopath_sk_p1v_s0");
  CHECK(IntMac({8, 32, 0, 2, true}).module_name() == "int_mac_i8_acc32_p2v_s0");
  {
    const std::string sv = emit_all(IntMac({8, 32, 0, 2, true}));
    CHECK(sv.find("product_valid_p1") != std::string::npos);  // the second stage's enable
    CHECK(ports_of(IntMac({8, 32, 0, 2, true})).count("valid") == 1);
    CHECK(ports_of(IntMac({8, 32, 0, 2})).count("valid") == 0);
  }
  CHECK(IntMac({8, 32, 0, 1}).params() ==
        rtl::ParamList{{"operand_bits", "8"}, {"acc_bits", "32"}, {"product_stages", "1"}, {"stages", "0"}});
  {
    rtl::Design d;
    auto m = d.elaborate(Fp32Add({3, 0}));
    CHECK(m->clock() != nullptr);
    CHECK(m->reset() == nullptr);  // datapath registers have no reset
    CHECK(d.elaborate(Fp32Add({0, 0}))->clock() == nullptr);  // combinational: no clock port
  }
  CHECK(ports_of(FpMac({})) == P{{"a", {16, false}}, {"b", {16, false}}, {"acc", {32, false}}, {"out", {32, false}}});
  CHECK(ports_of(Fp32ToBf16({})) == P{{"in", {32, false}}, {"out", {16, false}}});
  CHECK(ports_of(IntMac({16, 48, 0})) ==
        P{{"a", {16, true}}, {"b", {16, true}}, {"acc", {48, true}}, {"out", {48, true}}});
  CHECK(ports_of(IntAdd({48})) == P{{"a", {48, true}}, {"b", {48, true}}, {"sum", {48, true}}});
}

TEST_CASE("register stages go where the deepest segment is shallowest", "[arith_params]") {
  const std::vector<int> levels = Fp32Add::step_levels();
  int total = 0;
  for (int l : levels) total += l;
  CHECK(place_cuts(levels, 0) == std::vector<int>{0, 0, 0, 0, 0});
  CHECK(deepest_segment(levels, place_cuts(levels, 0)) == total);
  // Each added stage never makes the deepest segment deeper, and beats any single alternative.
  int prev = total;
  for (int s = 1; s <= 4; ++s) {
    const auto cuts = place_cuts(levels, s);
    int placed = 0;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) placed += cuts[i];
    CHECK(placed == s);
    CHECK(cuts.back() == 0);
    const int depth = deepest_segment(levels, cuts);
    CHECK(depth <= prev);
    CHECK(depth >= (total + s) / (s + 1));  // cannot beat an even split
    prev = depth;
  }
  CHECK(place_cuts(levels, 6) == std::vector<int>{1, 1, 1, 1, 2});  // leftovers at the output
  // A multiplier in front moves the single cut of a 1-stage adder earlier.
  const auto alone = place_cuts(levels, 1), behind_mul = place_cuts(levels, 1, Bf16Mul::kLevels);
  CHECK(std::find(behind_mul.begin(), behind_mul.end(), 1) - behind_mul.begin() <=
        std::find(alone.begin(), alone.end(), 1) - alone.begin());
  // FpMac: one stage stays in the adder; three or more register the product.
  CHECK_FALSE(FpMac({1}).product_registered());
  CHECK(FpMac({1}).adder_stages() == 1);
  CHECK(FpMac({6}).product_registered());
  CHECK(FpMac({6}).adder_stages() == 5);
  // The two-path adder's own measured levels steer its cuts the same way.
  const std::vector<int> fast = Fp32Add::step_levels(Fp32AddArch::two_path);
  REQUIRE(fast.size() == levels.size());
  CHECK(Fp32Add({2, 0, Fp32AddArch::two_path}).cuts() == place_cuts(fast, 2));
  CHECK(Fp32Add({6, 0, Fp32AddArch::two_path}).cuts() == std::vector<int>{1, 1, 1, 1, 2});
  CHECK(FpMac({6, Fp32AddArch::two_path}).product_registered());
  CHECK(FpMac({6, Fp32AddArch::two_path}).adder_stages() == 5);
  CHECK(FpMac({1, Fp32AddArch::two_path}).adder_stages() == 1);
}

TEST_CASE("generation is deterministic and every signal is named", "[arith_params]") {
  std::vector<std::unique_ptr<rtl::GeneratorBase>> gens;
  gens.push_back(std::make_unique<FpMac>(FpMacParams{0}));
  gens.push_back(std::make_unique<FpMac>(FpMacParams{3}));
  gens.push_back(std::make_unique<Bf16Mul>(Bf16MulParams{5, 2, 5}));
  gens.push_back(std::make_unique<IntMac>(IntMacParams{16, 48, 3}));
  gens.push_back(std::make_unique<Fp32ToBf16>(Fp32ToBf16Params{}));
  for (auto kind : {PrefixKind::kogge_stone, PrefixKind::sklansky, PrefixKind::brent_kung}) {
    gens.push_back(std::make_unique<Fp32Add>(Fp32AddParams{0, 0, Fp32AddArch::two_path, kind}));
    gens.push_back(std::make_unique<Fp32Add>(Fp32AddParams{3, 0, Fp32AddArch::two_path, kind}));
  }
  gens.push_back(std::make_unique<FpMac>(FpMacParams{0, Fp32AddArch::two_path, PrefixKind::sklansky}));
  gens.push_back(std::make_unique<FpMac>(FpMacParams{3, Fp32AddArch::two_path, PrefixKind::sklansky}));
  for (const auto& g : gens) {
    const std::string first = emit_all(*g), second = emit_all(*g);
    CHECK(first == second);
    CHECK(first.find("_t0") == std::string::npos);  // no anonymous temporaries
  }
}
