// The compiler: GEMM roles, the cycle model, mapping choice, layouts, and the hardware's
// reduction order checked against independent orders of the golden model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <random>
#include <set>

#include "mapper/compile.hpp"
#include "mapper/os_gemm.hpp"
#include "verif/numerics.hpp"
#include "shipped_config.hpp"

using namespace fetta;
using namespace fetta::mapper;
using fetta::test::cfg_named;
using Catch::Matchers::Contains;

namespace {

GemmShape plain(int64_t M, int64_t K, int64_t N) {
  return gemm_shape("A", {"m", "k"}, {M, K}, "B", {"k", "n"}, {K, N}, {"m", "n"});
}

verif::Tensor<uint16_t> random_bf16(std::vector<std::string> labels, std::vector<int64_t> shape, std::mt19937_64& rng) {
  verif::Tensor<uint16_t> t(std::move(labels), std::move(shape));
  std::uniform_real_distribution<double> u(-1, 1);
  t.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = verif::bf16_from_double(u(rng)); });
  return t;
}

}  // namespace

TEST_CASE("GEMM roles from labels", "[compile]") {
  const GemmShape s = gemm_shape("G3", {"r2", "n1", "r3"}, {2, 3, 4}, "G4", {"r3", "n2"}, {4, 5}, {"r2", "n1", "n2"});
  CHECK(s.m.labels == std::vector<std::string>{"r2", "n1"});
  CHECK(s.k.labels == std::vector<std::string>{"r3"});
  CHECK(s.n.labels == std::vector<std::string>{"n2"});
  CHECK(s.macs() == 6 * 4 * 5);
  CHECK_THROWS_WITH(gemm_shape("A", {"b", "k"}, {2, 3}, "B", {"b", "k"}, {2, 3}, {"b"}),
                    Contains("label 'b' is in both operands and in the result"));
  CHECK_THROWS_WITH(gemm_shape("A", {"x", "k"}, {2, 3}, "B", {"k", "n"}, {3, 4}, {"n"}),
                    Contains("label 'x' of A is summed but is not in B"));
  CHECK_THROWS_WITH(gemm_shape("A", {"m", "k"}, {2, 3}, "B", {"k", "n"}, {4, 4}, {"m", "n"}), Contains("has size 3 in A and 4 in B"));
}

TEST_CASE("Cycle model on hand-computed schedules", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");  // C = 4, drain = 22
  REQUIRE(arch::system_timing(d).drain == 22);
  GemmMapping one{16, 1, 64, 4, 1, 1, 100};
  // load 4 cycles (gn*C), first IA at 4, last at 103, done seen at 104: pop + start + 105 + drain 22.
  CHECK(gemm_instr_cycles(d, 100, one) == 2 + 105 + 22);
  GemmMapping two{4, 4, 16, 16, 1, 2, 10};
  // load 16; S0 = 16; L1 = max(16, S0 + 1) = 17; S1 = max(L1 + 16, S0 + 10) = 33; GEMM state 33 + 10 + 1.
  CHECK(gemm_instr_cycles(d, 10, two) == 2 + 44 + 22);
  // Single-buffered IB (ce2x4_x8): the next load waits for the whole fold: L1 = S0 + M.
  const arch::ArchConfig s = cfg_named("ce2x4_x8");  // C = 4, drain = 15
  REQUIRE(arch::system_timing(s).drain == 15);
  GemmMapping sb{8, 1, 16, 4, 2, 1, 10};
  // load 4; S0 = 4; L1 = max(4, 4 + 10) = 14; S1 = max(18, 14) = 18; GEMM state 18 + 10 + 1.
  CHECK(gemm_instr_cycles(s, 10, sb) == 2 + 29 + 15);
  // IB from the top: Lt = 1 + (R-1)*s cycles per fold for every CE, whatever gn.
  GemmMapping top = two;
  top.ib_top = true;
  // load 4; S0 = 4; L1 = max(4, 5) = 5; S1 = max(9, 14) = 14; GEMM state 14 + 10 + 1.
  CHECK(gemm_instr_cycles(d, 10, top) == 2 + 25 + 22);
  arch::ArchConfig piped = d;
  piped.ce.dataflows = {arch::Dataflow::ws};
  piped.ce.mac_pipeline_stages = 2;  // s = 3: Lt = 1 + 3*3 = 10
  CHECK(arch::system_timing(piped).ib_top_load == 10);
  // load 10; S0 = 10; L1 = max(10, 11) = 11; S1 = max(21, 20) = 21; GEMM state 21 + 10 + 1.
  CHECK(gemm_instr_cycles(piped, 10, top) == 2 + 32 + arch::system_timing(piped).drain);
}

