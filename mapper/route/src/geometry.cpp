#include "route/geometry.hpp"

#include <fmt/core.h>

#include <bit>

namespace fetta::route {

namespace {
bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }
}  // namespace

NetGeometry::NetGeometry(int lanes, int elems_per_bank, int red_first_add_level)
    : lanes_(lanes), elems_(elems_per_bank), red_first_add_level_(red_first_add_level) {
  if (!is_pow2(lanes) || lanes < 2 || lanes > 4096)
    throw std::invalid_argument(fmt::format(
        "lanes (network.lanes) = {}: must be a power of two in [2, 4096] (2, 4, 8, ..., 4096)", lanes));
  if (!is_pow2(elems_per_bank) || elems_per_bank > 64)
    throw std::invalid_argument(fmt::format(
        "elems_per_bank (memory.elems_per_bank) = {}: must be a power of two in [1, 64] (1, 2, 4, ..., 64)",
        elems_per_bank));
  if (lanes < elems_per_bank * elems_per_bank)
    throw std::invalid_argument(fmt::format(
        "lanes (network.lanes) = {} is smaller than elems_per_bank^2 = {}: the transpose level needs whole "
        "{}x{} blocks; allowed: lanes >= {} or elems_per_bank <= {}",
        lanes, elems_per_bank * elems_per_bank, elems_per_bank, elems_per_bank, elems_per_bank * elems_per_bank,
        1 << (std::countr_zero(static_cast<unsigned>(lanes)) / 2)));
  levels_ = std::countr_zero(static_cast<unsigned>(lanes));
  if (red_first_add_level < 0 || red_first_add_level > levels_)
    throw std::invalid_argument(fmt::format("red_first_add_level = {}: allowed 0 .. {} (log2 of the lanes)",
                                            red_first_add_level, levels_));
}

int NetGeometry::partner(int lane) const {
  // lane = block * T^2 + bank_in_block * T + elem: swap the two log2(T)-bit fields.
  const int t = elems_;
  const int block = lane / (t * t);
  const int bank_in_block = (lane / t) % t;
  const int elem = lane % t;
  return block * t * t + elem * t + bank_in_block;
}

std::string NetGeometry::str() const {
  if (red_first_add_level_ == 0) return fmt::format("N={} T={}", lanes_, elems_);
  return fmt::format("N={} T={} adders from level {}", lanes_, elems_, red_first_add_level_);
}

int lowest_set_bit(unsigned x) { return std::countr_zero(x); }
int highest_set_bit(unsigned x) { return 31 - std::countl_zero(x); }

}  // namespace fetta::route
