// Power from recorded activity on a small module: the corpus's adder tree (four 8-bit adder
// stages, 3 pipeline levels) traced in Verilator, synthesized for ASAP7 and analysed by OpenSTA.
// What must hold: the trace's activities are what the stimulus implies; every flip-flop of the
// netlist is named after a traced register bit; a stopped, idle block burns leakage only; an
// idle block with its clock running has no switching power; doubling every activity doubles
// the switching power; the blocks sum to OpenSTA's total; the activity reaches the gates behind
// registers and behind an SRAM macro's read data (the power views); the SRAM accesses counted
// from the trace are the ones the stimulus made, at CACTI's energy per access.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "flows/activity.hpp"
#include "flows/power.hpp"
#include "flows/power_view.hpp"
#include "flows/run.hpp"
#include "flows/sram_energy.hpp"
#include "flows/sram_macro.hpp"
#include "flows/synth_tools.hpp"
#include "flows/synth.hpp"

namespace fs = std::filesystem;
namespace pw = fetta::flows::power;
namespace sy = fetta::flows::synth;

namespace {

constexpr uint64_t kSeed = 0x90e7;
constexpr int kCycles = 2000;
const std::string kWork = FETTA_POWER_WORK;

// The adder tree's trace of `mode`; with a `sample` ("W/N"), the directory of a sampled one.
std::string trace(const std::string& mode, const std::string& sample = {}) {
  const std::string fst = kWork + "/" + mode + (sample.empty() ? ".fst" : "_sampled");
  fs::create_directories(kWork);
  fs::remove_all(fst);
  const auto r = fetta::flows::run_command(fmt::format("{} {} {} {} {} {}", FETTA_POWER_TRACER, fst, mode, kCycles, kSeed, sample));
  std::cout << r.output;
  REQUIRE(r.exit_code == 0);
  return fst;
}

// Synthesized once for all test cases.
const std::string& module_dir() {
  static const std::string dir = [] {
    sy::Options o;
    o.target = sy::Target::asap7;
    o.modules = "top";
    o.keep_hierarchy = true;  // the gates stay in their blocks (hierarchical.v)
    const sy::SynthReport r = sy::run_synth(FETTA_POWER_RTL, kWork + "/synth", o);
    return r.modules.at(0).work_dir;
  }();
  return dir;
}

pw::PowerResult power(const pw::Activity& a, const std::string& name, bool clock_stopped = false) {
  const std::string dir = kWork + "/" + name;
  fs::create_directories(dir);
  pw::Run run = pw::run_for_synthesized(module_dir(), "adder_tree_n8_w8", dir);
  run.clock_stopped = clock_stopped;
  return pw::run_power(run, a);
}

const pw::BitActivity& bit(const pw::Activity& a, const std::string& name) {
  for (const pw::BitActivity& b : a.bits)
    if (b.name == name) return b;
  FAIL("no bit " << name << " in the activity");
  throw;
}

}  // namespace

TEST_CASE("power: the FST read back gives the stimulus' activity", "[power]") {
  const pw::Activity a = pw::read_fst_activity(trace("random"));
  CHECK(a.scope == "TOP.adder_tree_n8_w8");
  CHECK(a.cycles == kCycles + 2);  // two reset cycles first
  // Random bytes: each input bit toggles with probability 1/2 per cycle and is 1 half the time.
  for (int i = 0; i < 8; ++i) {
    const pw::BitActivity& b = bit(a, fmt::format("in_3[{}]", i));
    CHECK(b.port);
    CHECK(b.toggle_rate == Approx(0.5).margin(0.05));
    CHECK(b.duty == Approx(0.5).margin(0.05));
  }
  const pw::BitActivity& rst = bit(a, "rst");
  CHECK(rst.toggle_rate == Approx(1.0 / a.cycles));  // falls once
  CHECK(rst.duty == Approx(2.0 / (kCycles + 2)).margin(0.002));
  // A register two levels down: the sum's LSB of the first stage toggles like an input bit.
  const pw::BitActivity& reg = bit(a, "add_l0_0.sum_q[0]");
  CHECK_FALSE(reg.port);
  CHECK(reg.toggle_rate == Approx(0.5).margin(0.05));
  // The JSON form reads back equal.
  const pw::Activity back = pw::activity_from_json(pw::to_json(a), "round trip");
  REQUIRE(back.bits.size() == a.bits.size());
  CHECK(back.bits[5].name == a.bits[5].name);
  CHECK(back.bits[5].toggle_rate == a.bits[5].toggle_rate);
  CHECK_THROWS_WITH(pw::activity_from_json(nlohmann::json::object({{"format", "vcd"}}), "x.json"),
                    Catch::Contains("x.json: format: \"vcd\"; allowed: fetta-activity-1"));
  CHECK_THROWS_WITH(pw::read_fst_activity(kWork + "/random.fst", "TOP.nope"), Catch::Contains("no scope 'TOP.nope'"));
  CHECK_THROWS_WITH(pw::read_fst_activity(FETTA_POWER_RTL "/adder_tree_n8_w8.sv"), Catch::Contains("not a readable FST"));
}

