// STORE (docs/isa.md §store) on the compiler side: the nest fitting, and every STORE program the
// compiler plans for the shipped layers run through an interpreter of the instruction's
// semantics (written here from the ISA text, not from the planner) and compared, element by
// element, with the image the consumer's layout (mapper::layout_a / layout_b) asks for. The DMA
// gathers that load a saved result into the same images (mapper::plan_gather) are checked the
// same way, through an interpreter of the descriptor (docs/dma.md §2).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include <fmt/core.h>

#include "mapper/compile.hpp"
#include "mapper/dma_transfers.hpp"
#include "mapper/gather.hpp"
#include "mapper/movement.hpp"
#include "mapper/placement.hpp"
#include "mapper/pretiled_results.hpp"
#include "mapper/store.hpp"
#include "verif/layer.hpp"
#include "shipped_config.hpp"

using namespace fetta;
using namespace fetta::mapper;
using fetta::test::cfg_named;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;

namespace {

using Vec4 = std::array<int64_t, 4>;

// Runs STORE instructions on accumulator contents into unified-memory rows `um`: (row, lane) ->
// value. Addresses wrap modulo the field ranges; a move onto lane 0 writes `pad` into the rest of
// its row; a diagonal move writes element j (lanes src + T*j -> dst + T*j) at rows shifted by the
// bank strides of the other side's bank's bits, and pads nothing.
void run_program(const arch::ArchConfig& cfg, const std::vector<arch::StoreInstr>& prog,
                 const std::map<int64_t, std::vector<uint32_t>>& acc, uint32_t pad,
                 std::map<int64_t, std::vector<uint32_t>>& um) {
  const arch::IsaLayout isa(cfg);
  const int64_t N = cfg.network.lanes, Q = int64_t{1} << isa.acc_addr_bits(), A = int64_t{1} << isa.half_addr_bits();
  auto mod = [](int64_t v, int64_t m) { return ((v % m) + m) % m; };
  for (const arch::StoreInstr& s : prog)
    for (uint32_t i3 = 0; i3 < s.bound[3]; ++i3)
      for (uint32_t i2 = 0; i2 < s.bound[2]; ++i2)
        for (uint32_t i1 = 0; i1 < s.bound[1]; ++i1)
          for (uint32_t i0 = 0; i0 < s.bound[0]; ++i0) {
            const std::array<int64_t, 4> i{i0, i1, i2, i3};
            auto at = [&](uint32_t base, const std::array<int64_t, 4>& stride, int64_t range) {
              int64_t v = base;
              for (int l = 0; l < 4; ++l) v += i[static_cast<size_t>(l)] * stride[static_cast<size_t>(l)];
              return mod(v, range);
            };
            const int64_t sr = at(s.src_row_base, s.src_row_stride, Q), sl = at(s.src_lane_base, s.src_lane_stride, N);
            const int64_t dr = at(s.dst_row_base, s.dst_row_stride, A), dl = at(s.dst_lane_base, s.dst_lane_stride, N);
            if (s.diag) {
              const int64_t T = N / cfg.memory.banks;
              auto bank_offset = [](const auto& strides, int64_t bank) {
                int64_t o = 0;
                for (size_t h = 0; h < strides.size(); ++h) o += (bank >> h & 1) * strides[h];
                return o;
              };
              for (int64_t j = 0; j < s.count; ++j) {
                const int64_t sl_j = mod(sl + T * j, N), dl_j = mod(dl + T * j, N);
                const int64_t sr_j = mod(sr + bank_offset(s.src_row_bank_stride, dl_j / T), Q);
                const int64_t dr_j = mod(dr + bank_offset(s.dst_row_bank_stride, sl_j / T), A);
                auto& row = um[dr_j];
                if (row.empty()) row.assign(static_cast<size_t>(N), 0xFFFFFFFFU);
                const auto it = acc.find(sr_j);
                row[static_cast<size_t>(dl_j)] = it == acc.end() ? 0xEEEEEEEEU : it->second[static_cast<size_t>(sl_j)];
              }
              continue;
            }
            auto& row = um[dr];
            if (row.empty()) row.assign(static_cast<size_t>(N), 0xFFFFFFFFU);  // never written
            const auto it = acc.find(sr);
            for (int64_t l = 0; l < N; ++l) {
              const int64_t off = mod(l - dl, N);
              if (off < s.count)
                row[static_cast<size_t>(l)] = it == acc.end() ? 0xEEEEEEEEU : it->second[static_cast<size_t>(mod(sl + off, N))];
              else if (dl == 0)
                row[static_cast<size_t>(l)] = pad;
            }
          }
}

// The sequence a fitted nest stands for (level 0 fastest).
std::vector<Vec4> expand(const Vec4& base, const std::vector<AffineLevel>& levels) {
  std::vector<Vec4> out;
  std::vector<int64_t> idx(levels.size(), 0);
  for (bool more = true; more;) {
    Vec4 v = base;
    for (size_t l = 0; l < levels.size(); ++l)
      for (size_t s = 0; s < 4; ++s) v[s] += idx[l] * levels[l].stride[s];
    out.push_back(v);
    size_t l = 0;
    while (l < levels.size() && ++idx[l] == levels[l].bound) idx[l++] = 0;
    more = l < levels.size();
  }
  return out;
}

struct Tally {
  int planned = 0, refused = 0;
  int into_top_b = 0;  // planned into a B image for the load from the top (the per-CE layout)
  int later = 0;       // planned for a consumer that does not run right after the producer
  int later_jobs = 0;  // planned for a consumer job other than the first
  int moved = 0;       // planned into an image relocated to the top of its half
  int chunked = 0;     // planned from a producer in several output chunks (one part per chunk)
  int from_os = 0;     // planned from an output-stationary producer's accumulator layout
  int into_os = 0;     // planned into an output-stationary consumer's image
  int several = 0;     // planned as several affine nests (moves that are not one)
  int diagonal = 0;    // planned with diagonal moves (a transposition, one element per bank)
  int capped = 0;      // replanned under a cap of fewer instructions a part than it took
  int capped_other = 0;  // of those, planned within the cap the other way (ordinary or diagonal)
};

// Interprets `sp` on an accumulator holding p's result as ids and checks the unified rows it
// leaves against consumer c's image of job j (ids in two 16-bit halves): every element in place,
// nothing outside the image's rows (the other operand lives there). Checks the program's totals.
void check_program(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t j,
                   const StorePlan& sp) {
  // Result element e (row-major over the producer's m then n labels) holds id e + 1.
  std::vector<std::string> labels = p.shape.m.labels;
  labels.insert(labels.end(), p.shape.n.labels.begin(), p.shape.n.labels.end());
  std::vector<int64_t> dims = p.shape.m.dims;
  dims.insert(dims.end(), p.shape.n.dims.begin(), p.shape.n.dims.end());
  const int64_t Nn = p.shape.n.size();
  // Part by part, the accumulator as the producer's job after_job[part] leaves it (its chunk's
  // rows from 0, the other chunks' elements nowhere).
  std::map<int64_t, std::vector<uint32_t>> um;
  REQUIRE(sp.part_begin.size() == sp.after_job.size());
  REQUIRE_FALSE(sp.part_begin.empty());
  CHECK(sp.part_begin.front() == 0);
  for (size_t part = 0; part < sp.part_begin.size(); ++part) {
    const GemmJob& pj = p.jobs.at(sp.after_job[part]);
    REQUIRE(pj.last_k);
    if (part > 0) CHECK(sp.after_job[part] > sp.after_job[part - 1]);
    std::map<int64_t, std::vector<uint32_t>> acc;
    for (int64_t m = pj.m0; m < pj.m0 + pj.m_count; ++m)
      for (int64_t n = pj.nt0 * p.map.n_tile; n < std::min(Nn, (pj.nt0 + pj.nt_count) * p.map.n_tile); ++n) {
        const ImageSlot at = z_slot(p, pj, m, n);
        auto& row = acc[at.row];
        if (row.empty()) row.assign(static_cast<size_t>(cfg.network.lanes), 0xDDDDDDDDU);
        REQUIRE(row[static_cast<size_t>(at.lane)] == 0xDDDDDDDDU);  // one element per accumulator word
        row[static_cast<size_t>(at.lane)] = static_cast<uint32_t>(m * Nn + n + 1);
      }
    run_program(cfg, {sp.program.begin() + static_cast<std::ptrdiff_t>(sp.part_begin[part]),
                      sp.program.begin() + static_cast<std::ptrdiff_t>(sp.part_end(part))},
                acc, 0, um);
  }
  verif::Tensor<uint16_t> lo(labels, dims), hi(labels, dims);
  int64_t id = 1;
  lo.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ & 0xFFFF); });
  id = 1;
  hi.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ >> 16); });
  const RowImage want_lo = as_a ? layout_a(c, lo, 0, j) : layout_b(c, lo, j);
  const RowImage want_hi = as_a ? layout_a(c, hi, 0, j) : layout_b(c, hi, j);
  CHECK(want_lo.first_row == (as_a ? c.jobs[j].a_base : c.jobs[j].b_base));
  int64_t bad = 0;
  for (const auto& [r, vals] : um) bad += r < want_lo.first_row || r >= want_lo.first_row + want_lo.rows;
  for (int64_t r = 0; r < want_lo.rows; ++r) {
    const auto it = um.find(want_lo.first_row + r);
    for (int l = 0; l < want_lo.lanes; ++l) {
      const uint32_t got = it == um.end() ? 0xFFFFFFFFU : it->second[static_cast<size_t>(l)];
      const size_t i = static_cast<size_t>(r * want_lo.lanes + l);
      bad += (got & 0xFFFF) != want_lo.data[i] || (got >> 16) != want_hi.data[i];
    }
  }
  CHECK(bad == 0);
  // The elements it counts: each of the result's image elements once, plus at most one per
  // ordinary move that pads a row a diagonal program leaves lanes of.
  int64_t from_result = 0;
  for (size_t i = 0; i < want_lo.data.size(); ++i) {
    const int64_t e = int64_t{want_hi.data[i]} << 16 | want_lo.data[i];
    from_result += e >= 1 && e <= lo.numel();
  }
  CHECK(sp.elements >= from_result);
  CHECK(sp.elements <= from_result + (sp.diagonal_moves > 0 ? sp.moves - sp.diagonal_moves : 0));
  int64_t moves = 0, cycles = 0;
  for (const arch::StoreInstr& i : sp.program) {
    moves += i.moves();
    cycles += arch::store_instr_cycles(i);
    CHECK_NOTHROW(arch::encode_store(arch::IsaLayout(cfg), i));
  }
  CHECK(moves == sp.moves);
  CHECK(cycles == sp.predicted_cycles);
}

