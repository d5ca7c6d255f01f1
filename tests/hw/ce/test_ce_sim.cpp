// The Verilated CEs in the SystemC testbench (sim/ce) against the golden model: random GEMM
// tiles and multi-tile GEMMs in every strategy, bit-exact (bf16 -> fp32 in the CE's adding order)
// or exact (int16), with the measured cycles equal to the documented model (docs/ce.md).
// One Verilated model per configuration (ce_configs.hpp); every test prints its seed.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "Vce_1x1_bf16_wsisos_ib2_ps2_s0.h"
#include "Vce_1x1_int16_wsisos_ib2_ps2_s0.h"
#include "Vce_2x8_bf16_wsisos_ib2_ps2_s0.h"
#include "Vce_2x8_int16_wsisos_ib2_ps2_s0.h"
#include "Vce_3x2_int16_wsis_ib2_ps2_s1.h"
#include "Vce_3x2_int16_wsisos_ib1_ps1_s0.h"
#include "Vce_4x4_bf16_wsisos_ib2_ps2_s0.h"
#include "Vce_4x4_int16_wsisos_ib2_ps2_s0.h"
#include "Vce_8x8_bf16_wsisos_ib2_ps2_s0.h"
#include "Vce_8x8_int16_wsisos_ib2_ps2_s0.h"
#include "Vce_3x2_int16_wsis_ib2_ps2_p2_s1.h"
#include "Vce_3x2_int16_wsisos_ib1_ps1_p1_s0.h"
#include "Vce_4x4_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk.h"
#include "ce_configs.hpp"
#include "sim/ce/bench.hpp"
#include "verif/numerics.hpp"

// libsystemc wants an sc_main; Catch2 owns main() and the tests call sc_start themselves.
int sc_main(int, char**) { return 0; }

using namespace fetta;
using namespace fetta::sim::ce;
using Catch::Matchers::Contains;

namespace {

constexpr uint64_t kSeed = 20261122;

// Every Verilated model and its bench, built together before the first sc_start (SystemC
// elaborates once per process).
class Benches {
 public:
  Benches() {
#define FETTA_ADD_MODEL(top) add(std::make_unique<V##top>("dut_" #top), #top)
    FETTA_ADD_MODEL(ce_4x4_bf16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_4x4_int16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_8x8_bf16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_8x8_int16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_2x8_bf16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_2x8_int16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_1x1_bf16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_1x1_int16_wsisos_ib2_ps2_s0);
    FETTA_ADD_MODEL(ce_3x2_int16_wsisos_ib1_ps1_s0);
    FETTA_ADD_MODEL(ce_3x2_int16_wsis_ib2_ps2_s1);
    FETTA_ADD_MODEL(ce_4x4_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk);
    FETTA_ADD_MODEL(ce_3x2_int16_wsisos_ib1_ps1_p1_s0);
    FETTA_ADD_MODEL(ce_3x2_int16_wsis_ib2_ps2_p2_s1);
#undef FETTA_ADD_MODEL
  }
  CeBench& get(const std::string& top) { return *at(benches_, top); }
  sc_core::sc_module& model(const std::string& top) { return *at(models_, top); }

