#include "hw/mem/bank_rows.hpp"

#include <fmt/core.h>

#include <bit>

namespace fetta::hw {

using namespace rtl;

std::vector<Expr> diagonal_bank_rows(Module& m, const std::string& prefix, const Expr& base, const Expr& stride,
                                     const Expr& rot, int banks) {
  const int W = base.width(), LB = std::countr_zero(static_cast<unsigned>(banks));
  std::vector<Expr> rows{base};  // rows[s] = base + stride * s, before the rotation
  for (int s = 1; s < banks; ++s) {
    const int h = std::bit_width(static_cast<unsigned>(s)) - 1;
    const Expr prev = rows[static_cast<size_t>(s - (1 << h))];
    // A term shifted past the row width is 0 modulo 2^W.
    rows.push_back(h >= W ? prev : Expr(m.node(fmt::format("{}_sum_{}", prefix, s), prev + (h == 0 ? stride : stride << h))));
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
