// The synthesis flows' pure parts: readers of tool output, Liberty merging and lookup, the SRAM
// model, option and design-directory errors. No tool runs here.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <unistd.h>

#include "flows/asap7.hpp"
#include "flows/design_dir.hpp"
#include "flows/fpga.hpp"
#include "flows/liberty.hpp"
#include "flows/sta.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"
#include "flows/yosys_output.hpp"

using namespace fetta::flows::synth;
using Catch::Matchers::Contains;

namespace {

const char* kStat = R"(
7. Printing statistics.

=== adder ===

   Number of wires:                 12
   Number of public wires:           5
   Number of cells:                 14
     $mem_v2                         1
     DFFHQNx1_ASAP7_75t_R            4
     INVx1_ASAP7_75t_R               4
     XOR2xp5_ASAP7_75t_R             5

   Area for cell type $mem_v2 is unknown!

   Chip area for module '\adder': 2.526840

=== other ===
   Number of cells:                  3
     INVx1_ASAP7_75t_R               3
)";

// A two-cell library in ASAP7's layout, with a flop whose tables are easy to check by hand.
const char* kLibA = R"(/* license { with braces } */
library (lib_a) {
  time_unit : "1ps";
  lu_table_template (t7) {
    variable_1 : input_net_transition;
  }
  cell (INVx1) {
    area : 0.04374;
    pin (A) { direction : input; }
    pin (Y) { direction : output; function : "!A"; }
  }
  cell (DFFx1) {
    area : 0.29;
    ff (IQ, IQN) { clocked_on : "CLK"; next_state : "D"; }
    pin (QN) {
      direction : output;
      timing () {
        related_pin : "CLK";
        timing_type : rising_edge;
        cell_rise (t7) {
          index_1 ("10, 20");
          index_2 ("1, 3");
          values ( \
            "40, 50", \
            "60, 70" \
          );
        }
        cell_fall (t7) {
          index_1 ("10, 20");
          index_2 ("1, 3");
          values ("30, 40", "50, 90");
        }
      }
    }
    pin (D) {
      direction : input;
      timing () {
        related_pin : "CLK";
        timing_type : setup_rising;
        rise_constraint (c7) {
          index_1 ("10, 20");
          index_2 ("10, 20");
          values ("5, 6", "7, 8");
        }
        fall_constraint (c7) {
          index_1 ("10, 20");
          index_2 ("10, 20");
          values ("1, 2", "3, 4");
        }
      }
    }
  }
}
)";

const char* kLibB = R"(library (lib_b) {
  time_unit : "1ps";
  cell (NAND2x1) {
    area : 0.08;
  }
}
)";

std::string temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / fmt::format("fetta_synth_unit_{}_{}", name, ::getpid());
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d.string();
}

}  // namespace

TEST_CASE("stat output: cells, unknown areas, chip area of the first module", "[synth_unit]") {
  StatResult s = parse_stat(kStat);
  CHECK(s.total_cells == 14);
  CHECK(s.cells.size() == 4);
  CHECK(s.cells.at("XOR2xp5_ASAP7_75t_R") == 5);
  CHECK(s.cells.at("$mem_v2") == 1);
  REQUIRE(s.chip_area);
  CHECK(*s.chip_area == Approx(2.52684));
  REQUIRE(s.unknown_area.size() == 1);
  CHECK(s.unknown_area[0] == "$mem_v2");
}

TEST_CASE("ABC stime: the worst delay of the log, none without ABC", "[synth_unit]") {
  std::string log =
      "ABC: WireLoad = \"none\"  Gates =    362 (  9.4 %)   Cap =  1.7 ff ( 16.9 %)   Area =       34.12 ( 48.3 %)   "
      "Delay =   521.20 ps  ( 22.9 %)\n"
      "ABC: Path  0 --      28 : 0    2 pi   A =   0.00  Df =   2.7   -0.3 ps\n"
      "ABC: WireLoad = \"none\"  Gates = 3  Delay =   12.5 ps  ( 1 %)\n";
  REQUIRE(parse_abc_delay_ps(log));
  CHECK(*parse_abc_delay_ps(log) == Approx(521.2));
  CHECK_FALSE(parse_abc_delay_ps("ABC: + strash\nDelay = 5 ps without the stime line\n"));
}

