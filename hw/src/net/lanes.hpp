// Lane geometry shared by the two network generators (the same definitions as the router's
// route::NetGeometry, which hw does not link: the router must stay free of hw).
#pragma once

#include <fmt/core.h>

#include <bit>
#include <stdexcept>
#include <string>

namespace fetta::hw::net_detail {

inline bool is_pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Throws std::invalid_argument naming the field unless N is a power of two in [2, 4096], T a
// power of two in [1, 64], N >= T^2, and pipeline_every in [0, log2(N) + 1].
inline void check_lanes(const char* gen, int lanes, int elems_per_bank, int pipeline_every) {
  if (!is_pow2(lanes) || lanes < 2 || lanes > 4096)
    throw std::invalid_argument(
        fmt::format("{}: lanes = {}: must be a power of two in [2, 4096] (2, 4, 8, ..., 4096)", gen, lanes));
  if (!is_pow2(elems_per_bank) || elems_per_bank > 64)
    throw std::invalid_argument(fmt::format(
        "{}: elems_per_bank = {}: must be a power of two in [1, 64] (1, 2, 4, ..., 64)", gen, elems_per_bank));
  if (lanes < elems_per_bank * elems_per_bank)
    throw std::invalid_argument(
        fmt::format("{}: lanes = {} is smaller than elems_per_bank^2 = {}: the transpose level needs whole {}x{} "
                    "blocks; allowed: lanes >= {}",
                    gen, lanes, elems_per_bank * elems_per_bank, elems_per_bank, elems_per_bank,
                    elems_per_bank * elems_per_bank));
  const int stages = std::countr_zero(static_cast<unsigned>(lanes)) + 1;
  if (pipeline_every < 0 || pipeline_every > stages)
    throw std::invalid_argument(fmt::format(
        "{}: pipeline_every = {}: allowed 0 (combinational) .. {} (the network has {} stages)", gen, pipeline_every,
        stages, stages));
}

inline int levels(int lanes) { return std::countr_zero(static_cast<unsigned>(lanes)); }

// (bank b, elem e) <-> (bank e, elem b) inside a block of T banks.
inline int partner(int lane, int t) {
  const int block = lane / (t * t), bank_in_block = (lane / t) % t, elem = lane % t;
  return block * t * t + elem * t + bank_in_block;
}

// A register after stage s (1-based) of `stages`?
inline bool register_after(int s, int pipeline_every) { return pipeline_every > 0 && s % pipeline_every == 0; }
inline int latency(int lanes, int pipeline_every) {
  return pipeline_every > 0 ? (levels(lanes) + 1) / pipeline_every : 0;
}

}  // namespace fetta::hw::net_detail
