// Expressions: immutable values built with operators. Widths are checked when an expression is
// built: binary arithmetic and bitwise operators and comparisons need equal widths and the same
// signedness; `*` returns the sum of the widths; extension and truncation are explicit.
#pragma once

#include <concepts>
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <vector>

#include "rtl_gen/ir.hpp"

namespace fetta::rtl {

class Data;

class Expr {
 public:
  Expr() = default;
  explicit Expr(ExprPtr n) : node_(std::move(n)) {}

  int width() const { return node_->width; }
  bool is_signed() const { return node_->is_signed; }
  bool valid() const { return node_ != nullptr; }
  const ExprPtr& node() const { return node_; }

  Expr bit(int i, std::source_location l = std::source_location::current()) const;
  Expr bits(int hi, int lo, std::source_location l = std::source_location::current()) const;
  Expr zext(int w, std::source_location l = std::source_location::current()) const;  // zero-extend to w
  Expr sext(int w, std::source_location l = std::source_location::current()) const;  // sign-extend to w
  Expr trunc(int w, std::source_location l = std::source_location::current()) const; // keep the w low bits
  Expr as_signed() const;
  Expr as_unsigned() const;
  Expr and_reduce() const;
  Expr or_reduce() const;
  Expr xor_reduce() const;

 protected:
  ExprPtr node_;
};

// The right-hand operand of a binary operator: an expression or an integer (taken at the width
// and signedness of the other side). Carries the caller's source line for width errors.
struct Operand {
  Expr e;
  bool is_int = false;
  int64_t k = 0;
  SourceLoc loc;

  Operand(const Expr& x, std::source_location l = std::source_location::current());
  Operand(const Data& x, std::source_location l = std::source_location::current());
  template <std::integral I>
  Operand(I v, std::source_location l = std::source_location::current())
      : is_int(true), k(static_cast<int64_t>(v)), loc(SourceLoc::from(l)) {}

  Expr resolve(int width, bool is_signed) const;  // integer -> constant of that type
};

// Constants.
Expr lit(uint64_t value, int width, std::source_location l = std::source_location::current());
Expr slit(int64_t value, int width, std::source_location l = std::source_location::current());
Expr lit(const BitVec& v, bool is_signed = false);

Expr operator~(const Expr& a);
Expr operator-(const Expr& a);
Expr operator!(const Expr& a);  // 1-bit only
Expr operator&(const Expr& a, const Operand& b);
Expr operator|(const Expr& a, const Operand& b);
Expr operator^(const Expr& a, const Operand& b);
Expr operator+(const Expr& a, const Operand& b);
Expr operator-(const Expr& a, const Operand& b);
Expr operator*(const Expr& a, const Operand& b);
Expr operator<<(const Expr& a, int amount);
Expr operator>>(const Expr& a, int amount);  // arithmetic for SInt, logical for UInt
Expr operator<<(const Expr& a, const Expr& amount);
Expr operator>>(const Expr& a, const Expr& amount);
Expr operator==(const Expr& a, const Operand& b);
Expr operator!=(const Expr& a, const Operand& b);
Expr operator<(const Expr& a, const Operand& b);
Expr operator<=(const Expr& a, const Operand& b);
Expr operator>(const Expr& a, const Operand& b);
Expr operator>=(const Expr& a, const Operand& b);

// sel ? a : b, with sel 1 bit and a, b of the same type. Integers take the other side's type.
Expr mux(const Expr& sel, const Operand& a, const Operand& b,
         std::source_location l = std::source_location::current());
// {parts[0], parts[1], ...}: parts[0] lands in the most significant bits.
Expr cat(std::initializer_list<Expr> parts);
Expr cat(const std::vector<Expr>& parts);
Expr repl(const Expr& a, int times, std::source_location l = std::source_location::current());
// The element at a run-time index: a balanced-by-construction mux chain over `items`.
Expr select(const std::vector<Expr>& items, const Expr& index,
            std::source_location l = std::source_location::current());

// A ground signal that can be driven: `s <<= expr` (last connect wins inside when/switch).
class Sig : public Expr {
 public:
  Sig() = default;
  explicit Sig(SignalPtr s);
  const SignalPtr& signal() const { return sig_; }
  const std::string& name() const { return sig_->name; }

  // Drive this signal in the current block of its module.
  void operator<<=(const Operand& v) const;

 private:
  SignalPtr sig_;
};

}  // namespace fetta::rtl
