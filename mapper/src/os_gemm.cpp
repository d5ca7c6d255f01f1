#include "mapper/os_gemm.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace fetta::mapper {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int log2i(int64_t v) { return std::countr_zero(static_cast<uint64_t>(v)); }

}  // namespace

int64_t OsGemm::m_tiles() const { return ceil_div(m, int64_t{gm} * rows); }
int64_t OsGemm::n_tiles() const { return ceil_div(n, int64_t{gn} * cols); }

OsGemm os_gemm(const arch::ArchConfig& cfg, int64_t m, int64_t k, int64_t n, int gm) {
  if (!cfg.has_dataflow(arch::Dataflow::os))
    throw std::invalid_argument(fmt::format("os_gemm: ce.dataflows of {} has no os; allowed: a list that contains os",
                                            cfg.name));
  const int G = cfg.ce.count;
  if (gm < 1 || G % gm != 0 || !std::has_single_bit(static_cast<unsigned>(gm)))
    throw std::invalid_argument(fmt::format("os_gemm: gm = {}; allowed: a power of two dividing ce.count = {}", gm, G));
  if (m < 1 || k < 1 || n < 1)
    throw std::invalid_argument(fmt::format("os_gemm: M, K, N = {}, {}, {}; allowed: >= 1", m, k, n));
  OsGemm g;
  g.m = m;
  g.k = k;
  g.n = n;
  g.gm = gm;
  g.gn = G / gm;
  g.rows = cfg.ce.rows;
  g.cols = cfg.ce.cols;
  return g;
}

OsSlot os_a_slot(const OsGemm& g, int64_t m, int64_t k) {
  const int64_t tile = int64_t{g.gm} * g.rows, mt = m / tile, gm = (m % tile) / g.rows, r = m % g.rows;
  return {g.a_base + mt * g.k + k, static_cast<int>(gm * g.gn * g.rows + r)};
}

OsSlot os_b_slot(const OsGemm& g, int64_t k, int64_t n) {
  const int64_t tile = int64_t{g.gn} * g.cols, nt = n / tile;
  return {g.b_base + nt * g.k + k, static_cast<int>(n % tile)};
}

OsSlot os_z_slot(const OsGemm& g, int64_t m, int64_t n) {
  const int64_t mtile = int64_t{g.gm} * g.rows, ntile = int64_t{g.gn} * g.cols;
  const int64_t mt = m / mtile, gm = (m % mtile) / g.rows, r = m % g.rows;
  const int64_t nt = n / ntile, gn = (n % ntile) / g.cols, c = n % g.cols;
  return {g.acc_base + nt * g.m_tiles() * g.rows + mt * g.rows + r, static_cast<int>((gm * g.gn + gn) * g.cols + c)};
}

int64_t os_a_rows(const OsGemm& g) { return g.m_tiles() * g.k; }
int64_t os_b_rows(const OsGemm& g) { return g.n_tiles() * g.k; }
int64_t os_z_rows(const OsGemm& g) { return g.n_tiles() * g.m_tiles() * g.rows; }

arch::GemmInstr os_gemm_instr(const OsGemm& g) {
  arch::GemmInstr in;
  in.os = true;
  in.m = static_cast<uint32_t>(g.k);
  in.k_tiles = static_cast<uint32_t>(g.m_tiles());
  in.n_tiles = static_cast<uint32_t>(g.n_tiles());
  in.gk = static_cast<uint32_t>(g.gm);  // not used by the controller in OS; the grid, for disassembly
  in.gn = static_cast<uint32_t>(g.gn);
  in.a_base = static_cast<uint32_t>(g.a_base);
  in.a_kt_stride = static_cast<uint32_t>(g.k);  // IA rows between M tiles
  in.b_base = static_cast<uint32_t>(g.b_base);
  in.b_nt_stride = static_cast<uint32_t>(g.k);
  in.acc_base = static_cast<uint32_t>(g.acc_base);
  in.acc_nt_stride = static_cast<uint32_t>(g.m_tiles() * g.rows);
  in.acc_accumulate = g.acc_accumulate;
  // Multicasts by clearing lane bits (sel 0, mask on the bits): IA lane g*R + r <- gm*Gn*R + r
  // (the gn bits), IB lane g*C + c <- gn*C + c (the gm bits).
  in.ia_mask = static_cast<uint32_t>((g.gn - 1) << log2i(g.rows));
  in.ib_mask = static_cast<uint32_t>((g.gm - 1) << (log2i(g.cols) + log2i(g.gn)));
  in.ib_top = true;  // IB enters the CEs from the top
  return in;
}

int64_t os_gemm_instr_cycles(const arch::ArchConfig& cfg, const OsGemm& g) {
  const arch::SystemTiming t = arch::system_timing(cfg);
  const int64_t R = cfg.ce.rows, K = g.k, folds = g.m_tiles() * g.n_tiles();
  const int64_t period = cfg.ce.psum_double_buffer ? std::max(K, R) : K + R - 1;
  const int64_t last_start = (folds - 1) * period;
  // pop + start + GEMM state (through the cycle done is seen) + drain + the last fold's R - 1
  // further drained rows.
  return 1 + 1 + (last_start + K + 1) + t.drain + (R - 1);
}

}  // namespace fetta::mapper