// Replans a program whose largest part takes n > 1 instructions under the per-part cap: at n
// it is the same program; below n a part is refused naming the cap, or planned within the cap
// the other way (ordinary or diagonal), then checked like any; at 0 it is refused.
void check_part_cap(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t j,
                    const StorePlan& sp, Tally& tally) {
  int64_t n = 0;
  for (size_t i = 0; i < sp.part_begin.size(); ++i) n = std::max<int64_t>(n, static_cast<int64_t>(sp.part_end(i) - sp.part_begin[i]));
  if (n < 2) return;
  ++tally.capped;
  const StorePlan same = plan_store(cfg, p, c, as_a, j, 0, true, n);
  CHECK(same.program.size() == sp.program.size());
  CHECK(same.predicted_cycles == sp.predicted_cycles);
  const StorePlan under = plan_store(cfg, p, c, as_a, j, 0, true, n - 1);
  if (under.ok()) {
    ++tally.capped_other;
    for (size_t i = 0; i < under.part_begin.size(); ++i) CHECK(under.part_end(i) - under.part_begin[i] <= static_cast<size_t>(n - 1));
    check_program(cfg, p, c, as_a, j, under);
  } else {
    CHECK_THAT(under.why_not, Contains("STORE instructions") && Contains(fmt::format("more than the {} a part may take", n - 1)));
  }
  const StorePlan none = plan_store(cfg, p, c, as_a, j, 0, true, 0);
  CHECK_FALSE(none.ok());
  CHECK_THAT(none.why_not, Contains("more than the 0 a part may take"));
}

// Every (producer, consumer) pair of the layer's plans, adjacent or not, every job of the
// consumer, its image where the compiler put it and moved to the top of its half
// (relocate_image, as the runner does for images that wait): each STORE program plan_store
// produces is interpreted and checked.
// Calls f(phase, problem, s, t, producer step, reader step, as_a) for every step s of the layer's
// plans whose result step t reads (adjacent or not), on every phase and term.
template <typename F>
void for_each_reader(const arch::ArchConfig& cfg, const std::string& layer, F&& f) {
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/" + layer + ".yaml");
  for (verif::Phase ph : {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg})
    for (const verif::PhaseProblem& prob : verif::phase_problems(spec, ph))
      for (size_t term = 0; term < prob.terms.size(); ++term) {
        const NetworkPlan plan = plan_network(cfg, prob, term);
        for (size_t s = 0; s + 1 < plan.steps.size(); ++s) {
          const PlannedStep& st = plan.steps[s];
          size_t t = s + 1;
          while (t < plan.steps.size() && plan.steps[t].lhs != st.out && plan.steps[t].rhs != st.out) ++t;
          REQUIRE(t < plan.steps.size());
          const PlannedStep& next = plan.steps[t];
          f(ph, prob, s, t, st, next, (next.lhs == st.out) == next.compiled.lhs_is_a);
        }
      }
}

