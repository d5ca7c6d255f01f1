// Emission against golden text, and determinism. Regenerate the golden files after an
// intended change with FETTA_UPDATE_GOLDEN=1 and review the diff.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "corpus.hpp"
#include "rtl_gen/rtl.hpp"

using namespace fetta::rtl;

namespace {

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void check_golden(const Module& m) {
  std::string text = emit_module(m);
  std::filesystem::path file = std::filesystem::path(GOLDEN_DIR) / (m.name() + ".sv");
  if (std::getenv("FETTA_UPDATE_GOLDEN")) std::ofstream(file) << text;
  INFO("golden file " << file);
  CHECK(text == read(file));
}

}  // namespace

TEST_CASE("emission matches the golden text", "[rtl_gen][emit]") {
  Design d;
  check_golden(*d.elaborate(corpus::Counter(4)));
  check_golden(*d.elaborate(corpus::SignedMath(0)));
  check_golden(*d.elaborate(corpus::DualPortRam({16, 32})));
  check_golden(*d.elaborate(corpus::CommandFsm(0)));
  auto tree = d.elaborate(corpus::AdderTree({4, 8}));
  check_golden(*tree);
}

TEST_CASE("long statements are wrapped at spaces, comments are not", "[rtl_gen][emit]") {
  std::string items;
  for (int i = 0; i < 40; ++i) items += fmt::format("{}(a_{} & b_{})", i ? " | " : "", i, i);
  const std::string stmt = "  assign y = {" + items + "};";
  const std::string comment = "  // " + std::string(120, 'c');
  const std::string wrapped = wrap_long_lines(stmt + "\n" + comment + "\nshort;\n");
  std::istringstream lines(wrapped);
  std::vector<std::string> out;
  for (std::string l; std::getline(lines, l);) out.push_back(l);
  REQUIRE(out.size() > 4);
  CHECK(out[out.size() - 2] == comment);
  CHECK(out.back() == "short;");
  std::string rejoined;
  for (size_t i = 0; i + 2 < out.size(); ++i) {
    INFO(out[i]);
    CHECK(out[i].size() <= 100);
    CHECK(out[i].back() != ' ');
    if (i > 0) CHECK(out[i].rfind("      ", 0) == 0);  // continuation: statement indent + 4
    rejoined += (i ? " " : "") + out[i].substr(out[i].find_first_not_of(' '));
  }
  CHECK("  " + rejoined == stmt);
  // Breaks come at the outermost bracket depth available: here between the OR terms.
  CHECK(out[1].rfind("      | (", 0) == 0);
}

TEST_CASE("the same parameters give byte-identical files and a manifest with hashes", "[rtl_gen][emit]") {
  auto emit_all = [](const std::filesystem::path& dir) {
    Design d;
    auto m = d.elaborate(corpus::AdderTree({8, 8}));
    return write_design(d, m->name(), dir, {{"purpose", "determinism test"}});
  };
  auto base = std::filesystem::temp_directory_path() / "fetta_rtl_gen_determinism";
  std::filesystem::remove_all(base);
  EmitResult a = emit_all(base / "a");
  EmitResult b = emit_all(base / "b");
  REQUIRE(a.files.size() == 4);
  for (size_t i = 0; i < a.files.size(); ++i) {
    CHECK(a.files[i].sha256 == b.files[i].sha256);
    CHECK(read(base / "a" / a.files[i].file) == read(base / "b" / b.files[i].file));
    CHECK(sha256_hex(read(base / "a" / a.files[i].file)) == a.files[i].sha256);
  }
  CHECK(read(base / "a" / "filelist.f") == "add_stage_w8.sv\nadd_stage_w9.sv\nadd_stage_w10.sv\nadder_tree_n8_w8.sv\n");
  std::string manifest = read(base / "a" / "manifest.json");
  CHECK_THAT(manifest, Catch::Contains("\"top\": \"adder_tree_n8_w8\""));
  CHECK_THAT(manifest, Catch::Contains(a.files.back().sha256));
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::filesystem::remove_all(base);
}

