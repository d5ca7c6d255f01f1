// The ASAP7 flow end to end on corpus designs: the report's structure and figures that can be
// counted in the RTL (flip-flops, memories), and plausible area and delay.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <set>

#include "flows/asap7.hpp"
#include "flows/sta.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"

using namespace fetta::flows::synth;
namespace sta = fetta::flows::sta;

namespace {

Options asap7_options(const std::string& modules = "all") {
  Options o;
  o.target = Target::asap7;
  o.modules = modules;
  o.cache_dir = SYNTH_CACHE_DIR;
  return o;
}

const ModuleResult& module(const SynthReport& r, const std::string& name) {
  for (const ModuleResult& m : r.modules)
    if (m.name == name) return m;
  FAIL("no module " << name << " in the report");
  throw;
}

void check_plausible(const ModuleResult& m, double period_ps) {
  INFO("module " << m.name);
  REQUIRE(m.asap7);
  const Asap7Metrics& a = *m.asap7;
  CHECK(a.cells > 0);
  CHECK(a.logic_area_um2 > 0);
  CHECK(a.area_um2 == Approx(a.logic_area_um2 + a.sram_area_um2));
  // A cell of ASAP7 is 0.04 to 0.4 um^2: the area must be in that range per cell.
  CHECK(a.logic_area_um2 > 0.03 * static_cast<double>(a.cells));
  CHECK(a.logic_area_um2 < 0.5 * static_cast<double>(a.cells));
  CHECK(a.flop_overhead_ps > 20);
  CHECK(a.flop_overhead_ps < 200);
  CHECK(a.abc_delay_ps == Approx(a.abc_logic_delay_ps + a.flop_overhead_ps));
  CHECK(a.abc_slack_ps == Approx(a.mapped_period_ps - a.abc_delay_ps));
  // Sign-off timing ran on the netlist against the target period.
  REQUIRE(a.sta);
  CHECK(a.sta->period_ps == Approx(period_ps));
  CHECK(a.sta->wns_ps <= 0);
  CHECK(a.sta->tns_ps <= a.sta->wns_ps);
  CHECK(a.sta->endpoints > 0);
  CHECK((a.sta->failing_endpoints > 0) == (a.sta->wns_ps < 0));
  REQUIRE(a.sta->worst_slack_ps);
  CHECK(*a.sta->min_period_ps() == Approx(period_ps - *a.sta->worst_slack_ps));
  CHECK(std::filesystem::exists(m.work_dir + "/timing.txt"));
  CHECK(std::filesystem::exists(m.work_dir + "/constraints.sdc"));
  long long counted = 0;
  for (const auto& [type, n] : m.cells_by_type) counted += n;
  CHECK(counted == a.cells);
}

}  // namespace