void check_layer(const arch::ArchConfig& cfg, const std::string& layer, Tally& tally) {
  const int64_t half = cfg.memory.unified_depth / 2;
  for_each_reader(cfg, layer, [&](verif::Phase ph, const verif::PhaseProblem& prob, size_t s, size_t t,
                                  const PlannedStep& st, const PlannedStep& next, bool as_a) {
    const CompiledGemm& p = st.compiled.gemm;
    for (size_t j = 0; j < next.compiled.gemm.jobs.size(); ++j)
      for (bool moved : {false, true}) {
        CompiledGemm c = next.compiled.gemm;
        if (moved) relocate_image(cfg, c, j, as_a, half - image_shape(c, as_a, j).rows);
        const StorePlan sp = plan_store(cfg, p, c, as_a, j, 0, true);
        INFO(layer << " " << verif::to_string(ph) << " " << prob.result << " step " << s << " -> " << t << " job " << j
                   << " as " << (as_a ? "A" : "B") << (moved ? " moved" : "") << ": " << sp.why_not);
        if (!sp.ok()) {
          CHECK_FALSE(sp.why_not.empty());
          if (std::getenv("FETTA_STORE_WHY") && !moved && j == 0) WARN(sp.why_not);
          tally.refused += !moved && j == 0;
          continue;
        }
        check_program(cfg, p, c, as_a, j, sp);
        tally.chunked += sp.after_job.size() > 1;
        if (moved) {
          ++tally.moved;
          continue;
        }
        tally.later_jobs += j > 0;
        if (j > 0) continue;
        ++tally.planned;
        tally.later += t > s + 1;
        tally.into_top_b += !as_a && c.map.ib_top && !c.map.os;
        tally.from_os += p.map.os;
        tally.into_os += c.map.os;
        tally.several += sp.nests > static_cast<int64_t>(sp.part_begin.size());
        tally.diagonal += sp.diagonal_moves > 0;
        check_part_cap(cfg, p, c, as_a, j, sp, tally);
      }
  });
}

// A random affine nest of 1-6 levels (bounds 2-5, strides -20..20) from `base`.
AffineNest random_nest(std::mt19937_64& rng, Vec4 base) {
  AffineNest n{base, std::vector<AffineLevel>(1 + rng() % 6)};
  for (AffineLevel& l : n.levels) {
    l.bound = 2 + static_cast<int64_t>(rng() % 4);
    for (auto& s : l.stride) s = static_cast<int64_t>(rng() % 41) - 20;
  }
  return n;
}

}  // namespace

TEST_CASE("Affine nests are fitted exactly, and non-nests refused", "[store]") {
  const uint64_t seed = 23;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  int refused = 0;
  for (int it = 0; it < 300; ++it) {
    const Vec4 base{static_cast<int64_t>(rng() % 100), 3, 7, static_cast<int64_t>(rng() % 5)};
    const AffineNest nest = random_nest(rng, base);
    const std::vector<Vec4> seq = expand(nest.base, nest.levels);
    const size_t L = nest.levels.size();
    Vec4 got_base{};
    std::vector<AffineLevel> levels;
    REQUIRE(fit_affine_nest(seq, got_base, levels));
    CHECK(got_base == base);
    CHECK(expand(got_base, levels) == seq);
    CHECK(levels.size() <= L);  // levels with compatible strides merge
    // One element moved: either refused or (a short sequence may still be some nest) exact.
    std::vector<Vec4> broken = seq;
    broken[broken.size() / 2][0] += 1000;
    if (fit_affine_nest(broken, got_base, levels)) CHECK(expand(got_base, levels) == broken);
    else ++refused;
  }
  CHECK(refused > 200);
  Vec4 b{};
  std::vector<AffineLevel> lv;
  CHECK_FALSE(fit_affine_nest({}, b, lv));
  CHECK(fit_affine_nest({{1, 2, 3, 4}}, b, lv));
  CHECK(lv.empty());
  CHECK_FALSE(fit_affine_nest({{0, 0, 0, 0}, {1, 0, 0, 0}, {5, 0, 0, 0}}, b, lv));  // 3 elements, no common step
}

TEST_CASE("A sequence of several nests is split into them, every bound within the instruction's", "[store]") {
  const uint64_t seed = 29;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  auto expand_all = [](const std::vector<AffineNest>& nests) {
    std::vector<Vec4> out;
    for (const AffineNest& n : nests) {
      const std::vector<Vec4> part = expand(n.base, n.levels);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  };
  for (int it = 0; it < 200; ++it) {
    // 1-4 nests far apart (no stride of one reaches the next): each must come back as one nest.
    const int pieces = 1 + static_cast<int>(rng() % 4);
    std::vector<Vec4> seq;
    for (int p = 0; p < pieces; ++p) {
      const AffineNest n = random_nest(rng, {100'000 * p, static_cast<int64_t>(rng() % 64), 7, 0});
      const std::vector<Vec4> part = expand(n.base, n.levels);
      seq.insert(seq.end(), part.begin(), part.end());
    }
    INFO("iteration " << it << ", " << pieces << " nest(s), " << seq.size() << " moves");
    const std::vector<AffineNest> nests = split_affine_nests(seq, 256);
    CHECK(static_cast<int>(nests.size()) == pieces);
    CHECK(expand_all(nests) == seq);
    // A bound of 3: more nests, still exact, none over the bound.
    const std::vector<AffineNest> small = split_affine_nests(seq, 3);
    CHECK(expand_all(small) == seq);
    for (const AffineNest& n : small)
      for (const AffineLevel& l : n.levels) CHECK(l.bound <= 3);
  }
  // A run of 10 with bounds of at most 4: 3 x 3 (covers more than 4 x 2), then 1.
  std::vector<Vec4> run;
  for (int64_t i = 0; i < 10; ++i) run.push_back({i, 0, 2 * i, 0});
  const std::vector<AffineNest> nests = split_affine_nests(run, 4);
  REQUIRE(nests.size() == 2);
  CHECK(nests[0].levels.size() == 2);
  CHECK(nests[0].levels[0].bound * nests[0].levels[1].bound == 9);
  CHECK(expand_all(nests) == run);
  // A long run over the bound: cut to a divisor of the bound's run (8 x 625), one nest.
  std::vector<Vec4> long_run;
  for (int64_t i = 0; i < 5000; ++i) long_run.push_back({i, 0, 3 * i, 0});
  const std::vector<AffineNest> one = split_affine_nests(long_run, 1024);
  CHECK(one.size() == 1);
  CHECK(expand_all(one) == long_run);
  CHECK(split_affine_nests({{1, 2, 3, 4}}, 4).size() == 1);
  CHECK(split_affine_nests({}, 4).empty());
}

namespace {

// Runs DMA load descriptors from `dram` (beat -> lanes) into slots `um` (slot -> lanes), from
// docs/dma.md §2: DRAM lane j of each beat lands in lane (j + lane_rot) mod lanes, written where
// lane_mask has it. Counts lanes written twice into `overwritten`.
void run_gather(const arch::DmaLayout& layout, const std::vector<arch::DmaDescriptor>& descs,
                const std::map<uint64_t, std::vector<uint32_t>>& dram, std::map<uint64_t, std::vector<uint32_t>>& um,
                int64_t& overwritten) {
  const auto H = static_cast<size_t>(layout.geometry().lanes);
  for (const arch::DmaDescriptor& d : descs) {
    REQUIRE_FALSE(d.to_dram);
    CHECK_NOTHROW(arch::encode_dma(layout, d));
    for (const arch::DmaBeat& b : arch::dma_beats(layout, d)) {
      auto& row = um[b.slot];
      if (row.empty()) row.assign(H, 0xFFFFFFFFU);
      const auto it = dram.find(b.dram);
      for (size_t j = 0; j < H; ++j) {
        const size_t k = (j + static_cast<size_t>(d.lane_rot)) % H;
        if (!((d.lane_mask >> k) & 1U)) continue;
        overwritten += row[k] != 0xFFFFFFFFU;
        row[k] = it == dram.end() ? 0xEEEEEEEEU : it->second[j];
      }
    }
  }
}

// The result's element ids (element e, row-major over the producer's m then n labels, holds e + 1)
// in two 16-bit halves, as the operand images hold them.
struct ResultIds {
  explicit ResultIds(const CompiledGemm& p) {
    std::vector<std::string> labels = p.shape.m.labels;
    labels.insert(labels.end(), p.shape.n.labels.begin(), p.shape.n.labels.end());
    std::vector<int64_t> dims = p.shape.m.dims;
    dims.insert(dims.end(), p.shape.n.dims.begin(), p.shape.n.dims.end());
    lo = verif::Tensor<uint16_t>(labels, dims);
    hi = verif::Tensor<uint16_t>(labels, dims);
    int64_t id = 1;
    lo.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ & 0xFFFF); });
    id = 1;
    hi.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ >> 16); });
  }
  verif::Tensor<uint16_t> lo, hi;
};