TEST_CASE("power: a sampled trace's windows read back as one activity", "[power]") {
  // The tracer's sample mode: the first 150 of every 500 cycles, each window a file, like
  // fetta run --trace DIR --trace-sample 150/500 (the run: 2 reset cycles + 2000).
  const std::string dir = trace("random", "150/500");
  const pw::Activity a = pw::read_fst_activity(dir);
  CHECK(a.source == dir);
  CHECK(a.scope == "TOP.adder_tree_n8_w8");
  REQUIRE(a.sample.sampled());
  CHECK(a.sample.windows == 5);
  CHECK(a.sample.run_cycles == kCycles + 2);
  // Every window counts its cycles' rising edges: 150 each, the last cut to the run's last 2.
  CHECK(a.cycles == 4 * 150 + 2);
  for (int i = 0; i < 8; ++i) {
    CHECK(bit(a, fmt::format("in_5[{}]", i)).toggle_rate == Approx(0.5).margin(0.06));
    CHECK(bit(a, fmt::format("in_5[{}]", i)).duty == Approx(0.5).margin(0.06));
  }
  // Reset is high in the first window's first two cycles only.
  CHECK(bit(a, "rst").duty == Approx(2.0 / a.cycles).margin(2.0 / a.cycles));
  // The windows merged: cycles summed, rates and duties weighted by each window's cycles.
  pw::Activity w1 = a, w2 = a;
  w1.cycles = 100;
  w2.cycles = 300;
  for (pw::BitActivity& b : w1.bits) b.toggle_rate = 0.2, b.duty = 1.0;
  for (pw::BitActivity& b : w2.bits) b.toggle_rate = 0.6, b.duty = 0.0;
  const pw::Activity m = pw::merged_windows({w1, w2});
  CHECK(m.cycles == 400);
  CHECK(m.bits[3].toggle_rate == Approx(0.5));
  CHECK(m.bits[3].duty == Approx(0.25));
  w2.bits.pop_back();
  CHECK_THROWS_WITH(pw::merged_windows({w1, w2}), Catch::Contains("no bit"));
  // The JSON form keeps the sample.
  const pw::Activity back = pw::activity_from_json(pw::to_json(a), "round trip");
  CHECK(back.sample.every == 500);
  CHECK(back.sample.run_cycles == a.sample.run_cycles);
  // A directory that is not a sampled trace, and one that lost a window.
  CHECK_THROWS_WITH(pw::read_fst_activity(kWork), Catch::Contains("a directory without sampling.json"));
  fs::remove(dir + "/window_00002.fst");
  CHECK_THROWS_WITH(pw::read_fst_activity(dir), Catch::Contains("window_00002.fst is missing"));
}

TEST_CASE("power: a window counts the activity while a signal is 1, and its complement the rest", "[power]") {
  const std::string fst = trace("random");
  const pw::Activity all = pw::read_fst_activity(fst);
  const pw::Activity in = pw::read_fst_activity(fst, {}, "clk", "rst");
  const pw::Activity out = pw::read_fst_activity(fst, {}, "clk", "!rst");
  CHECK(in.window == "rst");
  CHECK(in.cycles == 2);  // the two reset cycles
  CHECK(in.cycles + out.cycles == all.cycles);
  REQUIRE(in.bits.size() == all.bits.size());
  REQUIRE(out.bits.size() == all.bits.size());
  // Every bit's toggles and time at 1 split between the window and the rest.
  for (size_t i = 0; i < all.bits.size(); ++i) {
    const pw::BitActivity &a = all.bits[i], &x = in.bits[i], &y = out.bits[i];
    CHECK(x.toggle_rate * in.cycles + y.toggle_rate * out.cycles == Approx(a.toggle_rate * all.cycles).margin(1e-9));
    CHECK(x.duty * in.cycles + y.duty * out.cycles == Approx(a.duty * all.cycles).epsilon(1e-3));
  }
  CHECK(bit(in, "rst").duty == Approx(1.0));
  CHECK(bit(out, "rst").duty == 0);
  // Reset falls on the edge that ends the window: that change counts outside it.
  CHECK(bit(in, "rst").toggle_rate == 0);
  CHECK(bit(out, "rst").toggle_rate * static_cast<double>(out.cycles) == Approx(1.0));
  CHECK(bit(in, "in_0[3]").port);
  CHECK(pw::read_fst_activity(fst, {}, "clk", "in_0[3]").cycles > 0);  // a bus's bit
  CHECK_THROWS_WITH(pw::read_fst_activity(fst, {}, "clk", "nope"), Catch::Contains("no 1-bit signal 'nope'"));
}

