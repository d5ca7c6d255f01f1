// Sign-off timing's pure parts: the SDC the flow writes, the readers of OpenSTA's reports (on
// text captured from Debian's OpenSTA 2.0.17), the SRAM macros' Liberty, stubs and techmap, and
// the memory flags that decide which memories can be macros. No tool runs here.
#include <catch2/catch.hpp>

#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "flows/fanout_repair.hpp"
#include "flows/liberty.hpp"
#include "flows/sram_macro.hpp"
#include "flows/sta.hpp"
#include "flows/synth_tools.hpp"
#include "flows/yosys_output.hpp"

using namespace fetta::flows;
using namespace fetta::flows::synth;
using Catch::Matchers::Contains;

namespace {

// report_checks -path_delay max -digits 2 of a macro feeding a register (captured).
const char* kReport = R"(Startpoint: mem (rising edge-triggered flip-flop clocked by clk)
Endpoint: acc[15]_reg (rising edge-triggered flip-flop clocked by clk)
Path Group: clk
Path Type: max

  Delay    Time   Description
---------------------------------------------------------
   0.00    0.00   clock clk (rise edge)
   0.00    0.00   clock network delay (ideal)
   0.00    0.00 ^ mem/clk (fetta_sram_w16_d16_1r1w)
 218.00  218.00 v mem/rd0_data[6] (fetta_sram_w16_d16_1r1w)
  31.74  249.74 ^ _0611_/Y (NAND2xp33_ASAP7_75t_R)
  25.05  274.80 v _0612_/Y (XOR2xp5_ASAP7_75t_R)
  17.28  750.70 ^ _0970_/Y (AOI21xp5_ASAP7_75t_R)
   0.00  750.70 ^ acc[15]_reg/D (DFFHQNx1_ASAP7_75t_R)
         750.70   data arrival time

   0.00 1000.00   clock clk (rise edge)
   0.00 1000.00   clock network delay (ideal)
   0.00 1000.00   clock reconvergence pessimism
        1000.00 ^ acc[15]_reg/CLK (DFFHQNx1_ASAP7_75t_R)
 -21.65  978.35   library setup time
         978.35   data required time
---------------------------------------------------------
         978.35   data required time
        -750.70   data arrival time
---------------------------------------------------------
         227.66   slack (MET)

)";

// report_checks -format end -slack_max 0 with two violations.
const char* kEnd = R"(max_delay/setup group clk

                                     Required  Actual
Endpoint                               Delay   Delay   Slack
------------------------------------------------------------
slow_q[12]_reg/D (DFFHQNx1_ASAP7_75t_R)  228.10  402.55 -174.45 (VIOLATED)
slow_q[11]_reg/D (DFFHQNx1_ASAP7_75t_R)  228.35  390.02 -161.67 (VIOLATED)

)";

MemoryMacro shape(int width, int depth, int rd, int wr) {
  MemoryMacro m;
  m.name = "u.mem";
  m.width = width;
  m.depth = depth;
  m.abits = static_cast<int>(std::ceil(std::log2(depth)));
  m.rd_ports = rd;
  m.wr_ports = wr;
  return m;
}

}  // namespace

TEST_CASE("sta: the worst path of report_checks, stage by stage", "[synth_unit]") {
  auto p = sta::parse_report_checks(kReport);
  REQUIRE(p);
  CHECK(p->startpoint == "mem (rising edge-triggered flip-flop clocked by clk)");
  CHECK(p->endpoint == "acc[15]_reg (rising edge-triggered flip-flop clocked by clk)");
  CHECK(p->path_group == "clk");
  CHECK(p->arrival_ps == Approx(750.70));
  CHECK(p->required_ps == Approx(978.35));
  CHECK(p->slack_ps == Approx(227.66));
  // The launching clock pin, the macro output, three gates and the capturing pin; nothing of the
  // required-time section.
  REQUIRE(p->stages.size() == 6);
  CHECK(p->stages[1].pin == "mem/rd0_data[6]");
  CHECK(p->stages[1].cell == "fetta_sram_w16_d16_1r1w");
  CHECK(p->stages[1].delay_ps == Approx(218.0));
  CHECK(p->stages[1].edge == "v");
  CHECK(p->stages[2].cell == "NAND2xp33_ASAP7_75t_R");
  CHECK(p->stages[2].time_ps == Approx(249.74));
  CHECK(p->stages[5].pin == "acc[15]_reg/D");
  CHECK_FALSE(sta::parse_report_checks("No paths found.\n"));
  CHECK_FALSE(sta::parse_report_checks(""));
}