TEST_CASE("IB load path: the top where a fold's load from the left would stall the stream", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");
  // 12 x 8 x 64 (tt_fetta_example's first contraction): from the left a fold loads for gn*C cycles
  // while M = 12 rows stream; from the top every CE loads in R = 4.
  const CompiledGemm small = compile_gemm(d, plain(12, 8, 64), arch::Dataflow::ws);
  CHECK(small.map.ib_top);
  CHECK(small.jobs[0].instr.ib_top);
  CHECK(small.predicted_cycles < compile_gemm(d, plain(12, 8, 64), small.map.gk, false).predicted_cycles);
  CHECK_THAT(small.describe(), Contains("loaded from the top"));
  // The identity on the IB network (CE g column c reads lane g*C + c: every switch straight), the
  // multicast over the gn groups on IA.
  REQUIRE(small.map.gn > 1);
  CHECK(small.jobs[0].instr.ib_mask == 0);
  CHECK(small.jobs[0].instr.ib_sel == 0);
  CHECK(small.jobs[0].instr.ia_mask != 0);
  // A tie (one CE group: gn*C = R) keeps the load from the left.
  const CompiledGemm tie = compile_gemm(d, plain(4096, 64, 4), arch::Dataflow::ws);
  CHECK(tie.map.gn == 1);
  CHECK_FALSE(tie.map.ib_top);
  // B from the top takes R rows per fold: strides in the instruction.
  const CompiledGemm t = compile_gemm(d, plain(20, 40, 100), 2, true);  // K tile 8, N tile 32: 5 x 4 folds
  REQUIRE(t.jobs.size() == 1);
  CHECK(t.jobs[0].instr.b_nt_stride == 4);
  CHECK(t.jobs[0].instr.b_kt_stride == 4 * 4);
  CHECK(t.b_rows == 5 * 4 * 4);
  CHECK(image_shape(t, false, 0).rows == 5 * 4 * 4);
  CHECK(image_shape(t, false, 0).lanes == 64);
}

TEST_CASE("Layout of B for the top load: one row per (K tile, N tile, CE row), each CE's columns side by side", "[compile]") {
  const arch::ArchConfig d = cfg_named("ce4x4_x4");  // R = C = 4, 4 CEs, 16 lanes
  // gk = 2 (K tile 8), gn = 2 (N tile 8); K = 11 (2 K tiles, the second partial), N = 10 (2 N tiles).
  const CompiledGemm c = compile_gemm(d, plain(3, 11, 10), 2, true);
  REQUIRE(c.map.k_tiles == 2);
  REQUIRE(c.map.n_tiles == 2);
  verif::Tensor<uint16_t> b({"k", "n"}, {11, 10});
  b.for_each([&](const std::vector<int64_t>& i, uint16_t& x) { x = static_cast<uint16_t>(1 + i[0] * 10 + i[1]); });
  const RowImage ib = layout_b(c, b, 0);
  CHECK(ib.first_row == c.a_rows);
  CHECK(ib.rows == 2 * 2 * 4);
  CHECK(ib.lanes == 16);
  // Every element where the CE that holds it reads it: CE g = gn*gk + q row r column cc holds
  // B[kt*8 + q*4 + r][nt*8 + gn*4 + cc]; written out independently of b_slot.
  int64_t nonzero = 0;
  for (int64_t kt = 0; kt < 2; ++kt)
    for (int64_t nt = 0; nt < 2; ++nt)
      for (int64_t r = 0; r < 4; ++r)
        for (int64_t g = 0; g < 4; ++g)
          for (int64_t cc = 0; cc < 4; ++cc) {
            const int64_t q = g % 2, gn = g / 2, k = kt * 8 + q * 4 + r, n = nt * 8 + gn * 4 + cc;
            const uint16_t want = k < 11 && n < 10 ? b(k, n) : 0;  // padding +0
            const size_t at = static_cast<size_t>(((kt * 2 + nt) * 4 + r) * 16 + g * 4 + cc);
            INFO("kt " << kt << " nt " << nt << " r " << r << " CE " << g << " column " << cc);
            CHECK(ib.data[at] == want);
            nonzero += want != 0;
          }
  CHECK(nonzero == 11 * 10);
  // The same rows for the left load are (K tile, column): N tile x K tiles of them.
  const CompiledGemm left = compile_gemm(d, plain(3, 11, 10), 2, false);
  CHECK(layout_b(left, b, 0).rows == 2 * 2 * 8);
}