TEST_CASE("power: flip-flops carry their register's name, blocks sum to the total, activity scales", "[power]") {
  const pw::Activity a = pw::read_fst_activity(trace("random"));
  const pw::PowerResult r = power(a, "random");
  std::cout << fmt::format("adder tree, {} cycles: {} cells, {} flops ({} annotated), total {:.3f} uW "
                           "(internal {:.3f}, switching {:.3f}, leakage {:.5f})\n",
                           a.cycles, r.cells, r.flops, r.flops_annotated, r.total.total_w() * 1e6,
                           r.total.internal_w * 1e6, r.total.switching_w * 1e6, r.total.leakage_w * 1e6);
  // Every flip-flop of the netlist matched a traced register bit (name mapping, docs/power.md).
  CHECK(r.flops > 0);
  CHECK(r.unmatched.empty());
  CHECK(r.flops_annotated == r.flops);
  CHECK(r.inputs_annotated == 8 * 8 + 1);  // in_0..in_7 and rst; clk is the SDC clock
  // Every gate switches: the logic behind the registers too (before the power views, 255 of the
  // 498 cells had no activity). What remains are cells whose every input is constant here.
  CHECK(r.idle_cells <= r.cells / 50);
  // Blocks: the four first-level stages, the two second-level, the last, and the top's glue.
  std::map<std::string, pw::BlockPower> by;
  pw::Breakdown sum;
  for (const pw::BlockPower& b : r.blocks) {
    by[b.block] = b;
    sum += b.power;
  }
  CHECK(by.count("add_l0_0") == 1);
  CHECK(by.count("add_l2_0") == 1);
  CHECK(sum.internal_w == Approx(r.total.internal_w).epsilon(1e-6));
  CHECK(sum.switching_w == Approx(r.total.switching_w).epsilon(1e-6));
  CHECK(sum.leakage_w == Approx(r.total.leakage_w).epsilon(1e-6));
  // The four first-level stages see the same statistics: within 20 % of each other.
  CHECK(by["add_l0_1"].power.switching_w == Approx(by["add_l0_0"].power.switching_w).epsilon(0.2));
  // Doubling every activity doubles the switching power, of the annotated nets (the flip-flops'
  // outputs) and of the propagated ones: at fixed duties OpenSTA's propagation is linear in the
  // toggle rates. Halved, not doubled, from the run: a bit of duty d toggles at most
  // 2 min(d, 1 - d) per cycle, and OpenSTA limits what exceeds that.
  const pw::PowerResult half = power(pw::scaled(a, 0.5), "random_half");
  CHECK(r.sequential.switching_w == Approx(2 * half.sequential.switching_w).epsilon(1e-6));
  CHECK(r.combinational.switching_w == Approx(2 * half.combinational.switching_w).epsilon(1e-4));
  CHECK(r.total.leakage_w == Approx(half.total.leakage_w));
}

TEST_CASE("power: an idle block has no switching power, and stopped it burns leakage only", "[power]") {
  const pw::Activity idle = pw::read_fst_activity(trace("idle"));
  for (const pw::BitActivity& b : idle.bits)
    if (pw::split_instance(b.name).second != "clk") REQUIRE(b.toggle_rate == 0);  // every block's clk port
  const pw::PowerResult running = power(idle, "idle");
  CHECK(running.total.switching_w == 0);
  CHECK(running.total.internal_w > 0);  // the clock pins of the flip-flops: no clock gating
  CHECK(running.total.leakage_w > 0);
  const pw::PowerResult stopped = power(idle, "idle_stopped", true);
  CHECK(stopped.total.internal_w == 0);
  CHECK(stopped.total.switching_w == 0);
  CHECK(stopped.total.leakage_w == Approx(running.total.leakage_w));
  CHECK(stopped.total.total_w() == stopped.total.leakage_w);
  CHECK(stopped.total.leakage_w > 0);
}

TEST_CASE("power: power views change register arcs, tie functions and macro outputs, nothing else", "[power]") {
  const std::string lib = R"lib(library (t) {
  type (d4) { base_type : array; data_type : bit; bit_width : 4; bit_from : 3; bit_to : 0; downto : true; }
  cell (INV) { pin (A) { direction : input; } pin (Y) { direction : output; function : "!A";
      timing () { related_pin : "A"; timing_type : combinational; } } }
  cell (DFF) { ff (IQN, IQNN) { clocked_on : "CLK"; next_state : "!D"; }
    pin (CLK) { direction : input; clock : true; } pin (D) { direction : input; }
    pin (QN) { direction : output; function : "IQN"; power_down_function : "(!VDD) + (VSS)";
      timing () { related_pin : "CLK"; timing_type : rising_edge; /* { in a comment } */ } } }
  cell (TIEHI) { pin (H) { direction : output; function : "1"; } }
  cell (RAM) { pin (clk) { direction : input; clock : true; }
    bus (q) { bus_type : d4; direction : output; timing () { related_pin : "clk"; timing_type : rising_edge; } } }
})lib";
  const pw::PowerView v = pw::power_view(lib, "t.lib");
  CHECK(v.clocked_arcs == 1);
  REQUIRE(v.constants.size() == 1);
  CHECK(v.constants[0].cell == "TIEHI");
  CHECK(v.constants[0].pin == "H");
  CHECK(v.constants[0].value);
  REQUIRE(v.macro_outputs.size() == 1);
  CHECK(v.macro_outputs[0].cell == "RAM");
  CHECK(v.macro_outputs[0].pin == "q");
  const std::string& t = v.liberty;
  // The inverter is untouched; the flip-flop's arc is combinational, its function kept, and so is
  // the power_down_function, which only ends in "function".
  CHECK(t.find(lib.substr(lib.find("cell (INV)"), lib.find("cell (DFF)") - lib.find("cell (INV)"))) != std::string::npos);
  CHECK(t.find("function : \"IQN\"; power_down_function : \"(!VDD) + (VSS)\"") != std::string::npos);
  CHECK(t.find("rising_edge") == std::string::npos);
  CHECK(t.find("pin (H) { direction : output;  }") != std::string::npos);
  CHECK(t.find("pin (q[0]) { function : \"fetta_pwr_q[0]\"; }") != std::string::npos);
  CHECK(t.find("pin (q[3]) { function : \"fetta_pwr_q[3]\"; }") != std::string::npos);
  CHECK(t.find("bus (fetta_pwr_q) { bus_type : d4; direction : input; capacitance : 0; }") != std::string::npos);
  CHECK(pw::power_view(t, "again").macro_outputs.empty());  // a view's macro outputs have functions
  CHECK_THROWS_WITH(pw::power_view("library (t) { cell (X) { pin (A) { }", "bad.lib"), Catch::Contains("bad.lib:1"));
  CHECK_THROWS_WITH(pw::power_view("cell (X) { }", "nolib.lib"), Catch::Contains("no library group"));
  // A gate-level view also gives every gate output a twin; registers, ties and macros as before.
  const pw::PowerView g = pw::power_view(lib, "t.lib", true);
  REQUIRE(g.logic_outputs.size() == 1);
  CHECK(g.logic_outputs[0].cell == "INV");
  CHECK(g.logic_outputs[0].pin == "Y");
  CHECK(g.liberty.find("pin (Y) { direction : output; function : \"fetta_pwr_Y\";") != std::string::npos);
  CHECK(g.liberty.find("pin (fetta_pwr_Y) { direction : input; capacitance : 0; }") != std::string::npos);
  CHECK(g.liberty.find("function : \"IQN\"") != std::string::npos);
  CHECK(g.clocked_arcs == 1);
  CHECK(g.constants.size() == 1);
  CHECK(g.macro_outputs.size() == 1);
  CHECK(v.logic_outputs.empty());
  CHECK(v.clock_gates.empty());

  // An integrated clock gate: the gated clock becomes a twin input, annotated from the latch.
  const std::string icg = R"lib(library (t) {
  cell (ICG) { clock_gating_integrated_cell : latch_posedge_precontrol;
    statetable ("CLK ENA SE", "IQ") { table : "L L L : - : L"; }
    pin (IQ) { direction : internal; internal_node : "IQ"; }
    pin (GCLK) { clock_gate_out_pin : true; direction : output; state_function : "CLK & IQ";
      timing () { related_pin : "CLK"; timing_type : combinational_rise; } }
    pin (CLK) { clock_gate_clock_pin : true; direction : input; clock : true; }
    pin (ENA) { clock_gate_enable_pin : true; direction : input; }
    pin (SE) { clock_gate_test_pin : true; direction : input; } }
})lib";
  const pw::PowerView c = pw::power_view(icg, "icg.lib");
  REQUIRE(c.clock_gates.size() == 1);
  CHECK(c.clock_gates[0].cell == "ICG");
  CHECK(c.clock_gates[0].pin == "GCLK");
  CHECK(c.liberty.find("function : \"fetta_pwr_GCLK\";") != std::string::npos);
  CHECK(c.liberty.find("pin (fetta_pwr_GCLK) { direction : input; capacitance : 0; }") != std::string::npos);
  CHECK(c.liberty.find("state_function") == std::string::npos);
  CHECK(c.clocked_arcs == 0);
  CHECK(c.macro_outputs.empty());
}

