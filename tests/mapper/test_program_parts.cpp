// The compiler's units that compile_program is built from, each on its own: which contractions
// are computed once for several networks (mapper/reuse.hpp), the order of the networks
// (mapper/network_schedule.hpp), what moving an intermediate costs and where its images wait on
// chip (mapper/movement.hpp), the DRAM map (mapper/dram_map.hpp) and the DMA's descriptors
// (mapper/dma_transfers.hpp), what each unified-memory half holds (mapper/memory_plan.hpp), the op
// stream with its hoist point (mapper/op_stream.hpp), the DMA's saves with the reads of their
// rows (mapper/saved_results.hpp), the gathers that bring saved rows back into a reader's
// images (mapper/gathered_results.hpp) and the saves in a reader's layout
// (mapper/pretiled_results.hpp). tests/mapper/test_program.cpp checks the programs they make.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "arch/dma.hpp"
#include "mapper/compile.hpp"
#include "mapper/dma_transfers.hpp"
#include "mapper/dram_map.hpp"
#include "mapper/gathered_results.hpp"
#include "mapper/memory_plan.hpp"
#include "mapper/movement.hpp"
#include "mapper/network_schedule.hpp"
#include "mapper/pretiled_results.hpp"
#include "mapper/op_stream.hpp"
#include "mapper/reuse.hpp"
#include "mapper/saved_results.hpp"
#include "verif/layer.hpp"

using namespace fetta;
using namespace fetta::mapper;
using Catch::Matchers::Contains;

namespace {

const std::string kSrc = FETTA_SOURCE_DIR;
arch::ArchConfig config(const std::string& name) { return arch::load_arch_config(kSrc + "configs/" + name + ".yaml"); }

// Every network (problem, term) of a layer's phases, planned for compute.
std::vector<NetworkPlan> networks_of(const arch::ArchConfig& cfg, const std::string& layer,
                                     const std::vector<verif::Phase>& phases) {
  const verif::LayerSpec spec = verif::load_layer(kSrc + "configs/layers/" + layer + ".yaml");
  std::vector<NetworkPlan> out;
  for (verif::Phase ph : phases)
    for (const verif::PhaseProblem& prob : verif::phase_problems(spec, ph))
      for (size_t t = 0; t < prob.terms.size(); ++t) out.push_back(plan_network(cfg, prob, t));
  return out;
}

}  // namespace

// ---- reuse

TEST_CASE("reuse: a network planned twice is computed once, its shared result read by both", "[reuse]") {
  const arch::ArchConfig cfg = config("default");
  const NetworkPlan net = networks_of(cfg, "tt_small", {verif::Phase::fp}).at(0);
  const size_t n = net.steps.size();
  REQUIRE(n >= 3);

  ReusePlan reuse(true);
  const PlannedNetwork first = reuse.add(net);
  CHECK(reuse.repeats() == 0);
  CHECK(std::none_of(first.repeat.begin(), first.repeat.end(), [](bool r) { return r; }));
  const std::string penultimate = first.keys[n - 2];
  CHECK(reuse.readers(penultimate) == 1);  // the first network's last step

  const PlannedNetwork second = reuse.add(net);
  CHECK(second.keys == first.keys);
  for (size_t s = 0; s + 1 < n; ++s) CHECK(second.repeat[s]);
  CHECK_FALSE(second.repeat.back());  // every network's result is its own
  CHECK(reuse.repeats() == static_cast<int64_t>(n - 1));
  CHECK(reuse.readers(penultimate) == 2);  // both last steps read the one result
  CHECK(reuse.readers("no such key") == 0);

  ReusePlan none(false);
  none.add(net);
  const PlannedNetwork again = none.add(net);
  CHECK(std::none_of(again.repeat.begin(), again.repeat.end(), [](bool r) { return r; }));
  CHECK(none.repeats() == 0);
  CHECK(none.readers(penultimate) == 0);
}

TEST_CASE("reuse: a step's key names its operands in either order and its result's labels and sizes", "[reuse]") {
  const arch::ArchConfig cfg = config("default");
  const NetworkPlan net = networks_of(cfg, "tt_small", {verif::Phase::fp}).at(0);
  const PlannedStep& st = net.steps.front();
  const std::string k = step_key(net.problem, st, "X[a,b]", "G1[b,c]");
  CHECK(k == step_key(net.problem, st, "G1[b,c]", "X[a,b]"));
  CHECK_THAT(k, Contains("X[a,b]") && Contains("G1[b,c]") && Contains("->"));
  for (const std::string& l : st.keep) CHECK_THAT(k, Contains(l + ":"));
}

TEST_CASE("reuse: a TT layer's WG gradients share their prefixes with each other and with FP", "[reuse]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<NetworkPlan> nets = networks_of(cfg, "tt_small", {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg});
  ReusePlan reuse(true);
  int64_t steps = 0;
  std::set<std::string> emitted;
  for (const NetworkPlan& n : nets) {
    const PlannedNetwork pn = reuse.add(n);
    steps += static_cast<int64_t>(n.steps.size());
    for (size_t s = 0; s < pn.keys.size(); ++s)
      if (!pn.repeat[s] && !n.steps[s].last) CHECK(emitted.insert(pn.keys[s]).second);  // each computed once
  }
  CHECK(reuse.repeats() > 0);
  CHECK(reuse.repeats() < steps);
}

// ---- the schedule of networks

