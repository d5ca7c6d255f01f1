#include "mapper/compile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "mapper/search.hpp"
#include "route/dist.hpp"
#include "route/geometry.hpp"
#include "verif/numerics.hpp"

namespace fetta::mapper {

int64_t LabelGroup::size() const {
  int64_t s = 1;
  for (int64_t d : dims) s *= d;
  return s;
}

namespace {

bool contains(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string join(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, ",")); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// B rows of one fold: R (from the top: a row per CE row) or the N tile (from the left: a row per column).
int64_t b_fold_rows(const GemmMapping& mp) { return mp.ib_top ? mp.k_tile / mp.gk : mp.n_tile; }

// The jobs' windows (rows of M, N tiles, K tiles and whether the rows are complete after it) in
// program order: N chunks, then M chunks, then K chunks, so a job's later K chunks follow it.
std::vector<GemmJob> job_windows(const GemmMapping& mp, int64_t M) {
  std::vector<GemmJob> jobs;
  for (int64_t nt0 = 0; nt0 < mp.n_tiles; nt0 += mp.n_chunk)
    for (int64_t m0 = 0; m0 < M; m0 += mp.m_chunk)
      for (int64_t k0 = 0; k0 < mp.k_tiles; k0 += mp.k_chunk) {
        GemmJob job;
        job.m0 = m0;
        job.m_count = std::min(mp.m_chunk, M - m0);
        job.nt0 = nt0;
        job.nt_count = std::min(mp.n_chunk, mp.n_tiles - nt0);
        job.kt0 = k0;
        job.kt_count = std::min(mp.k_chunk, mp.k_tiles - k0);
        job.last_k = k0 + job.kt_count == mp.k_tiles;
        jobs.push_back(job);
      }
  return jobs;
}

}  // namespace

GemmShape gemm_shape(const std::string& a_name, const std::vector<std::string>& a_labels,
                     const std::vector<int64_t>& a_dims, const std::string& b_name,
                     const std::vector<std::string>& b_labels, const std::vector<int64_t>& b_dims,
                     const std::vector<std::string>& keep) {
  GemmShape s;
  s.a_name = a_name;
  s.b_name = b_name;
  s.a_labels = a_labels;
  s.b_labels = b_labels;
  for (size_t i = 0; i < a_labels.size(); ++i) {
    const std::string& l = a_labels[i];
    const bool in_b = contains(b_labels, l), kept = contains(keep, l);
    if (in_b && kept)
      throw CompileError(fmt::format("{} x {}: label '{}' is in both operands and in the result (a batch label); the "
                                     "compiler maps only contractions without batch labels",
                                     a_name, b_name, l));
    if (!in_b && !kept)
      throw CompileError(fmt::format("{} x {}: label '{}' of {} is summed but is not in {}; allowed: summed labels "
                                     "shared by both operands",
                                     a_name, b_name, l, a_name, b_name));
    LabelGroup& g = kept ? s.m : s.k;
    g.labels.push_back(l);
    g.dims.push_back(a_dims[i]);
  }
  for (size_t i = 0; i < b_labels.size(); ++i) {
    const std::string& l = b_labels[i];
    if (contains(a_labels, l)) {
      const size_t ai = static_cast<size_t>(std::find(a_labels.begin(), a_labels.end(), l) - a_labels.begin());
      if (a_dims[ai] != b_dims[i])
        throw CompileError(fmt::format("{} x {}: label '{}' has size {} in {} and {} in {}", a_name, b_name, l,
                                       a_dims[ai], a_name, b_dims[i], b_name));
      continue;
    }
    if (!contains(keep, l))
      throw CompileError(fmt::format("{} x {}: label '{}' of {} is summed but is not in {}; allowed: summed labels "
                                     "shared by both operands",
                                     a_name, b_name, l, b_name, a_name));
    s.n.labels.push_back(l);
    s.n.dims.push_back(b_dims[i]);
  }
  for (const std::string& l : keep)
    if (!contains(a_labels, l) && !contains(b_labels, l))
      throw CompileError(fmt::format("{} x {}: result label '{}' is in neither operand", a_name, b_name, l));
  return s;
}

int64_t gemm_instr_cycles(const arch::ArchConfig& cfg, int64_t m, const GemmMapping& map) {
  const arch::SystemTiming t = arch::system_timing(cfg);
  // IB load of one fold: from the left C cycles per CE group, from the top Lt for all CEs.
  const int64_t load = map.ib_top ? t.ib_top_load : static_cast<int64_t>(map.gn) * cfg.ce.cols;
  const int64_t folds = map.k_tiles * map.n_tiles;
  // L: first load cycle of fold f, S: first IA cycle of fold f (cycle 0 = first GEMM-state cycle).
  int64_t L = 0, S = 0;
  for (int64_t f = 0; f < folds; ++f) {
    S = f == 0 ? load : std::max(L + load, S + m);
    L = std::max(L + load, cfg.ce.ib_double_buffer ? S + 1 : S + m);
  }
  // pop + start + GEMM state (through the cycle done is seen) + drain.
  return 1 + 1 + (S + m + 1) + t.drain;
}

namespace {

// The tiling: the CE grid gk x gn, the folds, and each job's share (K tiles, N tiles and rows of
// M) with A and B in one half of the unified memory.
void plan_tiles(const arch::ArchConfig& cfg, const arch::IsaLayout& isa, int gk, bool ib_top, CompiledGemm& c) {
  const GemmShape& shape = c.shape;
  const int64_t M = shape.m.size(), K = shape.k.size(), Nn = shape.n.size();
  GemmMapping& mp = c.map;
  mp.gk = gk;
  mp.gn = cfg.ce.count / gk;
  mp.rows = cfg.ce.rows;
  mp.cols = cfg.ce.cols;
  mp.k_tile = static_cast<int64_t>(gk) * cfg.ce.rows;
  mp.n_tile = static_cast<int64_t>(mp.gn) * cfg.ce.cols;
  mp.k_tiles = ceil_div(K, mp.k_tile);
  mp.n_tiles = ceil_div(Nn, mp.n_tile);
  mp.ib_top = ib_top;
  const int64_t fold_rows = b_fold_rows(mp);
  const int64_t half = cfg.memory.unified_depth / 2;
  if (mp.k_tiles > (int64_t{1} << isa.count_bits()) || mp.n_tiles > (int64_t{1} << isa.count_bits()))
    throw CompileError(fmt::format("{} x {}: {} x {} folds exceed the ISA's 16-bit loop counts", shape.a_name,
                                   shape.b_name, mp.k_tiles, mp.n_tiles));
  // Jobs: K tiles per job (when one N tile of B over all of K does not fit: later K chunks
  // accumulate onto the earlier ones), N tiles per job (B rows next to A in one half) and rows of
  // M per job (what the accumulator holds and what fits next to B). The host writes each job's
  // operands into the free half before its FLIP: large operands are tiled through the host port.
  mp.k_chunk = mp.k_tiles;
  if (mp.k_tiles * fold_rows > half / 2) mp.k_chunk = std::max<int64_t>(1, (half / 2) / fold_rows);
  const int64_t b_tile_rows = mp.k_chunk * fold_rows;  // B rows of one N tile in one job
  mp.n_chunk = mp.n_tiles;
  if (mp.n_tiles * b_tile_rows + mp.k_chunk * std::min<int64_t>(M, 64) > half)
    mp.n_chunk = std::min<int64_t>(mp.n_tiles, (half / 2) / b_tile_rows);
  mp.n_chunk = std::min<int64_t>(mp.n_chunk, cfg.memory.accum_depth);
  if (mp.n_chunk < 1 || mp.n_chunk * b_tile_rows + mp.k_chunk > half)
    throw CompileError(fmt::format("{} x {} does not fit one half of unified memory: one N tile of B needs {} rows "
                                   "({} K tiles x {} rows) and A at least {}, a half has {} (memory.unified_depth / 2)",
                                   shape.a_name, shape.b_name, b_tile_rows, mp.k_chunk, fold_rows, mp.k_chunk, half));
  c.b_kt_stride = mp.n_chunk * fold_rows;
  c.b_rows = mp.k_chunk * c.b_kt_stride;
  mp.m_chunk = std::min<int64_t>({M, cfg.memory.accum_depth / mp.n_chunk, int64_t{1} << isa.count_bits(),
                                  (half - c.b_rows) / mp.k_chunk});
  c.a_base = 0;
  c.a_rows = mp.k_chunk * mp.m_chunk;
  c.b_base = c.a_rows;
}

// Fixed wiring: CE g reads lanes g*R.. of the memory row and writes accumulator lanes g*C..; no
// CEs can share a K tile, and the host replicates A and B into every CE's lanes.
void wire_fixed(const arch::ArchConfig& cfg, int gk, CompiledGemm& c) {
  if (gk != 1)
    throw CompileError(fmt::format("grid: gk = {}; with network.topology fixed the CEs cannot split K (no reduction "
                                   "network); allowed: gk = 1",
                                   gk));
  const int G = cfg.ce.count;
  c.replicate = G;
  for (int j = 0; j < G * cfg.ce.cols; ++j) {
    route::GroupTree t;
    t.result = route::TreeRef{false, j};
    c.red.trees.push_back(t);
    c.col_lane.push_back(j);
  }
  c.red.routable = true;
}

// The IA and IB networks' multicast and the reduction network's sums, and the reduction's control
// register as RED_CFG bits.
void route_networks(const arch::ArchConfig& cfg, const arch::IsaLayout& isa, int gk, bool ib_top, CompiledGemm& c) {
  const int G = cfg.ce.count, R = cfg.ce.rows, C = cfg.ce.cols, N = cfg.network.lanes;
  const GemmMapping& mp = c.map;
  // IA and IB networks: CE g = gn*gk + q, row r reads lane q*R + r (the K tile, multicast over gn).
  const route::NetGeometry geom(N, cfg.memory.elems_per_bank, arch::red_first_add_level(cfg));
  route::LaneMap lanes(static_cast<size_t>(N), -1);
  for (int g = 0; g < G; ++g)
    for (int r = 0; r < R; ++r) lanes[static_cast<size_t>(g * R + r)] = (g % gk) * R + r;
  const auto cheap = route::route_dist_cheap(geom, lanes);
  if (!cheap) {
    const route::DistRoute full = route::route_dist(geom, lanes);
    throw CompileError(fmt::format("grid {}x{}: the IA/IB multicast pattern needs per-lane control ({}), which the top "
                                   "does not build (cheap control only)",
                                   gk, mp.gn, full.routable ? "routable" : full.message));
  }
  c.ia_sel = cheap->sel_vec;
  c.ia_mask = cheap->idx_mask;
  if (cheap->transpose) throw CompileError("internal: the multicast pattern should not need the transpose level");
  c.ib_sel = c.ia_sel;
  c.ib_mask = c.ia_mask;
  if (ib_top) {
    // From the top CE g column c reads lane g*C + c, where the per-CE image already has it.
    route::LaneMap ident(static_cast<size_t>(N), -1);
    for (int i = 0; i < G * C; ++i) ident[static_cast<size_t>(i)] = i;
    const auto id = route::route_dist_cheap(geom, ident);
    if (!id || id->transpose) throw CompileError("internal: the identity should route with cheap control");
    c.ib_sel = id->sel_vec;
    c.ib_mask = id->idx_mask;
  }

  // Reduction: column j = gn*C + col sums the CE lanes (gn*gk + q)*C + col over q; dense output
  // lanes if the network can, else the lane of the group's first CE.
  auto groups_for = [&](bool dense) {
    std::vector<route::ReduceGroup> groups;
    for (int gn = 0; gn < mp.gn; ++gn)
      for (int col = 0; col < C; ++col) {
        route::ReduceGroup grp;
        for (int q = 0; q < gk; ++q) grp.lanes.push_back((gn * gk + q) * C + col);
        grp.out = dense ? gn * C + col : gn * gk * C + col;
        groups.push_back(grp);
      }
    return groups;
  };
  c.red = route::route_red(geom, groups_for(true));
  const bool dense = c.red.routable;
  if (!dense) {
    c.red = route::route_red(geom, groups_for(false));
    if (!c.red.routable)
      throw CompileError(fmt::format("grid {}x{}: reduction pattern unroutable: {}", gk, mp.gn, c.red.message));
  }
  for (const auto& g : groups_for(dense)) c.col_lane.push_back(g.out);
  const int L = isa.levels();
  c.red_cfg.assign(static_cast<size_t>(isa.red_cfg_bits()), 0);
  for (int k = 0; k < L; ++k)
    for (int j = 0; j < N / 2; ++j) {
      const auto mode = static_cast<unsigned>(c.red.control.level[static_cast<size_t>(k)][static_cast<size_t>(j)]);
      c.red_cfg[static_cast<size_t>(k * N + 2 * j)] = mode & 1U;
      c.red_cfg[static_cast<size_t>(k * N + 2 * j + 1)] = (mode >> 1) & 1U;
    }
  for (int i = 0; i < N; ++i) c.red_cfg[static_cast<size_t>(L * N + i)] = c.red.control.transpose[static_cast<size_t>(i)];
}

// The program: the RED_CFG chunks, then per job a GEMM (pushed after its FLIP by the caller), with
// the cycles each takes.
void emit_program(const arch::ArchConfig& cfg, const arch::IsaLayout& isa, bool ib_top, CompiledGemm& c) {
  const GemmMapping& mp = c.map;
  const int64_t fold_rows = b_fold_rows(mp);
  const int red_chunks = cfg.network.topology == arch::NetworkTopology::fixed ? 0 : isa.red_chunks();
  for (int ch = 0; ch < red_chunks; ++ch) c.program.push_back(arch::encode_red_cfg(isa, ch, c.red_cfg));
  c.predicted_cycles = red_chunks;  // the RED_CFG pops; each job adds its FLIP and GEMM
  for (GemmJob job : job_windows(mp, c.shape.m.size())) {
    arch::GemmInstr& g = job.instr;
    g.m = static_cast<uint32_t>(job.m_count);
    g.k_tiles = static_cast<uint32_t>(job.kt_count);
    g.n_tiles = static_cast<uint32_t>(job.nt_count);
    g.gn = static_cast<uint32_t>(mp.gn);
    g.gk = static_cast<uint32_t>(mp.gk);
    job.a_base = c.a_base;
    job.b_base = c.b_base;
    g.a_base = static_cast<uint32_t>(c.a_base);
    g.a_kt_stride = job.kt_count > 1 ? static_cast<uint32_t>(job.m_count) : 0;
    g.b_base = static_cast<uint32_t>(c.b_base);
    g.b_kt_stride = job.kt_count > 1 ? static_cast<uint32_t>(job.nt_count * fold_rows) : 0;
    g.b_nt_stride = job.nt_count > 1 ? static_cast<uint32_t>(fold_rows) : 0;
    g.acc_base = 0;
    g.acc_nt_stride = job.nt_count > 1 ? static_cast<uint32_t>(job.m_count) : 0;
    g.acc_accumulate = job.kt0 > 0;  // later K chunks add onto the rows the first one wrote
    g.ia_sel = c.ia_sel;
    g.ia_mask = c.ia_mask;
    g.ib_sel = c.ib_sel;
    g.ib_mask = c.ib_mask;
    g.ib_top = ib_top;
    GemmMapping jm = mp;
    jm.n_tiles = job.nt_count;
    jm.k_tiles = job.kt_count;
    job.predicted_cycles = 1 + gemm_instr_cycles(cfg, job.m_count, jm);  // FLIP + GEMM
    c.predicted_cycles += job.predicted_cycles;
    try {
      c.program.push_back(arch::encode_gemm(isa, g));
    } catch (const arch::IsaError& e) {
      throw CompileError(fmt::format("{} x {}: {}", c.shape.a_name, c.shape.b_name, e.what()));
    }
    c.jobs.push_back(job);
  }
}

}  // namespace

CompiledGemm compile_gemm(const arch::ArchConfig& cfg, const GemmShape& shape, int gk, bool ib_top) {
  const int G = cfg.ce.count, C = cfg.ce.cols;
  if (gk < 1 || G % gk != 0)
    throw CompileError(fmt::format("grid: gk = {}; allowed: a divisor of ce.count = {}", gk, G));
  const arch::IsaLayout isa(cfg);
  CompiledGemm c;
  c.shape = shape;
  plan_tiles(cfg, isa, gk, ib_top, c);
  c.lane_gk.assign(static_cast<size_t>(cfg.network.lanes), -1);
  for (int lane = 0; lane < G * C; ++lane) c.lane_gk[static_cast<size_t>(lane)] = (lane / C) % gk;
  if (cfg.network.topology == arch::NetworkTopology::fixed)
    wire_fixed(cfg, gk, c);
  else
    route_networks(cfg, isa, gk, ib_top, c);
  emit_program(cfg, isa, ib_top, c);
  return c;
}

CompiledGemm compile_gemm_os(const arch::ArchConfig& cfg, const GemmShape& shape, int gm) {
  const int64_t M = shape.m.size(), K = shape.k.size(), Nn = shape.n.size();
  OsGemm whole;  // the GEMM in one instruction: the grid checked against the configuration
  try {
    whole = os_gemm(cfg, M, K, Nn, gm);
  } catch (const std::invalid_argument& e) {
    throw CompileError(e.what());
  }
  if (cfg.network.topology == arch::NetworkTopology::fixed)
    throw CompileError("output-stationary: with network.topology fixed the IA and IB networks cannot multicast; "
                       "allowed: network.topology butterfly");
  const int R = whole.rows;
  const arch::IsaLayout isa(cfg);
  const int64_t half = cfg.memory.unified_depth / 2, acc = cfg.memory.accum_depth, count = int64_t{1} << isa.count_bits();
  CompiledGemm c;
  c.shape = shape;
  GemmMapping& mp = c.map;
  mp.os = true;
  mp.gm = whole.gm;
  mp.gn = whole.gn;
  mp.rows = whole.rows;
  mp.cols = whole.cols;
  const int64_t m_tile = int64_t{gm} * R, m_tiles = whole.m_tiles();
  mp.n_tile = int64_t{mp.gn} * whole.cols;
  mp.n_tiles = whole.n_tiles();
  // K chunks (equal but the last): one M tile's A and one N tile's B side by side in a half.
  const int64_t k_chunks = ceil_div(K, std::min(half / 2, count));
  mp.k_tile = ceil_div(K, k_chunks);
  mp.k_tiles = k_chunks;
  mp.k_chunk = 1;
  // N tiles per job next to one M tile, then M tiles in the rest of the half and the accumulator.
  const int64_t kc = mp.k_tile;
  mp.n_chunk = std::min({mp.n_tiles, (half - kc) / kc, acc / R, count});
  if (mp.n_chunk < 1)
    throw CompileError(fmt::format("{} x {} output-stationary: one tile does not fit (memory.accum_depth = {} rows, "
                                   "{} needed for an R x C block)",
                                   shape.a_name, shape.b_name, acc, R));
  const int64_t mt_chunk = std::min({m_tiles, (half - mp.n_chunk * kc) / kc, acc / (mp.n_chunk * R), count});
  mp.m_chunk = mt_chunk * m_tile;
  c.a_base = 0;
  c.a_rows = mt_chunk * kc;
  c.b_base = c.a_rows;
  c.b_rows = mp.n_chunk * kc;
  // The reduction network passes every lane straight (each CE's columns are their own outputs).
  c.red_cfg.assign(static_cast<size_t>(isa.red_cfg_bits()), 0);
  for (int ch = 0; ch < isa.red_chunks(); ++ch) c.program.push_back(arch::encode_red_cfg(isa, ch, c.red_cfg));
  c.predicted_cycles = isa.red_chunks();
  for (GemmJob job : job_windows(mp, M)) {
    job.a_base = c.a_base;
    job.b_base = c.b_base;
    job.instr.acc_accumulate = job.kt0 > 0;  // later K chunks add onto the rows the first one wrote
    const OsGemm g = os_job(c, job);
    job.instr = os_gemm_instr(g);
    job.predicted_cycles = 1 + os_gemm_instr_cycles(cfg, g);  // FLIP + GEMM
    c.predicted_cycles += job.predicted_cycles;
    try {
      c.program.push_back(arch::encode_gemm(isa, job.instr));
    } catch (const arch::IsaError& e) {
      throw CompileError(fmt::format("{} x {}: {}", shape.a_name, shape.b_name, e.what()));
    }
    c.jobs.push_back(job);
  }
  // The multicasts depend on the grid alone: every job's are the same.
  c.ia_sel = c.jobs[0].instr.ia_sel;
  c.ia_mask = c.jobs[0].instr.ia_mask;
  c.ib_sel = c.jobs[0].instr.ib_sel;
  c.ib_mask = c.jobs[0].instr.ib_mask;
  return c;
}

OsGemm os_job(const CompiledGemm& c, const GemmJob& jb) {
  const GemmMapping& mp = c.map;
  OsGemm g;
  g.m = jb.m_count;
  g.k = std::min(c.shape.k.size(), (jb.kt0 + 1) * mp.k_tile) - jb.kt0 * mp.k_tile;
  g.n = std::min(c.shape.n.size() - jb.nt0 * mp.n_tile, jb.nt_count * mp.n_tile);
  g.gm = mp.gm;
  g.gn = mp.gn;
  g.rows = mp.rows;
  g.cols = mp.cols;
  g.a_base = jb.a_base;
  g.b_base = jb.b_base;
  g.acc_accumulate = jb.instr.acc_accumulate;
  return g;
}

void relocate_image(const arch::ArchConfig& cfg, CompiledGemm& c, size_t job, bool a_operand, int64_t base) {
  GemmJob& jb = c.jobs.at(job);
  const int64_t rows = image_shape(c, a_operand, job).rows, half = cfg.memory.unified_depth / 2;
  if (base < 0 || base + rows > half)
    throw CompileError(fmt::format("{} x {}: job {}'s {} image ({} rows) at row {} leaves the half (rows 0 .. {})",
                                   c.shape.a_name, c.shape.b_name, job, a_operand ? "A" : "B", rows, base, half - 1));
  (a_operand ? jb.a_base : jb.b_base) = base;
  (a_operand ? jb.instr.a_base : jb.instr.b_base) = static_cast<uint32_t>(base);
  c.program.at(c.red_cfg_words() + job) = arch::encode_gemm(arch::IsaLayout(cfg), jb.instr);
}

std::vector<size_t> output_chunks(const CompiledGemm& c) {
  std::vector<size_t> chunks;
  for (size_t j = 0; j < c.jobs.size(); ++j)
    if (c.jobs[j].last_k) chunks.push_back(j);
  return chunks;
}

namespace {

// Every legal mapping of one GEMM shape, in the order of preference on equal cycles: weight-
// stationary (more CEs on K first, the load from the left before the top), then output-
// stationary (more CEs on M first). `why` gets the last refusal.
std::vector<CompiledGemm> gemm_candidates(const arch::ArchConfig& cfg, const GemmShape& shape, std::string& why,
                                          std::optional<arch::Dataflow> only = std::nullopt) {
  std::vector<CompiledGemm> out;
  for (int gk = cfg.ce.count; gk >= 1 && only != arch::Dataflow::os; gk /= 2)
    for (bool ib_top : {false, true}) {
      try {
        out.push_back(compile_gemm(cfg, shape, gk, ib_top));
      } catch (const CompileError& e) {
        why = e.what();
      }
    }
  // Asked for OS alone, compile_gemm_os says why a configuration has none.
  if (only == arch::Dataflow::os ||
      (!only && cfg.has_dataflow(arch::Dataflow::os) && cfg.network.topology != arch::NetworkTopology::fixed))
    for (int gm = cfg.ce.count; gm >= 1; gm /= 2) {
      try {
        out.push_back(compile_gemm_os(cfg, shape, gm));
      } catch (const CompileError& e) {
        why = e.what();
      }
    }
  return out;
}

// Both operand roles of a binary contraction (lhs streaming first), each with every mapping.
std::vector<CompiledStep> step_candidates(const arch::ArchConfig& cfg, const std::string& lhs_name,
                                          const std::vector<std::string>& lhs_labels,
                                          const std::vector<int64_t>& lhs_dims, const std::string& rhs_name,
                                          const std::vector<std::string>& rhs_labels,
                                          const std::vector<int64_t>& rhs_dims, const std::vector<std::string>& keep) {
  std::vector<CompiledStep> out;
  std::string why;
  for (bool lhs_a : {true, false}) {
    std::string role_why;
    try {
      const GemmShape s = lhs_a ? gemm_shape(lhs_name, lhs_labels, lhs_dims, rhs_name, rhs_labels, rhs_dims, keep)
                                : gemm_shape(rhs_name, rhs_labels, rhs_dims, lhs_name, lhs_labels, lhs_dims, keep);
      for (CompiledGemm& c : gemm_candidates(cfg, s, role_why)) out.push_back(CompiledStep{lhs_a, std::move(c)});
    } catch (const CompileError& e) {
      role_why = e.what();
    }
    if (why.empty()) why = role_why;
  }
  if (out.empty()) throw CompileError(why);
  return out;
}

// The candidates with the fewest predicted cycles, in preference order.
template <typename T, typename Cycles>
std::vector<const T*> fastest(const std::vector<T>& all, Cycles cycles) {
  std::vector<const T*> best;
  for (const T& c : all) {
    if (!best.empty() && cycles(c) > cycles(*best[0])) continue;
    if (!best.empty() && cycles(c) < cycles(*best[0])) best.clear();
    best.push_back(&c);
  }
  return best;
}

// The first of `pool` (in preference order: ascending addresses in one vector) with the fewest
// cycles + extra(c), and that total. extra must be >= 0: the candidates are asked in order of
// cycles (each at most once: extra can be dear), and no more once their cycles alone reach the
// least total found.
template <typename Extra>
std::pair<const CompiledStep*, int64_t> least_total(std::vector<const CompiledStep*> pool, Extra extra) {
  std::stable_sort(pool.begin(), pool.end(), [](const CompiledStep* a, const CompiledStep* b) {
    return a->gemm.predicted_cycles < b->gemm.predicted_cycles;
  });
  const CompiledStep* pick = nullptr;
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const CompiledStep* c : pool) {
    const int64_t cycles = c->gemm.predicted_cycles;
    if (cycles > least) break;
    if (cycles == least && c > pick) continue;  // at best a tie, later in preference order
    const int64_t total = cycles + extra(*c);
    if (total < least || (total == least && c < pick)) {
      least = total;
      pick = c;
    }
  }
  return {pick, least};
}

std::vector<const CompiledStep*> pointers(const std::vector<CompiledStep>& all) {
  std::vector<const CompiledStep*> out;
  for (const CompiledStep& c : all) out.push_back(&c);
  return out;
}

}  // namespace