TEST_CASE("power: power views read the library with Liberty's one reader", "[power]") {
  // A tie cell behind a commented-out pin, a string with braces and a line continuation: the view
  // removes the tie's function and nothing else.
  const std::string lib = R"lib(library (t) {
  comment : "not a group: cell (X) { pin (Q) { direction : output; function : \"0\"; } }";
  cell (TIE) { /* pin (Z) { direction : output; function : "0"; } */
    pin (H) { direction : output; \
      function : "1"; } }
})lib";
  const pw::PowerView v = pw::power_view(lib, "tie.lib");
  REQUIRE(v.constants.size() == 1);
  CHECK(v.constants[0].cell == "TIE");
  CHECK(v.constants[0].pin == "H");
  std::string expected = lib;
  expected.erase(expected.find("function : \"1\";"), std::string("function : \"1\";").size());
  CHECK(v.liberty == expected);
  // Its errors are the reader's, with the line.
  CHECK_THROWS_WITH(pw::power_view("library (t) {\n  cell (X) { pin (A) { direction : \"output; } }\n}\n", "bad.lib"),
                    "bad.lib:2: Liberty syntax: unterminated string");
  CHECK_THROWS_WITH(pw::power_view("library (t) {\n  cell (R) { pin (clk) { direction : input; }\n"
                                   "    bus (q) { bus_type : w8; direction : output; timing () { timing_type : rising_edge; } } }\n}\n",
                                   "bus.lib"),
                    "bus.lib:3: bus q of cell R: no type group for its bus_type");
}

TEST_CASE("power: the logic behind an SRAM macro's read data gets the data's recorded activity", "[power]") {
  // A 16 x 4 macro of the flow's SRAM model whose read data drives four inverters.
  sy::MemoryMacro m;
  m.name = "ram";
  m.width = 4;
  m.depth = 16;
  m.abits = 4;
  m.rd_ports = 1;
  m.wr_ports = 1;
  m.same_address = {false};
  m.never_together = {false};
  const sy::MacroLibrary macros = sy::make_macro_library({m}, sy::SramModel{});
  REQUIRE(macros.cells.size() == 1);
  const std::string dir = kWork + "/sram";
  fs::create_directories(dir);
  std::ofstream(dir + "/sram.lib") << macros.liberty;
  std::ofstream(dir + "/sram_inv.v") << fmt::format(R"v(module sram_inv(clk, en, addr, q_n);
  input clk; input en; input [3:0] addr; output [3:0] q_n;
  wire [3:0] q;
  {} ram (.clk(clk), .rd0_en(en), .rd0_addr(addr), .rd0_data(q));
  INVx1_ASAP7_75t_R i0 (.A(q[0]), .Y(q_n[0]));
  INVx1_ASAP7_75t_R i1 (.A(q[1]), .Y(q_n[1]));
  INVx1_ASAP7_75t_R i2 (.A(q[2]), .Y(q_n[2]));
  INVx1_ASAP7_75t_R i3 (.A(q[3]), .Y(q_n[3]));
endmodule
)v", macros.cells[0].cell);
  pw::Run run = pw::run_for_synthesized(module_dir(), "adder_tree_n8_w8", dir);  // the ASAP7 libraries
  run.liberty.push_back(dir + "/sram.lib");
  run.netlist = dir + "/sram_inv.v";
  run.top = "sram_inv";
  run.port_constraints = "set_load 2 [all_outputs]\n";
  pw::Activity a;
  a.cycles = 1000;
  for (int i = 0; i < 4; ++i) a.bits.push_back({fmt::format("q[{}]", i), 0.25, 0.5, false});  // the read-data register
  a.bits.push_back({"en", 0.1, 0.5, true});
  const pw::PowerResult r = pw::run_power(run, a);
  CHECK(r.macro_bits == 4);
  CHECK(r.macro_bits_annotated == 4);
  CHECK(r.idle_cells == 0);
  CHECK(r.combinational.switching_w > 0);
  // The same read data toggling twice as often: twice the inverters' switching power.
  const pw::PowerResult x2 = pw::run_power(run, pw::scaled(a, 2));
  CHECK(x2.combinational.switching_w == Approx(2 * r.combinational.switching_w).epsilon(1e-4));
  // Without the read data's activity the inverters and the macro have none.
  a.bits.erase(a.bits.begin(), a.bits.begin() + 4);
  const pw::PowerResult none = pw::run_power(run, a);
  CHECK(none.macro_bits_annotated == 0);
  CHECK(none.idle_cells == 5);
}