namespace {

// Units of `steps[i]` steps each; (unit, step) may need another unit to have taken some steps.
struct FakeUnits {
  std::vector<int> steps, taken;
  std::map<std::pair<size_t, int>, std::pair<size_t, int>> needs;
  std::vector<size_t> order;
  std::set<size_t> keeps;  // units that keep the turn
  explicit FakeUnits(std::vector<int> s) : steps(std::move(s)), taken(steps.size(), 0) {}
  ScheduleHooks hooks() {
    return {.done = [this](size_t i) { return taken[i] == steps[i]; },
            .ready =
                [this](size_t i) {
                  const auto it = needs.find({i, taken[i]});
                  return it == needs.end() || taken[it->second.first] >= it->second.second;
                },
            .keep_turn = [this] { return !order.empty() && keeps.contains(order.back()); },
            .advance =
                [this](size_t i) {
                  ++taken[i];
                  order.push_back(i);
                }};
  }
};

}  // namespace

TEST_CASE("schedule: sequential runs each unit to its end; interleaved takes turns among the two oldest", "[schedule]") {
  FakeUnits seq({2, 3, 1});
  run_schedule(3, false, seq.hooks());
  CHECK(seq.order == std::vector<size_t>{0, 0, 1, 1, 1, 2});

  FakeUnits il({2, 3, 2});
  run_schedule(3, true, il.hooks());
  CHECK(il.order == std::vector<size_t>{0, 1, 0, 1, 2, 1, 2});  // unit 2 joins once unit 0 is done
}

TEST_CASE("schedule: a unit waits for the result it reads; one whose images wait on chip keeps the turn", "[schedule]") {
  FakeUnits dep({3, 2});
  dep.needs[{1, 0}] = {0, 2};  // unit 1's first step reads unit 0's second result
  run_schedule(2, true, dep.hooks());
  CHECK(dep.order == std::vector<size_t>{0, 0, 1, 0, 1});

  FakeUnits keep({3, 2});
  keep.keeps = {0};
  run_schedule(2, true, keep.hooks());
  CHECK(keep.order == std::vector<size_t>{0, 0, 0, 1, 1});

  FakeUnits broken({1, 1});
  broken.needs[{0, 0}] = {1, 1};  // the oldest unit can never start: a compiler bug, reported
  CHECK_THROWS_AS(run_schedule(2, false, broken.hooks()), std::logic_error);
}

// ---- movement

TEST_CASE("movement: B images shared by jobs over M are written once per half", "[movement]") {
  const arch::ArchConfig cfg = config("default");
  const Movement mv(cfg, true, false);
  const CompiledGemm c = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {16384, 64}, "B", {"k", "n"}, {64, 16}, {"m", "n"}), 1);
  REQUIRE(c.jobs.size() >= 3);
  const int H = arch::host_port_lanes(cfg);
  int64_t a = 0, b_one = 0;
  std::set<std::array<int64_t, 2>> b_images;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const ImageShape ia = image_shape(c, true, j), ib = image_shape(c, false, j);
    a += ia.rows * ((ia.lanes + H - 1) / H);
    b_one = ib.rows * ((ib.lanes + H - 1) / H);
    b_images.insert(b_image(c.jobs[j]));
  }
  REQUIRE(b_images.size() == 1);
  CHECK(mv.image_write_cycles(c, true) == a);
  CHECK(mv.image_write_cycles(c, false) == 2 * b_one);  // once into each half
}

TEST_CASE("movement: an intermediate stays on chip when the STOREs pay, in rows clear of what runs before", "[movement]") {
  arch::ArchConfig cfg = config("default");
  const CompiledGemm p = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {8, 16}, "B", {"k", "n"}, {16, 8}, {"m", "n"}));
  const CompiledGemm c0 = compile_gemm(cfg, gemm_shape("Z", {"m", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"m", "o"}));
  {
    const Movement mv(cfg, true, false);
    CompiledGemm c = c0;
    Why why;
    const std::optional<OnChip> oc = mv.place_and_plan(p, c, true, 0, {}, {}, why);
    REQUIRE(oc);
    CHECK(why.text.empty());
    REQUIRE(oc->stores.size() == c.jobs.size());
    CHECK(oc->producer_half.front() == 1);  // no FLIP yet: the first job computes on half 1
    CHECK(oc->half_of.front() == (1 + p.jobs.size()) % 2);
    CHECK(mv.store_cost(oc->stores) < mv.host_path_cycles(p, c, true));
    CHECK(mv.movement_cost(&p, c0, true) == mv.store_cost(oc->stores) + mv.image_write_cycles(c0, false));

    // A half whose every row waits for another consumer has no room for the image.
    CompiledGemm full = c0;
    const std::vector<Parked> waiting{{oc->half_of[0], {0, cfg.memory.unified_depth / 2}, 9}};
    CHECK_FALSE(mv.place_and_plan(p, full, true, 0, {}, waiting, why));
    CHECK(why.fate == Fate::no_room);
    CHECK_THAT(why.text, Contains("no room for its consumer's job 0 image"));

    // The images move out of the way of rows already taken, within the half.
    CompiledGemm moved = c0;
    const RowRange own = footprint(c0, 0)[0];
    const std::vector<Parked> in_place{{oc->half_of[0], own, 9}};
    const std::optional<OnChip> oc2 = mv.place_and_plan(p, moved, true, 0, {}, in_place, why);
    REQUIRE(oc2);
    CHECK_FALSE(oc2->rows[0].overlaps(own));
    CHECK(oc2->rows[0].end() <= cfg.memory.unified_depth / 2);
  }
  {  // through the host: never on chip, the host path's cost
    const Movement th(cfg, true, true);
    CHECK(th.movement_cost(&p, c0, true) == th.host_path_cycles(p, c0, true) + th.image_write_cycles(c0, false));
    CHECK(th.movement_cost(nullptr, c0, true) == th.image_write_cycles(c0, true) + th.image_write_cycles(c0, false));
  }
}