TEST_CASE("Mapping choice, programs and memory limits", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");
  const arch::IsaLayout isa(d);
  // K = 8 fits one CE's rows twice over: the model prefers spreading N over CE groups.
  const CompiledGemm c = compile_gemm(d, plain(768, 8, 128), arch::Dataflow::ws);
  CHECK(c.map.gk * c.map.gn == 16);
  for (int gk = 1; gk <= 16; gk *= 2) CHECK(c.predicted_cycles <= compile_gemm(d, plain(768, 8, 128), gk).predicted_cycles);
  CHECK(static_cast<int>(c.program.size()) == isa.red_chunks() + static_cast<int>(c.jobs.size()));
  CHECK(c.col_lane.size() == static_cast<size_t>(c.map.n_tile));
  // More accumulator rows than the accumulator has: M is split into jobs.
  const CompiledGemm big = compile_gemm(d, plain(2000, 4, 4), 16);
  CHECK(big.jobs.size() == 4);  // 512 rows per job
  CHECK(big.jobs.back().m_count == 2000 - 3 * 512);
  // A larger than a half of unified memory: each job's rows are written before it runs.
  const CompiledGemm tall = compile_gemm(d, plain(4096, 64, 4), 16);
  CHECK(tall.jobs.size() == 8);
  CHECK(tall.a_rows + tall.b_rows <= 2048);
  verif::Tensor<uint16_t> a({"m", "k"}, {4096, 64});
  a.for_each([&](const std::vector<int64_t>& i, uint16_t& x) { x = static_cast<uint16_t>(i[0] * 7 + i[1]); });
  const RowImage last = layout_a(tall, a, 0, 7);
  CHECK(last.rows == 512);
  CHECK(last.data[0] == a(7 * 512, 0));
  // B larger than a half: jobs over N tiles too.
  const CompiledGemm wide = compile_gemm(d, plain(100, 2560, 64), 16);
  CHECK(wide.map.n_chunk < wide.map.n_tiles);
  const int64_t n_jobs = (wide.map.n_tiles + wide.map.n_chunk - 1) / wide.map.n_chunk;
  const int64_t m_jobs = (100 + wide.map.m_chunk - 1) / wide.map.m_chunk;
  CHECK(wide.jobs.size() == static_cast<size_t>(n_jobs * m_jobs));
  CHECK(wide.a_rows + wide.b_rows <= 2048);
  // K too long for one N tile of B next to A: K chunks, the later ones accumulating.
  const CompiledGemm deep = compile_gemm(d, plain(8, 4 * 1000, 64), 1);  // K tile 4, N tile 64
  REQUIRE(deep.map.k_chunk < deep.map.k_tiles);
  CHECK_FALSE(deep.jobs[0].instr.acc_accumulate);
  CHECK(deep.jobs[1].instr.acc_accumulate);
  CHECK_FALSE(deep.jobs[0].last_k);
  CHECK(deep.jobs.back().last_k);
  CHECK(deep.a_rows + deep.b_rows <= 2048);
  // A memory too small for even one N tile.
  arch::ArchConfig tiny = d;
  tiny.memory.unified_depth = 4;
  CHECK_THROWS_WITH(compile_gemm(tiny, plain(4, 4, 4), 1), Contains("one N tile of B needs"));
  CHECK_THROWS_WITH(compile_gemm(d, plain(4, 4, 4), 3), Contains("allowed: a divisor of ce.count = 16"));
}

TEST_CASE("Layouts: K on lanes, padding where the tile is not full", "[compile]") {
  const arch::ArchConfig d = cfg_named("ce4x4_x4");  // R = C = 4, 4 CEs
  const CompiledGemm c = compile_gemm(d, plain(3, 5, 6), 1);  // gk 1: K tile 4, 2 K tiles; gn 4: N tile 16
  REQUIRE(c.map.k_tiles == 2);
  verif::Tensor<uint16_t> a({"m", "k"}, {3, 5});
  int v = 1;
  a.for_each([&](const std::vector<int64_t>&, uint16_t& x) { x = static_cast<uint16_t>(v++); });
  const RowImage ia = layout_a(c, a, 0x8000, 0);
  CHECK(ia.rows == 6);
  CHECK(ia.lanes == 4);
  CHECK(ia.data[0] == a(0, 0));
  CHECK(ia.data[3] == a(0, 3));
  CHECK(ia.data[static_cast<size_t>(3 * 4)] == a(0, 4));   // K tile 1, row m = 0
  CHECK(ia.data[static_cast<size_t>(3 * 4 + 1)] == 0x8000);  // k = 5 is padding (-0)
  verif::Tensor<uint16_t> b({"k", "n"}, {5, 6});
  b.for_each([&](const std::vector<int64_t>&, uint16_t& x) { x = static_cast<uint16_t>(v++); });
  const RowImage ib = layout_b(c, b, 0);
  CHECK(ib.first_row == c.a_rows);
  CHECK(ib.rows == 2 * 16);
  CHECK(ib.data[static_cast<size_t>(2 * 4 + 1)] == b(1, 2));   // row n = 2, lane k = 1
  CHECK(ib.data[static_cast<size_t>(7 * 4)] == 0);             // column n = 7 does not exist
}

