// PE and CE generators without simulation: parameters and their errors, names, ports,
// determinism, every array size elaborating, and the timing model's formulas on hand-computed
// cases. (The Verilated behaviour is in test_ce_sim.cpp.)
#include <catch2/catch.hpp>

#include <set>
#include <stdexcept>

#include "ce_configs.hpp"
#include "hw/ce/ce.hpp"
#include "hw/ce/ce_timing.hpp"
#include "hw/ce/delay_line.hpp"
#include "hw/pe/pe.hpp"
#include "rtl_gen/rtl.hpp"

using namespace fetta;
using Catch::Matchers::Contains;

namespace {

std::string port_list(const rtl::Module& m) {
  std::string s;
  for (const rtl::PortDecl& p : m.ports()) s += p.name + " ";
  return s;
}

std::set<std::string> leaf_ports(const rtl::Module& m) {
  std::set<std::string> names;
  for (const rtl::PortDecl& p : m.ports())
    for (const rtl::Leaf& l : p.type.leaves()) names.insert(p.name + l.suffix);
  return names;
}

}  // namespace

TEST_CASE("PE and CE module names derive from every parameter", "[ce_gen][pe]") {
  hw::PeParams p;
  CHECK(hw::Pe(p).module_name() == "pe_bf16_wsisos_ib2_ps2_s0");
  p.dtype = arch::DataType::int8;
  p.os = false;
  p.ib_double_buffer = false;
  p.mac_stages = 2;
  CHECK(hw::Pe(p).module_name() == "pe_int8_wsis_ib1_ps2_s2");
  hw::CeParams c;
  c.rows = 2;
  c.cols = 8;
  CHECK(hw::Ce(c).module_name() == "ce_2x8_bf16_wsisos_ib2_ps2_s0");
  // The CMake list of Verilated tops and ce_configs.hpp must agree.
  std::set<std::string> tops;
  for (const auto& cfg : test::ce_test_configs()) tops.insert(cfg.top());
  CHECK(tops.size() == test::ce_test_configs().size());
}

TEST_CASE("PE ports are bundles whose fields follow the built-in dataflows", "[ce_gen][pe]") {
  rtl::Design d;
  auto both = d.elaborate(hw::Pe({}));
  CHECK(leaf_ports(*both) == std::set<std::string>{"row_ia", "row_active", "row_first", "row_last",
                                                   "in_ib_north", "in_ib_west", "in_psum", "ctrl_os",
                                                   "ctrl_ib_shift", "ctrl_ib_from_left", "ctrl_drain", "out_ib",
                                                   "out_psum"});
  hw::PeParams st;
  st.os = false;
  st.ib_double_buffer = false;
  st.dtype = arch::DataType::int16;
  auto stationary = d.elaborate(hw::Pe(st));
  CHECK(leaf_ports(*stationary) == std::set<std::string>{"row_ia", "in_ib_north", "in_ib_west", "in_psum",
                                                         "ctrl_ib_shift", "ctrl_ib_from_left", "out_ib", "out_psum"});
  hw::PeParams os;
  os.ws = os.is = false;
  auto os_only = d.elaborate(hw::Pe(os));
  CHECK(leaf_ports(*os_only) == std::set<std::string>{"row_ia", "row_active", "row_first", "row_last",
                                                      "in_ib_north", "in_psum", "ctrl_drain", "out_ib", "out_psum"});
  INFO(port_list(*os_only));
  // int16: 16-bit operands, 48-bit Psums.
  for (const rtl::PortDecl& port : stationary->ports())
    if (port.name == "out") CHECK(port.type.width() == 16 + 48);
}

TEST_CASE("CE ports follow R, C and the built-in dataflows", "[ce_gen]") {
  rtl::Design d;
  hw::CeParams p;
  p.rows = 2;
  p.cols = 3;
  auto m = d.elaborate(hw::Ce(p));
  const auto ports = leaf_ports(*m);
  for (const char* name : {"ia_0", "ia_1", "ib_top_2", "ib_left_1", "ctrl_os", "ctrl_active",
                           "ctrl_first", "ctrl_last", "ctrl_ib_load", "ctrl_ib_from_left", "out_valid", "out_row",
                           "out_psum_2"})
    CHECK(ports.count(name) == 1);
  CHECK(ports.count("ia_2") == 0);
  CHECK(ports.count("out_psum_3") == 0);
  p.pe.os = false;
  auto st = leaf_ports(*d.elaborate(hw::Ce(p)));
  CHECK(st.count("ctrl_os") == 0);
  CHECK(st.count("ctrl_last") == 0);
  CHECK(st.count("out_row") == 0);
  p.pe.os = true;
  p.pe.ws = p.pe.is = false;
  auto os = leaf_ports(*d.elaborate(hw::Ce(p)));
  CHECK(os.count("ib_left_0") == 0);
  CHECK(os.count("ctrl_ib_load") == 0);
}