TEST_CASE("movement: without on-chip reordering a STORE that changes the layout is refused, saying so", "[movement]") {
  arch::ArchConfig cfg = config("default");
  cfg.memory.store_reorder = false;
  const Movement mv(cfg, true, false);
  // Z[m, n] read as B over (n, o): a transposition (a result row's elements go to different rows).
  const CompiledGemm p = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {16, 16}, "B", {"k", "n"}, {16, 16}, {"m", "n"}));
  CompiledGemm c = compile_gemm(cfg, gemm_shape("W", {"o", "m"}, {4, 16}, "Z", {"m", "n"}, {16, 16}, {"o", "n"}));
  Why why;
  CHECK_FALSE(mv.place_and_plan(p, c, false, 0, {}, {}, why));
  CHECK(why.fate == Fate::reorder_off_chip);
  CHECK_THAT(why.text, Contains("memory.store_reorder: false"));

  arch::StoreInstr copy;
  copy.count = static_cast<uint32_t>(cfg.network.lanes);
  copy.bound[0] = 4;
  copy.src_row_stride[0] = copy.dst_row_stride[0] = 1;
  StorePlan rows;
  rows.program = {copy};
  CHECK_FALSE(mv.changes_layout(rows));
  StorePlan diag = rows;
  diag.program[0].diag = true;
  CHECK(mv.changes_layout(diag));
  StorePlan rotate = rows;
  rotate.program[0].count = 4;
  rotate.program[0].dst_lane_base = 4;
  CHECK(mv.changes_layout(rotate));
}

TEST_CASE("movement: the requantization shift keeps a K-term sum within the operands' range", "[movement]") {
  CHECK(requant_shift(arch::DataType::int8, 1) == arch::operand_frac_bits(arch::DataType::int8));
  CHECK(requant_shift(arch::DataType::int8, 2) == arch::operand_frac_bits(arch::DataType::int8) + 1);
  CHECK(requant_shift(arch::DataType::int16, 64) == arch::operand_frac_bits(arch::DataType::int16) + 6);
  CHECK(requant_shift(arch::DataType::int16, 65) == arch::operand_frac_bits(arch::DataType::int16) + 7);
}

// ---- the DRAM map

TEST_CASE("DRAM map: extents in order from 0, each input once, and the capacity named when exceeded", "[drammap]") {
  DramMap m;
  CHECK(m.allocate(10, 2) == 0);
  const uint64_t second = m.allocate(1, 4);
  CHECK(second == dram_extent(10, 2));
  const DramMap::Input x = m.input("X", 100, 2);
  CHECK(x.placed);
  CHECK(x.addr == second + dram_extent(1, 4));
  const DramMap::Input again = m.input("X", 100, 2);
  CHECK_FALSE(again.placed);
  CHECK(again.addr == x.addr);
  CHECK(m.used() == x.addr + dram_extent(100, 2));
  m.reset();
  CHECK(m.used() == 0);
  CHECK(m.input("X", 100, 2).placed);  // a new layer places its inputs again

  arch::ArchConfig cfg = config("default");
  cfg.dram.capacity_mb = 1;
  DramMap big;
  big.allocate(int64_t{3} << 20, 1);
  try {
    big.check_capacity(cfg, "layer.yaml", true);
    FAIL("a map past the capacity was accepted");
  } catch (const CompileError& e) {
    CHECK_THAT(e.what(), Contains("dram.capacity_mb: layer.yaml needs 3.00 MiB") && Contains("has 1 MiB") &&
                             Contains("allowed: >= 3") && Contains("operand images for the DMA"));
  }
  CHECK_NOTHROW(m.check_capacity(cfg, "layer.yaml", false));
}

// ---- what each unified-memory half holds

TEST_CASE("memory plan: an image parked for a consumer lives until that step runs, in its own half", "[memplan]") {
  UnifiedMemoryPlan m(100);
  CHECK_FALSE(m.any_parked());
  m.park(0, {10, 5}, 3);
  m.park(1, {20, 5}, 5);
  m.park(0, {40, 2}, 5);
  REQUIRE(m.parked_in(0).size() == 2);
  CHECK(m.parked_in(0)[0].first == 10);
  CHECK(m.parked_in(1).size() == 1);
  m.release_read_by(2);  // nothing read yet
  CHECK(m.parked().size() == 3);
  m.release_read_by(3);  // step 3 read the first image
  CHECK(m.parked().size() == 2);
  CHECK(m.parked_in(0).size() == 1);
  CHECK(m.parked_in(0)[0].first == 40);
  m.release_read_by(9);
  CHECK_FALSE(m.any_parked());
  m.park(1, {0, 1}, 1);
  m.clear_parked();  // a new network
  CHECK_FALSE(m.any_parked());
}

TEST_CASE("memory plan: a half holds one B image until STOREs overwrite the halves", "[memplan]") {
  UnifiedMemoryPlan m(64);
  const UnifiedMemoryPlan::BImage b{7, 0, 1};
  CHECK_FALSE(m.holds(0, b));
  m.hold(0, b);
  CHECK(m.holds(0, b));
  CHECK_FALSE(m.holds(1, b));
  CHECK_FALSE(m.holds(0, {7, 1, 1}));  // another N tile of the same tensor
  m.hold(0, {8, 0, 0});
  CHECK_FALSE(m.holds(0, b));
  m.hold(1, b);
  m.forget_b_images();
  CHECK_FALSE(m.holds(1, b));
  CHECK_FALSE(m.holds(0, {8, 0, 0}));
}

