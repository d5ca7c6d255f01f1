// The FPGA flows end to end: multipliers on DSP slices (Xilinx UltraScale+), place and route
// with a real Fmax (iCE40), and a clear refusal when a design does not fit.
#include <catch2/catch.hpp>

#include <filesystem>

#include "flows/fpga.hpp"
#include "flows/synth.hpp"

using namespace fetta::flows::synth;
using Catch::Matchers::Contains;

namespace {

Options fpga_options(Target t, const std::string& modules = "all") {
  Options o;
  o.target = t;
  o.modules = modules;
  return o;
}

std::string work(const std::string& name) { return std::string(SYNTH_WORK_DIR) + "/" + name; }

}  // namespace

TEST_CASE("xilinx: signed_math's product goes to a DSP slice", "[synth_xilinx]") {
  SynthReport r = run_synth(CORPUS_DIR "/signed_math", work("xilinx_signed_math"), fpga_options(Target::xilinx));
  REQUIRE(r.modules.size() == 1);
  const XilinxMetrics& x = *r.modules[0].xilinx;
  // a * b appears twice in the RTL (prod and hi) and is shared: one multiplier, one DSP.
  CHECK(x.dsps == 1);
  CHECK(x.ffs == 0);
  CHECK(x.luts > 0);
  CHECK(x.luts < 80);  // an 8x8 multiplier in LUTs alone would take more
  CHECK(r.modules[0].cells_by_type.count("IBUF") == 0);  // out of context: no I/O buffers
  CHECK(r.settings.at("family") == "xcup");
}

TEST_CASE("xilinx: two multipliers, two DSPs; the integer MAC is one DSP", "[synth_xilinx]") {
  SynthReport r = run_synth(SYNTH_DESIGNS_DIR "/mul_pair_s8", work("xilinx_mul_pair"), fpga_options(Target::xilinx));
  const XilinxMetrics& x = *r.modules[0].xilinx;
  CHECK(x.dsps >= 2);
  CHECK(x.luts < 20);  // the products and their registers live in the DSPs

  SynthReport mac = run_synth(SYNTH_DESIGNS_DIR "/int_mac_i8_acc32_s2", work("xilinx_int_mac"),
                              fpga_options(Target::xilinx));
  const XilinxMetrics& m = *mac.modules[0].xilinx;
  CHECK(m.dsps == 1);
  CHECK(m.luts < 40);
  nlohmann::json j = to_json(mac);
  for (const char* key : {"luts", "ffs", "dsps", "brams"}) CHECK(j["modules"][0].contains(key));
}

TEST_CASE("xilinx: a RAM maps to memory primitives, not flip-flops", "[synth_xilinx]") {
  SynthReport r = run_synth(CORPUS_DIR "/dp_ram_w16_d32", work("xilinx_ram"), fpga_options(Target::xilinx));
  const XilinxMetrics& x = *r.modules[0].xilinx;
  CHECK(x.lutram_cells + x.ramb18 + x.ramb36 > 0);
  CHECK(x.ffs <= 16);  // at most the read register
}

TEST_CASE("ice40: place and route gives an Fmax", "[synth_ice40]") {
  SynthReport r = run_synth(CORPUS_DIR "/fifo_w8_d4", work("ice40_fifo"), fpga_options(Target::ice40));
  REQUIRE(r.modules.size() == 1);
  const Ice40Metrics& i = *r.modules[0].ice40;
  REQUIRE(i.fmax_mhz);
  CHECK(*i.fmax_mhz > 0);
  CHECK(*i.fmax_mhz < 1000);
  CHECK(i.ffs == 39);
  CHECK(i.lcs >= i.ffs);
  CHECK(i.lcs_available == 7680);  // hx8k
  CHECK(i.ios > 0);
  CHECK(i.target_met == (*i.fmax_mhz >= 50));
  CHECK(r.settings.at("device") == "hx8k");
  CHECK(r.settings.at("package") == "ct256");
  nlohmann::json j = to_json(r);
  CHECK(j["modules"][0]["fmax_mhz"].is_number());
}