TEST_CASE("dfflibmap: the cell chosen for $_DFF_P_", "[synth_unit]") {
  std::string log =
      "  cell DFFLQNx1_ASAP7_75t_R (inv, pins=3, area=0.29) is a direct match for cell type $_DFF_N_.\n"
      "  cell DFFHQNx1_ASAP7_75t_R (inv, pins=3, area=0.29) is a direct match for cell type $_DFF_P_.\n";
  CHECK(parse_dfflibmap_cell(log) == "DFFHQNx1_ASAP7_75t_R");
  CHECK(parse_dfflibmap_cell(log, "$_DFF_N_") == "DFFLQNx1_ASAP7_75t_R");
  CHECK(parse_dfflibmap_cell("nothing") == "");
}

TEST_CASE("memory dump: width, depth and ports of each $mem cell", "[synth_unit]") {
  std::string dump =
      "module \\ram\n"
      "  cell $mem_v2 \\u_bank.mem\n"
      "    parameter \\ABITS 5\n"
      "    parameter \\RD_PORTS 2\n"
      "    parameter \\SIZE 32\n"
      "    parameter \\WIDTH 16\n"
      "    parameter \\WR_PORTS 1\n"
      "    connect \\RD_ADDR \\raddr\n"
      "  end\n"
      "  cell $mem_v2 \\acc\n"
      "    parameter \\SIZE 32'00000000000000000000001000000000\n"
      "    parameter \\WIDTH 32'00000000000000000000000000100000\n"
      "    parameter \\RD_PORTS 1\n"
      "    parameter \\WR_PORTS 1\n"
      "  end\n";
  auto mems = parse_memory_dump(dump);
  REQUIRE(mems.size() == 2);
  CHECK(mems[0].name == "u_bank.mem");
  CHECK(mems[0].width == 16);
  CHECK(mems[0].depth == 32);
  CHECK(mems[0].rd_ports == 2);
  CHECK(mems[0].wr_ports == 1);
  CHECK(mems[1].depth == 512);
  CHECK(mems[1].width == 32);
  CHECK(mems[1].bits() == 16384);
  CHECK(parse_memory_dump("").empty());
}

TEST_CASE("warnings: ASAP7 scan-flop Liberty warnings are counted apart", "[synth_unit]") {
  std::string log =
      "Warning: Found unsupported expression 'D*!SE+!D*!SI+SE*!SI' in pin attribute of cell 'SDFLx1_ASAP7_75t_R' - "
      "skipping.\n"
      "Warning: Found unsupported expression 'D*!SE+!D*!SI+SE*!SI' in pin attribute of cell 'SDFHx1_ASAP7_75t_R' - "
      "skipping.\n"
      "Warning: Wire top.x is used but has no driver.\n"
      "Warning: Wire top.x is used but has no driver.\n"
      "ABC: Warning: Detected 2 multi-output gates\n";
  Warnings w = split_warnings(log);
  CHECK(w.scan_flop_skipped == 2);
  REQUIRE(w.kept.size() == 1);
  CHECK_THAT(w.kept[0], Contains("no driver"));
}

TEST_CASE("nextpnr: Fmax of the slowest clock and utilisation", "[synth_unit]") {
  NextpnrReport r = parse_nextpnr_report(R"({"fmax": {"clk": {"achieved": 193.9, "constraint": 100},
      "clk2": {"achieved": 88.5, "constraint": 50}},
      "utilization": {"ICESTORM_LC": {"available": 7680, "used": 74}}})");
  REQUIRE(r.fmax_mhz);
  CHECK(*r.fmax_mhz == Approx(88.5));
  CHECK(r.clock == "clk2");
  CHECK(r.utilisation.at("ICESTORM_LC") == std::pair<long long, long long>{74, 7680});
  CHECK_FALSE(parse_nextpnr_report(R"({"utilization": {}})").fmax_mhz);
  auto u = parse_nextpnr_utilisation(
      "Info: Device utilisation:\nInfo: \t         ICESTORM_LC:   512/  384   133%\nInfo: \t SB_IO:    19/   56    33%\n");
  CHECK(u.at("ICESTORM_LC") == std::pair<long long, long long>{512, 384});
  CHECK(u.at("SB_IO").first == 19);
}