CompiledGemm compile_gemm(const arch::ArchConfig& cfg, const GemmShape& shape, std::optional<arch::Dataflow> only) {
  if (only == arch::Dataflow::is)
    throw CompileError("compile_gemm: dataflow is; allowed: ws, os (input-stationary is ws with the operand roles swapped)");
  std::string why;
  const std::vector<CompiledGemm> all = gemm_candidates(cfg, shape, why, only);
  if (all.empty()) throw CompileError(why);
  return *fastest(all, [](const CompiledGemm& c) { return c.predicted_cycles; })[0];
}

namespace {

// The candidate `objective` prefers: the fewest cycles, `data_cost` (>= 0) breaking their ties
// (compute) or added to them (end to end); remaining ties, the first in preference order.
const CompiledStep& choose(const std::vector<CompiledStep>& all, const std::function<int64_t(const CompiledStep&)>& data_cost,
                           MapFor objective) {
  const std::vector<const CompiledStep*> best =
      fastest(all, [](const CompiledStep& c) { return c.gemm.predicted_cycles; });
  if (!data_cost || (objective == MapFor::compute && best.size() == 1)) return *best[0];
  // compute: the fastest, among them the least data movement; end to end: cycles + movement.
  return *least_total(objective == MapFor::compute ? best : pointers(all), data_cost).first;
}

}  // namespace