TEST_CASE("Hardware reduction order equals independent golden orders", "[compile]") {
  std::mt19937_64 rng(2024);
  INFO("seed 2024");
  const arch::ArchConfig d = cfg_named("ce4x4_x4");
  // gk = 1: one CE column per K tile of R, tiles accumulated in order = AccumulationOrder::tiled(R).
  const CompiledGemm c1 = compile_gemm(d, plain(5, 11, 7), 1);
  const auto a = random_bf16({"m", "k"}, {5, 11}, rng);
  const auto b = random_bf16({"k", "n"}, {11, 7}, rng);
  const auto hw1 = verif::contract_bf16(a, b, {"m", "n"}, hardware_order(c1, 4));
  const auto ref1 = verif::contract_bf16(a, b, {"m", "n"}, verif::AccumulationOrder::tiled(4));
  CHECK(hw1.values() == ref1.values());
  // gk = 4, one K tile: chains of R, then the reduction network's tree; for this routing the
  // tree is balanced over the four chains: SumTree::chains_then_balanced(K, R) when K = 16.
  const CompiledGemm c4 = compile_gemm(d, plain(5, 16, 3), 4);
  REQUIRE(c4.map.k_tiles == 1);
  const auto a4 = random_bf16({"m", "k"}, {5, 16}, rng);
  const auto b4 = random_bf16({"k", "n"}, {16, 3}, rng);
  const auto hw4 = verif::contract_bf16(a4, b4, {"m", "n"}, hardware_order(c4, 4));
  const auto ref4 = verif::contract_bf16(a4, b4, {"m", "n"}, verif::AccumulationOrder::tree(verif::SumTree::chains_then_balanced(16, 4)));
  CHECK(hw4.values() == ref4.values());
}

TEST_CASE("Equally fast mappings: the caller's data-movement cost chooses, compute cycles never change", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/tt_fetta_example.yaml");
  const verif::PhaseProblem prob = verif::phase_problems(spec, verif::Phase::fp).at(0);
  int calls = 0;
  auto prefer = [&](bool top) {
    return plan_network(d, prob, 0, [&calls, top](const CompiledGemm* p, const CompiledGemm& c, bool) {
      ++calls;
      REQUIRE(p);  // mapped for compute: asked only about consumers of the previous result
      CHECK(p->jobs.size() > 0);
      return int64_t{c.map.ib_top == top ? 0 : 1};
    });
  };
  const NetworkPlan plain = plan_network(d, prob, 0), top = prefer(true), left = prefer(false);
  CHECK(calls > 0);
  REQUIRE(plain.steps.size() == top.steps.size());
  int differ = 0;
  for (size_t s = 0; s < plain.steps.size(); ++s) {
    INFO("step " << s);
    const CompiledGemm &a = plain.steps[s].compiled.gemm, &t = top.steps[s].compiled.gemm, &l = left.steps[s].compiled.gemm;
    CHECK(t.predicted_cycles == a.predicted_cycles);
    CHECK(l.predicted_cycles == a.predicted_cycles);
    differ += t.map.ib_top != l.map.ib_top;
    // Without a cost the first fastest mapping in preference order: the load from the left on a tie.
    if (s == 0) CHECK(a.map.ib_top == t.map.ib_top);  // the first step consumes nothing: never re-chosen
  }
  CHECK(differ > 0);
}