// Checks the unified-memory slots `um` (slot -> the host port's H lanes) a load left against c's
// image of job j: every lane of the image holds its element, and nothing lies outside its rows.
void check_loaded(const std::map<uint64_t, std::vector<uint32_t>>& um, const ResultIds& ids, const CompiledGemm& c,
                  bool as_a, size_t j, int64_t groups, int64_t H) {
  const RowImage want_lo = as_a ? layout_a(c, ids.lo, 0, j) : layout_b(c, ids.lo, j);
  const RowImage want_hi = as_a ? layout_a(c, ids.hi, 0, j) : layout_b(c, ids.hi, j);
  int64_t bad = 0, outside = 0;
  for (const auto& [slot, lanes] : um) {
    const int64_t r = static_cast<int64_t>(slot) / groups - want_lo.first_row;
    outside += r < 0 || r >= want_lo.rows;
  }
  for (int64_t r = 0; r < want_lo.rows; ++r)
    for (int l = 0; l < want_lo.lanes; ++l) {
      const auto it = um.find(static_cast<uint64_t>((want_lo.first_row + r) * groups + l / H));
      const uint32_t got = it == um.end() ? 0xFFFFFFFFU : it->second[static_cast<size_t>(l % H)];
      const size_t i = static_cast<size_t>(r * want_lo.lanes + l);
      bad += (got & 0xFFFF) != want_lo.data[i] || (got >> 16) != want_hi.data[i];
    }
  CHECK(outside == 0);
  CHECK(bad == 0);
}

struct GatherTally {
  int planned = 0, refused = 0, copies = 0, turned = 0, chunked = 0;
  int64_t beats = 0, image_beats = 0, descriptors = 0;
};

// Saves p's result as the program does (each output chunk's rows from accumulator row 0, the
// result's beats of each row one after another, chunks after one another in DRAM, ids as in
// check_program), gathers it into c's image of job j and compares with layout_a / layout_b.
void check_gather(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t j,
                  GatherTally& tally) {
  const arch::DmaLayout layout(arch::dma_geometry(cfg));
  const int64_t H = layout.geometry().lanes, groups = int64_t{1} << layout.geometry().group_bits;
  const std::array<int64_t, 2> sb = saved_beats(p, static_cast<int>(H));
  SavedRows saved{{}, sb[0], sb[1]};
  const std::vector<size_t> chunks = output_chunks(p);
  const int64_t Nn = p.shape.n.size();
  std::map<uint64_t, std::vector<uint32_t>> dram;
  dram[7].assign(static_cast<size_t>(H), 0);  // the pad beat: the test's pad value, 0, in every lane
  uint64_t next = 100;
  for (size_t ch = 0; ch < chunks.size(); ++ch) {
    const GemmJob& pj = p.jobs[chunks[ch]];
    saved.chunk_beat.push_back(next);
    for (int64_t m = pj.m0; m < pj.m0 + pj.m_count; ++m)
      for (int64_t n = pj.nt0 * p.map.n_tile; n < std::min(Nn, (pj.nt0 + pj.nt_count) * p.map.n_tile); ++n) {
        const ImageSlot at = z_slot(p, pj, m, n);
        const uint64_t beat = next + static_cast<uint64_t>(at.row * sb[1] + at.lane / H - sb[0]);
        auto& lanes = dram[beat];
        if (lanes.empty()) lanes.assign(static_cast<size_t>(H), 0xDDDDDDDDU);
        lanes[static_cast<size_t>(at.lane % H)] = static_cast<uint32_t>(m * Nn + n + 1);
      }
    next += static_cast<uint64_t>(acc_rows(p, pj) * sb[1]);
  }
  const GatherPlan plan = plan_gather(cfg, p, c, as_a, j, saved, 7, true);
  if (!plan.ok()) {
    CHECK_FALSE(plan.why_not.empty());
    ++tally.refused;
    return;
  }
  std::map<uint64_t, std::vector<uint32_t>> um;
  int64_t overwritten = 0, beats = 0;
  run_gather(layout, plan.descriptors, dram, um, overwritten);
  for (const arch::DmaDescriptor& d : plan.descriptors) beats += d.beats();
  CHECK(overwritten == 0);  // each lane once: beats write disjoint lanes
  CHECK(beats == plan.beats);
  check_loaded(um, ResultIds(p), c, as_a, j, groups, H);
  ++tally.planned;
  tally.copies += plan.beats == plan.image_beats;
  tally.turned += std::any_of(plan.descriptors.begin(), plan.descriptors.end(),
                              [](const arch::DmaDescriptor& d) { return d.lane_rot != 0; });
  tally.chunked += chunks.size() > 1;
  tally.beats += plan.beats;
  tally.image_beats += plan.image_beats;
  tally.descriptors += static_cast<int64_t>(plan.descriptors.size());
}

