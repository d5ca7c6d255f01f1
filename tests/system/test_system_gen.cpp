// The accelerator top and controller generators: parameter checks and emission.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "hw/sys/system.hpp"
#include "hw/top.hpp"
#include "rtl_gen/emit.hpp"
#include "shipped_config.hpp"

using namespace fetta;
using fetta::test::cfg_named;
using Catch::Matchers::Contains;

TEST_CASE("Configurations the whole accelerator rejects", "[system_gen]") {
  arch::ArchConfig c = cfg_named("default");
  c.ce.dataflows = {arch::Dataflow::os};
  CHECK_THROWS_WITH(arch::validate(c), Contains("ce.dataflows") && Contains("contains ws"));
  c = cfg_named("default");
  c.ce.count = 12;
  CHECK_THROWS_WITH(arch::validate(c), Contains("ce.count: 12 is not allowed; allowed: a power of two"));
  c = cfg_named("default");
  c.ce.count = 32;
  CHECK_THROWS_WITH(arch::validate(c), Contains("network.lanes: 64 lanes cannot feed 32 CEs x 4 rows"));
  c = cfg_named("ce4x4_x4");
  c.ce.cols = 8;
  CHECK_THROWS_WITH(arch::validate(c), Contains("cannot take 4 CEs x 8 columns"));
  c = cfg_named("default");
  c.ce.rows = 3;
  CHECK_THROWS_WITH(arch::validate(c), Contains("ce.rows: 3 is not allowed; allowed: a power of two"));
  // Every part refuses what the top refuses (a lone PE or memory used to build from these).
  c = cfg_named("default");
  c.memory.unified_depth = 2;
  for (const char* part : {"pe", "unified_memory", "top"}) {
    INFO(part);
    rtl::Design d;
    CHECK_THROWS_WITH(hw::elaborate_part(d, c, part), Contains("memory.unified_depth: 2 is not allowed"));
  }
}

TEST_CASE("The top of every system-test configuration elaborates deterministically", "[system_gen]") {
  for (const char* name : {"default", "default_int16", "ce4x4_x4", "ce4x4_x4_int16", "ce4x4_x4_int8", "ce2x4_x8", "ce2x4_x8_int16",
                           "baseline_tpu", "baseline_hier"}) {
    INFO(name);
    rtl::Design d1, d2;
    const std::string top = hw::elaborate_part(d1, cfg_named(name), "top");
    CHECK(top.rfind("fetta_top_", 0) == 0);
    CHECK(hw::elaborate_part(d2, cfg_named(name), "top") == top);
    REQUIRE(d1.modules().size() == d2.modules().size());
    for (size_t i = 0; i < d1.modules().size(); ++i) CHECK(rtl::emit_module(*d1.modules()[i]) == rtl::emit_module(*d2.modules()[i]));
  }
  rtl::Design d;
  CHECK(hw::elaborate_part(d, cfg_named("default"), "top") == "fetta_top_bf16_g16_4x4_n64_d4096_a512");
  const std::string ctl = hw::elaborate_part(d, cfg_named("default"), "controller");
  CHECK(ctl == "controller_g16_4x4_n64_b16_a11_q9_c2_d18_os_r3");
  // CEs without OS: no os field, so no OS logic or ports in the controller.
  rtl::Design d2;
  const std::string ws_only = hw::elaborate_part(d2, cfg_named("ce2x4_x8"), "controller");
  CHECK(ws_only.find("_os") == std::string::npos);
  CHECK(rtl::emit_module(*d2.find(ws_only)).find("ce_os") == std::string::npos);
  REQUIRE(d.find(ctl) != nullptr);
  CHECK(rtl::emit_module(*d.find(ctl)).find("ce_os") != std::string::npos);
}

TEST_CASE("Network topology: butterfly or fixed wiring", "[system_gen]") {
  CHECK_THROWS_WITH(arch::parse_arch_config("network:\n  lanes: 64\n  topology: mesh\n"),
                    Contains("network.topology") && Contains("allowed: butterfly, fixed"));
  const arch::ArchConfig hier = cfg_named("baseline_hier");
  CHECK(hier.network.topology == arch::NetworkTopology::fixed);
  CHECK(arch::system_timing(hier).acc_delay == 1 + 4 + 1);  // no network latency: RAM read, CE column, product
  rtl::Design d;
  CHECK(hw::elaborate_part(d, hier, "top") == "fetta_top_bf16_g16_4x4_n64_d4096_a512_fixed");
  for (const auto& m : d.modules()) {  // no networks in the baselines
    INFO(m->name());
    CHECK(m->name().rfind("dist_net", 0) != 0);
    CHECK(m->name().rfind("red_net", 0) != 0);
  }
}