TEST_CASE("memory plan: a save's staging rows avoid what later jobs on its half and parked images hold", "[memplan]") {
  using Job = UnifiedMemoryPlan::Job;
  using Ranges = std::vector<RowRange>;
  auto firsts = [](const std::vector<Ranges>& at) {
    std::vector<int64_t> f;
    for (const Ranges& r : at) f.push_back(r.empty() ? -1 : r.front().first);
    return f;
  };
  UnifiedMemoryPlan m(100);
  // Alone, a save waits at row 0.
  std::optional<std::vector<Ranges>> at = m.place_staging({Job{.half = 0, .writes = {{0, 30}}, .save = true, .save_rows = 8}});
  REQUIRE(at);
  CHECK(firsts(*at) == std::vector<int64_t>{0});  // its own images are read by then
  CHECK((*at)[0].size() == 1);
  CHECK((*at)[0][0].rows == 8);
  // A later job on the same half writes rows 0..39 before it runs: the save goes above, from the top.
  // The job in between computes on the other half; what it writes is not in the way.
  at = m.place_staging({Job{.half = 0, .writes = {}, .save = true, .save_rows = 8},
                        Job{.half = 1, .writes = {{50, 50}}, .save = false, .save_rows = 0},
                        Job{.half = 0, .writes = {{0, 40}}, .save = true, .save_rows = 8}});
  REQUIRE(at);
  CHECK(firsts(*at) == std::vector<int64_t>{92, -1, 0});  // the middle job does not save; the last has nothing after it
  // A parked image in the way moves it further down; one in the other half does not.
  m.park(0, {80, 20}, 9);
  m.park(1, {0, 100}, 9);
  at = m.place_staging({Job{.half = 0, .writes = {}, .save = true, .save_rows = 8},
                        Job{.half = 0, .writes = {{0, 40}}, .save = false, .save_rows = 0}});
  REQUIRE(at);
  CHECK(firsts(*at) == std::vector<int64_t>{72, -1});
  // No room: the whole sequence's saves fail together.
  at = m.place_staging({Job{.half = 0, .writes = {}, .save = true, .save_rows = 8},
                        Job{.half = 0, .writes = {{0, 75}}, .save = false, .save_rows = 0}});
  CHECK_FALSE(at);
  CHECK_FALSE(m.place_staging({Job{.half = 1, .writes = {}, .save = true, .save_rows = 8}}));  // half 1 is full
  CHECK_FALSE(m.place_staging({Job{.half = 0, .writes = {}, .save = true, .save_rows = 101}}));
}

TEST_CASE("memory plan: a save that fits in no one clear range waits in the fewest that hold it, when it may split",
          "[memplan]") {
  using Job = UnifiedMemoryPlan::Job;
  using Ranges = std::vector<RowRange>;
  auto same = [](const Ranges& a, const Ranges& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i].first != b[i].first || a[i].rows != b[i].rows) return false;
    return true;
  };
  UnifiedMemoryPlan m(100);
  // Clear: 0..4 (5 rows), 20..29 (10), 60..99 (40). 48 rows fit in no one of them.
  const std::vector<RowRange> later{{5, 15}, {30, 30}};
  const Job j{.half = 0, .writes = {}, .save = true, .save_rows = 48, .split = true};
  std::optional<std::vector<Ranges>> at = m.place_staging({j, Job{.half = 0, .writes = later}});
  REQUIRE(at);
  CHECK(same((*at)[0], Ranges{{20, 8}, {60, 40}}));  // the 40 first, then 8 of the 10, in row order
  // Exactly the clear rows: all three.
  Job all = j;
  all.save_rows = 55;
  at = m.place_staging({all, Job{.half = 0, .writes = later}});
  REQUIRE(at);
  CHECK(same((*at)[0], Ranges{{0, 5}, {20, 10}, {60, 40}}));
  // One more row than is clear, or a save that may not split (a pre-tiled one): no room.
  all.save_rows = 56;
  CHECK_FALSE(m.place_staging({all, Job{.half = 0, .writes = later}}));
  Job whole = j;
  whole.split = false;
  CHECK_FALSE(m.place_staging({whole, Job{.half = 0, .writes = later}}));
  // Where one range fits, a save that may split still takes one (row 0 when clear).
  Job small = j;
  small.save_rows = 5;
  at = m.place_staging({small, Job{.half = 0, .writes = later}});
  REQUIRE(at);
  CHECK(same((*at)[0], Ranges{{0, 5}}));
  // Parked images and overlapping writes count once.
  m.park(0, {60, 10}, 9);
  Job rest = j;
  rest.save_rows = 43;
  at = m.place_staging({rest, Job{.half = 0, .writes = {{5, 15}, {10, 5}, {30, 30}}}});
  REQUIRE(at);
  CHECK(same((*at)[0], Ranges{{0, 3}, {20, 10}, {70, 30}}));  // the 30, the 10, then 3 of the 5
}

// ---- the op stream

