// Power from recorded activity on a small module: the corpus's adder tree (four 8-bit adder
// stages, 3 pipeline levels) traced in Verilator, synthesized for ASAP7 and analysed by OpenSTA.
// What must hold: the trace's activities are what the stimulus implies; every flip-flop of the
// netlist is named after a traced register bit; a stopped, idle block burns leakage only; an
// idle block with its clock running has no switching power; doubling every activity doubles
// the switching power; the blocks sum to OpenSTA's total; the activity reaches the gates behind
// registers and behind an SRAM macro's read data (the power views).
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
#include "flows/sram_macro.hpp"
#include "flows/synth.hpp"

namespace fs = std::filesystem;
namespace pw = fetta::flows::power;
namespace sy = fetta::flows::synth;

namespace {

constexpr uint64_t kSeed = 0x90e7;
constexpr int kCycles = 2000;
const std::string kWork = FETTA_POWER_WORK;

std::string trace(const std::string& mode) {
  const std::string fst = kWork + "/" + mode + ".fst";
  fs::create_directories(kWork);
  const auto r = fetta::flows::run_command(fmt::format("{} {} {} {} {}", FETTA_POWER_TRACER, fst, mode, kCycles, kSeed));
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
                            {"steps", {{{"layer", "l"}, {"phase", "fp"}, {"macs", 3000}, {"cycles", 200}, {"host_cycles", 700}},
                                       {{"layer", "l"}, {"phase", "bp"}, {"macs", 1000}, {"cycles", 100}, {"host_cycles", 0}}}}};
  pw::PowerReport r;
  r.work = pw::run_work_from_json(j, "run.json");
  CHECK(r.work->macs == 4000);
  CHECK(r.work->compute_cycles == 300);
  CHECK(r.work->host_cycles == 700);
  CHECK(r.work->phases == std::vector<std::string>{"fp", "bp"});
  r.run.clock_period_ps = 1000;
  r.activity_cycles = 1001;  // the trace holds the reset too
  r.result.total.internal_w = 0.010;
  r.result.total.leakage_w = 0.002;
  const pw::Energy e = pw::energy_of(r);
  CHECK(e.seconds == Approx(1001e-9));
  CHECK(e.joules == Approx(0.012 * 1001e-9));
  CHECK(e.pj_per_mac == Approx(0.012 * 1001e-9 * 1e12 / 4000));
  CHECK(e.tops_per_w == Approx(2.0 * 4000 / (0.012 * 1001e-9) * 1e-12));
  CHECK(e.edp_js == Approx(e.joules * e.seconds));
  r.activity_cycles = 357;
  CHECK_THROWS_WITH(pw::energy_of(r), Catch::Contains("run.json: a run of 1000 cycles"));
  CHECK_THROWS_WITH(pw::run_work_from_json(nlohmann::json::object(), "x.json"), Catch::Contains("x.json: not a `fetta run --json` report (field 'steps')"));
  nlohmann::json no_macs = j;
  no_macs["steps"][0].erase("macs");
  CHECK_THROWS_WITH(pw::run_work_from_json(no_macs, "y.json"), Catch::Contains("steps[].macs"));
}