TEST_CASE("asap7: the 8-input adder tree, every module out of context", "[synth_asap7]") {
  std::string work = std::string(SYNTH_WORK_DIR) + "/asap7_adder_tree";
  SynthReport r = run_synth(CORPUS_DIR "/adder_tree_n8_w8", work, asap7_options());
  REQUIRE(r.modules.size() == 4);  // add_stage_w8, _w9, _w10 and the tree
  CHECK(r.top == "adder_tree_n8_w8");
  CHECK(r.clock_mhz == 1000);
  for (const ModuleResult& m : r.modules) check_plausible(m, 1000);

  // Register bits in the RTL: each AddStage registers its (width + 1)-bit sum; the tree has
  // 4 stages of 9 bits, 2 of 10 and 1 of 11.
  CHECK(module(r, "add_stage_w8").asap7->flops == 9);
  CHECK(module(r, "add_stage_w9").asap7->flops == 10);
  CHECK(module(r, "add_stage_w10").asap7->flops == 11);
  const ModuleResult& top = module(r, "adder_tree_n8_w8");
  CHECK(top.top);
  CHECK(top.asap7->flops == 4 * 9 + 2 * 10 + 11);
  // An 8-bit add is a short path, far inside 1 ns; the tree adds no logic between its stages.
  CHECK(top.asap7->abc_logic_delay_ps > 20);
  CHECK(top.asap7->abc_logic_delay_ps < 400);
  CHECK(top.asap7->sta->wns_ps == 0);
  CHECK(*top.asap7->sta->worst_slack_ps > 0);
  // The tree is its stages: its area is about their sum. Out of context each stage drives port
  // loads (3.9 fF) that inside the tree are one flop input, so the tree comes out ~10 % smaller.
  double stages = 4 * module(r, "add_stage_w8").asap7->area_um2 + 2 * module(r, "add_stage_w9").asap7->area_um2 +
                  module(r, "add_stage_w10").asap7->area_um2;
  CHECK(top.asap7->area_um2 < stages);
  CHECK(top.asap7->area_um2 > 0.8 * stages);
  CHECK(top.asap7->memories.empty());
  CHECK(top.asap7->flop_cell == "DFFHQNx1_ASAP7_75t_R");

  // The report: deterministic part, tool versions, one command per module.
  nlohmann::json j = to_json(r);
  CHECK(j["schema"] == "fetta.synth.v2");
  CHECK(j["target"] == "asap7");
  CHECK(j["clock_period_ps"] == 1000.0);
  CHECK(j["modules"].size() == 4);
  for (const char* key : {"area_um2", "cells", "flops", "abc_delay_ps", "abc_slack_ps", "abc_logic_delay_ps", "memories",
                          "sta"})
    CHECK(j["modules"][3].contains(key));
  for (const char* key : {"wns_ps", "tns_ps", "failing_endpoints", "worst_path", "fmax_mhz", "min_period_ps"})
    CHECK(j["modules"][3]["sta"].contains(key));
  CHECK(j["modules"][3]["sta"]["worst_path"].contains("stages"));
  CHECK(j["tools"].contains("yosys"));
  CHECK(j["run"].contains("started"));
  CHECK(r.commands.size() == 3 * 4);  // per module: generic synthesis, mapping, OpenSTA
  CHECK(std::filesystem::exists(work + "/adder_tree_n8_w8/netlist.v"));
  std::string table = format_table(r);
  CHECK(table.find("adder_tree_n8_w8 *") != std::string::npos);
}

TEST_CASE("asap7: memories are black boxes sized by the SRAM model", "[synth_asap7]") {
  std::string work = std::string(SYNTH_WORK_DIR) + "/asap7_ram";
  Options o = asap7_options();
  SynthReport r = run_synth(CORPUS_DIR "/dp_ram_w16_d32", work, o);
  REQUIRE(r.modules.size() == 1);
  const Asap7Metrics& a = *r.modules[0].asap7;
  REQUIRE(a.memories.size() == 1);
  const MemoryMacro& mem = a.memories[0];
  CHECK(mem.name == "mem");
  CHECK(mem.width == 16);
  CHECK(mem.depth == 32);
  CHECK(mem.rd_ports == 1);
  CHECK(mem.wr_ports == 1);
  CHECK(mem.area_um2 == Approx(o.sram.area_um2(512, 1, 1)));
  CHECK(mem.cell == "fetta_sram_w16_d32_1r1w");
  CHECK(a.sram_area_um2 == Approx(mem.area_um2));
  CHECK(a.area_um2 == Approx(a.logic_area_um2 + a.sram_area_um2));
  CHECK(a.memories_in_flops.empty());
  // No flop array was built for the 512 bits: the read register went into the macro too.
  CHECK(a.flops < 16);
  CHECK(r.modules[0].cells_by_type.count("$mem_v2") == 0);
  // The macro is a cell of the netlist with a Liberty model: OpenSTA times the paths out of it
  // (the worst here: read data clock-to-Q after the edge, to the output port) and into it.
  REQUIRE(a.sta);
  REQUIRE(a.sta->worst_path);
  const sta::TimingPath& p = *a.sta->worst_path;
  CHECK(p.startpoint.rfind("mem ", 0) == 0);
  REQUIRE(p.stages.size() >= 2);
  CHECK(p.stages[1].cell == "fetta_sram_w16_d32_1r1w");
  CHECK(p.stages[1].delay_ps == Approx(o.sram.clk_to_q_ps));
  // The write enable drives the 16 mask pins of the macro (80 fF): the fanout repair buffers it.
  CHECK(a.fanout_buffers >= 4);
  CHECK(a.fanout_nets == 1);
  CHECK(a.sta->endpoints == 16 + 5 + 1 + 5 + 16 + 16);  // rdata, the macro's addresses, enables, data, mask
  std::string netlist = read_text(work + "/dp_ram_w16_d32/netlist.v");
  CHECK(netlist.find("fetta_sram_w16_d32_1r1w mem") != std::string::npos);
}