TEST_CASE("op stream: FLIPs set the parity; ops at the hoist point go after the GEMM there", "[opstream]") {
  const arch::ArchConfig cfg = config("default");
  Program p;
  OpStream s(cfg, p);
  CHECK(s.flips() == 0);
  CHECK_FALSE(s.hoisting());
  s.insert_at_hoist({{.code = OpCode::fetch, .tensor = 1}});  // no hoist point: at the end
  s.flip(0, Account::compute);
  CHECK(s.flips() == 1);
  CHECK(s.flip_retired() == 1);  // the FLIP has taken effect once one instruction has retired
  s.push(arch::encode_flip(s.isa()), 0, Account::compute, 10);  // stands for the job's GEMM
  CHECK_FALSE(s.host_hoist());
  s.set_hoist(0);
  CHECK(s.hoisting());
  CHECK(s.host_hoist());
  CHECK_FALSE(s.flip_waited());
  s.op({.code = OpCode::wait_idle, .report = 0});
  s.insert_at_hoist({{.code = OpCode::fetch, .tensor = 2}, {.code = OpCode::fetch, .tensor = 3}});
  s.insert_at_hoist({{.code = OpCode::fetch, .tensor = 4}});  // after the ones before it
  REQUIRE(p.ops.size() == 7);
  CHECK(p.ops[0].code == OpCode::fetch);
  CHECK(p.ops[1].code == OpCode::push);
  CHECK(p.ops[2].code == OpCode::push);
  CHECK(p.ops[3].tensor == 2);
  CHECK(p.ops[4].tensor == 3);
  CHECK(p.ops[5].tensor == 4);
  CHECK(p.ops[6].code == OpCode::wait_idle);
  // The words of the two instructions, one after the other; the second's cycles as given.
  CHECK(p.ops[2].a == p.ops[1].b);
  CHECK(p.ops[2].c == 10);
  CHECK(p.words.size() == static_cast<size_t>(p.ops[1].b + p.ops[2].b));
  // A FLIP pair keeps the parity; what waits for a FLIP waits for the second.
  s.push(arch::encode_flip(s.isa()), 0, Account::store, 1);
  s.push(arch::encode_flip(s.isa()), 0, Account::store, 1);
  s.flip_pair_pushed();
  CHECK(s.flips() == 1);
  CHECK(s.flip_retired() == 4);
  s.set_host_hoist(false);
  CHECK_FALSE(s.host_hoist());
  s.clear_hoist();
  CHECK_FALSE(s.hoisting());
  CHECK(s.add_map({5, 6}) == 0);
  CHECK(s.add_map({7}) == 2);
}

// ---- the DMA's saves and the reads of their rows

TEST_CASE("saved results: saves wait for the next FLIP; a final result's reads and check wait for the layer's end",
          "[savedresults]") {
  const arch::ArchConfig cfg = config("default");
  Program p;
  p.steps.resize(2);
  OpStream s(cfg, p);
  SavedResults saved;
  CHECK_FALSE(saved.pending());
  CHECK_NOTHROW(saved.end_layer(s));  // nothing saved: nothing to do
  const Op desc{.code = OpCode::dma, .report = 0};
  saved.queue(desc, {.code = OpCode::read_saved, .report = 0, .tensor = 5}, false);
  saved.queue(desc, {.code = OpCode::read_saved, .report = 0, .tensor = 5}, true);
  CHECK(saved.pending());
  // Saves with no read to follow them are a compiler error, not a silent drop.
  CHECK_THROWS_WITH(saved.end_layer(s), Contains("DMA saves pending with nothing to read them"));
  const std::vector<int64_t> early = saved.push_pending(s, 1, Account::store);
  CHECK(early == std::vector<int64_t>{1});  // only the second may be read early
  REQUIRE(p.ops.size() == 2);
  CHECK(p.ops[0].report == 1);  // re-reported to the step that pushes them
  CHECK(p.ops[0].account == Account::store);
  CHECK_FALSE(saved.pending());
  saved.queue(desc, {.code = OpCode::read_saved, .report = 1, .tensor = 6}, false);
  saved.defer_result(1, 6, Convert::bf16, 0);
  p.ops.clear();
  saved.end_layer(s);
  // FLIP, the save, the wait for the DMA, then every read and the check and the step's end.
  std::vector<OpCode> codes;
  for (const Op& o : p.ops) codes.push_back(o.code);
  CHECK(codes == std::vector<OpCode>{OpCode::push, OpCode::dma, OpCode::wait_dma_idle, OpCode::read_saved,
                                     OpCode::read_saved, OpCode::read_saved, OpCode::check, OpCode::finish});
  CHECK(p.steps[1].store_predicted == 1);  // the FLIP's cycle
  CHECK(s.flips() == 1);
}

TEST_CASE("saved results: an intermediate's saved rows reach its consumer once, those read early left out", "[savedresults]") {
  const arch::ArchConfig cfg = config("default");
  Program p;
  p.steps.resize(3);
  OpStream s(cfg, p);
  SavedResults saved;
  const Op desc{.code = OpCode::dma, .report = 0};
  saved.queue(desc, {.code = OpCode::read_saved, .report = 0, .a = 100}, true);
  saved.queue(desc, {.code = OpCode::read_saved, .report = 0, .a = 200}, true);
  const std::vector<int64_t> early = saved.push_pending(s, 0, Account::compute);
  saved.read_early(s, {early[0]}, 9, 0);  // the host read the first job's rows while the second computed
  saved.queue(desc, {.code = OpCode::read_saved, .report = 0, .a = 300}, true);  // the last job's: pending
  saved.keep(9, 0, Convert::bf16, 0, true, false);
  CHECK(saved.waiting(9));
  CHECK(saved.producer(9) == 0);
  CHECK_FALSE(saved.read_again(9));
  p.ops.clear();
  saved.fetch(s, 9, 2, false);
  CHECK_FALSE(saved.waiting(9));
  CHECK(saved.read_again(9));  // shared: a later network reads every row again
  std::vector<int64_t> read_at;
  for (const Op& o : p.ops)
    if (o.code == OpCode::read_saved) {
      read_at.push_back(o.a);
      CHECK(o.report == 2);
      CHECK(o.host_counted);
    }
  CHECK(read_at == std::vector<int64_t>{200, 300});  // the first was read early
  // The last save went between a FLIP pair, its cycles the producer's; then the producer's check.
  CHECK(p.ops[0].code == OpCode::push);
  CHECK(p.ops[1].code == OpCode::dma);
  CHECK(p.ops[2].code == OpCode::push);
  CHECK(p.steps[0].store_predicted == 2);
  CHECK(s.flips() == 0);
  CHECK(p.ops.back().code == OpCode::finish);
  CHECK(p.ops.back().report == 0);
  // Read again by a later network: every saved row, the save's bytes not counted twice.
  p.ops.clear();
  saved.fetch(s, 9, 2, false);
  REQUIRE(p.ops.size() == 3);
  for (const Op& o : p.ops) CHECK(o.source == 9);
  saved.forget_reads_again();
  p.ops.clear();
  saved.fetch(s, 9, 2, false);  // the next layer: a tensor of its own, read from DRAM
  REQUIRE(p.ops.size() == 1);
  CHECK(p.ops[0].code == OpCode::fetch);
}