CompiledStep compile_step(const arch::ArchConfig& cfg, const std::string& lhs_name,
                          const std::vector<std::string>& lhs_labels, const std::vector<int64_t>& lhs_dims,
                          const std::string& rhs_name, const std::vector<std::string>& rhs_labels,
                          const std::vector<int64_t>& rhs_dims, const std::vector<std::string>& keep,
                          const std::function<int64_t(const CompiledStep&)>& data_cost, MapFor objective) {
  return choose(step_candidates(cfg, lhs_name, lhs_labels, lhs_dims, rhs_name, rhs_labels, rhs_dims, keep), data_cost,
                objective);
}

MapFor parse_map_for(const std::string& s) {
  if (s == "compute") return MapFor::compute;
  if (s == "end-to-end") return MapFor::end_to_end;
  if (s == "fastest") return MapFor::fastest;
  throw std::invalid_argument(fmt::format("map for '{}'; allowed: compute, end-to-end, fastest", s));
}

std::string to_string(MapFor m) {
  switch (m) {
    case MapFor::compute: return "compute";
    case MapFor::end_to_end: return "end-to-end";
    case MapFor::fastest: return "fastest";
  }
  return "?";
}

namespace {

// A tensor alive between the steps of a plan: an input or an intermediate.
struct Live {
  std::string name;
  std::vector<std::string> labels;
  std::vector<int64_t> dims;
};

// Step c's result as a live tensor: the mapping's m labels, then its n labels.
Live result_of(const std::string& name, const CompiledStep& c) {
  const GemmShape& g = c.gemm.shape;
  Live out{name, g.m.labels, g.m.dims};
  out.labels.insert(out.labels.end(), g.n.labels.begin(), g.n.labels.end());
  out.dims.insert(out.dims.end(), g.n.dims.begin(), g.n.dims.end());
  return out;
}

// plan_network's state while it walks the network's contraction sequence: the tensors alive
// between the steps, and what the look ahead from the step before found for the current one.
class NetworkPlanner {
 public:
  NetworkPlanner(const arch::ArchConfig& cfg, const verif::PhaseProblem& prob, size_t term, const MovementCost& movement,
                 MapFor objective)
      : cfg_(cfg), prob_(prob), term_(term), movement_(movement), objective_(objective) {}

