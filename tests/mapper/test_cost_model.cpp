// Stage 2: the analytical model's terms on hand-computed GEMMs.
#include <catch2/catch.hpp>

#include "mapper/cost_model.hpp"
#include "mapper/csse.hpp"
#include "reference.hpp"

using namespace fetta::mapper;
using fetta::arch::ArchConfig;
using fetta::arch::Dataflow;

namespace {

ArchConfig one_ce(int rows, int cols) {
  ArchConfig c;
  c.ce.rows = rows;
  c.ce.cols = cols;
  c.ce.count = 1;
  c.ce.mac_product_stages = 0;  // the textbook formulas: a MAC without pipeline stages
  return c;
}

StepShape gemm(uint64_t batch, uint64_t m, uint64_t n, uint64_t k) {
  StepShape s;
  s.batch = batch, s.m = m, s.n = n, s.k = k;
  s.a_elems = batch * m * k, s.b_elems = batch * k * n, s.out_elems = batch * m * n;
  s.macs = batch * m * n * k;
  return s;
}

}  // namespace

TEST_CASE("a step's GEMM shape: batch, m, n, k", "[costmodel]") {
  // b kept by both (batch), i summed, m only left, n only right, t only left and summed.
  const auto net = test::network({{"A", {"b", "i", "m", "t"}}, {"B", {"b", "i", "n"}}}, {"b", "m", "n"},
                                 {{"b", 2}, {"i", 3}, {"m", 5}, {"n", 7}, {"t", 11}});
  const Problem p = make_problem(net);
  const Step s{1, 2, p.step_macs(1, 2)};
  const StepShape sh = step_shape(p, s);
  CHECK(sh.batch == 2);
  CHECK(sh.m == 5);
  CHECK(sh.n == 7);
  CHECK(sh.k == 33);
  CHECK(sh.a_elems == 330);
  CHECK(sh.b_elems == 42);
  CHECK(sh.out_elems == 70);
  CHECK(sh.batch * sh.m * sh.n * sh.k == s.macs);
}

TEST_CASE("cycles follow the SCALE-Sim fold formulas", "[costmodel]") {
  SECTION("without double buffering: R+C+T-2 (OS), 2R+C+T-2 (WS/IS) per fold") {
    ArchConfig c = one_ce(4, 4);
    c.ce.ib_double_buffer = false;
    c.ce.psum_double_buffer = false;
    AnalyticalModel m(c);
    const auto s = gemm(1, 8, 12, 20);
    // OS: rows m=8 (2 folds), cols n=12 (3 folds), T=k=20: 6 * (4+4+20-2)
    CHECK(m.step_with(s, "OS").compute_cycles == 6 * 26);
    // OS^T: rows n=12 (3), cols m=8 (2): same folds
    CHECK(m.step_with(s, "OS^T").compute_cycles == 6 * 26);
    // WS: rows k=20 (5 folds), cols n=12 (3), T=m=8: 15 * (8+4+8-2)
    CHECK(m.step_with(s, "WS").compute_cycles == 15 * 18);
    // IS: rows k=20 (5), cols m=8 (2), T=n=12: 10 * (8+4+12-2)
    CHECK(m.step_with(s, "IS").compute_cycles == 10 * 22);
    const auto best = m.step(s);
    CHECK(best.dataflow == "OS");
    CHECK(best.cycles == 156);
  }
  SECTION("double buffering: max(T, R) per fold plus one fill") {
    AnalyticalModel m(one_ce(4, 4));
    const auto s = gemm(1, 8, 12, 20);
    CHECK(m.step_with(s, "OS").compute_cycles == 6 * 20 + (4 + 4 - 2));
    CHECK(m.step_with(s, "WS").compute_cycles == 15 * 8 + (8 + 4 - 2));
    const auto tiny_t = gemm(1, 2, 4, 4);  // WS: T = m = 2 < R: preload bound
    CHECK(m.step_with(tiny_t, "WS").compute_cycles == 1 * 4 + 10);
  }
  SECTION("MAC stages, product stages included, add one cycle per fold each") {
    ArchConfig c = one_ce(4, 4);
    c.ce.ib_double_buffer = false;
    c.ce.psum_double_buffer = false;
    c.ce.mac_product_stages = 1;
    AnalyticalModel m(c);
    CHECK(m.step_with(gemm(1, 8, 12, 20), "OS").compute_cycles == 6 * 27);
    CHECK(m.step_with(gemm(1, 8, 12, 20), "WS").compute_cycles == 15 * 19);
  }
  SECTION("folds spread over the CEs, batch multiplies folds") {
    ArchConfig c = one_ce(4, 4);
    c.ce.count = 4;
    AnalyticalModel m(c);
    const auto s = gemm(3, 4, 4, 64);  // OS: 3 folds over 4 CEs -> 1 wave
    CHECK(m.step_with(s, "OS").compute_cycles == 64 + 6);
  }
  SECTION("only the configured dataflows are chosen") {
    ArchConfig c = one_ce(4, 4);
    c.ce.dataflows = {Dataflow::ws};
    AnalyticalModel m(c);
    CHECK(m.step(gemm(1, 8, 12, 20)).dataflow == "WS");
    CHECK(std::isinf(m.step_with(gemm(1, 8, 12, 20), "OS").cycles));
  }
}