TEST_CASE("saved results: a gathered intermediate's saves go first, its reads and check wait for the layer's end",
          "[savedresults]") {
  const arch::ArchConfig cfg = config("default");
  Program p;
  p.steps.resize(3);
  OpStream s(cfg, p);
  SavedResults saved;
  const Op desc{.code = OpCode::dma, .report = 0};
  saved.queue(desc, {.code = OpCode::read_saved, .account = Account::none, .host_counted = false, .report = 0, .a = 100},
              false);
  (void)saved.push_pending(s, 0, Account::compute);
  saved.queue(desc, {.code = OpCode::read_saved, .account = Account::none, .host_counted = false, .report = 0, .a = 200},
              false);  // the last job's: pending
  saved.keep(9, 0, Convert::bf16, 0, true, false);
  p.ops.clear();
  saved.fetch(s, 9, 2, false, true);
  // The last save between a FLIP pair, and a wait for the FLIPs (their cycles the producer's): no
  // host read, no wait for the DMA (the gathers queue behind the save).
  std::vector<OpCode> codes;
  for (const Op& o : p.ops) codes.push_back(o.code);
  CHECK(codes == std::vector<OpCode>{OpCode::push, OpCode::dma, OpCode::push, OpCode::wait_idle});
  CHECK_FALSE(saved.waiting(9));
  CHECK(saved.read_again(9));  // a later reader that cannot gather still can read it
  // A later reader that gathers too: nothing to do.
  p.ops.clear();
  saved.fetch(s, 9, 2, false, true);
  CHECK(p.ops.empty());
  // The layer's end: the scoreboard's untimed reads of every saved row, then the check and the end.
  saved.end_layer(s);
  std::vector<int64_t> read_at;
  for (const Op& o : p.ops)
    if (o.code == OpCode::read_saved) {
      read_at.push_back(o.a);
      CHECK_FALSE(o.host_counted);
      CHECK(o.tensor == 9);
    }
  CHECK(read_at == std::vector<int64_t>{100, 200});
  REQUIRE(p.ops.size() >= 2);
  CHECK(p.ops[p.ops.size() - 2].code == OpCode::check);
  CHECK(p.ops.back().code == OpCode::finish);
  CHECK(p.ops.back().report == 0);
}

// ---- gathers of saved intermediates

TEST_CASE("gathered results: a saved intermediate is gathered into every job of its reader, or not at all",
          "[gathered]") {
  const arch::ArchConfig cfg = config("default");
  const arch::DmaGeometry g = arch::dma_geometry(cfg);
  const CompiledGemm p = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {8, 16}, "B", {"k", "n"}, {16, 8}, {"m", "n"}));
  const CompiledGemm c = compile_gemm(cfg, gemm_shape("Z", {"m", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"m", "o"}));
  GatheredResults gr(cfg);
  DramMap dram;
  CHECK_FALSE(gr.plan(7, c, true, dram));  // nothing saved
  // One output chunk saved at byte 4096: the intermediate's source.
  const std::vector<size_t> chunks = output_chunks(p);
  gr.made(7, 0, p);  // step 0 saved nothing yet: no source
  CHECK_FALSE(gr.plan(7, c, true, dram));
  for (size_t k = 0; k < chunks.size(); ++k) gr.saved(0, chunks[k], 4096 + 1024 * k);
  gr.made(7, 0, p);
  REQUIRE(gr.plan(7, c, true, dram));
  CHECK(dram.allocate(1, 2) > 0);  // after the pad beat
  CHECK(gr.planned(c, true, 0, 8) == nullptr);  // another tensor
  CHECK(gr.planned(c, false, 0, 7) == nullptr);  // not planned as B
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const GatherPlan* plan = gr.planned(c, true, j, 7);
    REQUIRE(plan);
    CHECK(plan->ok());
    for (const arch::DmaDescriptor& d : plan->descriptors) {
      CHECK_FALSE(d.to_dram);
      CHECK((d.dram_base == 0 || d.dram_base >= (uint64_t{4096} >> g.beat_shift())));  // the pad beat (the map's first) or the saved rows
    }
  }
  // The pad beat is placed once, the first time a plan that reads it asks.
  const GatherPlan* first = gr.planned(c, true, 0, 7);
  if (first->pad_beats > 0) {
    const auto pad = gr.pad_to_place(*first, true);
    REQUIRE(pad);
    CHECK(pad->pad == 0x8000);  // -0: an IA pad adds nothing
    CHECK_FALSE(gr.pad_to_place(*first, true));
  }
  gr.new_layer();
  CHECK(gr.planned(c, true, 0, 7) == nullptr);
}