  NetworkPlan plan() {
    SearchOptions so;
    so.top = 1;
    const NetworkResult sr = search_network(prob_.terms.at(term_), so);
    plan_.problem = sr.problem;
    const Problem& p = plan_.problem;
    for (int i = 0; i < p.size(); ++i) {
      Live l{p.node_names[static_cast<size_t>(i)], {}, {}};
      for (int lab : p.node_modes[static_cast<size_t>(i)]) {
        l.labels.push_back(p.labels[static_cast<size_t>(lab)]);
        l.dims.push_back(static_cast<int64_t>(p.dims[static_cast<size_t>(lab)]));
      }
      live_[NodeSet{1} << i] = l;
    }
    steps_ = &sr.selected().tree.steps;
    for (size_t s = 0; s < steps_->size(); ++s) plan_step(s);
    steps_ = nullptr;
    return std::move(plan_);
  }

 private:
  // Step s with its operands as `lv` holds them, not compiled yet.
  PlannedStep skeleton(size_t s, const std::map<NodeSet, Live>& lv) const {
    const Problem& p = plan_.problem;
    PlannedStep ps;
    ps.left = (*steps_)[s].left;
    ps.right = (*steps_)[s].right;
    ps.last = s + 1 == steps_->size();
    const Live& l = lv.at(ps.left);
    const Live& r = lv.at(ps.right);
    ps.lhs = l.name;
    ps.rhs = r.name;
    ps.lhs_labels = l.labels;
    ps.rhs_labels = r.labels;
    ps.lhs_dims = l.dims;
    ps.rhs_dims = r.dims;
    if (ps.last)
      ps.keep = prob_.result_labels;
    else
      p.kept_labels(ps.left | ps.right).for_each([&](int lab) { ps.keep.push_back(p.labels[static_cast<size_t>(lab)]); });
    ps.out = ps.last ? prob_.result : fmt::format("{}_t{}_s{}", prob_.result, term_, s);
    return ps;
  }

