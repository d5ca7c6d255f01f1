// The CE's mapping strategies and its cycle-exact timing model (docs/ce.md). The testbench
// schedules its stimulus with these functions and checks that the RTL's outputs appear exactly
// when they say; the performance model can use the same formulas.
//
// A GEMM C[M,N] = A[M,K] B[K,N] is mapped as Z = X Y with X streamed as IA and Y as IB:
//   ws  (weight stationary):  X = A,   Y = B   (held),     Z = C,   stream T = M
//   is  (input stationary):   X = B^T, Y = A^T (held),     Z = C^T, stream T = N
//   os  IA = A:               X = A,   Y = B   (streamed), Z = C,   stream K
//   os  IA = B:               X = B^T, Y = A^T (streamed), Z = C^T, stream K
// and in the stationary modes IB is loaded from the top (a row of Y per cycle) or from the left
// (a column of Y per cycle): six strategies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "hw/ce/ce.hpp"

namespace fetta::hw {

enum class IbPath { top, left };
enum class IaRole { a, b };  // which GEMM operand streams through the rows as IA

struct Strategy {
  arch::Dataflow dataflow = arch::Dataflow::ws;
  IbPath ib_path = IbPath::top;
  IaRole ia_role = IaRole::a;
  bool operator==(const Strategy&) const = default;
};

// "ws_top", "ws_left", "is_top", "is_left", "os_a", "os_b".
std::string to_string(const Strategy& s);
// Throws std::invalid_argument listing the allowed names.
Strategy parse_strategy(const std::string& name);
const std::vector<Strategy>& all_strategies();
// Throws std::invalid_argument for impossible combinations (ws needs IA = A, is needs IA = B,
// os needs IB from the top).
void validate(const Strategy& s);

struct GemmShape {
  int64_t m = 1, k = 1, n = 1;
};

// The GEMM in the CE's terms (see the header comment).
struct CeMapping {
  bool os = false;
  bool z_is_transposed = false;  // Z = C^T (is, os with IA = B)
  int64_t z_rows = 0;            // stationary: T; os: rows of Z spread over the PE rows
  int64_t z_cols = 0;            // columns of Z spread over the PE columns
  int64_t reduce = 0;            // K
  int64_t stream = 0;            // IA vectors per fold: T (stationary) or K (os)
  int64_t row_folds = 0;         // stationary: ceil(K / R) reduction chunks; os: ceil(z_rows / R)
  int64_t col_folds = 0;         // ceil(z_cols / C)
  int64_t folds() const { return row_folds * col_folds; }
};

// Cycle model of one GEMM, every term as documented in docs/ce.md. Cycle 0 is the first cycle
// with an input (the first IB load, or the first IA in os); `total` counts up to and including
// the cycle of the last output row.
struct CeTiming {
  int64_t load = 0;         // IB load length (stationary): top 1 + (R-1)*s, left C; os: 0
  int64_t period = 0;       // cycles between the starts of consecutive folds
  int64_t first_start = 0;  // start of fold 0 (its first IA) = load
  int64_t out_first = 0;    // cycles from a fold's start to its first output row
  int64_t out_span = 0;     // cycles from its first to its last output row, inclusive
  int64_t total = 0;        // first_start + (folds-1)*period + out_first + out_span

  int64_t fold_start(int64_t f) const { return first_start + f * period; }
};

// Throw std::invalid_argument for a bad strategy, a dataflow the CE does not have built in,
// or a GEMM dimension < 1.
CeMapping map_gemm(const CeParams& ce, const Strategy& s, const GemmShape& g);
CeTiming ce_timing(const CeParams& ce, const Strategy& s, const GemmShape& g);

}  // namespace fetta::hw
