#include "hw/mem/bank_rows.hpp"

#include <fmt/core.h>

#include <bit>
#include <stdexcept>

namespace fetta::hw {

using namespace rtl;

std::vector<Expr> diagonal_bank_rows(Module& m, const std::string& prefix, const Expr& base,
                                     const std::vector<Expr>& strides, const Expr& rot, int banks) {
  const int LB = std::countr_zero(static_cast<unsigned>(banks));
  if (static_cast<int>(strides.size()) != LB)
    throw std::invalid_argument(fmt::format("diagonal_bank_rows: {} strides for {} banks; allowed: {}", strides.size(), banks, LB));
  std::vector<Expr> rows{base};  // rows[s] = base + the strides of s's bits, before the rotation
  for (int s = 1; s < banks; ++s) {
    const int h = std::bit_width(static_cast<unsigned>(s)) - 1;
    rows.push_back(m.node(fmt::format("{}_sum_{}", prefix, s), rows[static_cast<size_t>(s - (1 << h))] + strides[static_cast<size_t>(h)]));
  }
  for (int s = 0; s < LB; ++s) {
    std::vector<Expr> next;
    for (int b = 0; b < banks; ++b)
      next.push_back(m.node(fmt::format("{}_rot_s{}_{}", prefix, s, b),
                            mux(rot.bit(s), rows[static_cast<size_t>((b - (1 << s) + banks) % banks)], rows[static_cast<size_t>(b)])));
    rows = std::move(next);
  }
  return rows;
}

}  // namespace fetta::hw
