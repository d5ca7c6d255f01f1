// STORE (docs/isa.md §store) on the compiler side: the nest fitting, and every STORE program the
// compiler plans for the shipped layers run through an interpreter of the instruction's
// semantics (written here from the ISA text, not from the planner) and compared, element by
// element, with the image the consumer's layout (mapper::layout_a / layout_b) asks for.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>

#include "mapper/compile.hpp"
#include "mapper/store.hpp"
#include "verif/layer.hpp"
#include "shipped_config.hpp"

using namespace fetta;
using namespace fetta::mapper;
using fetta::test::cfg_named;
using Catch::Matchers::Contains;

namespace {

using Vec4 = std::array<int64_t, 4>;

// The unified-memory rows a STORE program leaves, from accumulator contents: (row, lane) -> value.
// Addresses wrap modulo the field ranges; a move onto lane 0 writes `pad` into the rest of its row.
std::map<int64_t, std::vector<uint32_t>> run_program(const arch::ArchConfig& cfg, const std::vector<arch::StoreInstr>& prog,
                                                     const std::map<int64_t, std::vector<uint32_t>>& acc, uint32_t pad) {
  const arch::IsaLayout isa(cfg);
  const int64_t N = cfg.network.lanes, Q = int64_t{1} << isa.acc_addr_bits(), A = int64_t{1} << isa.half_addr_bits();
  auto mod = [](int64_t v, int64_t m) { return ((v % m) + m) % m; };
  std::map<int64_t, std::vector<uint32_t>> um;
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
  return um;
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
};

// Every adjacent (producer, consumer) pair of the layer's plans whose STORE program plan_store
// produces: interpreted, against the consumer's layout of the same values.
void check_layer(const arch::ArchConfig& cfg, const std::string& layer, Tally& tally) {
  const verif::LayerSpec spec = verif::load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/" + layer + ".yaml");
  for (verif::Phase ph : {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg})
    for (const verif::PhaseProblem& prob : verif::phase_problems(spec, ph))
      for (size_t term = 0; term < prob.terms.size(); ++term) {
        const NetworkPlan plan = plan_network(cfg, prob, term);
        for (size_t s = 0; s + 1 < plan.steps.size(); ++s) {
          const PlannedStep& st = plan.steps[s];
          const PlannedStep& next = plan.steps[s + 1];
          if (next.lhs != st.out && next.rhs != st.out) continue;
          const CompiledGemm& p = st.compiled.gemm;
          const CompiledGemm& c = next.compiled.gemm;
          const bool as_a = (next.lhs == st.out) == next.compiled.lhs_is_a;
          const StorePlan sp = plan_store(cfg, p, c, as_a, 0);
          INFO(layer << " " << verif::to_string(ph) << " " << prob.result << " step " << s << " -> " << s + 1 << " as "
                     << (as_a ? "A" : "B") << ": " << sp.why_not);
          if (!sp.ok()) {
            CHECK_FALSE(sp.why_not.empty());
            if (std::getenv("FETTA_STORE_WHY")) WARN(sp.why_not);
            ++tally.refused;
            continue;
          }
          ++tally.planned;
          tally.into_top_b += !as_a && c.map.ib_top;
          // Result element e (row-major over the producer's m then n labels) holds id e + 1.
          std::vector<std::string> labels = p.shape.m.labels;
          labels.insert(labels.end(), p.shape.n.labels.begin(), p.shape.n.labels.end());
          std::vector<int64_t> dims = p.shape.m.dims;
          dims.insert(dims.end(), p.shape.n.dims.begin(), p.shape.n.dims.end());
          const int64_t M = p.shape.m.size(), Nn = p.shape.n.size();
          std::map<int64_t, std::vector<uint32_t>> acc;
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < Nn; ++n) {
              const int64_t nt = n / p.map.n_tile;
              auto& row = acc[nt * M + m];
              if (row.empty()) row.assign(static_cast<size_t>(cfg.network.lanes), 0xDDDDDDDDU);
              row[static_cast<size_t>(p.col_lane[static_cast<size_t>(n - nt * p.map.n_tile)])] = static_cast<uint32_t>(m * Nn + n + 1);
            }
          const std::map<int64_t, std::vector<uint32_t>> um = run_program(cfg, sp.program, acc, 0);
          // The consumer's image of the same ids, as two 16-bit halves (the layouts carry 16-bit values).
          verif::Tensor<uint16_t> lo(labels, dims), hi(labels, dims);
          int64_t id = 1;
          lo.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ & 0xFFFF); });
          id = 1;
          hi.for_each([&](const std::vector<int64_t>&, uint16_t& v) { v = static_cast<uint16_t>(id++ >> 16); });
          const RowImage want_lo = as_a ? layout_a(c, lo, 0, 0) : layout_b(c, lo, 0);
          const RowImage want_hi = as_a ? layout_a(c, hi, 0, 0) : layout_b(c, hi, 0);
          int64_t bad = 0;
          for (const auto& [r, vals] : um)  // nothing outside the operand's rows (the other operand lives there)
            bad += r < want_lo.first_row || r >= want_lo.first_row + want_lo.rows;
          for (int64_t r = 0; r < want_lo.rows; ++r) {
            const auto it = um.find(want_lo.first_row + r);
            for (int l = 0; l < want_lo.lanes; ++l) {
              const uint32_t got = it == um.end() ? 0xFFFFFFFFU : it->second[static_cast<size_t>(l)];
              const size_t i = static_cast<size_t>(r * want_lo.lanes + l);
              bad += (got & 0xFFFF) != want_lo.data[i] || (got >> 16) != want_hi.data[i];
            }
          }
          CHECK(bad == 0);
          int64_t moves = 0, cycles = 0;
          for (const arch::StoreInstr& i : sp.program) {
            moves += i.moves();
            cycles += arch::store_instr_cycles(i);
            CHECK_NOTHROW(arch::encode_store(arch::IsaLayout(cfg), i));
          }
          CHECK(moves == sp.moves);
          CHECK(cycles == sp.predicted_cycles);
        }
      }
}

}  // namespace