TEST_CASE("sta: worst slack, wns, tns and violated endpoints", "[synth_unit]") {
  CHECK(sta::parse_metric("worst slack -174.45\n", "worst slack", "x") == Approx(-174.45));
  CHECK(sta::parse_metric("wns -174.45\ntns -3012.50\n", "tns", "x") == Approx(-3012.5));
  CHECK(std::isinf(sta::parse_metric("worst slack INF\n", "worst slack", "x")));
  CHECK_THROWS_WITH(sta::parse_metric("nothing\n", "wns", "sta.log"), Contains("sta.log") && Contains("wns"));
  CHECK(sta::count_violated_endpoints(kEnd) == 2);
  CHECK(sta::count_violated_endpoints("No paths found.\n") == 0);
  sta::StaResult r;
  r.period_ps = 250;
  r.worst_slack_ps = -174.45;
  CHECK(*r.min_period_ps() == Approx(424.45));
  CHECK(*r.fmax_mhz() == Approx(1e6 / 424.45));
  r.worst_slack_ps.reset();
  CHECK_FALSE(r.fmax_mhz());
}

TEST_CASE("sta: the SDC of a clocked and of a combinational module", "[synth_unit]") {
  sta::Constraints c;
  c.clock_port = "clk";
  c.period_ps = 1000;
  c.input_delay_ps = 48.5;
  c.output_delay_ps = 26.2;
  c.driving_cell = "BUFx2_ASAP7_75t_R";
  c.load_ff = 3.898;
  std::string sdc = sta::write_sdc(c);
  CHECK_THAT(sdc, Contains("create_clock -name clk -period 1000.000 [get_ports clk]"));
  CHECK_THAT(sdc, Contains("set_input_delay 48.500 -clock clk [delete_from_list [all_inputs] [get_ports clk]]"));
  CHECK_THAT(sdc, Contains("set_output_delay 26.200 -clock clk [all_outputs]"));
  CHECK_THAT(sdc, Contains("set_driving_cell -lib_cell BUFx2_ASAP7_75t_R"));
  CHECK_THAT(sdc, Contains("set_load 3.898 [all_outputs]"));
  c.clock_port.clear();
  c.period_ps = 2000;
  sdc = sta::write_sdc(c);
  CHECK_THAT(sdc, Contains("create_clock -name clk -period 2000.000\n"));  // virtual: no port
  CHECK_THAT(sdc, Contains("set_input_delay 48.500 -clock clk [all_inputs]"));
  c.period_ps = 0;
  CHECK_THROWS_WITH(sta::write_sdc(c), Contains("period"));
  c.period_ps = 100;
  c.input_delay_ps = 200;
  CHECK_THROWS_WITH(sta::write_sdc(c), Contains("input delay"));
}

TEST_CASE("sta: the script reads every library, the netlist and the SDC", "[synth_unit]") {
  sta::Run run;
  run.liberty = {"/c/comb.lib", "/c/seq.lib", "/w/sram/sram.lib"};
  run.netlist = "/w/netlist.v";
  run.top = "top";
  run.sdc = "/w/constraints.sdc";
  std::string s = sta::sta_script(run);
  CHECK_THAT(s, Contains("read_liberty {/w/sram/sram.lib}"));
  CHECK_THAT(s, Contains("link_design top"));
  CHECK_THAT(s, Contains("read_sdc {/w/constraints.sdc}"));
  CHECK_THAT(s, Contains("report_wns") && Contains("report_tns") && Contains("report_worst_slack"));
  CHECK_THAT(s, Contains("-format end"));
}

