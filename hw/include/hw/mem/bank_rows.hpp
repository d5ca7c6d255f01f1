// The per-bank rows of a diagonal STORE move (docs/isa.md §2b): bank b addresses base plus the
// sum of strides[h] over the bits h set in (b - rot) mod B, modulo the rows' width. The
// accumulator's banks read at the rows of the unified banks their elements go to (the
// controller), the unified banks write at the rows of the accumulator banks their elements come
// from (the ResultWriter).
#pragma once

#include <string>
#include <vector>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// `base` and the log2(banks) `strides` of one width, `rot` log2(banks) bits (unused when banks
// == 1); nodes are named `<prefix>_*`. The B sums share partial sums (bank s = bank s - 2^h plus
// strides[h], h the top bit of s: log2 B adders deep) and are then rotated by `rot` in log2 B mux
// stages.
std::vector<rtl::Expr> diagonal_bank_rows(rtl::Module& m, const std::string& prefix, const rtl::Expr& base,
                                          const std::vector<rtl::Expr>& strides, const rtl::Expr& rot, int banks);

}  // namespace fetta::hw