TEST_CASE("Mapped end to end: the caller's data-movement cost is added to the model's cycles", "[compile]") {
  CHECK(parse_map_for("end-to-end") == MapFor::end_to_end);
  CHECK(parse_map_for("fastest") == MapFor::fastest);
  CHECK(to_string(MapFor::fastest) == "fastest");
  CHECK(to_string(parse_map_for("compute")) == "compute");
  CHECK_THROWS_WITH(parse_map_for("energy"), Catch::Matchers::Contains("allowed: compute, end-to-end"));
  const arch::ArchConfig d = cfg_named("default");
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/tt_fetta_example.yaml");
  const verif::PhaseProblem prob = verif::phase_problems(spec, verif::Phase::fp).at(0);
  int with_producer = 0, without = 0;
  auto prefer = [&](bool top, int64_t penalty) {
    return plan_network(
        d, prob, 0,
        [&, top, penalty](const CompiledGemm* p, const CompiledGemm& c, bool) {
          ++(p ? with_producer : without);
          return !c.map.os && c.map.ib_top == top ? int64_t{0} : penalty;  // weight-stationary from the top / left
        },
        MapFor::end_to_end);
  };
  const NetworkPlan plain = plan_network(d, prob, 0);
  const NetworkPlan top1 = prefer(true, 1), left1 = prefer(false, 1), left_dear = prefer(false, 1'000'000);
  CHECK(with_producer > 0);
  CHECK(without > 0);  // the first step is costed too: the host writes of both operands
  REQUIRE(plain.steps.size() == top1.steps.size());
  int differ = 0, slower = 0;
  for (size_t s = 0; s < plain.steps.size(); ++s) {
    INFO("step " << s);
    const CompiledGemm &a = plain.steps[s].compiled.gemm, &t = top1.steps[s].compiled.gemm,
                       &l = left1.steps[s].compiled.gemm, &ld = left_dear.steps[s].compiled.gemm;
    // A cost of one cycle can only choose among mappings within one cycle of the fastest.
    CHECK(t.predicted_cycles <= a.predicted_cycles + 1);
    CHECK(l.predicted_cycles <= a.predicted_cycles + 1);
    differ += t.map.ib_top != l.map.ib_top;
    // A dear cost wins over compute: every step loads from the left, however slower.
    CHECK_FALSE(ld.map.ib_top);
    CHECK_FALSE(ld.map.os);
    CHECK(ld.predicted_cycles >= a.predicted_cycles);
    slower += ld.predicted_cycles > a.predicted_cycles;
  }
  CHECK(differ > 0);
  CHECK(slower > 0);
}

TEST_CASE("Looking one step ahead: a producer's mapping is chosen with what its consumer then spends", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/tt_fetta_example.yaml");
  const verif::PhaseProblem prob = verif::phase_problems(spec, verif::Phase::fp).at(0);
  // Costs that depend on the producer alone: its consumer spends `penalty` unless the producer
  // has the property. Step 0 consumes nothing, so only the look ahead can make its mapping depend
  // on them.
  using Property = std::function<bool(const CompiledGemm&)>;
  auto plan = [&](Property want, int64_t penalty, MapFor objective) {
    return plan_network(
        d, prob, 0,
        [want, penalty](const CompiledGemm* p, const CompiledGemm&, bool) { return p && !want(*p) ? penalty : 0; },
        objective);
  };
  const NetworkPlan plain = plan_network(d, prob, 0);
  REQUIRE(plain.steps.size() > 1);
  CHECK((plain.steps[1].lhs == plain.steps[0].out || plain.steps[1].rhs == plain.steps[0].out));  // step 1 consumes it

  // Mapped for compute: among step 0's equally fast mappings (12x8x64 output-stationary, G6
  // streaming as A on 1 x 16 CEs or G5 on 16 x 1) the one its consumer prefers.
  const Property tall = [](const CompiledGemm& g) { return g.shape.m.size() > g.shape.n.size(); };
  const Property wide = [](const CompiledGemm& g) { return g.shape.m.size() < g.shape.n.size(); };
  const NetworkPlan t1 = plan(tall, 1, MapFor::compute), w1 = plan(wide, 1, MapFor::compute);
  for (size_t s = 0; s < plain.steps.size(); ++s) {
    INFO("step " << s);
    CHECK(t1.steps[s].compiled.gemm.predicted_cycles == plain.steps[s].compiled.gemm.predicted_cycles);
    CHECK(w1.steps[s].compiled.gemm.predicted_cycles == plain.steps[s].compiled.gemm.predicted_cycles);
  }
  CHECK(tall(t1.steps[0].compiled.gemm));
  CHECK(wide(w1.steps[0].compiled.gemm));

  // Mapped end to end: a dear penalty on output-stationary producers makes every producer whose
  // consumer follows it (the cost is charged there) weight-stationary, however slower.
  const NetworkPlan ws_dear = plan([](const CompiledGemm& g) { return !g.map.os; }, 1'000'000, MapFor::end_to_end);
  int looked = 0, slower = 0;
  for (size_t s = 0; s + 1 < plain.steps.size(); ++s) {
    INFO("step " << s);
    const PlannedStep& next = ws_dear.steps[s + 1];
    if (next.lhs != ws_dear.steps[s].out && next.rhs != ws_dear.steps[s].out) continue;
    ++looked;
    CHECK_FALSE(ws_dear.steps[s].compiled.gemm.map.os);
    slower += ws_dear.steps[s].compiled.gemm.predicted_cycles > plain.steps[s].compiled.gemm.predicted_cycles;
  }
  CHECK(looked >= 2);
  CHECK(slower > 0);
}