TEST_CASE("memory dump: the flags that decide whether a memory can be a macro", "[synth_unit]") {
  std::string dump =
      "  cell $mem_v2 \\ram_e0\n"
      "    parameter \\ABITS 9\n    parameter \\SIZE 512\n    parameter \\WIDTH 32\n"
      "    parameter \\RD_PORTS 1\n    parameter \\WR_PORTS 1\n    parameter \\INIT 16384'x\n"
      "    parameter \\RD_CLK_ENABLE 1'1\n    parameter \\RD_CLK_POLARITY 1'1\n"
      "    parameter \\RD_TRANSPARENCY_MASK 1'0\n    parameter \\RD_WIDE_CONTINUATION 1'0\n"
      "    parameter \\WR_CLK_ENABLE 1'1\n    parameter \\WR_CLK_POLARITY 1'1\n    parameter \\WR_WIDE_CONTINUATION 1'0\n"
      "    connect \\RD_ARST 1'0\n    connect \\RD_SRST 1'0\n"
      "  end\n"
      "  cell $mem_v2 \\regs\n"
      "    parameter \\ABITS 2\n    parameter \\SIZE 4\n    parameter \\WIDTH 8\n"
      "    parameter \\RD_PORTS 2\n    parameter \\WR_PORTS 1\n    parameter \\INIT 32'x\n"
      "    parameter \\RD_CLK_ENABLE 2'01\n    parameter \\RD_TRANSPARENCY_MASK 2'00\n"
      "    connect \\RD_SRST 2'00\n"
      "  end\n"
      "  cell $mem_v2 \\rom\n"
      "    parameter \\ABITS 1\n    parameter \\SIZE 2\n    parameter \\WIDTH 4\n"
      "    parameter \\RD_PORTS 1\n    parameter \\WR_PORTS 1\n    parameter \\INIT 8'10100101\n"
      "    parameter \\RD_TRANSPARENCY_MASK 1'1\n    connect \\RD_SRST \\rst\n"
      "  end\n";
  auto mems = parse_memory_dump(dump);
  REQUIRE(mems.size() == 3);
  CHECK(mems[0].abits == 9);
  CHECK(macro_obstacle(mems[0]).empty());
  CHECK_FALSE(mems[1].sync_read);  // one read port is asynchronous
  CHECK_THAT(macro_obstacle(mems[1]), Contains("asynchronous"));
  CHECK_FALSE(mems[2].read_first);
  CHECK_FALSE(mems[2].plain_read);  // a reset on the read data
  CHECK(mems[2].initialized);
  CHECK_FALSE(macro_obstacle(mems[2]).empty());
}

TEST_CASE("SRAM macros: one cell per shape, a Liberty model, stubs and techmap rules", "[synth_unit]") {
  SramModel model;
  MemoryMacro async = shape(8, 4, 1, 1);
  async.sync_read = false;
  std::vector<MemoryMacro> found{shape(16, 2048, 1, 1), shape(32, 512, 1, 1), shape(16, 2048, 1, 1), async};
  MacroLibrary lib = make_macro_library(found, model);
  REQUIRE(lib.cells.size() == 2);  // the two 2048 x 16 share a cell; the asynchronous one has none
  CHECK(lib.cells[0].cell == "fetta_sram_w16_d2048_1r1w");
  CHECK(lib.cells[1].cell == "fetta_sram_w32_d512_1r1w");
  CHECK(lib.cells[0].area_um2 == Approx(model.area_um2(32768, 1, 1)));

  // The Liberty parses, and each cell has its area, leakage and timed pins.
  LibertyGroup l = parse_liberty(lib.liberty, "sram.lib");
  const LibertyGroup* c = l.child("cell", "fetta_sram_w32_d512_1r1w");
  REQUIRE(c);
  CHECK(std::stod(*c->attribute("area")) == Approx(model.area_um2(16384, 1, 1)).epsilon(1e-4));
  CHECK(std::stod(*c->attribute("cell_leakage_power")) == Approx(model.leakage_nw(16384)).epsilon(1e-4));
  const LibertyGroup* rd = c->child("bus", "rd0_data");
  REQUIRE(rd);
  const LibertyGroup* arc = rd->children("timing")[0];
  CHECK(*arc->attribute("timing_type") == "rising_edge");
  CHECK(table_lookup(*arc->children("cell_rise")[0], 20, 2) == Approx(model.clk_to_q_ps));
  for (const char* in : {"rd0_addr", "wr0_data", "wr0_mask", "wr0_addr"}) {
    const LibertyGroup* b = c->child("bus", in);
    REQUIRE(b);
    CHECK(*b->children("timing")[0]->attribute("timing_type") == "setup_rising");
  }
  CHECK(c->child("pin", "rd0_en"));
  CHECK(c->child("pin", "clk"));

  CHECK_THAT(lib.verilog_stubs, Contains("module fetta_sram_w16_d2048_1r1w (input clk, input rd0_en, input [10:0] "
                                         "rd0_addr, output [15:0] rd0_data"));
  CHECK_THAT(lib.techmap, Contains("SIZE == 2048 && WIDTH == 16 && ABITS == 11"));
  CHECK_THAT(lib.techmap, Contains("fetta_sram_w32_d512_1r1w _TECHMAP_REPLACE_"));
  CHECK_THAT(lib.techmap, Contains("_TECHMAP_FAIL_"));
  // Deterministic.
  CHECK(make_macro_library(found, model).liberty == lib.liberty);
  CHECK(make_macro_library({async}, model).cells.empty());

  auto inst = parse_macro_instances("  cell \\fetta_sram_w16_d2048_1r1w \\bank0.ram_e0_a\n  cell $and $x\n");
  REQUIRE(inst.size() == 1);
  CHECK(inst[0].first == "fetta_sram_w16_d2048_1r1w");
  CHECK(inst[0].second == "bank0.ram_e0_a");
}