TEST_CASE("every array size from 1x1 to 9x9 elaborates, in every variant", "[ce_gen]") {
  // The rtl_gen checks (undriven, multiple drivers, latches, loops) run on every module.
  for (int r = 1; r <= 9; ++r)
    for (int c = 1; c <= 9; ++c) {
      rtl::Design d;
      hw::CeParams p;
      p.rows = r;
      p.cols = c;
      p.pe.dtype = arch::DataType::int8;
      INFO(r << "x" << c);
      REQUIRE_NOTHROW(d.elaborate(hw::Ce(p)));
      p.pe.ib_double_buffer = p.pe.psum_double_buffer = false;
      REQUIRE_NOTHROW(d.elaborate(hw::Ce(p)));
      p.pe.os = false;
      p.pe.mac_stages = 2;
      REQUIRE_NOTHROW(d.elaborate(hw::Ce(p)));
      p.pe.os = true;
      p.pe.ws = p.pe.is = false;
      p.pe.mac_stages = 0;
      REQUIRE_NOTHROW(d.elaborate(hw::Ce(p)));
    }
  rtl::Design d;
  hw::CeParams big;
  big.rows = 16;
  big.cols = 32;
  REQUIRE_NOTHROW(d.elaborate(hw::Ce(big)));
}

TEST_CASE("the generators emit byte-identical RTL when run twice", "[ce_gen]") {
  auto emit = [] {
    rtl::Design d;
    hw::CeParams p;
    p.rows = 3;
    p.cols = 2;
    auto m = d.elaborate(hw::Ce(p));
    std::string all;
    for (const auto& mod : d.hierarchy(m->name())) all += rtl::emit_module(*mod);
    return all;
  };
  CHECK(emit() == emit());
}

TEST_CASE("entry points elaborate the PE and the CE of an architecture configuration", "[ce_gen][pe]") {
  arch::ArchConfig cfg;  // the default: 4x4 bf16, ws/is/os, double-buffered, product registered, two-path adder
  rtl::Design d;
  CHECK(hw::elaborate_pe(d, cfg) == "pe_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk");
  CHECK(hw::elaborate_ce(d, cfg) == "ce_4x4_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk");
  cfg.ce.mac_product_stages = 0;
  cfg.arith.fp32_adder = arch::Fp32Adder::basic;
  CHECK(hw::elaborate_ce(d, cfg) == "ce_4x4_bf16_wsisos_ib2_ps2_s0");  // the combinational MAC
  cfg.ce.rows = 2;
  cfg.ce.cols = 8;
  cfg.dtype = arch::DataType::int16;
  cfg.ce.dataflows = {arch::Dataflow::os};
  cfg.ce.mac_product_stages = 1;
  cfg.arith.fp32_adder = arch::Fp32Adder::two_path;  // no binary32 adder in an int16 CE: not in the name
  CHECK(hw::elaborate_ce(d, cfg) == "ce_2x8_int16_os_ib2_ps2_p1_s0");
}

TEST_CASE("bad parameters are rejected with the field and the allowed values", "[ce_gen][pe]") {
  hw::CeParams p;
  p.rows = 0;
  CHECK_THROWS_WITH(hw::Ce(p), Contains("ce.rows") && Contains("0") && Contains("allowed: 1..256"));
  p.rows = 4;
  p.cols = 0;
  CHECK_THROWS_WITH(hw::Ce(p), Contains("ce.cols") && Contains("allowed: 1..256"));
  p.cols = 257;
  CHECK_THROWS_WITH(hw::Ce(p), Contains("ce.cols: 257"));
  p.cols = 4;

  hw::PeParams pe;
  pe.dtype = static_cast<arch::DataType>(7);
  CHECK_THROWS_WITH(hw::Pe(pe), Contains("pe.dtype") && Contains("allowed: bf16, int8, int16"));
  CHECK_THROWS_WITH(hw::parse_data_type("fp8"), Contains("'fp8'") && Contains("allowed: bf16, int8, int16"));
  CHECK(hw::parse_data_type("int16") == arch::DataType::int16);
  pe = {};
  pe.ws = pe.is = pe.os = false;
  CHECK_THROWS_WITH(hw::Pe(pe), Contains("pe.dataflows") && Contains("ws, is, os"));
  pe = {};
  pe.mac_stages = -1;
  CHECK_THROWS_WITH(hw::Pe(pe), Contains("pe: mac_stages = -1") && Contains("allowed: 0 (combinational) .. 8"));
  pe.mac_stages = 1;
  CHECK_THROWS_WITH(hw::Pe(pe), Contains("pe.mac_stages: 1 with dataflow os") && Contains("allowed: 0"));
  pe.os = false;
  CHECK_NOTHROW(hw::Pe(pe));

  arch::ArchConfig cfg;
  cfg.ce.rows = 0;
  rtl::Design d;
  CHECK_THROWS_WITH(hw::elaborate_ce(d, cfg), Contains("ce.rows"));
  cfg.ce.rows = 4;
  cfg.ce.mac_pipeline_stages = 2;
  CHECK_THROWS_WITH(hw::elaborate_pe(d, cfg), Contains("pe.mac_stages"));

  CHECK_THROWS_WITH(hw::DelayLine({0, 1, false}), Contains("width = 0") && Contains("allowed: 1..4096"));
  CHECK_THROWS_WITH(hw::DelayLine({8, 0, false}), Contains("depth = 0") && Contains("allowed: 1..4096"));
}