TEST_CASE("asap7: a read and a write port on one address become a 1R1RW macro of the two-port area", "[synth_asap7]") {
  // MemBank, one 32 x 16 lane: read port A, and port B at `wr_en ? wr_addr : rd_b_addr`, whose
  // read is off while it writes (docs/memory.md §1).
  const std::string work = std::string(SYNTH_WORK_DIR) + "/asap7_rw";
  Options o = asap7_options();
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/mem_bank_d32_t1_w16", work + "/shared", o);
  REQUIRE(r.modules.size() == 1);
  const ModuleResult& m = r.modules[0];
  check_plausible(m, 1000);
  const Asap7Metrics& a = *m.asap7;
  REQUIRE(a.memories.size() == 1);
  const MemoryMacro& mem = a.memories[0];
  CHECK(mem.name == "ram_e0");
  CHECK(mem.cell == "fetta_sram_w16_d32_1r1rw");
  CHECK(mem.rd_ports == 2);
  CHECK(mem.wr_ports == 1);
  CHECK(mem.rw_ports() == 1);
  CHECK(mem.area_um2 == Approx(o.sram.area_um2(512, 1, 1)));  // the base two-port macro
  CHECK(a.sram_area_um2 == Approx(mem.area_um2));
  CHECK(a.memories_in_flops.empty());
  nlohmann::json j = to_json(r);
  CHECK(j["modules"][0]["memories"][0]["rw_ports"] == 1);
  CHECK(j["modules"][0]["memories"][0]["cell"] == "fetta_sram_w16_d32_1r1rw");
  // OpenSTA times paths out of the macro (the worst: read data clock-to-Q to an output port) and
  // into it: every input pin of the macro is an endpoint, besides the 32 output bits.
  REQUIRE(a.sta);
  REQUIRE(a.sta->worst_path);
  CHECK(a.sta->wns_ps == 0);
  const sta::TimingPath& p = *a.sta->worst_path;
  CHECK(p.startpoint.rfind("ram_e0 ", 0) == 0);
  REQUIRE(p.stages.size() >= 2);
  CHECK(p.stages[1].cell == "fetta_sram_w16_d32_1r1rw");
  CHECK(p.stages[1].delay_ps == Approx(o.sram.clk_to_q_ps));
  CHECK(a.sta->endpoints == 32 + (1 + 5) + (1 + 5 + 16 + 16));  // outputs; rd0 en, addr; rw0 en, addr, mask, wdata
  const std::string netlist = read_text(work + "/shared/mem_bank_d32_t1_w16/netlist.v");
  CHECK(netlist.find("fetta_sram_w16_d32_1r1rw ram_e0") != std::string::npos);
  CHECK(netlist.find(".rw0_wdata") != std::string::npos);

  // The two-copy form: two 1R1W macros, twice the SRAM area.
  SynthReport r2 = run_synth(SYNTH_DESIGNS_DIR "/mem_bank_d32_t1_w16_2copy", work + "/two_copies", o);
  const Asap7Metrics& a2 = *r2.modules[0].asap7;
  REQUIRE(a2.memories.size() == 2);
  for (const MemoryMacro& c : a2.memories) {
    CHECK(c.cell == "fetta_sram_w16_d32_1r1w");
    CHECK(c.rw_ports() == 0);
  }
  CHECK(a2.sram_area_um2 == Approx(2 * a.sram_area_um2));
}

