// The ASAP7 flow end to end on corpus designs: the report's structure and figures that can be
// counted in the RTL (flip-flops, memories), and plausible area and delay.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <set>

#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"

using namespace fetta::flows::synth;

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
  CHECK(a.delay_ps == Approx(a.logic_delay_ps + a.flop_overhead_ps));
  CHECK(a.slack_ps == Approx(period_ps - a.delay_ps));
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
  CHECK(top.asap7->logic_delay_ps > 20);
  CHECK(top.asap7->logic_delay_ps < 400);
  CHECK(top.asap7->slack_ps > 0);
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
  CHECK(j["schema"] == "fetta.synth.v1");
  CHECK(j["target"] == "asap7");
  CHECK(j["clock_period_ps"] == 1000.0);
  CHECK(j["modules"].size() == 4);
  for (const char* key : {"area_um2", "cells", "flops", "delay_ps", "slack_ps", "logic_delay_ps", "memories"})
    CHECK(j["modules"][3].contains(key));
  CHECK(j["tools"].contains("yosys"));
  CHECK(j["run"].contains("started"));
  CHECK(r.commands.size() == 4);
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
  CHECK(a.sram_area_um2 == Approx(mem.area_um2));
  CHECK(a.area_um2 == Approx(a.logic_area_um2 + a.sram_area_um2));
  // No flop array was built for the 512 bits: the read register went into the macro too.
  CHECK(a.flops < 16);
  CHECK(r.modules[0].cells_by_type.count("$mem_v2") == 0);
}

TEST_CASE("asap7: a faster clock leaves less slack on the same logic", "[synth_asap7]") {
  Options o = asap7_options();
  o.clock_mhz = 4000;  // 250 ps
  SynthReport r = run_synth(CORPUS_DIR "/fifo_w8_d4", std::string(SYNTH_WORK_DIR) + "/asap7_fifo", o);
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 250);
  CHECK(a.flops == 2 + 2 + 3 + 4 * 8);  // rd_ptr, wr_ptr, used, 4 slots of 8 bits
  CHECK(a.slack_ps == Approx(250 - a.delay_ps));
}

TEST_CASE("asap7: the bf16 MAC (large)", "[synth_large]") {
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/fp_mac_bf16_fp32_s0",
                            std::string(SYNTH_WORK_DIR) + "/asap7_fp_mac", asap7_options("top"));
  const Asap7Metrics& a = *r.modules[0].asap7;
  check_plausible(r.modules[0], 1000);
  CHECK(a.flops == 0);             // combinational
  CHECK(a.logic_delay_ps > 200);   // a multiplier, an alignment shifter, an adder, a normalizer
  CHECK(a.area_um2 > 50);
  WARN(fmt::format("fp_mac_bf16_fp32_s0: {:.1f} um^2, {} cells, {:.1f} ps", a.area_um2, a.cells, a.delay_ps));
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
  // The delay is the worst stage's out-of-context path: an add of at most 10 bits.
  CHECK(top.asap7->logic_delay_ps < 400);
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