// Every (producer, consumer) pair of the layer's plans and every job of the consumer, gathered.
void check_layer_gathers(const arch::ArchConfig& cfg, const std::string& layer, GatherTally& tally) {
  for_each_reader(cfg, layer, [&](verif::Phase ph, const verif::PhaseProblem& prob, size_t s, size_t t,
                                  const PlannedStep& st, const PlannedStep& next, bool as_a) {
    for (size_t j = 0; j < next.compiled.gemm.jobs.size(); ++j) {
      INFO(layer << " " << verif::to_string(ph) << " " << prob.result << " step " << s << " -> " << t << " job " << j
                 << " as " << (as_a ? "A" : "B"));
      check_gather(cfg, st.compiled.gemm, next.compiled.gemm, as_a, j, tally);
    }
  });
}

}  // namespace

TEST_CASE("DMA gathers put every element of a saved result where the consumer reads it", "[store][gather]") {
  GatherTally all;
  for (const char* cfg_name : {"default", "ce4x4_x4", "ce2x4_x8", "ce4x4_x4_int8"}) {
    const arch::ArchConfig cfg = cfg_named(cfg_name);
    GatherTally tally;
    for (const char* layer : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small", "tt_fetta_example"})
      check_layer_gathers(cfg, layer, tally);
    INFO(cfg_name << ": " << tally.planned << " gathers (" << tally.copies << " row copies, " << tally.turned
                  << " turning beats, " << tally.chunked << " from several output chunks), " << tally.refused
                  << " refused; " << tally.beats << " beats against " << tally.image_beats << " pre-tiled, in "
                  << tally.descriptors << " descriptors");
    CHECK(tally.planned > 0);
    all.copies += tally.copies;
    all.turned += tally.turned;
    all.chunked += tally.chunked;
  }
  CHECK(all.copies > 0);  // layouts that agree cost what a pre-tiled image does
  CHECK(all.turned > 0);  // runs that land at other lanes use the turn
  CHECK(all.chunked > 0);
}

namespace {

struct PretiledTally {
  int planned = 0, refused = 0, chunked = 0, diagonal = 0, folded = 0;
};

// Saves p's result pre-tiled for reader c (mapper::PretiledResults) as the program does: each
// output chunk's pieces STOREd (interpreted, ids as in check_program) into staging rows (from row
// 40 where the half has room), saved by their descriptors into DRAM, then loaded into every job's image by the reader's
// descriptors and compared with layout_a / layout_b: every element in place, each lane once.
void check_pretiled(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                    PretiledTally& tally) {
  PretiledResults pr(cfg);
  std::string why;
  std::optional<PretiledResults::Plan> plan = pr.plan(p, {{&c, as_a}}, 0, why);
  if (!plan) {
    CHECK_FALSE(why.empty());
    ++tally.refused;
    return;
  }
  const arch::DmaLayout layout(arch::dma_geometry(cfg));
  const arch::DmaGeometry& g = layout.geometry();
  const int64_t H = g.lanes, groups = int64_t{1} << g.group_bits, Nn = p.shape.n.size();
  const std::vector<size_t> chunks = output_chunks(p);
  int64_t most = 0;  // staging rows: from row 40 where the half has room
  for (size_t k = 0; k < chunks.size(); ++k) most = std::max(most, plan->staging_rows(k));
  const int64_t S = std::min<int64_t>(40, cfg.memory.unified_depth / 2 - most);
  REQUIRE(S >= 0);
  std::map<uint64_t, std::vector<uint32_t>> dram;
  uint64_t next = 4096;  // byte address
  int with_pieces = 0;
  for (size_t k = 0; k < chunks.size(); ++k) {
    const GemmJob& pj = p.jobs[chunks[k]];
    std::map<int64_t, std::vector<uint32_t>> acc, staged;
    for (int64_t m = pj.m0; m < pj.m0 + pj.m_count; ++m)
      for (int64_t n = pj.nt0 * p.map.n_tile; n < std::min(Nn, (pj.nt0 + pj.nt_count) * p.map.n_tile); ++n) {
        const ImageSlot at = z_slot(p, pj, m, n);
        auto& row = acc[at.row];
        if (row.empty()) row.assign(static_cast<size_t>(cfg.network.lanes), 0xDDDDDDDDU);
        row[static_cast<size_t>(at.lane)] = static_cast<uint32_t>(m * Nn + n + 1);
      }
    with_pieces += !plan->chunks[k].empty();
    for (PretiledResults::Piece& pc : plan->chunks[k]) {
      const StorePlan sp = plan_store_rows(cfg, p, c, as_a, pc.job, 0, k, pc.rows, S + pc.offset);
      REQUIRE(sp.ok());
      REQUIRE(sp.after_job == std::vector<size_t>{chunks[k]});
      tally.diagonal += sp.diagonal_moves > 0;
      run_program(cfg, sp.program, acc, 0, staged);
    }
    const int64_t rows = plan->staging_rows(k);
    for (const auto& [r, lanes] : staged) CHECK((r >= S && r < S + rows));  // only the staging rows
    for (PretiledResults::Piece& pc : plan->chunks[k]) {
      const int64_t per_row = image_beats_per_row(g, image_shape(c, as_a, pc.job).lanes);
      const auto n = static_cast<int64_t>(pc.rows.size());
      pc.at = next;
      for (const arch::DmaBeat& b : arch::dma_beats(layout, result_save(g, S + pc.offset, n, 0, per_row, next, false))) {
        const auto it = staged.find(static_cast<int64_t>(b.slot) / groups);
        REQUIRE(it != staged.end());
        const auto first = static_cast<std::ptrdiff_t>((static_cast<int64_t>(b.slot) % groups) * H);
        dram[b.dram].assign(it->second.begin() + first, it->second.begin() + first + H);
      }
      next += static_cast<uint64_t>(n * per_row * g.beat_bytes());
    }
  }
  tally.chunked += with_pieces > 1;
  pr.start(std::move(*plan));
  pr.made(3);
  CHECK(pr.reader_of(3, c, as_a) == std::optional<size_t>{0});
  CHECK_FALSE(pr.reader_of(3, c, !as_a));
  CHECK_FALSE(pr.reader_of(4, c, as_a));

  const ResultIds ids(p);
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    INFO("reader job " << j);
    const std::vector<arch::DmaDescriptor> ds = pr.loads(3, 0, j, as_a ? c.jobs[j].a_base : c.jobs[j].b_base, true);
    for (const arch::DmaDescriptor& d : ds) {
      CHECK(d.half);
      tally.folded += d.bound[2] > 1;
    }
    std::map<uint64_t, std::vector<uint32_t>> um;
    int64_t overwritten = 0;
    run_gather(layout, ds, dram, um, overwritten);
    CHECK(overwritten == 0);
    check_loaded(um, ids, c, as_a, j, groups, H);
  }
  ++tally.planned;
}

}  // namespace