TEST_CASE("SRAM model: physical ports are read + write - shared; 1R1RW is the base two-port macro", "[synth_unit]") {
  SramModel model;
  const long long bits = 2048 * 16;
  const double base = model.area_um2(bits, 1, 1);
  CHECK(base == Approx(bits * 0.027 / 0.70));
  CHECK(model.area_um2(bits, 2, 1, 1) == Approx(base));        // 1R1RW
  CHECK(model.area_um2(bits, 1, 1, 1) == Approx(base));        // 1RW alone: not below the base
  CHECK(model.area_um2(bits, 2, 1) == Approx(1.5 * base));     // 2R1W: one port more
  CHECK(model.area_um2(bits, 2, 2, 1) == Approx(1.5 * base));  // 1R1W1RW
  // The two copies of 1R1W the unified memory had against one 1R1RW: half the area.
  CHECK(2 * model.area_um2(bits, 1, 1) == Approx(2 * model.area_um2(bits, 2, 1, 1)));
}

TEST_CASE("SRAM macros: a read and a write port on one address become a read/write port", "[synth_unit]") {
  SramModel model;
  // The shared_port MemBank's lane: read port 0 is port B (its address the write's), read port 1 port A.
  MemoryMacro rw = shape(16, 2048, 2, 1);
  rw.name = "bank0_half0.ram_e0";
  rw.same_address = {true, false};
  rw.never_together = {true, false};
  CHECK(shared_port_pairs(rw) == std::vector<std::pair<int, int>>{{0, 0}});
  // Not merged: the same address but both may be enabled in one cycle, or exclusive enables on
  // different addresses, or no probe data.
  MemoryMacro both = rw;
  both.never_together = {false, false};
  CHECK(shared_port_pairs(both).empty());
  MemoryMacro apart = rw;
  apart.same_address = {false, false};
  apart.never_together = {true, true};
  CHECK(shared_port_pairs(apart).empty());
  MemoryMacro unprobed = rw;
  unprobed.same_address.clear();
  CHECK(shared_port_pairs(unprobed).empty());
  // Two write ports: each takes the first free read port on its address.
  MemoryMacro two = shape(8, 64, 3, 2);
  two.same_address = {true, true, true, false, false, true};  // [i * 2 + j]
  two.never_together = {true, true, true, true, true, true};
  CHECK(shared_port_pairs(two) == std::vector<std::pair<int, int>>{{0, 0}, {2, 1}});

  MemoryMacro named = two;
  named.rw_pairs = shared_port_pairs(two);
  CHECK(macro_cell_name(named) == "fetta_sram_w8_d64_1r2rw");
  named.rw_pairs = {{0, 0}};
  CHECK(macro_cell_name(named) == "fetta_sram_w8_d64_2r1w1rw");
  MemoryMacro single = shape(8, 64, 1, 1);
  single.rw_pairs = {{0, 0}};
  CHECK(macro_cell_name(single) == "fetta_sram_w8_d64_1rw");

  MacroLibrary lib = make_macro_library({rw, both, rw}, model);
  REQUIRE(lib.cells.size() == 2);
  CHECK(lib.cells[0].cell == "fetta_sram_w16_d2048_1r1rw");
  CHECK(lib.cells[0].rw_ports() == 1);
  CHECK(lib.cells[0].physical_ports() == 2);
  CHECK(lib.cells[0].area_um2 == Approx(model.area_um2(32768, 1, 1)));
  CHECK(lib.cells[1].cell == "fetta_sram_w16_d2048_2r1w");
  CHECK(lib.cells[1].area_um2 == Approx(1.5 * model.area_um2(32768, 1, 1)));

  // Liberty: the read/write port's inputs are timed against the clock, its read data after it.
  LibertyGroup l = parse_liberty(lib.liberty, "sram.lib");
  const LibertyGroup* c = l.child("cell", "fetta_sram_w16_d2048_1r1rw");
  REQUIRE(c);
  CHECK(std::stod(*c->attribute("area")) == Approx(model.area_um2(32768, 1, 1)).epsilon(1e-4));
  CHECK(c->child("pin", "rd0_en"));
  CHECK(c->child("pin", "rw0_en"));
  CHECK_FALSE(c->child("bus", "wr0_addr"));
  CHECK_FALSE(c->child("bus", "rd1_addr"));
  for (const char* in : {"rd0_addr", "rw0_addr", "rw0_mask", "rw0_wdata"}) {
    const LibertyGroup* b = c->child("bus", in);
    REQUIRE(b);
    CHECK(*b->children("timing")[0]->attribute("timing_type") == "setup_rising");
  }
  for (const char* out : {"rd0_data", "rw0_data"}) {
    const LibertyGroup* b = c->child("bus", out);
    REQUIRE(b);
    CHECK(*b->attribute("direction") == "output");
    CHECK(table_lookup(*b->children("timing")[0]->children("cell_rise")[0], 20, 2) == Approx(model.clk_to_q_ps));
  }
  CHECK_THAT(lib.verilog_stubs,
             Contains("module fetta_sram_w16_d2048_1r1rw (input clk, input rd0_en, input [10:0] rd0_addr, output [15:0] "
                      "rd0_data, input rw0_en, input [10:0] rw0_addr, output [15:0] rw0_data, input [15:0] rw0_mask, "
                      "input [15:0] rw0_wdata);"));
  // Techmap: the read/write branch first, checking the pair's exclusive enables and shared
  // address drivers; port A (read port 1) is rd0, port B (read port 0 + write port 0) rw0.
  const std::string& t = lib.techmap;
  CHECK_THAT(t, Contains("parameter _TECHMAP_BITS_CONNMAP_ = 0;"));
  CHECK_THAT(t, Contains("RD_PORTS == 2 && WR_PORTS == 1"));
  CHECK_THAT(t, Contains(" && RD_COLLISION_X_MASK[0] == 1'b1 && _TECHMAP_CONNMAP_RD_ADDR_[0 * _TECHMAP_BITS_CONNMAP_ "
                         "+: 11 * _TECHMAP_BITS_CONNMAP_] == _TECHMAP_CONNMAP_WR_ADDR_[0 * _TECHMAP_BITS_CONNMAP_ +: 11 * "
                         "_TECHMAP_BITS_CONNMAP_]"));
  CHECK_THAT(t, Contains("fetta_sram_w16_d2048_1r1rw _TECHMAP_REPLACE_ (.clk(RD_CLK[0]), .rd0_en(RD_EN[1]), "
                         ".rd0_addr(RD_ADDR[21:11]), .rd0_data(RD_DATA[31:16]), .rw0_en(RD_EN[0]), "
                         ".rw0_addr(RD_ADDR[10:0]), .rw0_data(RD_DATA[15:0]), .rw0_mask(WR_EN[15:0]), "
                         ".rw0_wdata(WR_DATA[15:0]));"));
  CHECK(t.find("fetta_sram_w16_d2048_1r1rw _TECHMAP_REPLACE_") < t.find("fetta_sram_w16_d2048_2r1w _TECHMAP_REPLACE_"));
  CHECK(t.find("    if (") < t.find("1r1rw _TECHMAP"));
  CHECK(make_macro_library({rw, both, rw}, model).techmap == t);  // deterministic
  // No read/write port anywhere: the techmap text has no pair condition.
  CHECK(make_macro_library({both}, model).techmap.find("RD_COLLISION_X_MASK[") == std::string::npos);
}