TEST_CASE("power: energy of a run from its report, and a report of another run refused", "[power]") {
  const nlohmann::json j = {{"sim_cycles", 1000},
                            {"dram", {{"bytes_read", 640}, {"bytes_written", 128}}},
                            {"steps", {{{"layer", "l"}, {"phase", "fp"}, {"macs", 3000}, {"cycles", 200}, {"host_cycles", 700}},
                                       {{"layer", "l"}, {"phase", "bp"}, {"macs", 1000}, {"cycles", 100}, {"host_cycles", 0}}}}};
  pw::PowerReport r;
  r.work = pw::run_work_from_json(j, "run.json");
  CHECK(r.work->macs == 4000);
  CHECK(r.work->compute_cycles == 300);
  CHECK(r.work->host_cycles == 700);
  CHECK(r.work->phases == std::vector<std::string>{"fp", "bp"});
  CHECK(r.work->busy_cycles == -1);  // not in this report
  nlohmann::json with_busy = j;
  with_busy["controller_busy_cycles"] = 321;
  CHECK(pw::run_work_from_json(with_busy, "run.json").busy_cycles == 321);
  r.run.clock_period_ps = 1000;
  r.activity_cycles = 1001;  // the trace holds the reset too
  r.result.total.internal_w = 0.010;
  r.result.total.leakage_w = 0.002;
  r.result.sram.joules = 3e-12;
  const pw::Energy e = pw::energy_of(r);
  CHECK(e.seconds == Approx(1001e-9));
  CHECK(e.core_j == Approx(0.012 * 1001e-9));
  CHECK(e.sram_j == Approx(3e-12));
  REQUIRE(e.dram_included);
  CHECK(e.dram_j == Approx((640 * r.dram.read_pj_per_byte + 128 * r.dram.write_pj_per_byte) * 1e-12));
  const double joules = 0.012 * 1001e-9 + 3e-12 + e.dram_j;
  CHECK(e.joules == Approx(joules));
  CHECK(e.pj_per_mac == Approx(joules * 1e12 / 4000));
  CHECK(e.tops_per_w == Approx(2.0 * 4000 / joules * 1e-12));
  CHECK(e.edp_js == Approx(e.joules * e.seconds));
  // A window's share of the DRAM traffic is not known: no DRAM energy.
  r.activity_window = "busy";
  CHECK_FALSE(pw::energy_of(r).dram_included);
  CHECK(pw::energy_of(r).joules == Approx(0.012 * 1001e-9 + 3e-12));
  r.activity_window.clear();
  // A sampled trace: the first 100 of every 400 cycles of the 1000-cycle run, 300 traced (the
  // last window is cut at 1000): its power stands for the run's 1000 cycles, its SRAM accesses
  // for 1000/300 of the traced ones, and DRAM is the run's.
  r.activity_cycles = 300;
  r.sample.window = 100;
  r.sample.every = 400;
  r.sample.windows = 3;
  r.sample.run_cycles = 1000;
  CHECK(r.sample_scale() == Approx(1000.0 / 300));
  const pw::Energy s = pw::energy_of(r);
  CHECK(s.cycles == 1000);
  CHECK(s.seconds == Approx(1000e-9));
  CHECK(s.core_j == Approx(0.012 * 1000e-9));
  CHECK(s.sram_j == Approx(3e-12 * 1000 / 300));
  CHECK(s.dram_j == Approx(e.dram_j));
  // The check of the sample: the controller's busy share in the windows against the run's.
  CHECK(r.sample_check_text().empty());  // the report has no busy count
  r.work->busy_cycles = 400;
  r.traced_busy = 0.5;
  CHECK_THAT(r.sample_check_text(), Catch::Contains("busy 50.0 % of the traced cycles and 40.0 % of the run's: off by "
                                                    "10.0 points"));
  r.traced_busy = 0.41;
  CHECK_THAT(r.sample_check_text(), Catch::EndsWith("the windows are representative"));
  r.activity_window = "busy";  // of the 300 traced cycles, 150 busy: 500 of the run
  r.activity_cycles = 150;
  CHECK(pw::energy_of(r).cycles == 500);
  CHECK(pw::energy_of(r).core_j == Approx(0.012 * 500e-9));
  r.activity_window.clear();
  r.sample.run_cycles = 2000;  // another run's sampled trace
  CHECK_THROWS_WITH(pw::energy_of(r), Catch::Contains("run.json: a run of 1000 cycles, but the sampled trace"));
  r.sample.every = 0;
  r.activity_cycles = 357;
  CHECK_THROWS_WITH(pw::energy_of(r), Catch::Contains("run.json: a run of 1000 cycles"));
  CHECK_THROWS_WITH(pw::run_work_from_json(nlohmann::json::object(), "x.json"), Catch::Contains("x.json: not a `fetta run --json` report (field 'steps')"));
  nlohmann::json no_macs = j;
  no_macs["steps"][0].erase("macs");
  CHECK_THROWS_WITH(pw::run_work_from_json(no_macs, "y.json"), Catch::Contains("steps[].macs"));
  nlohmann::json no_dram = j;
  no_dram.erase("dram");
  CHECK_THROWS_WITH(pw::run_work_from_json(no_dram, "z.json"), Catch::Contains("z.json: not a `fetta run --json` report (field 'dram.bytes_read')"));
}

