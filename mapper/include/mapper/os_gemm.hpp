// The output-stationary GEMM of the controller (docs/isa.md §2c): where the operands and the
// result sit, the instruction and its cycles. Z[m, n] = sum_k A[m, k] B[k, n] on a grid of Gm x Gn
// CEs (CE g = gm*Gn + gn, Gm*Gn = ce.count): CE g accumulates the R x C block of rows
// (mt*Gm + gm)*R .. and columns (nt*Gn + gn)*C .. of Z over all of K, one k per cycle, then drains
// it into the accumulator. The compiler does not choose this mapping yet; the system bench's OS
// test drives it through these functions.
#pragma once

#include <cstdint>

#include "arch/config.hpp"
#include "arch/isa.hpp"

namespace fetta::mapper {

struct OsGemm {
  int64_t m = 1, k = 1, n = 1;  // the GEMM
  int gm = 1, gn = 1;           // CE grid: gm * gn = ce.count, both powers of two
  int64_t a_base = 0, b_base = 0, acc_base = 0;
  bool acc_accumulate = false;  // add onto the accumulator rows instead of writing them
  int64_t m_tiles() const;      // folds along M (Gm*R rows each); needs the config's R
  int64_t n_tiles() const;
  int rows = 1, cols = 1;       // R, C of the config (set by os_gemm)
};

// Checks the grid against the configuration and fills R, C. Throws std::invalid_argument naming
// the field and the allowed values (no OS in the CEs, a grid that is not Gm x Gn = ce.count, ...).
OsGemm os_gemm(const arch::ArchConfig& cfg, int64_t m, int64_t k, int64_t n, int gm);

struct OsSlot {
  int64_t row = 0;
  int lane = 0;
};
// A[m][k] in the IA image: row a_base + mt*K + k; lane gm*Gn*R + r (m = (mt*Gm + gm)*R + r). The
// IA network multicasts it to the Gn CEs of that block row (lane g*R + r, the gn bits cleared).
OsSlot os_a_slot(const OsGemm& g, int64_t m, int64_t k);
// B[k][n] in the IB image: row b_base + nt*K + k; lane gn*C + c (n = (nt*Gn + gn)*C + c), sent to
// the Gm CEs of that block column (lane g*C + c, the gm bits cleared).
OsSlot os_b_slot(const OsGemm& g, int64_t k, int64_t n);
// Z[m][n] in the accumulator: row acc_base + nt*m_tiles*R + mt*R + r, lane g*C + c.
OsSlot os_z_slot(const OsGemm& g, int64_t m, int64_t n);
// Rows of the IA and IB images (padding: IA -0 for bf16, IB +0, in the rows and lanes no element
// takes) and the accumulator rows the result spans.
int64_t os_a_rows(const OsGemm& g);
int64_t os_b_rows(const OsGemm& g);
int64_t os_z_rows(const OsGemm& g);

// The gemm instruction (os = 1; the reduction network must be set to pass every lane straight).
arch::GemmInstr os_gemm_instr(const OsGemm& g);

// Cycles the controller is busy for it (docs/isa.md §3): fold f streams from S_f = f*P, P =
// max(K, R) (double-buffered Psums) or K + R - 1, and the last fold's R rows drain after it.
int64_t os_gemm_instr_cycles(const arch::ArchConfig& cfg, const OsGemm& g);

}  // namespace fetta::mapper