 private:
  void add(std::unique_ptr<sc_core::sc_module> model, const std::string& top) {
    for (const auto& cfg : test::ce_test_configs()) {
      if (cfg.top() != top) continue;
      benches_[top] = std::make_unique<CeBench>(("bench_" + top).c_str(), *model, cfg.params);
      models_[top] = std::move(model);
      return;
    }
    throw std::logic_error("no configuration in ce_configs.hpp for the model " + top);
  }
  template <typename M>
  static typename M::mapped_type::element_type* at(M& map, const std::string& top) {
    auto it = map.find(top);
    if (it == map.end()) throw std::logic_error("no Verilated model " + top);
    return it->second.get();
  }
  std::map<std::string, std::unique_ptr<sc_core::sc_module>> models_;
  std::map<std::string, std::unique_ptr<CeBench>> benches_;
};

Benches& benches() {
  static Benches b;
  return b;
}

const test::CeTestConfig& config(const std::string& top) {
  for (const auto& c : test::ce_test_configs())
    if (c.top() == top) return c;
  throw std::logic_error("no configuration " + top);
}

std::vector<hw::Strategy> strategies_of(const hw::CeParams& p) {
  std::vector<hw::Strategy> out;
  for (const hw::Strategy& s : hw::all_strategies()) {
    const bool built = s.dataflow == arch::Dataflow::ws ? p.pe.ws : s.dataflow == arch::Dataflow::is ? p.pe.is : p.pe.os;
    if (built) out.push_back(s);
  }
  return out;
}

// Runs one GEMM, prints the report, requires a bit-exact result in exactly the modelled cycles.
CeReport check(const std::string& top, const hw::Strategy& s, const hw::GemmShape& g, uint64_t seed, OperandMix mix,
               const PlanOptions& opt = {}) {
  CeBench& bench = benches().get(top);
  const GemmOperands ops = random_gemm(bench.params().pe.dtype, g, seed, mix);
  const ScoreResult res = run_gemm(bench, s, ops, opt);
  std::cout << "  seed=" << seed << " mix=" << to_string(mix) << " " << res.report.summary() << "\n";
  INFO(res.report.summary());
  REQUIRE(res.report.ok());
  REQUIRE(res.report.measured_cycles == res.report.predicted_cycles);
  return res.report;
}

// Shapes around the array size: one exact tile, partial tiles, K longer than R, and dimensions
// that are multiples of nothing.
std::vector<hw::GemmShape> shapes_for(const hw::CeParams& p) {
  const int64_t R = p.rows, C = p.cols;
  return {{R, R, C},          {1, 1, 1},      {C, R, R},         {2 * R + 1, 3 * R + 2, 2 * C + 1},
          {3, 2 * R + 1, 5},  {R + 3, 1, C + 2}, {7, 5 * R + 3, 3}};
}

void random_gemms(const std::string& top, int runs_per_strategy) {
  const hw::CeParams& p = config(top).params;
  const bool fp = p.pe.dtype == arch::DataType::bf16;
  const std::vector<OperandMix> mixes =
      fp ? std::vector<OperandMix>{OperandMix::uniform, OperandMix::special, OperandMix::wide, OperandMix::tiny}
         : std::vector<OperandMix>{OperandMix::uniform, OperandMix::wide};
  const auto shapes = shapes_for(p);
  uint64_t seed = kSeed;
  std::cout << top << ": random GEMMs, base seed " << kSeed << "\n";
  for (const hw::Strategy& s : strategies_of(p)) {
    for (int i = 0; i < runs_per_strategy; ++i, ++seed) {
      // The fixed shapes first, then random ones (M, N up to 3 tiles, K up to 6 tiles).
      hw::GemmShape g;
      if (static_cast<size_t>(i) < shapes.size()) {
        g = shapes[static_cast<size_t>(i)];
      } else {
        std::mt19937_64 rng(seed);
        const int64_t span = 3 * std::max(p.rows, p.cols) + 2;
        g = {1 + static_cast<int64_t>(rng() % span), 1 + static_cast<int64_t>(rng() % (6 * p.rows + 3)),
             1 + static_cast<int64_t>(rng() % span)};
      }
      INFO(top << " " << hw::to_string(s) << " seed " << seed);
      check(top, s, g, seed, mixes[static_cast<size_t>(i) % mixes.size()]);
    }
  }
}

// A long stream in every strategy: after fill, consecutive folds start exactly `stream` cycles
// apart, i.e. every PE does one MAC per cycle, and the utilization approaches 1.
void steady_state(const std::string& top) {
  const hw::CeParams& p = config(top).params;
  const int64_t R = p.rows, C = p.cols, L = 96;
  std::cout << top << ": steady state, seed " << kSeed << "\n";
  for (const hw::Strategy& s : strategies_of(p)) {
    hw::GemmShape g;
    switch (s.dataflow) {
      // Z gets two tiles each way; stationary folds also walk K (8 chunks), OS folds are long.
      case arch::Dataflow::ws: g = {L, 8 * R, 2 * C}; break;
      case arch::Dataflow::is: g = {2 * C, 8 * R, L}; break;
      case arch::Dataflow::os:
        g = s.ia_role == hw::IaRole::a ? hw::GemmShape{2 * R, 4 * L, 2 * C} : hw::GemmShape{2 * C, 4 * L, 2 * R};
        break;
    }
    CeBench& bench = benches().get(top);
    const GemmOperands ops = random_gemm(p.pe.dtype, g, kSeed, OperandMix::uniform);
    const CeProgram prog = plan_gemm(p, s, ops);
    const std::vector<ObservedOutput> seen = bench.run(prog);
    const ScoreResult res = score_gemm(prog, ops, seen);
    std::cout << "  " << res.report.summary() << "\n";
    INFO(res.report.summary());
    REQUIRE(res.report.ok());
    REQUIRE(res.report.measured_cycles == res.report.predicted_cycles);
    // Each fold's first output row, measured: consecutive folds are exactly one period apart,
    // and with double buffering the period is the stream length: after fill, every PE does one
    // useful MAC per cycle (a full fold is R*C*stream MACs in `stream` cycles).
    const int64_t per_fold = prog.mapping.os ? R : prog.mapping.stream;
    const int64_t stream = prog.mapping.stream;
    REQUIRE(static_cast<int64_t>(seen.size()) == prog.mapping.folds() * per_fold);
    for (int64_t f = 1; f < prog.mapping.folds(); ++f)
      REQUIRE(seen[static_cast<size_t>(f * per_fold)].cycle - seen[static_cast<size_t>((f - 1) * per_fold)].cycle ==
              prog.timing.period);
    const bool double_buffered = prog.mapping.os ? p.pe.psum_double_buffer : p.pe.ib_double_buffer;
    if (double_buffered) {
      REQUIRE(prog.timing.period == stream);
      // Only fill (the first load, the skew) and drain are lost.
      CHECK(res.report.measured_cycles - prog.mapping.folds() * stream ==
            prog.timing.first_start + prog.timing.out_first + prog.timing.out_span - stream);
    } else {
      std::cout << "    single-buffered: " << prog.timing.period << " cycles per fold of " << stream << "\n";
    }
  }
}

}  // namespace