TEST_CASE("Output-stationary gemm: grid checks, slots, instruction and cycles by hand", "[compile]") {
  using Catch::Matchers::Contains;
  const arch::ArchConfig d = cfg_named("default");  // 16 CEs of 4x4, 64 lanes, drain = 22
  CHECK_THROWS_WITH(mapper::os_gemm(cfg_named("ce2x4_x8"), 8, 8, 8, 1), Contains("ce.dataflows") && Contains("os"));
  CHECK_THROWS_WITH(mapper::os_gemm(d, 8, 8, 8, 3), Contains("gm = 3") && Contains("dividing ce.count = 16"));
  CHECK_THROWS_WITH(mapper::os_gemm(d, 8, 0, 8, 4), Contains("allowed: >= 1"));
  // Gm = 2, Gn = 8: M tile 8 rows, N tile 32 columns.
  mapper::OsGemm g = mapper::os_gemm(d, 9, 2, 40, 2);
  g.a_base = 100;
  g.b_base = 200;
  g.acc_base = 7;
  CHECK(g.m_tiles() == 2);
  CHECK(g.n_tiles() == 2);
  // A[5][1]: mt 0, gm 1, r 1 -> row 100 + 1, lane gm*Gn*R + r = 33.
  CHECK(mapper::os_a_slot(g, 5, 1).row == 101);
  CHECK(mapper::os_a_slot(g, 5, 1).lane == 33);
  CHECK(mapper::os_a_slot(g, 8, 0).row == 102);  // the second M tile: K rows further
  // B[1][37]: nt 1, lane 5 -> row 200 + 2 + 1.
  CHECK(mapper::os_b_slot(g, 1, 37).row == 203);
  CHECK(mapper::os_b_slot(g, 1, 37).lane == 5);
  // Z[5][37]: nt 1, mt 0, gm 1, r 1, gn 1, c 1 -> row 7 + 1*2*4 + 0 + 1, lane (1*8 + 1)*4 + 1.
  CHECK(mapper::os_z_slot(g, 5, 37).row == 16);
  CHECK(mapper::os_z_slot(g, 5, 37).lane == 37);
  const arch::GemmInstr in = mapper::os_gemm_instr(g);
  CHECK(in.os);
  CHECK(in.m == 2);
  CHECK(in.k_tiles == 2);
  CHECK(in.ia_mask == 0b11100);     // IA lane bits 2..4 = gn
  CHECK(in.ib_mask == 0b100000);    // IB lane bit 5 = gm
  CHECK(in.acc_nt_stride == 8);
  // K = 2 < R: folds 4 cycles apart; 2 + (3*4 + 2 + 1) + drain 22 + 3.
  CHECK(mapper::os_gemm_instr_cycles(d, g) == 42);
  g.k = 37;  // K >= R: folds K apart
  CHECK(mapper::os_gemm_instr_cycles(d, g) == 2 + (3 * 37 + 37 + 1) + 22 + 3);
}