TEST_CASE("Liberty: merge keeps one header and every cell", "[synth_unit]") {
  std::string merged = merge_liberty({kLibA, kLibB}, "merged");
  CHECK(liberty_cell_names(merged) == std::vector<std::string>{"INVx1", "DFFx1", "NAND2x1"});
  CHECK_THAT(merged, Contains("library (merged)"));
  CHECK(merged.find("lib_b") == std::string::npos);  // only the first header
  LibertyGroup lib = parse_liberty(merged, "merged");
  CHECK(lib.args == "merged");
  CHECK(lib.children("cell").size() == 3);
  CHECK(lib.children("lu_table_template").size() == 1);
  REQUIRE(lib.child("cell", "NAND2x1"));
  CHECK(*lib.child("cell", "NAND2x1")->attribute("area") == "0.08");
  CHECK_THROWS_WITH(merge_liberty({kLibA, kLibA}, "x"), Contains("cell INVx1 defined twice"));
  CHECK_THROWS_WITH(parse_liberty("library (x) { cell (a) { area : 1; }", "bad.lib"), Contains("bad.lib"));
}

// Braces in a comment and a string, a value continued on the next line, a quoted cell name and
// a cell whose '}' shares its line with the library's: what the one reader (parse_liberty) must
// see through for the tree, the cell spans of merge_liberty and the power views alike.
namespace {
const char* kLexed = R"(/* a header comment: library (not_this) { */
library (lex) {
  comment : "braces { in } a string";
  cell (A) { area : 1 /* } */ ; pin (Y) { direction : output; function : "!X"; } }
  cell ("B") {
    values ("1, 2", \
"3, 4");
    footprint : inv \
x1;
  } }
)";
}  // namespace

TEST_CASE("Liberty: one reader for comments, strings, continuations and where each statement is written", "[synth_unit]") {
  const std::string text = kLexed;
  const LibertyGroup lib = parse_liberty(text, "lex.lib");
  CHECK(lib.args == "lex");
  CHECK(lib.line == 2);
  CHECK(*lib.attribute("comment") == "braces { in } a string");
  REQUIRE(lib.children("cell").size() == 2);
  const LibertyGroup& a = *lib.child("cell", "A");
  const LibertyGroup& b = *lib.child("cell", "B");
  CHECK(*a.attribute("area") == "1");
  CHECK(*b.attribute("values") == "\"1, 2\", \n\"3, 4\"");  // the continuation's backslash left out
  CHECK(*b.attribute("footprint") == "inv \nx1");              // a simple value goes on past it
  CHECK(b.line == 5);
  // The offsets: a group's name, '(' ... ')', '{' and '}'; an attribute from its key through ';'.
  CHECK(text.compare(a.begin, 8, "cell (A)") == 0);
  CHECK(text.substr(lib.args_begin, lib.args_end - lib.args_begin) == "lex");
  CHECK(text[a.open] == '{');
  CHECK(text[a.close] == '}');
  CHECK(text[lib.close] == '}');
  const LibertyAttribute* area = a.find_attribute("area");
  REQUIRE(area);
  CHECK(text.substr(area->begin, area->end - area->begin) == "area : 1 /* } */ ;");
  const LibertyAttribute* values = b.find_attribute("values");
  REQUIRE(values);
  CHECK(text.substr(values->begin, values->end - values->begin) == "values (\"1, 2\", \\\n\"3, 4\");");

  // Merging cuts the text where the tree says: the library renamed, not the comment's
  // "library (not_this)", and cell B without the library's '}' on its line.
  CHECK(liberty_cell_names(text) == std::vector<std::string>{"A", "B"});
  const std::string merged = merge_liberty({text}, "m");
  CHECK(merged == "/* a header comment: library (not_this) { */\nlibrary (m) {\n  comment : \"braces { in } a string\";\n" +
                      text.substr(text.find("  cell (A)"), text.rfind('}') - text.find("  cell (A)")) + "}\n");
  CHECK(parse_liberty(merged, "merged").children("cell").size() == 2);

  // Syntax errors name the file and the line: of a string or a comment that is not closed, of a
  // group that is not closed, through each consumer.
  CHECK_THROWS_WITH(parse_liberty("library (x) {\n  a : \"open;\n}\n", "s.lib"), "s.lib:2: Liberty syntax: unterminated string");
  CHECK_THROWS_WITH(parse_liberty("library (x) {\n/* open\n", "c.lib"), "c.lib:2: Liberty syntax: unterminated comment");
  CHECK_THROWS_WITH(parse_liberty("library (x) {\n  cell (a) {\n    area : 1;\n", "g.lib"),
                    "g.lib:2: Liberty syntax: group 'cell (a)' is not closed");
  CHECK_THROWS_WITH(parse_liberty("/* no library */ cell (a) { }", "n.lib"), "n.lib:1: Liberty syntax: no library group");
  CHECK_THROWS_WITH(merge_liberty({"library (x) {\n  cell (a) { area : 1; }\n"}, "m"),
                    "merge_liberty: library 0:1: Liberty syntax: group 'library (x)' is not closed");
  CHECK_THROWS_WITH(liberty_cell_names("library (x) {\n  cell (a) { area ; }\n}\n"),
                    "Liberty text:2: Liberty syntax: expected ':' or '(' after 'area'");
}

