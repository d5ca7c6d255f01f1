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