TEST_CASE("4x4 bf16: random GEMMs in every strategy", "[sim][4x4_bf16]") { random_gemms("ce_4x4_bf16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("4x4 int16: random GEMMs in every strategy", "[sim][4x4_int16]") { random_gemms("ce_4x4_int16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("8x8 bf16: random GEMMs in every strategy", "[sim][8x8_bf16]") { random_gemms("ce_8x8_bf16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("8x8 int16: random GEMMs in every strategy", "[sim][8x8_int16]") { random_gemms("ce_8x8_int16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("2x8 bf16: random GEMMs in every strategy", "[sim][2x8_bf16]") { random_gemms("ce_2x8_bf16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("2x8 int16: random GEMMs in every strategy", "[sim][2x8_int16]") { random_gemms("ce_2x8_int16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("1x1 bf16: random GEMMs in every strategy", "[sim][1x1_bf16][pe]") { random_gemms("ce_1x1_bf16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("1x1 int16: random GEMMs in every strategy", "[sim][1x1_int16][pe]") { random_gemms("ce_1x1_int16_wsisos_ib2_ps2_s0", 30); }
TEST_CASE("3x2 int16 single-buffered: random GEMMs in every strategy", "[sim][3x2_sb]") {
  random_gemms("ce_3x2_int16_wsisos_ib1_ps1_s0", 30);
}
TEST_CASE("3x2 int16 stationary, pipelined MAC: random GEMMs", "[sim][3x2_piped]") {
  random_gemms("ce_3x2_int16_wsis_ib2_ps2_s1", 30);
}

TEST_CASE("registered products: random GEMMs in every strategy, results the product stages later", "[sim][product]") {
  random_gemms("ce_4x4_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk", 30);
  random_gemms("ce_3x2_int16_wsisos_ib1_ps1_p1_s0", 30);
  random_gemms("ce_3x2_int16_wsis_ib2_ps2_p2_s1", 30);
}

TEST_CASE("steady state: one MAC per PE per cycle after fill, every strategy", "[sim][steady]") {
  for (const auto& cfg : test::ce_test_configs()) steady_state(cfg.top());
}

TEST_CASE("64x64x64 GEMM on the 4x4 bf16 CE: cycles per strategy", "[sim][gemm64]") {
  const std::string top = "ce_4x4_bf16_wsisos_ib2_ps2_s0";
  std::cout << "64^3 GEMM on " << top << ", seed " << kSeed << "\n";
  for (const hw::Strategy& s : hw::all_strategies()) check(top, s, {64, 64, 64}, kSeed, OperandMix::uniform);
}

TEST_CASE("bf16 corner operands: NaN, Inf, signed zeros and flushed sums are bit-exact", "[sim][corners][4x4_bf16]") {
  // The combinational MAC and the default one (a registered product, a two-path adder).
  for (const std::string top : {"ce_4x4_bf16_wsisos_ib2_ps2_s0", "ce_4x4_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk"}) {
    std::cout << top << ": corner operands, base seed " << kSeed << "\n";
    uint64_t seed = kSeed + 1000;
    // Result classes seen, to show the mixes reach the corners (not a pass criterion by itself).
    std::map<std::string, int> classes;
    for (const hw::Strategy& s : hw::all_strategies())
      for (OperandMix mix : {OperandMix::special, OperandMix::wide, OperandMix::tiny}) {
        CeBench& bench = benches().get(top);
        const GemmOperands ops = random_gemm(arch::DataType::bf16, {6, 11, 7}, seed, mix);
        const ScoreResult res = run_gemm(bench, s, ops);
        std::cout << "  seed=" << seed++ << " mix=" << to_string(mix) << " " << res.report.summary() << "\n";
        INFO(res.report.summary());
        REQUIRE(res.report.ok());
        REQUIRE(res.report.measured_cycles == res.report.predicted_cycles);
        for (uint64_t x : res.c.v) {
          const auto u = static_cast<uint32_t>(x);
          classes[verif::fp32_is_nan(u) ? "NaN" : verif::fp32_is_inf(u) ? "Inf" : u == 0x80000000u ? "-0"
                                                    : u == 0 ? "+0" : "finite"]++;
        }
      }
    std::cout << "  result classes:";
    for (const auto& [k, n] : classes) std::cout << " " << k << "=" << n;
    std::cout << "\n";
    CHECK(classes["NaN"] > 0);
    CHECK(classes["Inf"] > 0);
    CHECK(classes["-0"] > 0);
    CHECK(classes["+0"] > 0);
    // Padding: K = 2 < R leaves two rows of the column padded. The column sum of the real rows is
    // -1.5*2^-126 + 2^-126 = -2^-127, flushed to -0; the padded rows (IA -0, IB +0) must keep it -0
    // in the raw output row (a +0 padding would give +0).
    GemmOperands ops;
    ops.dtype = arch::DataType::bf16;
    ops.a = Matrix(1, 2);
    ops.a.v = {0x80C0, 0x0080};
    ops.b = Matrix(2, 1);
    ops.b.v = {0x3F80, 0x3F80};
    REQUIRE(verif::fp32_add(verif::fp32_add(0, verif::bf16_mul(0x80C0, 0x3F80)), verif::bf16_mul(0x0080, 0x3F80)) ==
            0x80000000u);
    for (const char* name : {"ws_top", "ws_left", "is_top", "is_left"}) {
      CeBench& bench = benches().get(top);
      const CeProgram prog = plan_gemm(bench.params(), hw::parse_strategy(name), ops);
      const std::vector<ObservedOutput> seen = bench.run(prog);
      INFO(name);
      REQUIRE(seen.size() == 1);
      CHECK(seen[0].psum[0] == 0x80000000u);
      CHECK(score_gemm(prog, ops, seen).report.ok());
    }
  }
}

TEST_CASE("the documented schedule is tight: one cycle less corrupts results", "[sim][tight]") {
  std::cout << "tightness, seed " << kSeed << "\n";
  auto fails = [](const std::string& top, const char* strategy, hw::GemmShape g, PlanOptions opt) {
    CeBench& bench = benches().get(top);
    const GemmOperands ops = random_gemm(bench.params().pe.dtype, g, kSeed, OperandMix::uniform);
    const ScoreResult res = run_gemm(bench, hw::parse_strategy(strategy), ops, opt);
    std::cout << "  expected to fail: " << res.report.summary() << "\n";
    return !res.report.ok();
  };
  const std::string db = "ce_4x4_int16_wsisos_ib2_ps2_s0", sb = "ce_3x2_int16_wsisos_ib1_ps1_s0";
  // Double-buffered IB: the next load may start with the current fold (row r swaps at its
  // start + r), not a cycle earlier.
  PlanOptions eager;
  eager.eager_load = true;
  for (const char* s : {"ws_top", "ws_left", "is_top", "is_left"}) {
    CHECK(check(db, hw::parse_strategy(s), {6, 12, 8}, kSeed, OperandMix::uniform, eager).ok());
    PlanOptions early = eager;
    early.load_adjust = -1;
    CHECK(fails(db, s, {6, 12, 8}, early));
  }
  // Double-buffered Psum: folds shorter than R are limited by the drain (period R).
  PlanOptions tight;
  tight.period_adjust = -1;
  CHECK(fails(db, "os_a", {8, 2, 8}, tight));
  CHECK(fails(db, "os_b", {8, 2, 8}, tight));
  // Single buffers: load after the last IA, next OS fold after the drain.
  for (const char* s : {"ws_top", "ws_left", "is_top", "is_left", "os_a", "os_b"}) CHECK(fails(sb, s, {7, 7, 5}, tight));
  // A registered product moves the results, not the schedule: still tight.
  for (const char* s : {"ws_top", "os_a", "os_b"}) CHECK(fails("ce_3x2_int16_wsisos_ib1_ps1_p1_s0", s, {7, 7, 5}, tight));
}

TEST_CASE("testbench errors: dataflow not built in, wrong program, wrong model", "[sim][errors]") {
  CeBench& st = benches().get("ce_3x2_int16_wsis_ib2_ps2_s1");
  const GemmOperands ops = random_gemm(arch::DataType::int16, {4, 4, 4}, kSeed);
  CHECK_THROWS_WITH(run_gemm(st, hw::parse_strategy("os_a"), ops),
                    Contains("dataflow os is not built into this CE") && Contains("allowed"));
  const GemmOperands fp = random_gemm(arch::DataType::bf16, {4, 4, 4}, kSeed);
  CHECK_THROWS_WITH(run_gemm(st, hw::parse_strategy("ws_top"), fp), Contains("operands are bf16") && Contains("int16"));
  const CeProgram other = plan_gemm(config("ce_4x4_int16_wsisos_ib2_ps2_s0").params, hw::parse_strategy("ws_top"), ops);
  CHECK_THROWS_WITH(st.run(other), Contains("the program is for ce_4x4_int16"));
  CHECK_THROWS_WITH(random_gemm(arch::DataType::int16, {0, 4, 4}, kSeed), Contains("M=0"));
  // A bench whose parameters do not match the model is refused before anything is bound.
  sc_core::sc_module& one = benches().model("ce_1x1_int16_wsisos_ib2_ps2_s0");
  CHECK(CeBench::check_ports(one, config("ce_1x1_int16_wsisos_ib2_ps2_s0").params).size() == 14);
  CHECK_THROWS_WITH(CeBench::check_ports(one, config("ce_4x4_int16_wsisos_ib2_ps2_s0").params),
                    Contains("has no port 'ia_1'"));
  hw::CeParams fp_params = config("ce_1x1_int16_wsisos_ib2_ps2_s0").params;
  fp_params.pe.dtype = arch::DataType::bf16;  // 32-bit Psums instead of 48
  CHECK_THROWS_WITH(CeBench::check_ports(one, fp_params), Contains("port 'out_psum_0'") && Contains("not the 32-bit port"));
  hw::CeParams st_only = config("ce_1x1_int16_wsisos_ib2_ps2_s0").params;
  st_only.pe.os = false;
  CHECK_THROWS_WITH(CeBench::check_ports(one, st_only), Contains("has port 'ctrl_last'") && Contains("does not have"));
  hw::CeParams zero = st_only;
  zero.cols = 0;
  CHECK_THROWS_WITH(CeBench::check_ports(one, zero), Contains("ce.cols: 0"));
}

TEST_CASE("large random runs", "[.large][sim_large]") {
  for (const auto& cfg : test::ce_test_configs()) {
    const hw::CeParams& p = cfg.params;
    std::mt19937_64 rng(kSeed);
    std::cout << cfg.top() << ": large random run, seed " << kSeed << "\n";
    for (int i = 0; i < 250; ++i)
      for (const hw::Strategy& s : strategies_of(p)) {
        const hw::GemmShape g{1 + static_cast<int64_t>(rng() % 40), 1 + static_cast<int64_t>(rng() % 70),
                              1 + static_cast<int64_t>(rng() % 40)};
        const auto mix = static_cast<OperandMix>(rng() % (p.pe.dtype == arch::DataType::bf16 ? 4 : 2));
        check(cfg.top(), s, g, kSeed + 7919 * static_cast<uint64_t>(i), mix);
      }
  }
}