// Module::clock_gate: cells give every gate an ICG instance per reset kind and the registers its
// clock with no load enable of the gate's; enables give plain registers with the gate's enable.
TEST_CASE("clock gates are cells or enables, as the design asks", "[rtl_gen][emit][clock_gate]") {
  Design cells(View::synthesis, ClockGating::cells);
  const std::string c = emit_module(*cells.elaborate(corpus::GatedRegs("cells")));
  CHECK(c.find("fetta_clock_gate cg_a_rst (") != std::string::npos);  // ra has a reset: opens during it
  CHECK(c.find("fetta_clock_gate cg_a (") != std::string::npos);      // ra2 has none
  CHECK(c.find("fetta_clock_gate cg_b (") != std::string::npos);
  CHECK(c.find("cg_b_rst") == std::string::npos);                      // no register of b has a reset
  CHECK(c.find("assign cg_a_rst_en = en_a | rst;") != std::string::npos);
  CHECK(c.find("assign cg_a_en = en_a;") != std::string::npos);
  CHECK(c.find("always_ff @(posedge cg_a_gclk) begin\n    if (own_en) begin\n      ra2 <=") != std::string::npos);
  CHECK(c.find("always_ff @(posedge cg_b_gclk) begin\n    rb <=") != std::string::npos);
  CHECK(c.find("if (en_") == std::string::npos);  // no gate's enable as a load enable
  REQUIRE(cells.find(ClockGateCell::kModule) != nullptr);
  const std::string icg = emit_module(*cells.find(ClockGateCell::kModule));
  CHECK(icg.find("always_latch") != std::string::npos);
  CHECK(icg.find("assign gclk = clk & en_latched;") != std::string::npos);

  Design enables(View::synthesis, ClockGating::enables);
  const std::string e = emit_module(*enables.elaborate(corpus::GatedRegs("enables")));
  CHECK(e.find("fetta_clock_gate") == std::string::npos);
  CHECK(e.find("always_ff @(posedge clk) begin\n    if (en_a & own_en) begin\n      ra2 <=") != std::string::npos);
  CHECK(e.find("end else if (en_a) begin\n      ra <=") != std::string::npos);
  CHECK(enables.find(ClockGateCell::kModule) == nullptr);

  // The views' defaults: cells for synthesis, enables for simulation.
  CHECK(Design(View::synthesis).clock_gating() == ClockGating::cells);
  CHECK(Design(View::simulation).clock_gating() == ClockGating::enables);
  CHECK(parse_clock_gating("enables") == ClockGating::enables);
  CHECK_THROWS_WITH(parse_clock_gating("latches"), Catch::Contains("allowed: cells, enables"));
}

namespace {
struct BadGate : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "test::BadGate"; }
  std::string module_name() const override { return fmt::format("bad_gate_{}", p); }
  ParamList params() const override { return {{"case", std::to_string(p)}}; }
  void build(Module& m) const override {
    Sig en = m.input("en", UInt(p == 0 ? 2 : 1));
    Sig q = m.output("q", UInt(1));
    if (p == 0) m.clock_gate("g", en);  // a two-bit enable
    const GatedClock g = m.clock_gate("g", en);
    if (p == 1) m.clock_gate("g", en);  // the same name twice
    GatedClock foreign = g;
    static Module* other = nullptr;
    if (p == 2) foreign.owner = other;  // a gate of another module
    Sig r = m.reg("r", UInt(1), clocked_by(foreign));
    r <<= ~r;
    q <<= r;
  }
};
}  // namespace

TEST_CASE("a clock gate refuses a wide enable, a second gate of its name and another module's registers",
          "[rtl_gen][clock_gate]") {
  Design d;
  CHECK_THROWS_WITH(d.elaborate(BadGate(0)), Catch::Contains("a clock gate's enable must be UInt<1>"));
  CHECK_THROWS_WITH(d.elaborate(BadGate(1)), Catch::Contains("a clock gate of this name exists already"));
  CHECK_THROWS_WITH(d.elaborate(BadGate(2)), Catch::Contains("its gated clock belongs to another module"));
  CHECK_NOTHROW(d.elaborate(BadGate(3)));
}