TEST_CASE("Liberty: table interpolation and flip-flop timing", "[synth_unit]") {
  LibertyGroup lib = parse_liberty(kLibA, "a.lib");
  const LibertyGroup* qn = lib.child("cell", "DFFx1")->child("pin", "QN");
  REQUIRE(qn);
  const LibertyGroup& rise = *qn->children("timing")[0]->children("cell_rise")[0];
  CHECK(table_lookup(rise, 10, 1) == Approx(40));
  CHECK(table_lookup(rise, 20, 3) == Approx(70));
  CHECK(table_lookup(rise, 15, 2) == Approx(55));   // the middle of the four corners
  CHECK(table_lookup(rise, 100, 100) == Approx(70));  // clamped at the edges
  FlopTiming t = flop_timing(lib, "DFFx1", 20, 3);
  CHECK(t.clk_to_q_ps == Approx(90));  // worst of rise (70) and fall (90)
  CHECK(t.setup_ps == Approx(8));      // worst of rise (8) and fall (4) at 20/20
  CHECK_THROWS_WITH(flop_timing(lib, "NOPE", 20, 3), Contains("NOPE"));
  CHECK_THROWS_WITH(flop_timing(lib, "INVx1", 20, 3), Contains("INVx1"));
}

TEST_CASE("SRAM model: bits x cell area / efficiency, more for extra ports", "[synth_unit]") {
  SramModel m;
  CHECK(m.area_um2(1000, 1, 1) == Approx(1000 * 0.027 / 0.7));
  CHECK(m.area_um2(1000, 1, 0) == Approx(1000 * 0.027 / 0.7));
  CHECK(m.area_um2(1000, 2, 1) == Approx(1000 * 0.027 * 1.5 / 0.7));
  // The published FETTA unified memory: 512 KB in 113,942 um^2, i.e. 0.0272 um^2/bit all in.
  CHECK(m.area_um2(512LL * 1024 * 8, 1, 1) / 113942.4 == Approx(1.0 / 0.7).epsilon(0.01));
  SramModel bad = m;
  bad.array_efficiency = 1.5;
  CHECK_THROWS_WITH(bad.validate(), Contains("--sram-efficiency"));
  bad = m;
  bad.um2_per_bit = 0;
  CHECK_THROWS_WITH(bad.validate(), Contains("--sram-um2-per-bit"));
  bad = m;
  bad.extra_port_factor = -1;
  CHECK_THROWS_WITH(bad.validate(), Contains("--sram-port-factor"));
}