TEST_CASE("asap7: a faster clock leaves less slack on the same logic", "[synth_asap7]") {
  Options o = asap7_options();
  o.clock_mhz = 4000;  // 250 ps
  SynthReport r = run_synth(CORPUS_DIR "/fifo_w8_d4", std::string(SYNTH_WORK_DIR) + "/asap7_fifo", o);
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 250);
  CHECK(a.flops == 2 + 2 + 3 + 4 * 8);  // rd_ptr, wr_ptr, used, 4 slots of 8 bits
  CHECK(a.abc_slack_ps == Approx(250 - a.abc_delay_ps));
}

TEST_CASE("asap7: the bf16 MAC (large)", "[synth_large]") {
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/fp_mac_bf16_fp32_s0",
                            std::string(SYNTH_WORK_DIR) + "/asap7_fp_mac", asap7_options("top"));
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 1000);
  CHECK(a.flops == 0);             // combinational
  CHECK(a.abc_logic_delay_ps > 200);   // a multiplier, an alignment shifter, an adder, a normalizer
  CHECK(a.area_um2 > 50);
  WARN(fmt::format("fp_mac_bf16_fp32_s0: {:.1f} um^2, {} cells, STA min period {:.1f} ps", a.area_um2, a.cells,
                   *a.sta->min_period_ps()));
}

TEST_CASE("asap7: two runs give the same report but for the run's times", "[synth_asap7]") {
  std::string work = std::string(SYNTH_WORK_DIR) + "/asap7_twice";
  nlohmann::json a = to_json(run_synth(CORPUS_DIR "/counter_w4", work, asap7_options()));
  nlohmann::json b = to_json(run_synth(CORPUS_DIR "/counter_w4", work, asap7_options()));
  a.erase("run");
  b.erase("run");
  CHECK(a == b);
  CHECK(a["modules"][0]["flops"] == 4);
}

TEST_CASE("asap7: a kept hierarchy is the sum of its submodules mapped out of context", "[synth_asap7]") {
  const std::string work = std::string(SYNTH_WORK_DIR) + "/asap7_hier";
  const SynthReport flat = run_synth(CORPUS_DIR "/adder_tree_n8_w8", work + "/flat", asap7_options());
  Options o = asap7_options("top");
  o.keep_hierarchy = true;
  const SynthReport hier = run_synth(CORPUS_DIR "/adder_tree_n8_w8", work + "/keep", o);
  REQUIRE(hier.modules.size() == 1);
  const ModuleResult& top = hier.modules[0];
  check_plausible(top, 1000);
  CHECK(hier.settings.at("method").find("hierarchy kept") != std::string::npos);
  // Every instance is counted: 4 + 2 + 1 stages, and the tree has no logic between them. ABC
  // maps a module a little differently inside a design than alone (its heuristics see another
  // netlist order), so the area agrees with the out-of-context stages within a few per cent;
  // counting each distinct stage once would give less than half.
  CHECK(top.asap7->flops == 4 * 9 + 2 * 10 + 11);
  const double stages = 4 * module(flat, "add_stage_w8").asap7->area_um2 +
                        2 * module(flat, "add_stage_w9").asap7->area_um2 + module(flat, "add_stage_w10").asap7->area_um2;
  CHECK(top.asap7->area_um2 == Approx(stages).epsilon(0.1));
  // ABC's estimate is the worst stage's out-of-context path: an add of at most 10 bits.
  CHECK(top.asap7->abc_logic_delay_ps < 400);
  // OpenSTA times the flattened netlist: the worst path starts at a register of one stage and
  // ends in another stage, through both modules' ports (out of context it would start at a port).
  REQUIRE(top.asap7->sta->worst_path);
  const std::string start = top.asap7->sta->worst_path->startpoint, end = top.asap7->sta->worst_path->endpoint;
  INFO(start << " -> " << end);
  CHECK(start.find("_reg") != std::string::npos);
  CHECK(end.find("_reg") != std::string::npos);
  CHECK(start.substr(0, start.find('.')) != end.substr(0, end.find('.')));
  bool noted = false;
  for (const std::string& n : top.notes) noted = noted || n.find("hierarchy kept") != std::string::npos;
  CHECK(noted);
}

