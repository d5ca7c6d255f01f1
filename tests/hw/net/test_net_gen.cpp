// The network generators without simulation: parameters, error messages, names, latency,
// structure, determinism and the `fetta gen` entry points.
#include <catch2/catch.hpp>

#include <algorithm>

#include "hw/net/net.hpp"

using namespace fetta;
using namespace fetta::hw;

namespace {

std::string emit(const rtl::GeneratorBase& g) {
  rtl::Design d;
  return rtl::emit_module(*d.elaborate(g));
}

// A reduction network's parameters: the adder, the first add level and gating at their defaults.
RedNetParams red(int lanes, RedElem elem, int elems_per_bank, int pipeline_every, FpAdderChoice adder = {}) {
  RedNetParams p;
  p.lanes = lanes;
  p.elem = elem;
  p.elems_per_bank = elems_per_bank;
  p.pipeline_every = pipeline_every;
  p.adder = adder;
  return p;
}

bool has_signal(const rtl::Module& m, const std::string& name) {
  return std::any_of(m.signals().begin(), m.signals().end(), [&](const auto& s) { return s->name == name; });
}

}  // namespace

TEST_CASE("DistNet: names, latency, ports and structure", "[gen_dist]") {
  DistNetParams p;  // the default: 64 lanes, 16-bit, T = 4, both control sets, combinational
  CHECK(DistNet(p).module_name() == "dist_net_n64_w16_t4_both_p0");
  CHECK(dist_net_latency(p) == 0);
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 1}) == 7);
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 2}) == 3);
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 7}) == 1);
  CHECK(dist_net_latency({8, 16, 2, DistControlPorts::full, 3}) == 1);
  // The output register adds a cycle, unless the pipeline already ends on a register.
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 0, true}) == 1);
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 2, true}) == 4);
  CHECK(dist_net_latency({64, 16, 4, DistControlPorts::both, 7, true}) == 1);
  CHECK(DistNet({64, 16, 4, DistControlPorts::both, 0, true}).module_name() == "dist_net_n64_w16_t4_both_p0_o");
  CHECK(DistNet({64, 16, 4, DistControlPorts::both, 7, true}).module_name() == "dist_net_n64_w16_t4_both_p7");

  rtl::Design d;
  auto m = d.elaborate(DistNet({8, 8, 2, DistControlPorts::both, 2}));
  std::vector<std::string> ports;
  for (const auto& port : m->ports()) ports.push_back(port.name);
  CHECK(ports == std::vector<std::string>{"in", "out", "tr_sel", "lvl_sel", "sel_vec", "idx_mask", "tr_en", "ctrl_mode"});
  // Stage outputs tr_<i>, lv<k>_<i>; registers after stages 2 and 4 carry the later controls.
  CHECK(has_signal(*m, "tr_7"));
  CHECK(has_signal(*m, "lv2_0"));
  CHECK(has_signal(*m, "p1_3"));
  CHECK(has_signal(*m, "p1_lv1_full"));
  CHECK(has_signal(*m, "p1_lv2_sel_vec"));
  CHECK(has_signal(*m, "p2_0"));
  CHECK_FALSE(has_signal(*m, "p2_lv2_full"));  // stage 4 is the last: nothing left to carry
  rtl::Design d2;
  auto cheap = d2.elaborate(DistNet({8, 8, 2, DistControlPorts::cheap, 0}));
  ports.clear();
  for (const auto& port : cheap->ports()) ports.push_back(port.name);
  CHECK(ports == std::vector<std::string>{"in", "out", "sel_vec", "idx_mask", "tr_en"});
}