TEST_CASE("power: the LPDDR4 model is Micron's IDD method on the part's currents", "[power]") {
  const pw::DramEnergyModel m = pw::lpddr4_micron();
  // By hand: a BL16 burst is 5 ns and 32 bytes; a 2 KB page's activation is tRC = 60.625 ns.
  const double read_core = 1.1 * (275 - 30) * 5 / 32, read_io = 1.1 * (150 - 0.75) * 5 / 32;
  const double activate = (1.8 * (3.5 - (2.25 * 68 + 2.0 * 29) / 97) + 1.1 * (45 - (30.0 * 68 + 27.0 * 29) / 97)) * 60.625 / 2048;
  CHECK(m.read_io_pj_per_byte == Approx(read_io));
  CHECK(m.activate_pj_per_byte == Approx(activate));
  CHECK(m.read_pj_per_byte == Approx(read_core + read_io + activate));
  CHECK(m.write_pj_per_byte == Approx(1.1 * (210 - 30) * 5 / 32 + 1.1 * (55 - 0.75) * 5 / 32 + activate));
}

TEST_CASE("power: SRAM energy per access comes from the CACTI table, between and beyond its points", "[power]") {
  const pw::MacroShape um = pw::macro_shape("fetta_sram_w16_d2048_1r1rw");
  CHECK(um.width == 16);
  CHECK(um.depth == 2048);
  CHECK(um.rd == 1);
  CHECK(um.wr == 0);
  CHECK(um.rw == 1);
  CHECK_THROWS_WITH(pw::macro_shape("DFFHQNx1_ASAP7_75t_R"), Catch::Contains("DFFHQNx1_ASAP7_75t_R: not an SRAM macro"));
  auto point = [](const char* ports, int w, int d) -> const pw::CactiPoint& {
    for (const pw::CactiPoint& p : pw::cacti_sram_table())
      if (std::string(p.ports) == ports && p.width == w && p.depth == d) return p;
    FAIL("no CACTI point " << ports << " w" << w << " d" << d);
    throw;
  };
  const pw::SramEnergyModel model;
  CHECK(model.scale() == Approx(0.765625));
  // On a point: CACTI's figure at 0.7 V.
  const pw::AccessEnergy on = pw::access_energy(um, model);
  CHECK(on.read_pj == Approx(point("1r1rw", 16, 2048).read_pj * model.scale()));
  CHECK(on.write_pj == Approx(point("1r1rw", 16, 2048).write_pj * model.scale()));
  CHECK_FALSE(on.outside);
  CHECK(on.basis == "CACTI 1r1rw w16 d2048");
  // Between points: the geometric mean halfway in log2(depth).
  const pw::AccessEnergy mid = pw::access_energy(pw::macro_shape("fetta_sram_w16_d2896_1r1rw"), model);
  const double lo = point("1r1rw", 16, 2048).read_pj, hi = point("1r1rw", 16, 4096).read_pj;
  CHECK(mid.read_pj == Approx(std::sqrt(lo * hi) * model.scale()).epsilon(1e-3));
  CHECK_FALSE(mid.outside);
  // Beyond the table (CACTI's smallest array is 64 bytes): the nearest point, flagged.
  const pw::AccessEnergy tiny = pw::access_energy(pw::macro_shape("fetta_sram_w4_d16_1r1w"), model);
  CHECK(tiny.outside);
  CHECK(tiny.read_pj == Approx(point("1r1w", 8, 64).read_pj * model.scale()));
  // Ports the table has no column for: the column of as many physical ports, flagged.
  const pw::AccessEnergy three = pw::access_energy(pw::macro_shape("fetta_sram_w32_d512_1r1w1rw"), model);
  CHECK(three.outside);
  CHECK(three.read_pj == Approx(point("2r1w", 32, 512).read_pj * model.scale()));
  // More words or wider words cost more per access, in every column.
  for (const char* ports : {"1r1w", "1r1rw", "2r1w", "1rw"}) {
    CHECK(point(ports, 32, 4096).read_pj > point(ports, 32, 512).read_pj);
    CHECK(point(ports, 64, 512).read_pj > point(ports, 32, 512).read_pj);
  }
  CHECK(pw::block_of("accum.bank0.ram_e0", 1) == "accum");
  CHECK(pw::block_of("accum.bank0.ram_e0", 2) == "accum.bank0");
  CHECK(pw::block_of("accum.bank0.ram_e0", 5) == "accum.bank0");
  CHECK(pw::block_of("ram", 1) == "(top)");
}