TEST_CASE("Output-stationary mapping: jobs, K chunks, layouts and result slots", "[compile]") {
  const arch::ArchConfig d = cfg_named("default");  // 16 CEs of 4x4, half 2048 rows, accumulator 512 rows
  const arch::IsaLayout isa(d);
  // gm = 4, gn = 4: M tile 16, N tile 16; 7 M tiles, 4 N tiles, K = 300 in one chunk. All 4 N tiles
  // next to 2 M tiles fill the half: (2 + 4) * 300 = 1800 rows of 2048; so 4 jobs over M.
  const GemmShape shape = plain(100, 300, 50);
  const CompiledGemm c = compile_gemm_os(d, shape, 4);
  CHECK(c.map.os);
  CHECK(c.map.n_tile == 16);
  CHECK(c.map.k_tiles == 1);
  CHECK(c.map.n_chunk == 4);
  CHECK(c.map.m_chunk == 32);
  REQUIRE(c.jobs.size() == 4);
  CHECK(c.jobs.back().m_count == 100 - 3 * 32);
  CHECK(c.col_lane.empty());
  CHECK(acc_lanes(c).size() == 64);
  CHECK_THAT(c.describe(), Contains("output-stationary") && Contains("gm=4 x gn=4"));
  int64_t cycles = isa.red_chunks();
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const GemmJob& jb = c.jobs[j];
    const OsGemm g = os_job(c, jb);
    CHECK(jb.instr.os);
    CHECK(jb.instr.m == 300);
    CHECK(jb.instr.acc_nt_stride == g.m_tiles() * 4);  // the job's M tiles of R rows per N tile
    CHECK(g.m_tiles() == (j + 1 < c.jobs.size() ? 2 : 1));
    CHECK(jb.predicted_cycles == 1 + os_gemm_instr_cycles(d, g));
    CHECK(image_shape(c, true, j).rows + image_shape(c, false, j).rows <= 2048);
    cycles += jb.predicted_cycles;
  }
  CHECK(c.predicted_cycles == cycles);
  CHECK(std::all_of(c.red_cfg.begin(), c.red_cfg.end(), [](uint8_t b) { return b == 0; }));  // every lane straight
  // Slots: inside the image (or the job's accumulator rows and the result's lanes), one element each.
  std::mt19937_64 rng(5);
  INFO("seed 5");
  const auto a = random_bf16({"m", "k"}, {100, 300}, rng);
  const auto b = random_bf16({"k", "n"}, {300, 50}, rng);
  int64_t outputs = 0;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const GemmJob& jb = c.jobs[j];
    const RowImage ia = layout_a(c, a, 0x8000, j), ib = layout_b(c, b, j);
    CHECK(ia.first_row == jb.a_base);
    CHECK(ib.first_row == jb.b_base);
    CHECK(ia.lanes == (4 - 1) * 4 * 4 + 4);  // up to the last CE row's R lanes
    CHECK(ib.lanes == 16);
    std::set<std::pair<int64_t, int64_t>> used_a, used_b, used_z;
    for (int64_t m = jb.m0; m < jb.m0 + jb.m_count; ++m)
      for (int64_t k = 0; k < 300; ++k) {
        const ImageSlot at = a_slot(c, jb, m, k);
        REQUIRE(at.row < ia.rows);
        REQUIRE(at.lane < ia.lanes);
        CHECK(used_a.insert({at.row, at.lane}).second);
        CHECK(ia.data[static_cast<size_t>(at.row * ia.lanes + at.lane)] == a(m, k));
      }
    for (int64_t n = 0; n < 50; ++n)
      for (int64_t k = 0; k < 300; ++k) {
        const ImageSlot at = b_slot(c, jb, k, n);
        REQUIRE(at.row < ib.rows);
        CHECK(used_b.insert({at.row, at.lane}).second);
        CHECK(ib.data[static_cast<size_t>(at.row * ib.lanes + at.lane)] == b(k, n));
      }
    for (int64_t m = jb.m0; m < jb.m0 + jb.m_count; ++m)
      for (int64_t n = 0; n < 50; ++n) {
        const ImageSlot at = z_slot(c, jb, m, n);
        CHECK(at.row < acc_rows(c, jb));
        CHECK(at.lane < 64);
        CHECK(used_z.insert({at.row, at.lane}).second);
        ++outputs;
      }
    CHECK(acc_rows(c, jb) <= 512);
  }
  CHECK(outputs == 100 * 50);  // every output in exactly one job
  // gather_result takes each word from where z_slot says, for either dataflow: element ids
  // written there come back in place.
  const CompiledGemm ws = compile_gemm(d, shape, arch::Dataflow::ws);
  for (const CompiledGemm* g : {&c, &ws}) {
    const std::vector<int> lanes = acc_lanes(*g);
    std::vector<uint64_t> z(100 * 50, 0);
    for (const GemmJob& jb : g->jobs) {
      if (!jb.last_k) continue;
      std::vector<uint64_t> words(static_cast<size_t>(acc_rows(*g, jb)) * lanes.size(), ~uint64_t{0});
      for (int64_t m = jb.m0; m < jb.m0 + jb.m_count; ++m)
        for (int64_t n = jb.nt0 * g->map.n_tile; n < std::min<int64_t>(50, (jb.nt0 + jb.nt_count) * g->map.n_tile); ++n) {
          const ImageSlot at = z_slot(*g, jb, m, n);
          const auto col = std::find(lanes.begin(), lanes.end(), static_cast<int>(at.lane)) - lanes.begin();
          words[static_cast<size_t>(at.row) * lanes.size() + static_cast<size_t>(col)] = static_cast<uint64_t>(m * 50 + n);
        }
      gather_result(*g, jb, words, z);
    }
    for (size_t i = 0; i < z.size(); ++i) REQUIRE(z[i] == i);
    CHECK_THROWS_WITH(gather_result(*g, g->jobs[0], {}, z), Contains("gather_result"));
  }
  // The order: one chain per K chunk from +0, the chunks added in order = AccumulationOrder::tiled(chunk).
  CHECK(verif::contract_bf16(a, b, {"m", "n"}, hardware_order(c, 4)).values() ==
        verif::contract_bf16(a, b, {"m", "n"}, verif::AccumulationOrder::sequential()).values());

  // K longer than a half holds beside one tile: equal K chunks (the last shorter), the later ones accumulating.
  const CompiledGemm deep = compile_gemm_os(d, plain(8, 5001, 8), 8);  // N tile 8: one N tile
  CHECK(deep.map.k_tiles == 5);
  CHECK(deep.map.k_tile == 1001);
  REQUIRE(deep.jobs.size() == 5);
  CHECK(os_job(deep, deep.jobs.back()).k == 5001 - 4 * 1001);
  CHECK_FALSE(deep.jobs[0].instr.acc_accumulate);
  CHECK(deep.jobs[1].instr.acc_accumulate);
  CHECK_FALSE(deep.jobs[3].last_k);
  CHECK(deep.jobs[4].last_k);
  const auto a2 = random_bf16({"m", "k"}, {8, 5001}, rng);
  const auto b2 = random_bf16({"k", "n"}, {5001, 8}, rng);
  CHECK(verif::contract_bf16(a2, b2, {"m", "n"}, hardware_order(deep, 4)).values() ==
        verif::contract_bf16(a2, b2, {"m", "n"}, verif::AccumulationOrder::tiled(1001)).values());
  // relocate_image moves an OS image too: base, instruction, program word.
  CompiledGemm moved = c;
  relocate_image(d, moved, 1, true, 1000);
  CHECK(moved.jobs[1].instr.a_base == 1000);
  CHECK(layout_a(moved, a, 0x8000, 1).first_row == 1000);
  CHECK(moved.program[moved.red_cfg_words() + 1] == arch::encode_gemm(isa, moved.jobs[1].instr));

  // Refusals name the field and what is allowed.
  CHECK_THROWS_WITH(compile_gemm_os(cfg_named("ce2x4_x8"), shape, 1), Contains("ce.dataflows") && Contains("os"));
  CHECK_THROWS_WITH(compile_gemm_os(cfg_named("baseline_hier"), shape, 1), Contains("network.topology"));
  CHECK_THROWS_WITH(compile_gemm_os(d, shape, 3), Contains("gm = 3"));
  arch::ArchConfig small_acc = d;
  small_acc.memory.accum_depth = 2;
  CHECK_THROWS_WITH(compile_gemm_os(small_acc, shape, 4), Contains("memory.accum_depth"));
  CHECK_THROWS_WITH(compile_gemm(cfg_named("ce2x4_x8"), shape, arch::Dataflow::os), Contains("ce.dataflows"));
  CHECK(compile_gemm(d, shape, arch::Dataflow::ws).map.os == false);
  CHECK(compile_gemm(d, shape, arch::Dataflow::os).map.os);
}