TEST_CASE("asap7: --keep-hierarchy is refused for the FPGA targets", "[synth_asap7]") {
  Options o = asap7_options();
  o.keep_hierarchy = true;
  o.target = Target::xilinx;
  CHECK_THROWS_WITH(validate_options(o), Catch::Contains("--keep-hierarchy") && Catch::Contains("asap7"));
}

TEST_CASE("sta: a module that closes at 1 GHz", "[synth_asap7]") {
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/timing_pair_w16", std::string(SYNTH_WORK_DIR) + "/sta_close",
                            asap7_options());
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 1000);
  CHECK(a.sta->wns_ps == 0);
  CHECK(a.sta->tns_ps == 0);
  CHECK(a.sta->failing_endpoints == 0);
  CHECK(*a.sta->worst_slack_ps > 0);
  CHECK(*a.sta->fmax_mhz() > 1000);
  // The worst path is the multiplier's, into the slow register.
  CHECK(a.sta->worst_path->endpoint.rfind("slow_q[", 0) == 0);
  std::string sdc = read_text(r.modules[0].work_dir + "/constraints.sdc");
  CHECK(sdc.find("create_clock -name clk -period 1000.000 [get_ports clk]") != std::string::npos);
}

TEST_CASE("sta: a module that fails, at the endpoint the logic says", "[synth_asap7]") {
  Options o = asap7_options();
  o.clock_mhz = 4000;  // 250 ps: the 16 x 16 multiplier cannot make it, the XOR can
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/timing_pair_w16", std::string(SYNTH_WORK_DIR) + "/sta_fail", o);
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 250);
  CHECK(a.sta->wns_ps < 0);
  CHECK(a.sta->tns_ps <= a.sta->wns_ps);
  REQUIRE(a.sta->worst_path);
  CHECK(a.sta->worst_path->endpoint.rfind("slow_q[", 0) == 0);
  CHECK(a.sta->worst_path->startpoint.find("fast_q") == std::string::npos);
  CHECK(a.sta->worst_path->slack_ps == Approx(a.sta->wns_ps).margin(0.01));
  // Only the product's bits fail (32 of them at most); the XOR's 16 meet.
  CHECK(a.sta->failing_endpoints >= 1);
  CHECK(a.sta->failing_endpoints <= 32);
  std::string timing = read_text(r.modules[0].work_dir + "/timing.txt");
  CHECK(timing.find("VIOLATED") != std::string::npos);
  CHECK(format_table(r).find("worst path") != std::string::npos);
}

TEST_CASE("sta: the clock option sets the period OpenSTA checks", "[synth_asap7]") {
  Options o = asap7_options();
  o.clock_mhz = 500;
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/timing_pair_w16", std::string(SYNTH_WORK_DIR) + "/sta_500", o);
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 2000);
  CHECK(a.sta->period_ps == 2000);
  CHECK(*a.sta->worst_slack_ps > 1000);  // the same logic with twice the time
  std::string sdc = read_text(r.modules[0].work_dir + "/constraints.sdc");
  CHECK(sdc.find("-period 2000.000") != std::string::npos);
  CHECK(to_json(r)["modules"][0]["sta"]["period_ps"] == 2000.0);
}

TEST_CASE("sta: --fmax resynthesizes toward the highest clock", "[synth_asap7]") {
  Options o = asap7_options();
  o.clock_mhz = 4000;
  o.fmax = true;
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/timing_pair_w16", std::string(SYNTH_WORK_DIR) + "/sta_fmax", o);
  const Asap7Metrics& a = *r.modules[0].asap7;
  REQUIRE(a.fmax_search.size() >= 2);
  CHECK(a.fmax_search[0].mapped_period_ps == 250);
  // The second mapping targets the period the first needed; the figures are of the best.
  CHECK(a.fmax_search[1].mapped_period_ps == Approx(a.fmax_search[0].min_period_ps).margin(1));
  double best = a.fmax_search[0].min_period_ps;
  for (const auto& t : a.fmax_search) best = std::min(best, t.min_period_ps);
  CHECK(*a.sta->min_period_ps() == Approx(best));
}

