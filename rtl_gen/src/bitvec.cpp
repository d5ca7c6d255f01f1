#include "rtl_gen/bitvec.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace fetta::rtl {

BitVec::BitVec(int width) : width_(width), words_((width + 63) / 64, 0) {}

bool BitVec::fits(int64_t value, int width, bool is_signed) {
  if (width >= 64) return is_signed || value >= 0;
  if (is_signed) {
    int64_t lo = -(int64_t{1} << (width - 1));
    int64_t hi = (int64_t{1} << (width - 1)) - 1;
    return value >= lo && value <= hi;
  }
  return value >= 0 && static_cast<uint64_t>(value) < (uint64_t{1} << width);
}

BitVec BitVec::from_int(int64_t value, int width) {
  BitVec b(width);
  for (int i = 0; i < width; ++i) b.set_bit(i, i < 64 ? ((static_cast<uint64_t>(value) >> i) & 1) : value < 0);
  return b;
}

bool BitVec::bit(int i) const { return (words_[i / 64] >> (i % 64)) & 1; }

void BitVec::set_bit(int i, bool v) {
  uint64_t m = uint64_t{1} << (i % 64);
  if (v)
    words_[i / 64] |= m;
  else
    words_[i / 64] &= ~m;
}

bool BitVec::is_zero() const {
  for (uint64_t w : words_)
    if (w) return false;
  return true;
}

std::string BitVec::hex() const {
  std::string s;
  int digits = (width_ + 3) / 4;
  for (int d = digits - 1; d >= 0; --d) {
    int v = 0;
    for (int b = 3; b >= 0; --b) {
      int i = d * 4 + b;
      v = v * 2 + (i < width_ && bit(i) ? 1 : 0);
    }
    s += "0123456789abcdef"[v];
  }
  return s;
}

// Decimal for small values (counts, indices, states); hex in groups of four digits for larger
// ones, which are mostly bit patterns: 32'h7fc0_0000 rather than 32'd2143289344.
std::string BitVec::to_sv(bool is_signed) const {
  constexpr uint64_t kDecimalBelow = 1024;
  bool small = low64() < kDecimalBelow;
  for (size_t w = 1; w < words_.size(); ++w) small = small && words_[w] == 0;
  if (is_signed) {
    if (!msb() && small) return fmt::format("{}'sd{}", width_, low64());
    return fmt::format("{}'sh{}", width_, grouped_hex());
  }
  if (small) return fmt::format("{}'d{}", width_, low64());
  return fmt::format("{}'h{}", width_, grouped_hex());
}

std::string BitVec::grouped_hex() const {
  // Leading zero digits dropped: a based literal is zero-padded to its size (IEEE 1800 5.7.1).
  std::string h = hex();
  h.erase(0, std::min(h.find_first_not_of('0'), h.size() - 1));
  std::string s;
  for (size_t i = 0; i < h.size(); ++i) {
    if (i > 0 && (h.size() - i) % 4 == 0) s += '_';
    s += h[i];
  }
  return s;
}

}  // namespace fetta::rtl
