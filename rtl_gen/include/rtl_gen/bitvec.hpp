// A constant of any width, two's complement, stored little-endian in 64-bit words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fetta::rtl {

class BitVec {
 public:
  BitVec() = default;
  explicit BitVec(int width);  // all zeros
  // The value must fit: unsigned in `width` bits, or signed in `width` bits when is_signed.
  static bool fits(int64_t value, int width, bool is_signed);
  static BitVec from_int(int64_t value, int width);  // truncates to width, sign-extending words

  int width() const { return width_; }
  bool bit(int i) const;
  void set_bit(int i, bool v);
  bool is_zero() const;
  bool msb() const { return width_ > 0 && bit(width_ - 1); }
  uint64_t low64() const { return words_.empty() ? 0 : words_[0]; }
  std::string hex() const;  // without prefix, minimal digits for the width
  std::string grouped_hex() const;  // no leading zeros, '_' between groups of four digits: 7fc0_0000
  std::string to_sv(bool is_signed) const;  // 8'd5, 8'sh80, 70'h...
  bool operator==(const BitVec& o) const = default;

 private:
  int width_ = 0;
  std::vector<uint64_t> words_;
};

}  // namespace fetta::rtl