TEST_CASE("pretiled results: pieces per output chunk and reader, found again by mapping, refused where the top "
          "cannot reorder", "[pretiled]") {
  const CompiledGemm p = compile_gemm(config("default"),
                                      gemm_shape("A", {"m", "k"}, {64, 16}, "B", {"k", "n"}, {16, 64}, {"m", "n"}));
  // Z read with its own rows and lanes (a row copy), and transposed (n on the rows, m on the lanes).
  const GemmShape copy = gemm_shape("Z", {"m", "n"}, {64, 64}, "W", {"n", "o"}, {64, 8}, {"m", "o"});
  const GemmShape turned = gemm_shape("Z", {"n", "m"}, {64, 64}, "V", {"m", "o"}, {64, 8}, {"n", "o"});
  for (const char* top : {"default", "baseline_tpu_offchip"}) {
    CAPTURE(top);
    const arch::ArchConfig cfg = config(top);
    const CompiledGemm pp = compile_gemm(cfg, p.shape);
    const CompiledGemm c1 = compile_gemm(cfg, copy), c2 = compile_gemm(cfg, turned);
    PretiledResults pr(cfg);
    std::string why;
    std::optional<PretiledResults::Plan> one = pr.plan(pp, {{&c1, true}}, 0, why);
    REQUIRE(one);  // a row copy needs no reordering on any top
    CHECK(one->staging_rows(0) >= image_shape(c1, true, 0).rows);
    CHECK(one->load_bytes(arch::dma_geometry(cfg)) > 0);
    std::optional<PretiledResults::Plan> both = pr.plan(pp, {{&c1, true}, {&c2, true}}, 0, why);
    if (std::string(top) == "baseline_tpu_offchip") {
      CHECK_FALSE(both);
      CHECK_THAT(why, Contains("reorders only through DRAM"));
      continue;
    }
    REQUIRE(both);
    REQUIRE(both->readers.size() == 2);
    CHECK(both->store_cycles > one->store_cycles);
    pr.start(*both);
    CHECK_THROWS_AS(pr.made(5), std::logic_error);  // no piece saved yet
    pr.start(*both);
    uint64_t at = 4096;
    for (auto& pieces : pr.current()->chunks)
      for (PretiledResults::Piece& pc : pieces) pc.at = at += 4096;
    pr.made(5);
    CHECK(pr.current() == nullptr);
    CHECK(pr.reader_of(5, c1, true) == std::optional<size_t>{0});
    CHECK(pr.reader_of(5, c2, true) == std::optional<size_t>{1});
    CHECK_FALSE(pr.reader_of(5, c1, false));
    CHECK_FALSE(pr.reader_of(6, c1, true));
    for (size_t j = 0; j < c2.jobs.size(); ++j) CHECK_FALSE(pr.loads(5, 1, j, 0, false).empty());
    pr.new_layer();
    CHECK_FALSE(pr.reader_of(5, c1, true));
  }
  // A chunk's pieces must fit in a half: sixteen readers' images of a whole result do not.
  arch::ArchConfig small = config("default");
  small.memory.unified_depth = 64;
  const CompiledGemm cs = compile_gemm(small, copy);
  const std::vector<std::pair<const CompiledGemm*, bool>> many(16, {&cs, true});
  PretiledResults pr(small);
  std::string why;
  CHECK(pr.plan(compile_gemm(small, p.shape), {{&cs, true}}, 0, why));
  CHECK_FALSE(pr.plan(compile_gemm(small, p.shape), many, 0, why));
  CHECK_THAT(why, Contains("more than a half's 32"));
}

TEST_CASE("movement: with gathers a STORE pays against the gathers, not the host's free permutation", "[movement]") {
  const arch::ArchConfig cfg = config("default");
  const CompiledGemm p = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {8, 16}, "B", {"k", "n"}, {16, 8}, {"m", "n"}));
  const CompiledGemm c = compile_gemm(cfg, gemm_shape("Z", {"m", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"m", "o"}));
  const Movement mv(cfg, true, false, true);
  const std::optional<int64_t> gathers = mv.gather_path_cycles(p, c, true);
  REQUIRE(gathers);
  // The gathers' DRAM latency alone is dearer than the host's image writes.
  CHECK(*gathers > mv.image_write_cycles(c, true));
  // Saved for later readers anyway: only the gathers are this reader's, not the staging STOREs.
  CHECK(*mv.gather_path_cycles(p, c, true, true) < *gathers);
  // The STOREs that keep the result on chip are weighed against the gathers.
  Why why;
  const std::optional<std::vector<StorePlan>> st = mv.store_that_pays(p, c, true, why, false);
  if (st) CHECK(mv.store_cost(*st) < *gathers);
  else CHECK_THAT(why.text, Contains("the DMA's gathers through DRAM"));
}

// ---- the DMA's descriptors

namespace {

// Every (DRAM beat, slot, lane) an image load writes, by descriptor expansion (arch::dma_beats).
std::set<std::array<uint64_t, 3>> lanes_loaded(const arch::DmaLayout& layout, const std::vector<arch::DmaDescriptor>& ds) {
  std::set<std::array<uint64_t, 3>> out;
  for (const arch::DmaDescriptor& d : ds) {
    CHECK_FALSE(d.to_dram);
    for (const arch::DmaBeat& b : arch::dma_beats(layout, d))
      for (int l = 0; l < layout.geometry().lanes; ++l)
        if ((d.lane_mask >> l) & 1U) CHECK(out.insert({b.dram, b.slot, static_cast<uint64_t>(l)}).second);
  }
  return out;
}

}  // namespace