TEST_CASE("Pre-tiled saves put every element where the reader loads it, by row copies", "[store][pretiled]") {
  PretiledTally all;
  for (const char* cfg_name : {"default", "ce4x4_x4", "ce2x4_x8", "ce4x4_x4_int8", "baseline_tpu_offchip"}) {
    const arch::ArchConfig cfg = cfg_named(cfg_name);
    PretiledTally tally;
    for (const char* layer : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small", "tt_fetta_example"})
      for_each_reader(cfg, layer, [&](verif::Phase ph, const verif::PhaseProblem& prob, size_t s, size_t t,
                                      const PlannedStep& st, const PlannedStep& next, bool as_a) {
        INFO(cfg_name << " " << layer << " " << verif::to_string(ph) << " " << prob.result << " step " << s << " -> "
                      << t << " as " << (as_a ? "A" : "B"));
        check_pretiled(cfg, st.compiled.gemm, next.compiled.gemm, as_a, tally);
      });
    INFO(cfg_name << ": " << tally.planned << " planned (" << tally.chunked << " from several output chunks, "
                  << tally.diagonal << " pieces with diagonal moves, " << tally.folded << " folded loads), "
                  << tally.refused << " refused");
    CHECK(tally.planned > 0);
    all.chunked += tally.chunked;
    all.diagonal += tally.diagonal;
    all.folded += tally.folded;
    all.refused += tally.refused;
  }
  CHECK(all.chunked > 0);
  CHECK(all.diagonal > 0);
  CHECK(all.folded > 0);
  CHECK(all.refused > 0);  // the TPU-Offchip baseline cannot pack a transposition
}

TEST_CASE("A gather into an operand the fixed network replicates is refused, saying why", "[store][gather]") {
  const arch::ArchConfig cfg = cfg_named("baseline_hier");
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/tt_small.yaml");
  int refused = 0;
  for (verif::Phase ph : {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg})
    for (const verif::PhaseProblem& prob : verif::phase_problems(spec, ph)) {
      const NetworkPlan plan = plan_network(cfg, prob, 0);
      for (size_t s = 0; s + 1 < plan.steps.size(); ++s) {
        const PlannedStep& next = plan.steps[s + 1];
        if (next.lhs != plan.steps[s].out && next.rhs != plan.steps[s].out) continue;
        const bool as_a = (next.lhs == plan.steps[s].out) == next.compiled.lhs_is_a;
        const CompiledGemm& c = next.compiled.gemm;
        if (c.replicate == 1 || (!as_a && c.map.ib_top)) continue;
        const CompiledGemm& p = plan.steps[s].compiled.gemm;
        const GatherPlan g =
            plan_gather(cfg, p, c, as_a, 0, SavedRows{std::vector<uint64_t>(output_chunks(p).size(), 0), 0, 1}, 0, false);
        CHECK_FALSE(g.ok());
        CHECK_THAT(g.why_not, Contains("replicated per CE"));
        ++refused;
      }
    }
  CHECK(refused > 0);
}

TEST_CASE("STORE programs put every element where the consumer reads it", "[store]") {
  int later_jobs = 0, chunked = 0, into_top_b = 0, from_os = 0, into_os = 0, refused = 0, several = 0,
      diagonal = 0, capped = 0, capped_other = 0;  // not on every config: in all together
  for (const char* cfg_name : {"default", "ce4x4_x4", "ce2x4_x8", "ce4x4_x4_int8", "baseline_hier"}) {
    const arch::ArchConfig cfg = cfg_named(cfg_name);
    Tally tally;
    for (const char* layer : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small", "tt_fetta_example"})
      check_layer(cfg, layer, tally);
    INFO(cfg_name << ": " << tally.planned << " planned (" << tally.into_top_b << " into a top-load B image, "
                  << tally.later << " for a consumer that runs later), " << tally.refused << " refused; "
                  << tally.later_jobs << " into later jobs, " << tally.moved << " into moved images, " << tally.chunked
                  << " in parts per output chunk; " << tally.from_os << " from and " << tally.into_os
                  << " into output-stationary mappings; " << tally.several << " in several affine nests, "
                  << tally.diagonal << " with diagonal moves; " << tally.capped << " replanned under a cap (" << tally.capped_other
                  << " planned the other way)");
    CHECK(tally.planned > 0);
    CHECK(tally.later > 0);
    CHECK(tally.moved > 0);
    later_jobs += tally.later_jobs;
    chunked += tally.chunked;
    into_top_b += tally.into_top_b;
    from_os += tally.from_os;
    into_os += tally.into_os;
    refused += tally.refused;
    several += tally.several;
    diagonal += tally.diagonal;
    capped += tally.capped;
    capped_other += tally.capped_other;
  }
  CHECK(refused > 0);  // both paths exercised (since programs may be several nests, only the fixed-wiring baseline refuses)
  CHECK(later_jobs > 0);
  CHECK(chunked > 0);
  CHECK(into_top_b > 0);
  CHECK(from_os > 0);
  CHECK(into_os > 0);
  CHECK(several > 0);
  CHECK(diagonal > 0);
  CHECK(capped > capped_other);  // refused under the cap, and
  CHECK(capped_other > 0);        // rescued by the other kind of move
}

TEST_CASE("STORE refuses what it cannot do, saying why", "[store]") {
  const arch::ArchConfig cfg = cfg_named("default");
  const GemmShape prod = gemm_shape("A", {"m", "k"}, {8, 16}, "B", {"k", "n"}, {16, 8}, {"m", "n"});
  const CompiledGemm p = compile_gemm(cfg, prod);
  // The result's label "x" is missing from the consumer.
  const CompiledGemm c = compile_gemm(cfg, gemm_shape("Z", {"x", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"x", "o"}));
  CHECK_THAT(plan_store(cfg, p, c, true, 0).why_not, Contains("label m of the result is not in the consumer's operand"));
  // A fixed-wiring consumer replicates its operands per CE.
  const arch::ArchConfig tpu = cfg_named("baseline_hier");
  const CompiledGemm pf = compile_gemm(tpu, prod);
  const CompiledGemm cf = compile_gemm(tpu, gemm_shape("Z", {"m", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"m", "o"}));
  CHECK_THAT(plan_store(tpu, pf, cf, true, 0).why_not, Contains("replicated per CE"));
  // ... except a B loaded from the top (one image, each CE's columns in its own lanes).
  const GemmShape as_b = gemm_shape("W", {"o", "m"}, {4, 8}, "Z", {"m", "n"}, {8, 8}, {"o", "n"});
  CHECK_THAT(plan_store(tpu, pf, compile_gemm(tpu, as_b, 1, false), false, 0).why_not, Contains("replicated per CE"));
  CHECK(plan_store(tpu, pf, compile_gemm(tpu, as_b, 1, true), false, 0).ok());
  // Z[m, n] -> consumer contracting over n with Z as A: one lane run per row; planned.
  const CompiledGemm ok = compile_gemm(cfg, gemm_shape("Z", {"m", "n"}, {8, 8}, "W", {"n", "o"}, {8, 4}, {"m", "o"}));
  const StorePlan sp = plan_store(cfg, p, ok, true, 0);
  REQUIRE(sp.ok());
  CHECK(sp.program.front().pad_neg);  // bf16 IA pads with -0
}

TEST_CASE("A transposition is stored diagonally, an element per bank per cycle", "[store]") {
  // Z[m, n] (rows m, n on the lanes) read by a consumer contracting over m: every result row's
  // elements go to one lane of different image rows, one lane per move, unless moved diagonally.
  // The default's 16 banks of 4 lanes, and 64 banks of one lane (every bank mask bit in use).
  arch::ArchConfig banks64 = cfg_named("default");
  {
    std::ifstream f(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    text.replace(text.find("banks: 16"), 9, "banks: 64");
    text.replace(text.find("elems_per_bank: 4"), 17, "elems_per_bank: 1");
    banks64 = arch::parse_arch_config(text, "default with 64 banks");
  }
  for (const arch::ArchConfig& cfg : {cfg_named("default"), banks64})
    for (const int64_t M : {64, 32, 40}) {
      const int64_t B = cfg.memory.banks, T = cfg.memory.elems_per_bank;
      INFO(B << " banks of " << T << ", M = " << M);
      // The producer's 16 CEs side by side on N (64 result lanes, every bank), the consumer's on K
      // (a 64-lane K tile): a diagonal can take an element from every bank into every bank.
      const CompiledGemm p = compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {M, 16}, "B", {"k", "n"}, {16, 64}, {"m", "n"}), 1);
      const CompiledGemm c = compile_gemm(cfg, gemm_shape("Z", {"n", "m"}, {64, M}, "W", {"m", "j"}, {M, 16}, {"n", "j"}), 16);
      REQUIRE(c.jobs.size() == 1);
      const StorePlan sp = plan_store(cfg, p, c, true, 0);
      REQUIRE(sp.ok());
      check_program(cfg, p, c, true, 0, sp);
      // 64 x M elements, 64 / T a move; a partial K tile (M < 64) leaves lanes to pad: one lane-0 move per row first.
      const int64_t pads = M == 64 ? 0 : 64;
      CHECK(sp.moves - sp.diagonal_moves == pads);
      // One move per (src lane mod T, dst lane mod T, bank distance): T x T x B, each as many
      // elements as the image has banks of K.
      CHECK(sp.diagonal_moves == T * T * B);
      CHECK(sp.predicted_cycles < 64 * M / 4);  // one lane a cycle would take 64 M
      // Its rate: 64 x M elements (the pads' lane-0 moves add one each) over its cycles.
      CHECK(sp.elements == 64 * M + pads);
      CHECK_THAT(store_rate_text({sp}, cfg.network.lanes),
                 Equals(fmt::format("{:.1f} elements per STORE cycle (64 for a row copy)",
                                    static_cast<double>(64 * M + pads) / static_cast<double>(sp.predicted_cycles))));
      for (size_t i = 0; i < sp.program.size(); ++i) {
        const arch::StoreInstr& st = sp.program[i];
        CHECK(st.diag == (i >= (pads ? 1U : 0U)));  // the pad moves come first
        if (!st.diag) continue;
        // T result rows per unified bank and T image rows per accumulator bank: per bank bit, T x 2^h.
        std::array<int64_t, 10> linear{};
        for (size_t h = 0; (int64_t{1} << h) < B; ++h) linear[h] = T << h;
        CHECK(st.dst_row_bank_stride == linear);
        for (size_t h = 0; (int64_t{1} << h) < B; ++h)  // the bits of the image's banks (M / T of them)
          if ((T << h) < M) CHECK(st.src_row_bank_stride[h] == linear[h]);
      }
    }
}

TEST_CASE("A transposition whose digits change with the bank in mixed radix takes a stride per bank bit", "[store]") {
  // Z[a, b, n] read by a consumer contracting over (b, a): image lane i = 8b + a holds result row
  // m = 8a + b. Unified bank i / 4 = 2b + a / 4: its bit 0 steps a by 4 (32 rows), bits 1-3 step b
  // (1, 2, 4 rows) - no one stride per bank, a stride per bank bit.
  const arch::ArchConfig cfg = cfg_named("default");
  const CompiledGemm p =
      compile_gemm(cfg, gemm_shape("A", {"a", "b", "k"}, {8, 8, 16}, "B", {"k", "n"}, {16, 64}, {"a", "b", "n"}), 1);
  const CompiledGemm c =
      compile_gemm(cfg, gemm_shape("Z", {"n", "b", "a"}, {64, 8, 8}, "W", {"b", "a", "j"}, {8, 8, 16}, {"n", "j"}), 16);
  REQUIRE(c.shape.k.labels == std::vector<std::string>{"b", "a"});
  const StorePlan sp = plan_store(cfg, p, c, true, 0);
  REQUIRE(sp.ok());
  check_program(cfg, p, c, true, 0, sp);
  CHECK(sp.diagonal_moves == 256);  // 4096 elements, 16 a move
  CHECK(sp.moves == 256);
  REQUIRE_FALSE(sp.program.empty());
  CHECK(sp.program[0].src_row_bank_stride == std::array<int64_t, 10>{32, 1, 2, 4});
  CHECK(sp.program[0].dst_row_bank_stride == std::array<int64_t, 10>{4, 8, 16, 32});
}

TEST_CASE("Waiting images get rows nothing else writes: the compiler's own, else the highest clear ones", "[store]") {
  // Preferred and clear: kept. Blocked: first fit from the top, below whatever is in the way.
  CHECK(place_rows(100, 10, 0, {{20, 5}}) == 0);
  CHECK(place_rows(100, 10, 0, {{5, 5}}) == 90);
  CHECK(place_rows(100, 10, 0, {{5, 5}, {95, 5}, {83, 4}}) == 73);
  CHECK(place_rows(100, 10, 0, {{0, 10}, {12, 88}}) == std::nullopt);  // gaps of 0..2 rows only
  CHECK(place_rows(100, 10, 95, {}) == 90);  // the preferred rows would leave the half
  CHECK(place_rows(100, 101, 0, {}) == std::nullopt);
  CHECK(place_rows(100, 10, 0, {{0, 0}, {90, 0}}) == 0);  // empty ranges take nothing
  // Random layouts against an exhaustive search for the highest clear range.
  const uint64_t seed = 41;
  std::mt19937_64 rng(seed);
  INFO("seed " << seed);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t H = 1 + static_cast<int64_t>(rng() % 64), rows = 1 + static_cast<int64_t>(rng() % 16);
    std::vector<RowRange> taken(rng() % 6);
    for (RowRange& r : taken) r = {static_cast<int64_t>(rng() % 64), static_cast<int64_t>(rng() % 12)};
    const int64_t pref = static_cast<int64_t>(rng() % 70) - 3;
    auto clear = [&](int64_t f) {
      if (f < 0 || f + rows > H) return false;
      for (const RowRange& t : taken)
        if (RowRange{f, rows}.overlaps(t)) return false;
      return true;
    };
    std::optional<int64_t> want;
    if (clear(pref)) want = pref;
    for (int64_t f = H - rows; !want && f >= 0; --f)
      if (clear(f)) want = f;
    CHECK(place_rows(H, rows, pref, taken) == want);
  }
}