TEST_CASE("targets, devices and families: unknown names are refused with the allowed ones", "[synth_unit]") {
  CHECK(parse_target("asap7") == Target::asap7);
  CHECK(parse_target("xilinx") == Target::xilinx);
  CHECK(parse_target("ice40") == Target::ice40);
  CHECK_THROWS_WITH(parse_target("vivado"), Contains("--target") && Contains("'vivado'") && Contains("asap7, xilinx, ice40"));
  CHECK(ice40_device("hx8k", "").package == "ct256");
  CHECK(ice40_device("up5k", "").has_dsp);
  CHECK_THROWS_WITH(ice40_device("ecp5", ""), Contains("--device") && Contains("hx8k"));
  CHECK_THROWS_WITH(ice40_device("hx8k", "sg48"), Contains("--package") && Contains("ct256"));
  CHECK_NOTHROW(check_xilinx_family("xcup"));
  CHECK_THROWS_WITH(check_xilinx_family("virtex9"), Contains("--device") && Contains("xcup"));
}

TEST_CASE("FPGA cell classification", "[synth_unit]") {
  XilinxMetrics x = xilinx_metrics({{"LUT2", 3}, {"LUT6", 2}, {"FDRE", 7}, {"DSP48E2", 2}, {"RAMB18E2", 1},
                                    {"RAMB36E2", 2}, {"RAM32M16", 1}, {"SRLC32E", 4}, {"CARRY8", 1}});
  CHECK(x.luts == 5);
  CHECK(x.ffs == 7);
  CHECK(x.dsps == 2);
  CHECK(x.brams == Approx(2.5));
  CHECK(x.lutram_cells == 1);
  CHECK(x.srls == 4);
  CHECK(x.carries == 1);
  Ice40Metrics i = ice40_metrics({{"SB_LUT4", 10}, {"SB_DFFESR", 3}, {"SB_DFF", 2}, {"SB_CARRY", 4},
                                  {"SB_RAM40_4K", 1}, {"SB_MAC16", 1}});
  CHECK(i.luts == 10);
  CHECK(i.ffs == 5);
  CHECK(i.carries == 4);
  CHECK(i.brams == 1);
  CHECK(i.dsps == 1);
}

TEST_CASE("design directories: missing pieces and unknown modules are named", "[synth_unit]") {
  std::string d = temp_dir("design");
  CHECK_THROWS_WITH(read_design_dir(d + "/nope"), Contains("does not exist"));
  CHECK_THROWS_WITH(read_design_dir(d), Contains("filelist.f"));
  write_text(d + "/filelist.f", "a.sv\n");
  CHECK_THROWS_WITH(read_design_dir(d), Contains("a.sv"));
  write_text(d + "/a.sv", "module a; endmodule\n");
  CHECK_THROWS_WITH(read_design_dir(d), Contains("manifest.json"));
  write_text(d + "/manifest.json", R"({"top": "b", "modules": [{"name": "a", "file": "a.sv"}]})");
  CHECK_THROWS_WITH(read_design_dir(d), Contains("top 'b'"));
  write_text(d + "/manifest.json", R"({"top": "a", "modules": [{"name": "a", "file": "a.sv",
      "generator": "g", "parameters": {"n": "4"}}], "config": {"dtype": "int8"}})");
  DesignDir dd = read_design_dir(d);
  CHECK(dd.top == "a");
  CHECK(dd.files.size() == 1);
  CHECK(dd.modules[0].parameters.at("n") == "4");
  CHECK(select_modules(dd, "all").size() == 1);
  CHECK(select_modules(dd, "top")[0].name == "a");
  CHECK(select_modules(dd, "a").size() == 1);
  CHECK_THROWS_WITH(select_modules(dd, "a,zz"), Contains("--modules") && Contains("'zz'") && Contains("a"));
  std::filesystem::remove_all(d);
}

TEST_CASE("a missing tool names its Debian package", "[synth_unit]") {
  const char* old = std::getenv("PATH");
  std::string saved = old ? old : "";
  ::setenv("PATH", "/nonexistent-fetta-dir", 1);
  std::string msg;
  try {
    require_tools(Target::ice40);
  } catch (const MissingToolError& e) {
    msg = e.what();
  }
  std::string asap7;
  try {
    require_tools(Target::asap7);
  } catch (const MissingToolError& e) {
    asap7 = e.what();
  }
  std::string sta;
  try {
    fetta::flows::sta::require_sta();
  } catch (const std::runtime_error& e) {
    sta = e.what();
  }
  ::setenv("PATH", saved.c_str(), 1);
  CHECK_THAT(msg, Contains("nextpnr-ice40") && Contains("apt-get install") && Contains("yosys"));
  // Sign-off timing: OpenSTA's program is `sta`, its Debian package `opensta`.
  CHECK_THAT(asap7, Contains("sta") && Contains("apt-get install") && Contains("opensta"));
  CHECK_THAT(sta, Contains("apt-get install opensta"));
}