TEST_CASE("Configurations that generate different tops get different names and hardware ids", "[system_gen]") {
  const arch::ArchConfig base = cfg_named("ce4x4_x4");
  auto name = [](const arch::ArchConfig& c) { return hw::Accelerator(hw::AcceleratorParams{c}).module_name(); };
  CHECK(name(base) == "fetta_top_bf16_g4_4x4_n16_d2048_a256");  // the published variant keeps the short name
  std::vector<arch::ArchConfig> variants;
  for (int i = 0; i < 13; ++i) variants.push_back(base);
  variants[0].ce.dataflows = {arch::Dataflow::ws};
  variants[1].ce.ib_double_buffer = false;
  variants[2].ce.psum_double_buffer = false;
  variants[3].ce.dataflows = {arch::Dataflow::ws};
  variants[3].ce.mac_pipeline_stages = 2;
  variants[4].memory.elems_per_bank = 2;
  variants[4].memory.banks = 8;
  variants[5].network.dist_pipeline_every = 2;
  variants[6].network.topology = arch::NetworkTopology::fixed;
  variants[7].ce.mac_product_stages = 0;
  variants[8].arith.fp32_adder = arch::Fp32Adder::basic;
  variants[9].network.dist_output_register = false;
  variants[10].memory.accum_pipeline = 2;
  variants[11].arith.reduction_adder = arch::Fp32Adder::two_path;
  variants[11].arith.reduction_adder_stages = 0;
  variants[12].arith.reduction_adder_stages = 2;
  std::set<std::string> names{name(base)};
  std::set<uint32_t> ids{hw::hardware_id(base)};
  for (const arch::ArchConfig& v : variants) {
    INFO(name(v));
    CHECK(names.insert(name(v)).second);
    CHECK(ids.insert(hw::hardware_id(v)).second);
  }
  CHECK(name(variants[3]) == "fetta_top_bf16_g4_4x4_n16_d2048_a256_ws_s2");
  CHECK(name(variants[8]) == "fetta_top_bf16_g4_4x4_n16_d2048_a256_basic");
  CHECK(name(variants[11]) == "fetta_top_bf16_g4_4x4_n16_d2048_a256_red_twopath_sk_s0");
}

TEST_CASE("Configurations whose RTL differs never share a top name or hardware id", "[system_gen]") {
  // Every module's text of a configuration's top, hashed: what "the same RTL" means.
  auto rtl_of = [](const arch::ArchConfig& c) {
    rtl::Design d;
    (void)hw::elaborate_part(d, c, "top");
    std::string all;
    for (const auto& m : d.modules()) all += rtl::emit_module(*m);
    return rtl::sha256_hex(all);
  };
  auto name = [](const arch::ArchConfig& c) { return hw::Accelerator(hw::AcceleratorParams{c}).module_name(); };
  const arch::ArchConfig base = cfg_named("ce4x4_x4");
  std::vector<arch::ArchConfig> variants(9, base);
  variants[0].dram.bandwidth_gbps = 51.2;  // the host port follows the DRAM's bytes per cycle
  variants[1].dram.bandwidth_gbps = 3.2;
  variants[2].clock_mhz = 250;
  variants[3].clock_mhz = 2000;
  variants[4].dram.latency_ns = 10;  // the bench's, not the RTL's
  variants[5].dram.capacity_mb = 1024;
  variants[6].memory.store_reorder = false;  // the compiler's policy: the same RTL (TPU-Offchip)
  variants[7].dtype = arch::DataType::int8;
  variants[8].dtype = arch::DataType::int8;
  variants[8].dram.bandwidth_gbps = 51.2;
  std::map<std::string, std::string> rtl_by_name{{name(base), rtl_of(base)}};
  std::map<std::string, std::string> name_by_rtl{{rtl_of(base), name(base)}};
  for (const arch::ArchConfig& v : variants) {
    const std::string n = name(v), r = rtl_of(v);
    INFO(n << " (host port " << arch::host_port_banks(v) << " banks)");
    if (const auto it = rtl_by_name.find(n); it != rtl_by_name.end()) CHECK(it->second == r);  // one name, one RTL
    if (const auto it = name_by_rtl.find(r); it != name_by_rtl.end()) CHECK(it->second == n);  // and one RTL, one name
    CHECK((n == name(base)) == (hw::hardware_id(v) == hw::hardware_id(base)));
    rtl_by_name.emplace(n, r);
    name_by_rtl.emplace(r, n);
  }
  CHECK(name(variants[0]) == name(base));          // all 4 banks a cycle already: the same port, the same RTL
  CHECK(name(variants[1]) == name(base) + "_h1");  // tagged only where the port differs from the default DRAM's and clock's
  CHECK(name(variants[4]) == name(base));
}