TEST_CASE("sta: a netlist OpenSTA cannot link names the file", "[synth_asap7]") {
  const std::string dir = std::string(SYNTH_WORK_DIR) + "/sta_bad";
  std::filesystem::create_directories(dir);
  Asap7Libraries libs = prepare_asap7_libraries(default_pdk_dir(), SYNTH_CACHE_DIR);
  write_text(dir + "/netlist.v", "module bad(a, y);\n  input a;\n  output y;\n  NOT_A_CELL u (.A(a), .Y(y));\nendmodule\n");
  write_text(dir + "/c.sdc", "create_clock -name clk -period 1000\n");
  fetta::flows::sta::Run run{{libs.comb_lib, libs.seq_lib}, dir + "/netlist.v", "bad", dir + "/c.sdc", dir};
  CHECK_THROWS_WITH(fetta::flows::sta::run_sta(run, 1000, nullptr), Catch::Contains(dir + "/netlist.v"));
  write_text(dir + "/netlist.v", "module bad(a, y);\n  input a;\n  output y;\n  INVx1_ASAP7_75t_R u (.A(a), .Y(y));\nendmodule\n");
  write_text(dir + "/c.sdc", "create_clock -name clk -period 1000\nset_load 1 [get_ports nope]\n");
  CHECK_THROWS_WITH(fetta::flows::sta::run_sta(run, 1000, nullptr), Catch::Contains(dir + "/c.sdc"));
}

// rtl_gen's clock gates (Module::clock_gate, cells) become the library's ICG cells; the registers
// on their clocks are timed against the clock they pass, and OpenSTA checks each gate's enable.
TEST_CASE("asap7: clock gates map to ICG cells whose enables OpenSTA checks, met at 1 GHz and violated at 7 GHz",
          "[synth_asap7][clock_gate]") {
  Options o = asap7_options();
  SynthReport r = run_synth(CORPUS_DIR "/gated_regs_cells", std::string(SYNTH_WORK_DIR) + "/asap7_gated", o);
  const ModuleResult& top = module(r, "gated_regs_cells");
  check_plausible(top, 1000);
  const Asap7Metrics& a = *top.asap7;
  CHECK(a.flops == 8 + 8 + 8 + 8);  // count, ra, ra2, rb: none lost to the gated clocks
  CHECK(a.clock_gates == 3);  // cg_a_rst, cg_a, cg_b
  REQUIRE(a.sta);
  CHECK(a.sta->clock_gates == 3);
  CHECK(a.sta->gating_failing == 0);
  REQUIRE(a.sta->gating_worst_slack_ps);
  CHECK(*a.sta->gating_worst_slack_ps > 0);
  CHECK(a.sta->endpoints >= 32 + 3);  // every flop on a gated clock is a timed endpoint, and every gate's enable
  CHECK(a.sta->failing_endpoints == 0);

  o.clock_mhz = 7000;  // 143 ps: the reset-opened gate's enable (an input, a buffer, an OR) no longer meets its setup
  SynthReport fast = run_synth(CORPUS_DIR "/gated_regs_cells", std::string(SYNTH_WORK_DIR) + "/asap7_gated_fast", o);
  const Asap7Metrics& f = *module(fast, "gated_regs_cells").asap7;
  REQUIRE(f.sta);
  CHECK(f.sta->gating_failing >= 1);
  CHECK(*f.sta->gating_worst_slack_ps < 0);
}

TEST_CASE("asap7: a design gated by load enables has no clock gate", "[synth_asap7][clock_gate]") {
  SynthReport r = run_synth(CORPUS_DIR "/gated_regs_enables", std::string(SYNTH_WORK_DIR) + "/asap7_enables", asap7_options());
  const Asap7Metrics& a = *module(r, "gated_regs_enables").asap7;
  CHECK(a.flops == 32);
  CHECK(a.clock_gates == 0);
  REQUIRE(a.sta);
  CHECK(a.sta->clock_gates == 0);
}