TEST_CASE("DistNet: bad parameters name the field and the allowed values", "[gen_dist]") {
  auto bad = [](DistNetParams p) { return emit(DistNet(p)); };
  CHECK_THROWS_WITH(bad({12, 16, 2, DistControlPorts::full, 0}),
                    "DistNet: lanes = 12: must be a power of two in [2, 4096] (2, 4, 8, ..., 4096)");
  CHECK_THROWS_WITH(bad({64, 16, 3, DistControlPorts::full, 0}),
                    "DistNet: elems_per_bank = 3: must be a power of two in [1, 64] (1, 2, 4, ..., 64)");
  CHECK_THROWS_WITH(bad({8, 16, 4, DistControlPorts::full, 0}),
                    "DistNet: lanes = 8 is smaller than elems_per_bank^2 = 16: the transpose level needs whole 4x4 "
                    "blocks; allowed: lanes >= 16");
  CHECK_THROWS_WITH(bad({64, 16, 4, DistControlPorts::full, 8}),
                    "DistNet: pipeline_every = 8: allowed 0 (combinational) .. 7 (the network has 7 stages)");
  CHECK_THROWS_WITH(bad({64, 0, 4, DistControlPorts::full, 0}), "DistNet: elem_bits = 0: allowed 1 .. 64");
  CHECK_THROWS_WITH(bad({64, 16, 4, static_cast<DistControlPorts>(9), 0}),
                    "DistNet: control: unknown value; allowed: full, cheap, both");
}

TEST_CASE("RedNet: names, latency, switches and structure", "[gen_red]") {
  RedNetParams p;  // the default: 64 lanes, binary32, T = 4, a register after every stage
  CHECK(RedNet(p).module_name() == "red_net_n64_fp32_t4_p1");
  CHECK(red_net_latency(p) == 7);
  CHECK(red_net_latency(red(64, RedElem::int32, 4, 0)) == 0);
  CHECK(red_net_latency(red(16, RedElem::int48, 4, 2)) == 2);
  const FpAdderChoice two_path{Fp32AddArch::two_path, PrefixKind::sklansky};
  CHECK(RedNet(red(64, RedElem::fp32, 4, 1, two_path)).module_name() == "red_net_n64_fp32_t4_p1_twopath_sk");
  CHECK(RedNet(red(64, RedElem::int32, 4, 1, two_path)).module_name() == "red_net_n64_int32_t4_p1");  // no fp32 adder
  rtl::Design d;
  auto m = d.elaborate(RedNet(red(16, RedElem::int32, 4, 1)));
  CHECK(m->instances().size() == 4 * 8);  // log2(N) levels x N/2 switches
  CHECK(d.find("red_switch_int32") != nullptr);
  CHECK(d.find("int_add_w32") != nullptr);  // the arithmetic library's adder
  CHECK(has_signal(*m, "p3_sw_mode_3"));
  CHECK(has_signal(*m, "p4_tr_sel"));
  CHECK(has_signal(*m, "tr_15"));
  rtl::Design d48, dfp;
  d48.elaborate(RedNet(red(4, RedElem::int48, 2, 0)));
  CHECK(d48.find("int_add_w48") != nullptr);
  dfp.elaborate(RedNet(red(4, RedElem::fp32, 2, 0)));
  CHECK(dfp.find("fp32_add_s0") != nullptr);
}

TEST_CASE("RedNet: adder stages lengthen only the levels with adders, and hold their later controls", "[gen_red]") {
  RedNetParams p = red(64, RedElem::fp32, 4, 1);
  p.first_add_level = 2;
  p.adder_stages = 1;
  CHECK(red_net_latency(p) == 7 + 4);  // levels 2..5 add, one more cycle each
  CHECK(RedNet(p).module_name() == "red_net_n64_fp32_t4_p1_a2_s1");
  p.gate_stages = true;
  CHECK(RedNet(p).module_name() == "red_net_n64_fp32_t4_p1_a2_s1_gated");
  rtl::Design d;
  auto m = d.elaborate(RedNet(p));
  CHECK(d.find("red_switch_fp32_s1_gated") != nullptr);
  CHECK(d.find("fp32_add_s1_gated") != nullptr);
  CHECK(d.find("red_switch_route_fp32") != nullptr);  // levels 0 and 1 have no stages
  CHECK(has_signal(*m, "l2_s1_sw_mode_3"));           // level 3's modes wait out level 2's adder
  CHECK(has_signal(*m, "l5_s1_tr_sel"));
  CHECK_FALSE(has_signal(*m, "l1_s1_tr_sel"));  // a level without adders holds nothing
  // An integer network has no adder stages: the parameter does not change it.
  RedNetParams i = red(64, RedElem::int32, 4, 1);
  i.adder_stages = 2;
  CHECK(red_net_latency(i) == 7);
  CHECK(emit(RedNet(i)) == emit(RedNet(red(64, RedElem::int32, 4, 1))));
}