  std::vector<CompiledStep> candidates(const PlannedStep& ps, size_t s) const {
    try {
      return step_candidates(cfg_, ps.lhs, ps.lhs_labels, ps.lhs_dims, ps.rhs, ps.rhs_labels, ps.rhs_dims, ps.keep);
    } catch (const CompileError& e) {
      throw CompileError(fmt::format("{} term {} step {} ({} x {}): {}", prob_.result, term_, s, ps.lhs, ps.rhs, e.what()));
    }
  }

  // A term's last contraction in a sum keeps the fastest mapping: every term's must leave the
  // same accumulator layout, and it runs later, apart from its producer.
  bool keeps_fastest(const PlannedStep& ps) const { return !movement_ || (ps.last && prob_.terms.size() > 1); }

  // Whether consumer c takes `operand` as its A.
  static bool as_a(const PlannedStep& consumer, const std::string& operand, const CompiledStep& c) {
    return (consumer.lhs == operand) == c.lhs_is_a;
  }

  // Looking one step ahead from step s's candidate c (of `all`): when the next step consumes its
  // result, the least it can spend on it over the mappings it would choose among (compute: its
  // fastest, by their movement; end to end: all, by cycles + movement), so a producer lands its
  // result where its consumer can take it. The next step's candidates depend only on the result's
  // labels (the producer's operand roles); they (in `next_candidates`) and each producer's answers
  // (in `ahead`) are kept for the next step.
  int64_t look_ahead(size_t s, const PlannedStep& ps, const std::vector<CompiledStep>& all, const CompiledStep& c,
                     std::map<std::vector<std::string>, std::vector<CompiledStep>>& next_candidates,
                     std::vector<std::vector<int64_t>>& ahead) const {
    const NodeSet made = ps.left | ps.right;
    std::map<NodeSet, Live> lv = live_;
    lv.erase(ps.left);
    lv.erase(ps.right);
    lv[made] = result_of(ps.out, c);
    const PlannedStep next = skeleton(s + 1, lv);
    if (keeps_fastest(next)) return 0;
    auto it = next_candidates.find(lv[made].labels);
    if (it == next_candidates.end()) it = next_candidates.emplace(lv[made].labels, candidates(next, s + 1)).first;
    const std::vector<CompiledStep>& next_all = it->second;
    std::vector<int64_t>& moves = ahead[static_cast<size_t>(&c - all.data())];
    moves.assign(next_all.size(), -1);
    const bool end_to_end = objective_ == MapFor::end_to_end;
    const std::vector<const CompiledStep*> pool =
        end_to_end ? pointers(next_all) : fastest(next_all, [](const CompiledStep& x) { return x.gemm.predicted_cycles; });
    const int64_t least = least_total(pool, [&](const CompiledStep& n) {
                            int64_t& m = moves[static_cast<size_t>(&n - next_all.data())];
                            return m = movement_(&c.gemm, n.gemm, as_a(next, ps.out, n));
                          }).second;
    return end_to_end ? least : least - pool.front()->gemm.predicted_cycles;  // compute: movement alone
  }