TEST_CASE("address probe: its techmap and its dump set same_address", "[synth_unit]") {
  const std::string probe = address_probe_techmap();
  CHECK_THAT(probe, Contains("(* techmap_celltype = \"$mem_v2\" *)"));
  CHECK_THAT(probe, Contains("_TECHMAP_CONNMAP_RD_ADDR_[i*AW +: AW] == _TECHMAP_CONNMAP_WR_ADDR_[j*AW +: AW]"));
  CHECK_THAT(probe, Contains("fetta_mem_probe #(.RD_PORTS(RD_PORTS), .WR_PORTS(WR_PORTS), .SHARED_ADDR(shared_addr(0)))"));
  // Captured from Yosys 0.23 (dump t:fetta_mem_probe), attributes dropped; a kept hierarchy
  // has two modules with a memory `ram`, listed in the same module order as the memories.
  const std::string dump =
      "\n  cell \\fetta_mem_probe \\ram_e1\n    parameter \\SHARED_ADDR 3'001\n"
      "    parameter signed \\WR_PORTS 1\n    parameter signed \\RD_PORTS 2\n  end\n"
      "\n  cell \\fetta_mem_probe \\ram\n    parameter \\SHARED_ADDR 2'00\n  end\n"
      "\n  cell \\fetta_mem_probe \\ram\n    parameter \\SHARED_ADDR 2'01\n  end\n";
  std::vector<MemoryMacro> found{shape(16, 16, 2, 1), shape(8, 4, 1, 1), shape(8, 4, 1, 1), shape(8, 8, 1, 1)};
  found[0].name = "ram_e1";
  found[1].name = found[2].name = "ram";
  found[3].name = "other";
  apply_address_probe(dump, found);
  CHECK(found[0].same_address == std::vector<bool>{true, false});
  CHECK(found[1].same_address == std::vector<bool>{false});
  CHECK(found[2].same_address == std::vector<bool>{true});
  CHECK(found[3].same_address.empty());
}