TEST_CASE("RedNet: bad parameters name the field and the allowed values", "[gen_red]") {
  auto bad = [](RedNetParams p) { return emit(RedNet(p)); };
  CHECK_THROWS_WITH(bad(red(48, RedElem::int32, 4, 1)), Catch::Contains("RedNet: lanes = 48: must be a power of two"));
  CHECK_THROWS_WITH(bad(red(4, RedElem::int32, 4, 1)), Catch::Contains("RedNet: lanes = 4 is smaller than elems_per_bank^2 = 16"));
  CHECK_THROWS_WITH(bad(red(16, RedElem::int32, 4, -1)), Catch::Contains("RedNet: pipeline_every = -1"));
  CHECK_THROWS_WITH(bad(red(16, static_cast<RedElem>(5), 4, 1)),
                    "RedNet: elem: unknown element type; allowed: int32, int48, fp32");
  RedNetParams gated = red(16, RedElem::int32, 4, 0);
  gated.gate_stages = true;
  CHECK_THROWS_WITH(bad(gated),
                    Catch::Contains("RedNet: gate_stages needs stages (pipeline_every > 0)"));
  RedNetParams staged = red(16, RedElem::fp32, 4, 1);
  staged.adder_stages = 5;
  CHECK_THROWS_WITH(bad(staged), Catch::Contains("RedNet: adder_stages = 5: allowed 0 .. 4"));
  staged.adder_stages = 1;
  staged.pipeline_every = 0;
  CHECK_THROWS_WITH(bad(staged), Catch::Contains("RedNet: adder_stages needs stages (pipeline_every > 0)"));
}

TEST_CASE("networks: generating twice gives the same text", "[gen_dist][gen_red]") {
  CHECK(emit(DistNet({16, 16, 4, DistControlPorts::both, 2})) == emit(DistNet({16, 16, 4, DistControlPorts::both, 2})));
  CHECK(emit(RedNet(red(16, RedElem::fp32, 4, 1))) == emit(RedNet(red(16, RedElem::fp32, 4, 1))));
}

TEST_CASE("entry points follow the architecture configuration", "[gen_dist][gen_red]") {
  arch::ArchConfig cfg;  // the default: an output register, basic reduction adders over two cycles
  rtl::Design d;
  CHECK(elaborate_dist_net(d, cfg) == "dist_net_n64_w16_t4_both_p0_o");
  CHECK(elaborate_red_net(d, cfg) == "red_net_n64_fp32_t4_p1_a2_s1_gated");
  arch::ArchConfig two_path = cfg;
  two_path.arith.reduction_adder = arch::Fp32Adder::two_path;
  two_path.arith.reduction_adder_stages = 0;
  rtl::Design d1;
  CHECK(elaborate_red_net(d1, two_path) == "red_net_n64_fp32_t4_p1_a2_twopath_sk_gated");
  CHECK(red_net_params(cfg).first_add_level == 2);  // a CE's 4 columns are never summed
  cfg.dtype = arch::DataType::int8;
  cfg.network.dist_pipeline_every = 2;
  CHECK(dist_net_params(cfg).elem_bits == 8);
  CHECK(dist_net_params(cfg).pipeline_every == 2);
  CHECK(red_net_params(cfg).elem == RedElem::int32);
  cfg.dtype = arch::DataType::int16;
  CHECK(red_net_params(cfg).elem == RedElem::int48);
  cfg.dtype = static_cast<arch::DataType>(7);
  CHECK_THROWS_WITH(red_net_params(cfg), "dtype: unknown data type; allowed: bf16, int8, int16");
  arch::ArchConfig small;
  small.network.lanes = 8;  // fewer lanes than one 4x4 transpose block
  rtl::Design d2;
  CHECK_THROWS_WITH(elaborate_dist_net(d2, small), Catch::Contains("lanes = 8 is smaller than elems_per_bank^2 = 16"));
  CHECK_THROWS_WITH(elaborate_red_net(d2, small), Catch::Contains("lanes = 8 is smaller than elems_per_bank^2 = 16"));
}