TEST_CASE("Affine nests are fitted exactly, and non-nests refused", "[store]") {
  const uint64_t seed = 23;
  INFO("seed " << seed);
  std::mt19937_64 rng(seed);
  int refused = 0;
  for (int it = 0; it < 300; ++it) {
    const int L = 1 + static_cast<int>(rng() % 6);
    std::vector<int64_t> bound(static_cast<size_t>(L));
    std::vector<Vec4> stride(static_cast<size_t>(L));
    for (int l = 0; l < L; ++l) {
      bound[static_cast<size_t>(l)] = 2 + static_cast<int64_t>(rng() % 4);
      for (auto& s : stride[static_cast<size_t>(l)]) s = static_cast<int64_t>(rng() % 41) - 20;
    }
    const Vec4 base{static_cast<int64_t>(rng() % 100), 3, 7, static_cast<int64_t>(rng() % 5)};
    std::vector<Vec4> seq;
    std::vector<int64_t> idx(static_cast<size_t>(L), 0);
    for (bool more = true; more;) {
      Vec4 v = base;
      for (int l = 0; l < L; ++l)
        for (int s = 0; s < 4; ++s) v[static_cast<size_t>(s)] += idx[static_cast<size_t>(l)] * stride[static_cast<size_t>(l)][static_cast<size_t>(s)];
      seq.push_back(v);
      int l = 0;
      while (l < L && ++idx[static_cast<size_t>(l)] == bound[static_cast<size_t>(l)]) idx[static_cast<size_t>(l++)] = 0;
      more = l < L;
    }
    Vec4 got_base{};
    std::vector<AffineLevel> levels;
    REQUIRE(fit_affine_nest(seq, got_base, levels));
    CHECK(got_base == base);
    CHECK(expand(got_base, levels) == seq);
    CHECK(static_cast<int>(levels.size()) <= L);  // levels with compatible strides merge
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

TEST_CASE("STORE programs put every element where the consumer reads it", "[store]") {
  for (const char* cfg_name : {"default", "ce4x4_x4", "ce2x4_x8", "ce4x4_x4_int8", "baseline_hier"}) {
    const arch::ArchConfig cfg = cfg_named(cfg_name);
    Tally tally;
    for (const char* layer : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small", "tt_fetta_example"})
      check_layer(cfg, layer, tally);
    INFO(cfg_name << ": " << tally.planned << " planned (" << tally.into_top_b << " into a top-load B image), "
                  << tally.refused << " refused");
    CHECK(tally.planned > 0);
    CHECK(tally.into_top_b > 0);
    CHECK(tally.refused > 0);  // both paths exercised
  }
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

TEST_CASE("STORE encoding: fields, ranges and the type's conversion field", "[store][isa]") {
  const arch::IsaLayout isa(cfg_named("default"));
  CHECK(isa.bits() == 224);  // STORE is the widest instruction: 7 words
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