  // Step s: its candidates (those the look ahead from the step before kept, or its own), the one
  // `objective` prefers with the data movement around it, and its result made live.
  void plan_step(size_t s) {
    PlannedStep ps = skeleton(s, live_);
    const std::vector<CompiledStep> all = carried_.empty() ? candidates(ps, s) : std::move(carried_);
    carried_.clear();
    const PlannedStep* prev = plan_.steps.empty() ? nullptr : &plan_.steps.back();
    const bool consumes_prev = prev && (ps.lhs == prev->out || ps.rhs == prev->out);
    const NodeSet made = ps.left | ps.right;
    const bool next_consumes =
        s + 1 < steps_->size() && ((*steps_)[s + 1].left == made || (*steps_)[s + 1].right == made);
    const bool end_to_end = objective_ == MapFor::end_to_end;
    // The movement around the step: the previous result into it when it consumes it, else (end to
    // end only) the host writes of its operands.
    auto own_movement = [&](const CompiledStep& c) -> int64_t {
      const size_t i = static_cast<size_t>(&c - all.data());
      if (consumes_prev && i < known_.size() && known_[i] >= 0) return known_[i];
      if (!consumes_prev && !end_to_end) return 0;
      return movement_(consumes_prev ? &prev->compiled.gemm : nullptr, c.gemm, consumes_prev && as_a(ps, prev->out, c));
    };
    std::map<std::vector<std::string>, std::vector<CompiledStep>> next_candidates;
    std::vector<std::vector<int64_t>> ahead(all.size());
    std::function<int64_t(const CompiledStep&)> data_cost;
    if (!keeps_fastest(ps) && (consumes_prev || next_consumes || end_to_end))
      data_cost = [&](const CompiledStep& c) {
        return own_movement(c) + (next_consumes ? look_ahead(s, ps, all, c, next_candidates, ahead) : 0);
      };
    const CompiledStep& chosen = choose(all, data_cost, objective_);
    ps.compiled = chosen;
    known_ = std::move(ahead[static_cast<size_t>(&chosen - all.data())]);
    const Live result = result_of(ps.out, chosen);
    if (!known_.empty()) carried_ = std::move(next_candidates.at(result.labels));
    live_.erase(ps.left);
    live_.erase(ps.right);
    live_[made] = result;
    plan_.steps.push_back(std::move(ps));
  }

  const arch::ArchConfig& cfg_;
  const verif::PhaseProblem& prob_;
  const size_t term_;
  const MovementCost& movement_;
  const MapFor objective_;
  const std::vector<Step>* steps_ = nullptr;  // the searched sequence, while plan() runs
  NetworkPlan plan_;
  std::map<NodeSet, Live> live_;
  // What the previous step's look ahead found for this step: its candidates (for the operand
  // labels the chosen producer leaves) and the movement of the previous result into each (-1
  // where not asked).
  std::vector<CompiledStep> carried_;
  std::vector<int64_t> known_;
};

}  // namespace

NetworkPlan plan_network(const arch::ArchConfig& cfg, const verif::PhaseProblem& prob, size_t term,
                         const MovementCost& movement, MapFor objective) {
  if (objective == MapFor::fastest)
    throw std::invalid_argument("plan_network: map_for fastest is a program's choice (compile_program); a network is "
                                "mapped for compute or end-to-end");
  return NetworkPlanner(cfg, prob, term, movement, objective).plan();
}

int dram_operand_bytes(arch::DataType t) { return t == arch::DataType::int8 ? 1 : 2; }
int dram_result_bytes(arch::DataType t) { return arch::accumulator_bits(t) > 32 ? 8 : 4; }
uint64_t dram_extent(int64_t elements, int bytes) {
  return (static_cast<uint64_t>(elements) * static_cast<uint64_t>(bytes) + 63) / 64 * 64;
}

LayersPlan plan_layers(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
                       const std::vector<verif::Phase>& phases) {
  LayersPlan out;
  for (const std::string& file : layer_files) {
    const verif::LayerSpec spec = verif::load_layer(file);
    for (verif::Phase ph : phases)
      for (const auto& prob : verif::phase_problems(spec, ph))
        for (size_t t = 0; t < prob.terms.size(); ++t) {
          NetworkPlan plan;
          try {
            plan = plan_network(cfg, prob, t);
          } catch (const std::exception& e) {
            throw CompileError(fmt::format("{} ({}): {}", file, verif::to_string(ph), e.what()));
          }
          out.contractions += static_cast<int64_t>(plan.steps.size());
          for (const PlannedStep& st : plan.steps) {
            out.compute_cycles += st.compiled.gemm.predicted_cycles;
            out.macs += st.compiled.gemm.shape.macs();
          }
        }
  }
  return out;
}