TEST_CASE("relocate_image moves one image of one job: base, instruction, program word, layout", "[store]") {
  const arch::ArchConfig cfg = cfg_named("default");
  const arch::IsaLayout isa(cfg);
  // 1200 rows of M in 3 jobs (the accumulator holds 512 rows): each job has its own bases.
  CompiledGemm c =
      compile_gemm(cfg, gemm_shape("A", {"m", "k"}, {1200, 16}, "B", {"k", "n"}, {16, 8}, {"m", "n"}), arch::Dataflow::ws);
  REQUIRE(c.jobs.size() > 2);
  const CompiledGemm before = c;
  const size_t words = c.program.size() - c.jobs.size();  // the RED_CFG chunks
  relocate_image(cfg, c, 1, true, 1000);
  CHECK(c.jobs[1].a_base == 1000);
  CHECK(c.jobs[1].instr.a_base == 1000);
  CHECK(arch::field_value(c.program[words + 1], isa.field("a_base")) == 1000);
  CHECK(c.jobs[1].b_base == before.jobs[1].b_base);
  CHECK(c.program[words + 1] != before.program[words + 1]);
  for (size_t j = 0; j < c.program.size(); ++j)
    if (j != words + 1) CHECK(c.program[j] == before.program[j]);
  const verif::Tensor<uint16_t> a({"m", "k"}, {1200, 16});
  const RowImage img = layout_a(c, a, 0, 1), was = layout_a(before, a, 0, 1);
  CHECK(img.first_row == 1000);
  CHECK(img.data == was.data);
  CHECK(c.predicted_cycles == before.predicted_cycles);
  relocate_image(cfg, c, 2, false, 0);
  CHECK(arch::field_value(c.program[words + 2], isa.field("b_base")) == 0);
  CHECK(layout_b(c, verif::Tensor<uint16_t>({"k", "n"}, {16, 8}), 2).first_row == 0);
  // Out of the half: refused, naming the rows.
  const int64_t rows = image_shape(c, true, 0).rows;
  CHECK_THROWS_AS(relocate_image(cfg, c, 0, true, 2048 - rows + 1), CompileError);
  CHECK_THROWS_WITH(relocate_image(cfg, c, 0, true, -1), Contains("leaves the half (rows 0 .. 2047)"));
  CHECK_NOTHROW(relocate_image(cfg, c, 0, true, 2048 - rows));
}