TEST_CASE("The shipped small layers use both dataflows and both IB load paths where the model says so", "[compile]") {
  // The system tests run these layers on the RTL with --check-model: this guards that both
  // dataflows (where the CEs have OS) and, among the weight-stationary mappings, both IB load
  // paths (except on ce2x4_x8, R = 2 < C = 4: always the top) stay in what they exercise.
  for (const char* name : {"default", "ce4x4_x4", "ce2x4_x8"}) {
    const arch::ArchConfig cfg = cfg_named(name);
    int os = 0, top = 0, left = 0;
    for (const char* f : {"tt", "ttm", "tr", "ht", "bt"}) {
      const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/" + f + "_small.yaml");
      for (verif::Phase ph : {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg})
        for (const auto& prob : verif::phase_problems(spec, ph))
          for (size_t t = 0; t < prob.terms.size(); ++t)
            for (const PlannedStep& st : plan_network(cfg, prob, t).steps) {
              const CompiledGemm& g = st.compiled.gemm;
              (g.map.os ? os : g.map.ib_top ? top : left)++;
              // Never slower than the fastest weight-stationary mapping of the same roles.
              CHECK(g.predicted_cycles <= compile_gemm(cfg, g.shape, arch::Dataflow::ws).predicted_cycles);
            }
    }
    INFO("config " << name << ": " << os << " output-stationary, weight-stationary " << top << " from the top, " << left
                   << " from the left");
    CHECK(top > 0);
    if (std::string(name) != "ce2x4_x8") CHECK(left > 0);
    if (cfg.has_dataflow(arch::Dataflow::os)) CHECK(os > 0);
    else CHECK(os == 0);
  }
}