TEST_CASE("memory dump: never_together from RD_COLLISION_X_MASK; Yosys constants bit 0 first", "[synth_unit]") {
  CHECK(yosys_const_bits("4'0110") == std::vector<bool>{false, true, true, false});
  CHECK(yosys_const_bits("2'01") == std::vector<bool>{true, false});
  CHECK(yosys_const_bits("1'x") == std::vector<bool>{false});
  CHECK(yosys_const_bits("5") == std::vector<bool>{true, false, true});
  CHECK(yosys_const_bits("0").empty());
  auto mems = parse_memory_dump(
      "  cell $mem_v2 \\ram_e0\n    parameter \\ABITS 4\n    parameter \\RD_COLLISION_X_MASK 2'01\n"
      "    parameter \\RD_PORTS 2\n    parameter \\SIZE 16\n    parameter \\WIDTH 16\n    parameter \\WR_PORTS 1\n  end\n");
  REQUIRE(mems.size() == 1);
  CHECK(mems[0].never_together == std::vector<bool>{true, false});
}

namespace {

CellLibrary tiny_library() {
  CellLibrary lib;
  lib["INVx1"] = {0.044, false, {{"A", {false, 0.6, 1}}, {"Y", {true, 0, 1}}}};
  lib["BUFx4f"] = {0.087, false, {{"A", {false, 1.1, 1}}, {"Y", {true, 0, 1}}}};
  lib["DFF"] = {0.29, false, {{"CLK", {false, 0.5, 1}}, {"D", {false, 0.6, 1}}, {"QN", {true, 0, 1}}}};
  lib["TIELO"] = {0.044, true, {{"L", {true, 0, 1}}}};
  lib["RAM"] = {10, false, {{"clk", {false, 25, 1}}, {"d", {false, 5, 4}}, {"q", {true, 0, 4}}}};
  return lib;
}

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = (std::filesystem::temp_directory_path() / ("fetta_fanout_" + name)).string();
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("fanout repair: a buffer tree on a net over the limits, nothing else touched", "[synth_unit]") {
  // n drives 40 inverters and the output port y; clk drives 40 flops; a constant drives 20 pins.
  std::string v = "/* Generated by Yosys */\nmodule t(clk, a, y, q);\n  input clk;\n  input a;\n  output y;\n"
                  "  output [3:0] q;\n  wire n;\n  wire zero;\n  wire \\u.x[2] ;\n";
  v += "  INVx1 drv (\n    .A(a),\n    .Y(n)\n  );\n  TIELO tie (\n    .L(zero)\n  );\n";
  for (int i = 0; i < 40; ++i) v += fmt::format("  INVx1 \\sink.i{:02d}  (\n    .A(n),\n    .Y(\\u.x[2] )\n  );\n", i);
  for (int i = 0; i < 40; ++i) v += fmt::format("  DFF ff{} (\n    .CLK(clk),\n    .D(zero),\n    .QN()\n  );\n", i);
  v += "  RAM ram (\n    .clk(clk),\n    .d({ n, n, a, \\u.x[2]  }),\n    .q(q)\n  );\n";
  v += "  INVx1 outbuf (\n    .A(n),\n    .Y(y)\n  );\nendmodule\n";
  const std::string in = temp_file("in.v", v), out = temp_file("out.v", "");
  FanoutLimits lim;
  lim.max_fanout = 16;
  lim.max_load_ff = 100;
  lim.buffer_cell = "BUFx4f";
  FanoutRepairStats st = repair_fanout(in, out, "t", "clk", tiny_library(), lim);
  // n: 40 + 1 inverters and 2 RAM data bits = 43 sinks -> 3 buffers (16, 16, 11), then the root.
  CHECK(st.nets_repaired == 1);
  CHECK(st.buffers == 3);
  CHECK(st.buffer_area_um2 == Approx(3 * 0.087));
  CHECK(st.worst_fanout == 43);
  CHECK(st.worst_net == "n");
  std::string r = read_text(out);
  CHECK(r.find("BUFx4f \\fanout_buf_0  (\n    .A(n),\n    .Y(\\fanout_net_0 )") != std::string::npos);
  CHECK(r.find("wire \\fanout_net_2 ;") != std::string::npos);
  CHECK(r.find(".A(n),\n    .Y(\\u.x[2] )") == std::string::npos);  // every inverter moved off n
  CHECK(r.find(".d({ \\fanout_net_2 , \\fanout_net_2 , a, \\u.x[2]  })") != std::string::npos);  // sinks in name order
  CHECK(r.find(".CLK(clk)") != std::string::npos);  // the clock is ideal: not buffered
  CHECK(r.find(".D(zero)") != std::string::npos);   // nor a constant
  // Repairing again finds nothing to do.
  const std::string again = temp_file("again.v", "");
  CHECK(repair_fanout(out, again, "t", "clk", tiny_library(), lim).buffers == 0);

  CHECK_THROWS_WITH(repair_fanout(temp_file("bad1.v", "module t(a);\n  input a;\n  FOO u (\n    .A(a)\n  );\nendmodule\n"),
                                  out, "t", "clk", tiny_library(), lim),
                    Contains("FOO") && Contains("no library"));
  CHECK_THROWS_WITH(repair_fanout(temp_file("bad2.v", "module t(a, y);\n  input a;\n  output y;\n  assign y = a;\nendmodule\n"),
                                  out, "t", "clk", tiny_library(), lim),
                    Contains("bad2.v:4") && Contains("assign"));
}