TEST_CASE("STORE encoding: fields, ranges and the type's conversion field", "[store][isa]") {
  const arch::IsaLayout isa(cfg_named("default"));
  CHECK(isa.bits() == 320);  // STORE is the widest instruction (293 bits): 10 words
  int at = 4;
  for (const arch::IsaField& f : isa.store_fields()) {
    CHECK(f.lsb == at);
    at += f.width;
  }
  CHECK(at <= isa.bits());
  arch::StoreInstr s;
  s.bound = {3, 2, 1, 5};
  s.src_row_stride = {1, -1, 0, 7};
  s.dst_lane_stride = {8, 0, 0, -8};
  s.src_row_base = 511;
  s.dst_row_base = 2047;
  s.count = 64;
  s.other_half = true;
  s.pad_neg = true;
  const arch::Words w = arch::encode_store(isa, s);
  CHECK(arch::field_value(w, isa.field("op")) == static_cast<uint64_t>(arch::Opcode::store));
  CHECK(arch::field_value(w, isa.field("st_bound_m1_l3")) == 4);
  CHECK(arch::field_value(w, isa.field("st_src_row_stride_l1")) == 511);  // -1 modulo 2^9
  CHECK(arch::field_value(w, isa.field("st_dst_lane_stride_l3")) == 56);  // -8 modulo 64
  CHECK(arch::field_value(w, isa.field("st_count_m1")) == 63);
  CHECK(arch::field_value(w, isa.field("st_other_half")) == 1);
  CHECK(arch::field_value(w, isa.field("st_pad_neg")) == 1);
  CHECK_THAT(arch::disassemble(isa, w), Contains("store bound_m1_l0=2"));
  CHECK(arch::store_instr_cycles(s) == 30 + 4);
  arch::StoreInstr bad = s;
  bad.count = 65;
  CHECK_THROWS_WITH(arch::encode_store(isa, bad), Contains("count = 65; allowed: 1 .. 64"));
  // Diagonal moves: one element per bank (16 on the default), rows per bank modulo the fields.
  arch::StoreInstr d = s;
  d.count = 16;
  d.diag = true;
  d.src_row_bank_stride[0] = -4;
  d.dst_row_bank_stride[3] = 2049;
  const arch::Words dw = arch::encode_store(isa, d);
  CHECK(arch::field_value(dw, isa.field("st_diag")) == 1);
  CHECK(arch::field_value(dw, isa.field("st_src_row_bank_stride_b0")) == 508);  // -4 modulo 2^9
  CHECK(arch::field_value(dw, isa.field("st_dst_row_bank_stride_b3")) == 1);    // modulo 2^11
  CHECK(arch::field_value(dw, isa.field("st_src_row_bank_stride_b1")) == 0);
  CHECK_FALSE(isa.has_field("st_src_row_bank_stride_b4"));  // 16 banks: bits 0 .. 3
  CHECK(arch::field_value(w, isa.field("st_diag")) == 0);
  arch::StoreInstr past = d;
  past.src_row_bank_stride[4] = 1;
  CHECK_THROWS_WITH(arch::encode_store(isa, past), Contains("bank bit 4; allowed: bits 0 .. 3 (16 banks)"));
  d.count = 17;
  CHECK_THROWS_WITH(arch::encode_store(isa, d), Contains("count = 17 with diag = 1; allowed: 1 .. 16"));
  bad = s;
  bad.dst_row_bank_stride[0] = 4;
  CHECK_THROWS_WITH(arch::encode_store(isa, bad), Contains("row bank stride with diag = 0; allowed: 0"));
  bad = s;
  bad.bound[0] = 0;
  CHECK_THROWS_WITH(arch::encode_store(isa, bad), Contains("bound[0] = 0; allowed: 1 .. 1024"));
  bad = s;
  bad.src_row_base = 512;
  CHECK_THROWS_WITH(arch::encode_store(isa, bad), Contains("src_row_base = 512 does not fit its 9 bits"));
  bad = s;
  bad.shift = 3;
  CHECK_THROWS_WITH(arch::encode_store(isa, bad), Contains("shift = 3; allowed: 0"));
  const arch::IsaLayout isa16(cfg_named("default_int16"));
  CHECK_FALSE(isa16.has_field("st_pad_neg"));
  CHECK_THROWS_WITH(arch::encode_store(isa16, s), Contains("pad_neg = 1; allowed: 0"));
  s.pad_neg = false;
  s.shift = 21;
  CHECK(arch::field_value(arch::encode_store(isa16, s), isa16.field("st_shift")) == 21);
}