TEST_CASE("strategies: names, combinations and dataflows the CE must have built in", "[ce_gen]") {
  std::set<std::string> names;
  for (const hw::Strategy& s : hw::all_strategies()) {
    names.insert(hw::to_string(s));
    CHECK(hw::parse_strategy(hw::to_string(s)) == s);
    CHECK_NOTHROW(hw::validate(s));
  }
  CHECK(names == std::set<std::string>{"ws_top", "ws_left", "is_top", "is_left", "os_a", "os_b"});
  CHECK_THROWS_WITH(hw::parse_strategy("ws_diag"),
                    Contains("'ws_diag'") && Contains("allowed: ws_top, ws_left, is_top, is_left, os_a, os_b"));
  using arch::Dataflow;
  CHECK_THROWS_WITH(hw::validate(hw::Strategy{Dataflow::os, hw::IbPath::left, hw::IaRole::a}),
                    Contains("allowed ib_path: top"));
  CHECK_THROWS_WITH(hw::validate(hw::Strategy{Dataflow::ws, hw::IbPath::top, hw::IaRole::b}), Contains("IA must be A"));
  CHECK_THROWS_WITH(hw::validate(hw::Strategy{Dataflow::is, hw::IbPath::top, hw::IaRole::a}), Contains("IA must be B"));

  hw::CeParams st;
  st.pe.os = false;
  CHECK_THROWS_WITH(hw::map_gemm(st, hw::parse_strategy("os_a"), {4, 4, 4}),
                    Contains("dataflow os is not built into this CE") && Contains("wsis"));
  hw::CeParams ws_only;
  ws_only.pe.is = ws_only.pe.os = false;
  CHECK_THROWS_WITH(hw::map_gemm(ws_only, hw::parse_strategy("is_left"), {4, 4, 4}),
                    Contains("dataflow is is not built"));
  CHECK_THROWS_WITH(hw::map_gemm(hw::CeParams{}, hw::parse_strategy("ws_top"), {4, 0, 4}),
                    Contains("K=0") && Contains("allowed: every dimension >= 1"));
}

TEST_CASE("timing model: hand-computed cycle counts", "[ce_gen]") {
  hw::CeParams c44;  // 4x4, double-buffered, s = 1
  const hw::GemmShape g64{64, 64, 64};
  // Stationary: load + (folds-1)*max(T, load) + R*s + T; 256 folds of T = 64.
  CHECK(hw::ce_timing(c44, hw::parse_strategy("ws_top"), g64).total == 4 + 255 * 64 + 4 + 64);
  CHECK(hw::ce_timing(c44, hw::parse_strategy("is_left"), g64).total == 16392);
  // OS: (folds-1)*max(K, R) + K + 2R - 1.
  CHECK(hw::ce_timing(c44, hw::parse_strategy("os_a"), g64).total == 255 * 64 + 64 + 7);
  // Short folds are limited by the load (stationary) or the drain (os).
  const hw::GemmShape small{2, 8, 8};  // ws: T = 2, 2x2 folds
  CHECK(hw::ce_timing(c44, hw::parse_strategy("ws_top"), small).period == 4);
  CHECK(hw::ce_timing(c44, hw::parse_strategy("os_a"), small).period == 8);
  CHECK(hw::ce_timing(c44, hw::parse_strategy("os_a"), {8, 2, 8}).period == 4);
  hw::CeParams c28;
  c28.rows = 2;
  c28.cols = 8;
  CHECK(hw::ce_timing(c28, hw::parse_strategy("ws_top"), g64).load == 2);
  CHECK(hw::ce_timing(c28, hw::parse_strategy("ws_left"), g64).load == 8);
  // Single buffers: the next load waits for the last IA, the next OS fold for the drain.
  hw::CeParams sb = c44;
  sb.pe.ib_double_buffer = sb.pe.psum_double_buffer = false;
  CHECK(hw::ce_timing(sb, hw::parse_strategy("ws_top"), g64).period == 64 - 1 + 4);
  CHECK(hw::ce_timing(sb, hw::parse_strategy("os_b"), g64).period == 64 + 4 - 1);
  // A pipelined MAC skews rows by s = stages + 1: a top load takes 1 + (R-1)*s cycles.
  hw::CeParams piped = c44;
  piped.pe.os = false;
  piped.pe.mac_stages = 2;
  const auto t = hw::ce_timing(piped, hw::parse_strategy("ws_top"), {5, 4, 4});
  CHECK(t.load == 1 + 3 * 3);
  CHECK(t.total == 10 + 4 * 3 + 5);
}