TEST_CASE("DMA descriptors: an image's every lane loaded once into its rows, lanes past it untouched", "[dmatransfers]") {
  const arch::DmaGeometry g = arch::dma_geometry(config("default"));
  const arch::DmaLayout layout(g);
  const int64_t groups = int64_t{1} << g.group_bits;
  for (const int64_t lanes : {int64_t{8}, int64_t{g.lanes}, int64_t{2 * g.lanes}, int64_t{2 * g.lanes + 5}}) {
    CAPTURE(lanes);
    const int64_t first_row = 5, rows = 3, per_row = image_beats_per_row(g, lanes);
    const uint64_t at = 64 * 1024;
    const std::vector<arch::DmaDescriptor> ds = image_load(g, first_row, rows, lanes, at, true);
    CHECK(ds.size() == (lanes % g.lanes == 0 ? 1U : lanes < g.lanes ? 1U : 2U));
    for (const arch::DmaDescriptor& d : ds) CHECK(d.half);
    std::set<std::array<uint64_t, 3>> want;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = 0; e < lanes; ++e) {
        const int64_t beat = e / g.lanes;
        want.insert({(at >> g.beat_shift()) + static_cast<uint64_t>(r * per_row + beat),
                     static_cast<uint64_t>((first_row + r) * groups + beat), static_cast<uint64_t>(e % g.lanes)});
      }
    CHECK(lanes_loaded(layout, ds) == want);
  }
}

TEST_CASE("DMA descriptors: packed rows go back to their image rows, each beat under its mask, equal runs folded",
          "[dmatransfers]") {
  const arch::DmaGeometry g = arch::dma_geometry(config("default"));
  const arch::DmaLayout layout(g);
  const int64_t groups = int64_t{1} << g.group_bits, H = g.lanes;
  const std::vector<uint64_t> full = image_row_masks(g, 2 * H);  // two beats a row, every lane
  CHECK(full == std::vector<uint64_t>{~uint64_t{0}, ~uint64_t{0}});
  CHECK(image_row_masks(g, H + 3) == std::vector<uint64_t>{~uint64_t{0}, 0x7});
  // Three runs of three rows eight apart (one descriptor, folded), then a row of which this piece
  // loads only the first beat's low lanes (another chunk loads the rest).
  const std::vector<int64_t> rows = {0, 1, 2, 8, 9, 10, 16, 17, 18, 30};
  std::vector<std::vector<uint64_t>> masks(rows.size(), full);
  masks.back() = {0xFF, 0};
  const int64_t first_row = 100;
  const uint64_t at = 8192;
  const std::vector<arch::DmaDescriptor> ds = packed_rows_load(g, first_row, rows, masks, at, true);
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].bound == std::array<uint64_t, 3>{2, 3, 3});
  CHECK(ds[1].lane_mask == 0xFF);
  std::set<std::array<uint64_t, 3>> want;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t l = 0; l < H; ++l)
        if ((masks[i][static_cast<size_t>(b)] >> l) & 1U)
          want.insert({(at >> g.beat_shift()) + static_cast<uint64_t>(static_cast<int64_t>(i) * 2 + b),
                       static_cast<uint64_t>((first_row + rows[i]) * groups + b), static_cast<uint64_t>(l)});
  CHECK(lanes_loaded(layout, ds) == want);
  for (const arch::DmaDescriptor& d : ds) CHECK_NOTHROW(arch::encode_dma(layout, d));
}

TEST_CASE("DMA descriptors: a save moves the result's beats of each row, rows packed in DRAM", "[dmatransfers]") {
  const arch::DmaGeometry g = arch::dma_geometry(config("default"));
  const arch::DmaLayout layout(g);
  const int64_t groups = int64_t{1} << g.group_bits;
  const arch::DmaDescriptor d = result_save(g, 7, 4, 1, 2, 4096, false);
  CHECK(d.to_dram);
  CHECK_FALSE(d.half);
  std::vector<arch::DmaBeat> want;
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t b = 0; b < 2; ++b)
      want.push_back({(4096U >> g.beat_shift()) + static_cast<uint64_t>(r * 2 + b), static_cast<uint64_t>((7 + r) * groups + 1 + b)});
  CHECK(arch::dma_beats(layout, d) == want);
}

// ---- the paper's kinds of workload (configs/layers, docs/results.md "The paper's kinds of workload")

TEST_CASE("the paper-like workloads plan on FETTA and both baselines", "[workloads]") {
  for (const char* top : {"default", "baseline_tpu_offchip", "baseline_hier"}) {
    const arch::ArchConfig cfg = config(top);
    for (const char* l : {"tt_atis", "tt_wmt_long", "ttm_ucf11", "ht_ucf11", "tr_ucf11", "bt_ucf11"}) {
      CAPTURE(top, l);
      const LayersPlan p = plan_layers(cfg, {kSrc + "configs/layers/" + l + ".yaml"},
                                       {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg});
      CHECK(p.contractions > 0);
      CHECK(p.compute_cycles * cfg.total_pes() >= p.macs);  // no mapping beats the array's peak
    }
  }
  // tt_wmt_long is there for intermediates larger than a unified-memory half.
  const arch::ArchConfig cfg = config("default");
  const NetworkPlan fp = networks_of(cfg, "tt_wmt_long", {verif::Phase::fp}).at(0);
  const int64_t half = cfg.memory.unified_depth / 2 * cfg.network.lanes;
  CHECK(std::any_of(fp.steps.begin(), fp.steps.end(),
                    [&](const PlannedStep& s) { return s.compiled.gemm.shape.m.size() * s.compiled.gemm.shape.n.size() > half; }));
}