TEST_CASE("run_synth refuses bad options before running anything", "[synth_unit]") {
  Options o;
  o.target = Target::xilinx;
  o.clock_mhz = 100;
  CHECK_THROWS_WITH(run_synth("/nonexistent", temp_dir("opts"), o), Contains("--clock-mhz"));
  o = Options{};
  o.device = "hx8k";
  CHECK_THROWS_WITH(run_synth("/nonexistent", temp_dir("opts"), o), Contains("--device"));
  o = Options{};
  o.target = Target::xilinx;
  o.package = "ct256";
  CHECK_THROWS_WITH(run_synth("/nonexistent", temp_dir("opts"), o), Contains("--package"));
  o = Options{};
  o.clock_mhz = -5;
  CHECK_THROWS_WITH(run_synth("/nonexistent", temp_dir("opts"), o), Contains("--clock-mhz"));
  o = Options{};
  o.pdk_dir = "/nonexistent-pdk";
  o.cache_dir = temp_dir("cache");
  CHECK_THROWS_WITH(run_synth(CORPUS_DIR "/counter_w4", temp_dir("opts"), o), Contains("/nonexistent-pdk"));
}

TEST_CASE("ASAP7 libraries: a PDK directory without them names the missing file", "[synth_unit]") {
  std::string d = temp_dir("pdk");
  CHECK_THROWS_WITH(prepare_asap7_libraries(d, d + "/cache"),
                    Contains("asap7sc7p5t_INVBUF_RVT_TT_") && Contains(d) && Contains("--pdk"));
  std::filesystem::remove_all(d);
}

TEST_CASE("ASAP7 libraries: threads preparing an empty cache at once all succeed", "[synth_unit]") {
  // `fetta sweep --jobs N` synthesizes its points on N threads of one process; on a fresh machine
  // they all find the cache empty and write the merged libraries at once.
  const std::string d = temp_dir("pdk_threads");
  const char* prefixes[] = {"asap7sc7p5t_INVBUF_RVT_TT_", "asap7sc7p5t_SIMPLE_RVT_TT_", "asap7sc7p5t_AO_RVT_TT_",
                            "asap7sc7p5t_OA_RVT_TT_"};
  for (size_t i = 0; i < std::size(prefixes); ++i)
    std::ofstream(fmt::format("{}/{}201020.lib", d, prefixes[i]))
        << fmt::format("library (l{0}) {{\n  cell (C{0}) {{\n    area : 0.1;\n  }}\n}}\n", i);
  std::ofstream(d + "/asap7sc7p5t_SEQ_RVT_TT_220101.lib") << kLibA;
  const std::string cache = d + "/cache";
  constexpr int kThreads = 8;
  std::vector<std::string> errors(kThreads);
  std::vector<Asap7Libraries> libs(kThreads);
  {
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
      pool.emplace_back([&, t] {
        try {
          libs[static_cast<size_t>(t)] = prepare_asap7_libraries(d, cache);
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(t)] = e.what();
        }
      });
    for (std::thread& t : pool) t.join();
  }
  for (int t = 0; t < kThreads; ++t) {
    INFO("thread " << t);
    CHECK(errors[static_cast<size_t>(t)].empty());
    CHECK(libs[static_cast<size_t>(t)].seq_cells == std::vector<std::string>{"DFFx1"});
  }
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(cache)) files.push_back(e.path().filename().string());
  CHECK(files.size() == 2);  // the merged combinational and the sequential library, no temporaries left
  CHECK(liberty_cell_names(read_text(libs[0].comb_lib)) == std::vector<std::string>{"C0", "C1", "C2", "C3"});
  std::filesystem::remove_all(d);
}