TEST_CASE("power: SRAM accesses counted from the trace are the ones the stimulus made", "[power]") {
  // The corpus's 16 x 32 dual-port RAM, an SRAM macro in the flow, read and written at random.
  const std::string fst = kWork + "/dp_ram.fst";
  fs::create_directories(kWork);
  const auto traced = fetta::flows::run_command(fmt::format("{} {} {} {}", FETTA_POWER_RAM_TRACER, fst, kCycles, kSeed));
  std::cout << traced.output;
  REQUIRE(traced.exit_code == 0);
  long reads = -1, writes = -1;
  REQUIRE(std::sscanf(traced.output.substr(traced.output.find("reads ")).c_str(), "reads %ld writes %ld", &reads, &writes) == 2);
  sy::Options o;
  o.target = sy::Target::asap7;
  o.modules = "top";
  o.keep_hierarchy = true;
  const sy::SynthReport rep = sy::run_synth(FETTA_POWER_RAM_RTL, kWork + "/synth_ram", o);
  const std::string dir = kWork + "/ram";
  fs::create_directories(dir);
  const pw::Run run = pw::run_for_synthesized(rep.modules.at(0).work_dir, "dp_ram_w16_d32", dir);
  REQUIRE_FALSE(run.macros.empty());
  const pw::Activity a = pw::read_fst_activity(fst);
  const pw::SramAccesses s = pw::sram_accesses(fetta::flows::synth::read_text(run.macros), a);
  REQUIRE(s.macros.size() == 1);
  const pw::MacroAccesses& m = s.macros[0];
  CHECK(m.cell == "fetta_sram_w16_d32_1r1w");
  CHECK(m.nets == 17);  // the read enable and 16 mask bits
  CHECK(m.nets_found == 17);
  CHECK(m.reads == Approx(reads).epsilon(1e-9));
  CHECK(m.bits_written == Approx(16.0 * writes).epsilon(1e-9));
  CHECK(m.joules == Approx((reads * m.energy.read_pj + writes * m.energy.write_pj) * 1e-12));
  CHECK(s.joules == Approx(m.joules));
  // A net the activity does not name counts nothing and is reported.
  pw::Activity no_re = a;
  std::erase_if(no_re.bits, [](const pw::BitActivity& b) { return b.name == "re"; });
  const pw::SramAccesses s2 = pw::sram_accesses(fetta::flows::synth::read_text(run.macros), no_re);
  CHECK(s2.macros[0].nets_found == 16);
  CHECK(s2.macros[0].reads == 0);
  CHECK(s2.macros[0].bits_written == Approx(16.0 * writes).epsilon(1e-9));
  // Connections as a dump can write them: a whole bus, constants, bits of a bus.
  pw::Activity b;
  b.cycles = 100;
  for (int i = 0; i < 4; ++i) b.bits.push_back({fmt::format("u.m[{}]", i), 0.1, 0.25, false});
  b.bits.push_back({"u.en", 0.1, 0.5, false});
  const pw::SramAccesses s3 = pw::sram_accesses(R"(
  cell \fetta_sram_w4_d64_1r1w \u.ram
    connect \clk \clk
    connect \rd0_en \u.en
    connect \wr0_mask \u.m
  end
  cell \fetta_sram_w4_d64_1r1w \u.ram2
    connect \rd0_en 1'1
    connect \wr0_mask { \u.m [3] 2'10 \u.gone }
  end
)", b);
  REQUIRE(s3.macros.size() == 2);
  CHECK(s3.macros[0].reads == Approx(50));
  CHECK(s3.macros[0].bits_written == Approx(4 * 25));
  CHECK(s3.macros[0].nets == 5);
  CHECK(s3.macros[0].nets_found == 5);
  CHECK(s3.macros[1].reads == Approx(100));
  CHECK(s3.macros[1].bits_written == Approx(25 + 100));
  CHECK(s3.macros[1].nets == 5);
  CHECK(s3.macros[1].nets_found == 4);
  CHECK(s3.nets == 10);
  CHECK(s3.nets_found == 9);
  // The signals a trace must hold for the power run: the macro's nets (and the flip-flops').
  const pw::SignalFilter keep = pw::power_signals(run);
  for (const char* name : {"re", "we", "raddr", "rdata"}) CHECK(keep(name));
  CHECK_FALSE(keep("mem"));
  const pw::Activity kept = pw::read_fst_activity(fst, {}, "clk", {}, [](const std::string&) { return false; });
  CHECK(kept.bits.size() == 1 + 1 + 5 + 16 + 1 + 5 + 16);  // the ports only: clk we waddr wdata re raddr rdata
  CHECK(kept.cycles == a.cycles);
}

TEST_CASE("power: a run into a relative directory reads its files from there", "[power]") {
  // OpenSTA runs inside the work directory: the script must not name files relative to ours.
  const pw::Activity a = pw::read_fst_activity(trace("random"));
  const fs::path cwd = fs::current_path();
  fs::current_path(kWork);
  fs::create_directories("relative");
  pw::Run run = pw::run_for_synthesized(fs::relative(module_dir()).string(), "adder_tree_n8_w8", "relative");
  const pw::PowerResult r = pw::run_power(run, a);
  fs::current_path(cwd);
  CHECK(r.flops_annotated == 67);
  CHECK(r.total.total_w() > 0);
}

TEST_CASE("power: a gate-level trace's flip-flop states name their registers", "[power]") {
  pw::Activity gl;
  gl.cycles = 10;
  gl.bits = {{"a.q[0]_reg.IQN", 0.5, 0.25, false}, {"a.q[0]_reg.CLK", 2, 0.5, false}, {"_12_.Y", 0.3, 0.4, false},
             {"in[1]", 0.1, 0.5, true}};
  const pw::Activity a = pw::gate_level_activity(gl);
  REQUIRE(a.bits.size() == 3);
  CHECK(a.bits[0].name == "_12_.Y");
  CHECK(a.bits[1].name == "a.q[0]");
  CHECK(a.bits[1].toggle_rate == 0.5);
  CHECK(a.bits[1].duty == 0.75);  // IQN holds the inverted state
  CHECK(a.bits[2].name == "in[1]");
  CHECK(a.bits[2].port);
}

TEST_CASE("power: a trace that names few of the design's flip-flops is refused, saying the share", "[power]") {
  pw::PowerResult r;
  r.flops = 129;
  r.flops_annotated = 1;  // a trace of another design that shares one register name
  CHECK_THROWS_WITH(pw::require_traced_flops(r, "t.fst", "top_x", "TOP.sys"),
                    Catch::Contains("128 of the 129 flip-flops of top_x (99.2 %) are not named in scope 'TOP.sys'") &&
                        Catch::Contains("allowed: at most 2 %"));
  r.flops_annotated = 0;
  CHECK_THROWS_WITH(pw::require_traced_flops(r, "t.fst", "top_x", "TOP.sys"), Catch::Contains("none of the 129 flip-flops"));
  r.flops = 69471;  // the default top's trace: 150 renamed by synthesis
  r.flops_annotated = 69321;
  CHECK_NOTHROW(pw::require_traced_flops(r, "t.fst", "top_x", "TOP.sys"));
}

namespace {
// The gated registers' trace of `mode` and their power (synthesized once, hierarchy kept).
pw::PowerResult gated_power(const std::string& mode, pw::Activity* activity = nullptr) {
  const std::string fst = kWork + "/gated_" + mode + ".fst";
  fs::create_directories(kWork);
  const auto t = fetta::flows::run_command(fmt::format("{} {} {} {} {}", FETTA_POWER_GATED_TRACER, fst, mode, kCycles, kSeed));
  std::cout << t.output;
  REQUIRE(t.exit_code == 0);
  static const std::string dir = [] {
    sy::Options o;
    o.target = sy::Target::asap7;
    o.modules = "top";
    o.keep_hierarchy = true;
    return sy::run_synth(FETTA_POWER_GATED_RTL, kWork + "/gated_synth", o).modules.at(0).work_dir;
  }();
  const pw::Activity a = pw::read_fst_activity(fst);
  if (activity) *activity = a;
  const std::string out = kWork + "/gated_" + mode;
  fs::create_directories(out);
  return pw::run_power(pw::run_for_synthesized(dir, "gated_regs_cells", out), a);
}
}  // namespace

// A gated register clocks only in the cycles its gate's latch holds 1: each gate's clock takes
// its latch's traced duty (the stimulus' share of open cycles), and the flip-flops on it theirs.
TEST_CASE("power: flip-flops on a closed clock gate burn no clock power, an open one's share of cycles otherwise",
          "[power][clock_gate]") {
  pw::Activity partial;
  const pw::PowerResult busy = gated_power("busy");
  const pw::PowerResult idle = gated_power("idle");
  const pw::PowerResult part = gated_power("partial", &partial);
  for (const pw::PowerResult* r : {&busy, &idle, &part}) {
    CHECK(r->clock_gates == 3);
    CHECK(r->gated_flops == 24);  // ra, ra2, rb; the counter's 8 stay on clk
    CHECK(r->flops_annotated == r->flops);
  }
  // The latches' duty is the share of cycles each gate was open (3 and 7 in 10), to a cycle.
  CHECK(bit(partial, "cg_a.en_latched").duty == Approx(0.3).margin(2.0 / kCycles));
  CHECK(bit(partial, "cg_b.en_latched").duty == Approx(0.7).margin(2.0 / kCycles));
  CHECK(bit(partial, "cg_a_rst.en_latched").duty == Approx(0.3).margin(4.0 / kCycles));
  // Closed gates: only the counter's 8 flip-flops and the 3 gates clock, against 32 flip-flops
  // when open. The gated flip-flops' data pins still toggle (no data gating here) and a closed
  // gate's clock pin still does: 0.37 of the busy sequential power remains (measured; 0.47 when
  // the gated clocks were priced at the full clock).
  std::cout << fmt::format("sequential power: busy {:.3e} W, partial {:.3e} W, idle {:.3e} W\n",
                           busy.sequential.total_w(), part.sequential.total_w(), idle.sequential.total_w());
  CHECK(idle.sequential.total_w() < 0.42 * busy.sequential.total_w());
  // Open in part: 16 flip-flops on gates open 3 cycles in 10, 8 on one open 7 in 10, so the power
  // above the idle's is (16 x 0.3 + 8 x 0.7) / 24 = 0.43 of the busy run's (measured 0.46).
  const double share =
      (part.sequential.total_w() - idle.sequential.total_w()) / (busy.sequential.total_w() - idle.sequential.total_w());
  CHECK(share == Approx(0.433).margin(0.05));
  CHECK(part.sequential.total_w() < busy.sequential.total_w());
}