TEST_CASE("ice40: a combinational module gets its Fmax between the harness registers", "[synth_ice40]") {
  SynthReport r = run_synth(CORPUS_DIR "/signed_math", work("ice40_comb"), fpga_options(Target::ice40));
  const Ice40Metrics& i = *r.modules[0].ice40;
  CHECK(i.ffs == 0);  // the module's own resources: the harness registers are not counted
  REQUIRE(i.fmax_mhz);
  CHECK(*i.fmax_mhz > 0);
  CHECK(std::filesystem::exists(work("ice40_comb") + "/signed_math/fetta_ooc_signed_math.sv"));
}

TEST_CASE("ice40: a design too big for the device is refused clearly", "[synth_ice40]") {
  Options o = fpga_options(Target::ice40);
  o.device = "lp384";  // 384 logic cells; the bank has 512 flip-flops
  CHECK_THROWS_WITH(run_synth(SYNTH_DESIGNS_DIR "/shift_bank_w8_d64", work("ice40_too_big"), o),
                    Contains("does not fit the iCE40 lp384") && Contains("ICESTORM_LC") && Contains("384"));
  o.package = "qn32";  // 21 I/O pins; the FIFO has 25 port bits
  CHECK_THROWS_WITH(run_synth(CORPUS_DIR "/fifo_w8_d4", work("ice40_io"), o), Contains("I/O pins"));
  o.device = "hx8k";
  o.package = "vq100";
  CHECK_THROWS_WITH(run_synth(CORPUS_DIR "/fifo_w8_d4", work("ice40_pkg"), o), Contains("--package"));
}

TEST_CASE("ice40 harness: ports from the emitted header, every one registered", "[synth_unit]") {
  const char* sv =
      "// header\n"
      "module mac (\n"
      "  input  logic              clk,\n"
      "  input  logic signed [7:0] a,\n"
      "  input  logic              en,\n"
      "  output logic [31:0]       y\n"
      ");\n"
      "endmodule\n";
  auto ports = parse_module_ports(sv, "mac");
  REQUIRE(ports);
  REQUIRE(ports->size() == 4);
  CHECK((*ports)[1].name == "a");
  CHECK((*ports)[1].is_signed);
  CHECK((*ports)[1].width == 8);
  CHECK((*ports)[2].width == 1);
  CHECK_FALSE((*ports)[3].input);
  CHECK((*ports)[3].width == 32);
  std::string w = ooc_wrapper("mac", *ports);
  CHECK_THAT(w, Contains("module fetta_ooc_mac ("));
  CHECK_THAT(w, Contains("a_q <= a;"));
  CHECK_THAT(w, Contains("y_q <= y_d;"));
  CHECK_THAT(w, Contains(".clk(clk)"));
  CHECK_THAT(w, Contains("logic signed [7:0] a_q;"));
  CHECK_FALSE(parse_module_ports(sv, "other"));
  CHECK_FALSE(parse_module_ports("module mac (\n  inout wire x\n);\n", "mac"));
  // A module without a clock gets one.
  std::string comb = ooc_wrapper("f", {{"x", true, false, 4}, {"z", false, false, 4}});
  CHECK_THAT(comb, Contains("input  logic clk"));
}

TEST_CASE("fpga: a design gated by clock-gate cells is refused, one gated by enables maps to clock enables",
          "[synth_ice40][clock_gate]") {
  CHECK_THROWS_WITH(run_synth(CORPUS_DIR "/gated_regs_cells", work("ice40_gated_cells"), fpga_options(Target::ice40)),
                    Catch::Contains("fetta gen --clock-gating enables"));
  SynthReport r = run_synth(CORPUS_DIR "/gated_regs_enables", work("ice40_gated_enables"), fpga_options(Target::ice40));
  REQUIRE(r.modules.size() == 1);
  REQUIRE(r.modules[0].ice40);
  CHECK(r.modules[0].ice40->ffs == 32);  // one clock: every register a flip-flop with an enable
}