std::string CompiledGemm::describe() const {
  if (map.os)
    return fmt::format("output-stationary: A={}[{}|{}] M={} and B={}[{}|{}] N={} stream, K={}; grid gm={} x gn={}, "
                       "M tile {}, N tile {}, folds {}x{}, K chunks {}, {} job(s)",
                       shape.a_name, join(shape.m.labels), join(shape.k.labels), shape.m.size(), shape.b_name,
                       join(shape.k.labels), join(shape.n.labels), shape.n.size(), shape.k.size(), map.gm, map.gn,
                       int64_t{map.gm} * map.rows, map.n_tile, ceil_div(shape.m.size(), int64_t{map.gm} * map.rows),
                       map.n_tiles, map.k_tiles, jobs.size());
  return fmt::format("A={}[{}|{}] streams M={}, B={}[{}|{}] held N={} (loaded from the {}), K={}; grid gk={} x gn={}, "
                     "K tile {}, N tile {}, folds {}x{}, {} job(s)",
                     shape.a_name, join(shape.m.labels), join(shape.k.labels), shape.m.size(), shape.b_name,
                     join(shape.k.labels), join(shape.n.labels), shape.n.size(), map.ib_top ? "top" : "left",
                     shape.k.size(), map.gk, map.gn, map.k_tile, map.n_tile, map.k_tiles, map.n_tiles, jobs.size());
}

verif::AccumulationOrder hardware_order(const CompiledGemm& c, int64_t R, std::vector<uint32_t> init) {
  const int64_t K = c.shape.k.size();
  const std::vector<int64_t> ndims = c.shape.n.dims, mdims = c.shape.m.dims;
  const size_t nm = c.shape.m.labels.size();
  const int lanes = static_cast<int>(c.lane_gk.size());
  if (!init.empty() && static_cast<int64_t>(init.size()) != c.shape.m.size() * c.shape.n.size())
    throw std::invalid_argument(fmt::format("hardware_order: {} initial values for {} x {} outputs", init.size(),
                                            c.shape.m.size(), c.shape.n.size()));
  // Per output, each K tile's sum as the CEs form it (weight-stationary: chains of R down the CE
  // columns, then the reduction network's tree over the Gk CEs; output-stationary: one CE's MAC
  // register over the K chunk), the tiles added by the accumulator in order.
  auto cb = [c, K, ndims, mdims, nm, R, lanes, init = std::move(init)](std::span<const uint32_t> products,
                                                                      std::span<const int64_t> out_index) {
    int64_t n = 0, m = 0;
    for (size_t i = 0; i < ndims.size(); ++i) n = n * ndims[i] + out_index[nm + i];
    for (size_t i = 0; i < nm; ++i) m = m * mdims[i] + out_index[i];
    auto chain = [&](int64_t begin, int64_t end) {  // +0, then the products in order
      uint32_t s = 0;
      for (int64_t k = begin; k < end; ++k) s = verif::fp32_add(s, products[static_cast<size_t>(k)]);
      return s;
    };
    const route::AddFn add = [](uint64_t a, uint64_t b) {
      return uint64_t{verif::fp32_add(static_cast<uint32_t>(a), static_cast<uint32_t>(b))};
    };
    std::vector<uint64_t> in(static_cast<size_t>(lanes), 0);
    uint32_t acc = init.empty() ? 0 : init[static_cast<size_t>(m * c.shape.n.size() + n)];
    for (int64_t kt = 0; kt < c.map.k_tiles; ++kt) {
      uint32_t t = 0;
      if (c.map.os) {
        t = chain(kt * c.map.k_tile, std::min(K, (kt + 1) * c.map.k_tile));
      } else {
        for (int lane = 0; lane < lanes; ++lane) {
          const int q = c.lane_gk[static_cast<size_t>(lane)];
          if (q < 0) continue;
          const int64_t begin = kt * c.map.k_tile + q * R;
          in[static_cast<size_t>(lane)] = chain(begin, std::min(K, begin + R));
        }
        t = static_cast<uint32_t>(route::evaluate(c.red.trees[static_cast<size_t>(n % c.map.n_tile)], in, add));
      }
      acc = kt == 0 && init.empty() ? t : verif::fp32_add(acc, t);
    }
    return acc;
  };
  return verif::AccumulationOrder::callback(cb).with_sum_labels(c.shape.k.labels);
}

namespace {

// The operand permuted to (rows..., k...) and flattened.
std::vector<uint16_t> flatten(const verif::Tensor<uint16_t>& t, const std::vector<std::string>& rows,
                              const std::vector<std::string>& k) {
  std::vector<std::string> order = rows;
  order.insert(order.end(), k.begin(), k.end());
  if (order.size() != t.labels().size())
    throw CompileError(fmt::format("operand labels [{}] do not match the GEMM's [{}]", join(t.labels()), join(order)));
  return t.permute(order).values();
}

}  // namespace

namespace {

// The rows of one job's operand image: for each of the job's K tiles, `count` rows (row r is
// operand row `first + r` of the flattened [rows][K] values, or padding past `limit`), each with
// the tile's k_tile values in lanes 0.. (replicated once per CE with fixed wiring).
RowImage k_tile_rows(const CompiledGemm& c, const std::vector<uint16_t>& v, int64_t base_row, int64_t first,
                     int64_t count, int64_t limit, uint16_t pad, const GemmJob& jb) {
  const int64_t K = c.shape.k.size();
  RowImage img;
  img.first_row = base_row;
  img.rows = jb.kt_count * count;
  img.lanes = static_cast<int>(c.map.k_tile * c.replicate);
  img.data.assign(static_cast<size_t>(img.rows * img.lanes), pad);
  for (int64_t kt = 0; kt < jb.kt_count; ++kt)
    for (int64_t r = 0; r < count && first + r < limit; ++r)
      for (int64_t l = 0; l < c.map.k_tile; ++l) {
        const int64_t k = (jb.kt0 + kt) * c.map.k_tile + l;
        if (k < K)
          for (int rep = 0; rep < c.replicate; ++rep)
            img.data[static_cast<size_t>((kt * count + r) * img.lanes + rep * c.map.k_tile + l)] =
                v[static_cast<size_t>((first + r) * K + k)];
      }
  return img;
}

}  // namespace

namespace {

// A job's image element by element: each of the job's rows (M for A, N for B) and K tiles at its
// a_slot / b_slot, padding elsewhere. v: the operand flattened to [rows][K].
RowImage scatter_image(const CompiledGemm& c, const std::vector<uint16_t>& v, bool a_operand, uint16_t pad, size_t job) {
  const GemmJob& jb = c.jobs.at(job);
  const ImageShape sh = image_shape(c, a_operand, job);
  RowImage img{a_operand ? jb.a_base : jb.b_base, sh.rows, sh.lanes,
               std::vector<uint16_t>(static_cast<size_t>(sh.rows * sh.lanes), pad)};
  const int64_t K = c.shape.k.size(), k0 = jb.kt0 * c.map.k_tile;
  const int64_t k1 = std::min(K, (jb.kt0 + jb.kt_count) * c.map.k_tile);
  const int64_t r0 = a_operand ? jb.m0 : jb.nt0 * c.map.n_tile;
  const int64_t r1 = a_operand ? jb.m0 + jb.m_count : std::min(c.shape.n.size(), (jb.nt0 + jb.nt_count) * c.map.n_tile);
  for (int64_t r = r0; r < r1; ++r)
    for (int64_t k = k0; k < k1; ++k) {
      const ImageSlot at = a_operand ? a_slot(c, jb, r, k) : b_slot(c, jb, k, r);
      img.data[static_cast<size_t>(at.row * sh.lanes + at.lane)] = v[static_cast<size_t>(r * K + k)];
    }
  return img;
}

// The job's OsGemm with its images and result from row 0 (slots relative to the images).
OsGemm os_job_at0(const CompiledGemm& c, const GemmJob& jb) {
  OsGemm g = os_job(c, jb);
  g.a_base = g.b_base = g.acc_base = 0;
  return g;
}

}  // namespace