TEST_CASE("memory terms: SRAM lanes and DRAM spills", "[costmodel]") {
  ArchConfig c = one_ce(4, 4);
  c.memory.banks = 2;
  c.memory.elems_per_bank = 2;  // 4 lanes
  c.memory.unified_depth = 64;  // 256 elements, 128 usable (ping-pong)
  AnalyticalModel m(c);
  // OS on 4x4, m=n=4, k=8: IA streams 4*8 = 32 elements, IB 32: 8 cycles on 4 lanes.
  const auto s = gemm(1, 4, 4, 8);
  const auto os = m.step_with(s, "OS");
  CHECK(os.sram_cycles == 8);
  CHECK(os.compute_cycles == 8 + 6);
  CHECK(os.dram_cycles == 0);
  // 8x16x16: footprint 128 + 256 + 128 = 512 elements > 128: all cross DRAM once.
  const auto big = gemm(1, 8, 16, 16);
  const auto os2 = m.step_with(big, "OS");
  CHECK(os2.dram_bytes == 512 * 2);
  CHECK(os2.dram_cycles == Approx(1024 / 25.6));
  CHECK(os2.cycles == std::max({os2.compute_cycles, os2.sram_cycles, os2.dram_cycles}));
}

TEST_CASE("energy: MAC term alone, and monotone in traffic", "[costmodel]") {
  ArchConfig c = one_ce(4, 4);
  c.energy.sram_read_pj_per_byte = 0;
  c.energy.sram_write_pj_per_byte = 0;
  c.energy.network_hop_pj = 0;
  c.energy.dram_read_pj_per_byte = 0;
  c.energy.dram_write_pj_per_byte = 0;
  c.energy.static_mw = 0;
  c.energy.mac_pj = 0.5;
  AnalyticalModel m(c);
  const auto s = gemm(2, 8, 8, 8);
  CHECK(m.step(s).energy_pj == Approx(0.5 * 1024));
  AnalyticalModel full(one_ce(4, 4));
  CHECK(full.step(s).energy_pj > 0.23 * 1024);
}

TEST_CASE("tree evaluation sums the steps; metrics", "[costmodel]") {
  const Problem p = make_problem(test::tt_paper_fp());
  const auto t = left_to_right(p);
  AnalyticalModel m{ArchConfig{}};
  const TreeCost tc = evaluate(p, t, m);
  REQUIRE(tc.steps.size() == t.steps.size());
  double cycles = 0;
  for (const auto& s : tc.steps) cycles += s.cycles;
  CHECK(tc.cycles == Approx(cycles));
  CHECK(tc.latency_us == Approx(cycles / 1000.0));
  CHECK(tc.edp == Approx(tc.energy_uj * tc.latency_us));
  CHECK(metric_value(tc, Metric::macs) == static_cast<double>(t.macs));
  CHECK(metric_value(tc, Metric::latency) == tc.cycles);
  CHECK(parse_metric("edp") == Metric::edp);
  CHECK(to_string(Metric::latency) == "latency");
  CHECK_THROWS_WITH(parse_metric("flops"), "unknown metric 'flops' (expected macs, latency, energy or edp)");
}

TEST_CASE("energy: the terms sum to the step's energy; a run's energy adds static power and its DRAM bytes", "[costmodel]") {
  ArchConfig c = one_ce(4, 4);
  c.energy.static_mw = 100;  // 100 mW at 1 GHz: 100 pJ per cycle
  c.energy.dram_read_pj_per_byte = 60;
  c.energy.dram_write_pj_per_byte = 40;
  c.clock_mhz = 1000;
  AnalyticalModel m(c);
  const auto s = gemm(2, 8, 8, 8);
  const StepCost sc = m.step(s);
  CHECK(sc.energy_pj == Approx(sc.energy.total()));
  CHECK(sc.energy.mac == Approx(1024 * c.energy.mac_pj));
  CHECK(sc.energy.static_power == Approx(100 * sc.cycles));
  // A run of those two steps over 1,000 cycles that moved 300 bytes in and 200 out of DRAM.
  const EnergyTerms r = run_energy(m, {s, s}, 1000, 300, 200);
  CHECK(r.static_power == Approx(100 * 1000));
  CHECK(r.dram == Approx(300 * 60 + 200 * 40));
  CHECK(r.mac == Approx(2 * sc.energy.mac));
  CHECK(r.sram == Approx(2 * sc.energy.sram));
  CHECK(r.network == Approx(2 * sc.energy.network));
}
