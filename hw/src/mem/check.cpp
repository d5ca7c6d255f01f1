#include "hw/mem/check.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace fetta::hw::mem_check {

bool is_pow2(long long v) { return v > 0 && (v & (v - 1)) == 0; }

void pow2_in(const char* gen, const char* field, long long value, long long lo, long long hi) {
  if (!is_pow2(value) || value < lo || value > hi)
    throw std::invalid_argument(
        fmt::format("{}: {} = {} is not allowed; allowed: a power of two, {} .. {}", gen, field, value, lo, hi));
}

void in_range(const char* gen, const char* field, long long value, long long lo, long long hi) {
  if (value < lo || value > hi)
    throw std::invalid_argument(fmt::format("{}: {} = {} is out of range; allowed: {} .. {}", gen, field, value, lo, hi));
}

}  // namespace fetta::hw::mem_check