RowImage layout_a(const CompiledGemm& c, const verif::Tensor<uint16_t>& a, uint16_t pad, size_t job) {
  const GemmJob& jb = c.jobs.at(job);
  const std::vector<uint16_t> v = flatten(a, c.shape.m.labels, c.shape.k.labels);
  if (c.map.os) return scatter_image(c, v, true, pad, job);
  return k_tile_rows(c, v, jb.a_base, jb.m0, jb.m_count, c.shape.m.size(), pad, jb);
}

ImageSlot a_slot(const CompiledGemm& c, const GemmJob& jb, int64_t m, int64_t k) {
  const int64_t kt = k / c.map.k_tile;
  if (c.map.os) {
    const OsSlot s = os_a_slot(os_job_at0(c, jb), m - jb.m0, k - kt * c.map.k_tile);
    return {s.row, s.lane};
  }
  return {(kt - jb.kt0) * jb.m_count + (m - jb.m0), k - kt * c.map.k_tile};
}

ImageSlot b_slot(const CompiledGemm& c, const GemmJob& jb, int64_t k, int64_t n) {
  const GemmMapping& mp = c.map;
  const int64_t kt = k / mp.k_tile, nt = n / mp.n_tile;
  if (mp.os) {
    const OsSlot s = os_b_slot(os_job_at0(c, jb), k - kt * mp.k_tile, n - jb.nt0 * mp.n_tile);
    return {s.row, s.lane};
  }
  if (!mp.ib_top) return {(kt - jb.kt0) * jb.nt_count * mp.n_tile + (n - jb.nt0 * mp.n_tile), k - kt * mp.k_tile};
  const int64_t R = mp.k_tile / mp.gk, C = mp.n_tile / mp.gn;
  const int64_t q = (k - kt * mp.k_tile) / R, r = k % R, gn = (n - nt * mp.n_tile) / C;
  return {((kt - jb.kt0) * jb.nt_count + (nt - jb.nt0)) * R + r, (gn * mp.gk + q) * C + n % C};
}

ImageSlot z_slot(const CompiledGemm& c, const GemmJob& jb, int64_t m, int64_t n) {
  if (c.map.os) {
    const OsSlot s = os_z_slot(os_job_at0(c, jb), m - jb.m0, n - jb.nt0 * c.map.n_tile);
    return {s.row, s.lane};
  }
  const int64_t nt = n / c.map.n_tile;
  return {(nt - jb.nt0) * jb.m_count + (m - jb.m0), c.col_lane[static_cast<size_t>(n - nt * c.map.n_tile)]};
}

int64_t acc_rows(const CompiledGemm& c, const GemmJob& jb) {
  return c.map.os ? os_z_rows(os_job(c, jb)) : jb.nt_count * jb.m_count;
}

std::vector<int> acc_lanes(const CompiledGemm& c) {
  std::vector<int> lanes = c.col_lane;
  if (c.map.os)
    for (int l = 0; l < c.map.gm * c.map.gn * c.map.cols; ++l) lanes.push_back(l);
  std::sort(lanes.begin(), lanes.end());
  return lanes;
}

void gather_result(const CompiledGemm& c, const GemmJob& jb, const std::vector<uint64_t>& words,
                   std::vector<uint64_t>& z) {
  const std::vector<int> lanes = acc_lanes(c);
  std::vector<size_t> column(static_cast<size_t>(lanes.back() + 1));  // lane -> its column in `words`
  for (size_t i = 0; i < lanes.size(); ++i) column[static_cast<size_t>(lanes[i])] = i;
  const int64_t Nn = c.shape.n.size(), n1 = std::min(Nn, (jb.nt0 + jb.nt_count) * c.map.n_tile);
  if (words.size() != static_cast<size_t>(acc_rows(c, jb)) * lanes.size() ||
      z.size() != static_cast<size_t>(c.shape.m.size() * Nn))
    throw std::invalid_argument(fmt::format("gather_result: {} words for {} x {}, Z of {} for {} x {}", words.size(),
                                            acc_rows(c, jb), lanes.size(), z.size(), c.shape.m.size(), Nn));
  for (int64_t m = jb.m0; m < jb.m0 + jb.m_count; ++m)
    for (int64_t n = jb.nt0 * c.map.n_tile; n < n1; ++n) {
      const ImageSlot at = z_slot(c, jb, m, n);
      z[static_cast<size_t>(m * Nn + n)] = words[static_cast<size_t>(at.row) * lanes.size() + column[static_cast<size_t>(at.lane)]];
    }
}

ImageShape image_shape(const CompiledGemm& c, bool a_operand, size_t job) {
  const GemmJob& jb = c.jobs.at(job);
  if (c.map.os) {
    // A: a row per (M tile, k), lanes up to the last CE row's R (gm*Gn*R + r); B: per (N tile, k), Gn*C lanes.
    const OsGemm g = os_job(c, jb);
    if (a_operand) return {os_a_rows(g), static_cast<int>((g.gm - 1) * g.gn * g.rows + g.rows)};
    return {os_b_rows(g), static_cast<int>(c.map.n_tile)};
  }
  if (a_operand) return {jb.kt_count * jb.m_count, static_cast<int>(c.map.k_tile * c.replicate)};
  // From the top every CE's C columns side by side (gk * n_tile = G * C lanes), else K on the lanes.
  const int64_t lanes = c.map.ib_top ? c.map.gk * c.map.n_tile : c.map.k_tile * c.replicate;
  return {jb.kt_count * jb.nt_count * b_fold_rows(c.map), static_cast<int>(lanes)};
}

RowImage layout_b(const CompiledGemm& c, const verif::Tensor<uint16_t>& b, size_t job) {
  const GemmJob& jb = c.jobs.at(job);
  const std::vector<uint16_t> v = flatten(b, c.shape.n.labels, c.shape.k.labels);
  // From the left K on the lanes, tile rows as A's; else (from the top: one row per K tile, N tile
  // and CE row, each CE's C columns side by side; OS) element by element.
  if (!c.map.os && !c.map.ib_top)
    return k_tile_rows(c, v, jb.b_base, jb.nt0 * c.map.n_tile, jb.nt_count * c.map.n_tile, c.shape.n.size(), 0, jb);
  return scatter_image(c, v, false, 0, job);
}

}  // namespace fetta::mapper
