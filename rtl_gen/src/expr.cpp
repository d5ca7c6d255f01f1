#include "rtl_gen/expr.hpp"

#include <fmt/core.h>

#include "rtl_gen/module.hpp"

namespace fetta::rtl {

namespace {

ExprPtr make(Op op, int width, bool is_signed, std::vector<ExprPtr> args) {
  auto n = std::make_shared<ExprNode>();
  n->op = op;
  n->width = width;
  n->is_signed = is_signed;
  n->args = std::move(args);
  return n;
}

// A short name for an expression in messages: the signal, the constant, or its operator.
std::string describe(const ExprPtr& e) {
  switch (e->op) {
    case Op::ref: return e->sig->name;
    case Op::constant: return e->const_name.empty() ? e->value.to_sv(e->is_signed) : e->const_name;
    case Op::slice: return describe(e->args[0]) + fmt::format("[{}:{}]", e->hi, e->lo);
    default: return fmt::format("<{}-bit expression>", e->width);
  }
}

const char* type_word(bool s) { return s ? "SInt" : "UInt"; }

void require_valid(const Expr& e, const char* what, const SourceLoc& loc) {
  if (!e.valid()) throw RtlError(ErrorKind::usage, what, "operand is an empty expression (never assigned a value)", loc);
}

Expr binary(Op op, const char* sym, const Expr& a, const Operand& b, bool result_bool) {
  require_valid(a, sym, b.loc);
  Expr rb = b.resolve(a.width(), a.is_signed());
  if (a.width() != rb.width())
    throw RtlError(ErrorKind::width, describe(a.node()),
                   fmt::format("operands of '{}' have widths {} and {} ('{}'); extend or truncate one explicitly",
                               sym, a.width(), rb.width(), describe(rb.node())),
                   b.loc);
  if (a.is_signed() != rb.is_signed())
    throw RtlError(ErrorKind::type, describe(a.node()),
                   fmt::format("operands of '{}' are {} and {} ('{}'); convert one with as_signed()/as_unsigned()",
                               sym, type_word(a.is_signed()), type_word(rb.is_signed()), describe(rb.node())),
                   b.loc);
  if (result_bool) return Expr(make(op, 1, false, {a.node(), rb.node()}));
  return Expr(make(op, a.width(), a.is_signed(), {a.node(), rb.node()}));
}

}  // namespace

Operand::Operand(const Expr& x, std::source_location l) : e(x), loc(SourceLoc::from(l)) {}
Operand::Operand(const Data& x, std::source_location l) : e(x.sig()), loc(SourceLoc::from(l)) {}

Expr Operand::resolve(int width, bool is_signed) const {
  if (!is_int) return e;
  if (!BitVec::fits(k, width, is_signed))
    throw RtlError(ErrorKind::width, std::to_string(k),
                   fmt::format("the constant does not fit the other operand's type {}<{}>", type_word(is_signed), width),
                   loc);
  return lit(BitVec::from_int(k, width), is_signed);
}

Expr lit(const BitVec& v, bool is_signed) {
  auto n = std::make_shared<ExprNode>();
  n->op = Op::constant;
  n->width = v.width();
  n->is_signed = is_signed;
  n->value = v;
  return Expr(n);
}

Expr lit(uint64_t value, int width, std::source_location l) {
  if (width < 1 || (width < 64 && value >> width))
    throw RtlError(ErrorKind::width, std::to_string(value), fmt::format("the constant does not fit UInt<{}>", width),
                   SourceLoc::from(l));
  BitVec v(width);
  for (int i = 0; i < width && i < 64; ++i) v.set_bit(i, (value >> i) & 1);
  return lit(v, false);
}

Expr slit(int64_t value, int width, std::source_location l) {
  if (width < 1 || !BitVec::fits(value, width, true))
    throw RtlError(ErrorKind::width, std::to_string(value), fmt::format("the constant does not fit SInt<{}>", width),
                   SourceLoc::from(l));
  return lit(BitVec::from_int(value, width), true);
}

Expr Expr::bit(int i, std::source_location l) const { return bits(i, i, l); }

Expr Expr::bits(int hi, int lo, std::source_location l) const {
  require_valid(*this, "bits", SourceLoc::from(l));
  if (lo < 0 || hi < lo || hi >= width())
    throw RtlError(ErrorKind::width, describe(node_),
                   fmt::format("slice [{}:{}] is outside the {} bits [{}:0]", hi, lo, width(), width() - 1),
                   SourceLoc::from(l));
  if (lo == 0 && hi == width() - 1 && !is_signed()) return *this;
  auto n = std::make_shared<ExprNode>(*make(Op::slice, hi - lo + 1, false, {node_}));
  n->hi = hi;
  n->lo = lo;
  return Expr(n);
}

Expr Expr::zext(int w, std::source_location l) const {
  require_valid(*this, "zext", SourceLoc::from(l));
  if (w < width())
    throw RtlError(ErrorKind::width, describe(node_),
                   fmt::format("zext to {} bits would shrink a {}-bit value; use trunc()", w, width()), SourceLoc::from(l));
  if (w == width()) return as_unsigned();
  return Expr(make(Op::zext, w, false, {node_}));
}

Expr Expr::sext(int w, std::source_location l) const {
  require_valid(*this, "sext", SourceLoc::from(l));
  if (w < width())
    throw RtlError(ErrorKind::width, describe(node_),
                   fmt::format("sext to {} bits would shrink a {}-bit value; use trunc()", w, width()), SourceLoc::from(l));
  if (w == width()) return *this;
  return Expr(make(Op::sext, w, is_signed(), {node_}));
}

Expr Expr::trunc(int w, std::source_location l) const {
  require_valid(*this, "trunc", SourceLoc::from(l));
  if (w > width() || w < 1)
    throw RtlError(ErrorKind::width, describe(node_),
                   fmt::format("trunc to {} bits is not a truncation of a {}-bit value", w, width()), SourceLoc::from(l));
  Expr r = bits(w - 1, 0, l);
  return is_signed() ? r.as_signed() : r;
}

Expr Expr::as_signed() const {
  if (is_signed()) return *this;
  return Expr(make(Op::as_signed, width(), true, {node_}));
}

Expr Expr::as_unsigned() const {
  if (!is_signed()) return *this;
  return Expr(make(Op::as_unsigned, width(), false, {node_}));
}

Expr Expr::and_reduce() const { return Expr(make(Op::red_and, 1, false, {node_})); }
Expr Expr::or_reduce() const { return Expr(make(Op::red_or, 1, false, {node_})); }
Expr Expr::xor_reduce() const { return Expr(make(Op::red_xor, 1, false, {node_})); }

Expr operator~(const Expr& a) { return Expr(make(Op::bit_not, a.width(), a.is_signed(), {a.node()})); }
Expr operator-(const Expr& a) { return Expr(make(Op::neg, a.width(), a.is_signed(), {a.node()})); }
Expr operator!(const Expr& a) {
  if (a.width() != 1)
    throw RtlError(ErrorKind::width, describe(a.node()), "logical not takes a 1-bit value; use or_reduce() first", {});
  return Expr(make(Op::logic_not, 1, false, {a.node()}));
}

Expr operator&(const Expr& a, const Operand& b) { return binary(Op::bit_and, "&", a, b, false); }
Expr operator|(const Expr& a, const Operand& b) { return binary(Op::bit_or, "|", a, b, false); }
Expr operator^(const Expr& a, const Operand& b) { return binary(Op::bit_xor, "^", a, b, false); }
Expr operator+(const Expr& a, const Operand& b) { return binary(Op::add, "+", a, b, false); }
Expr operator-(const Expr& a, const Operand& b) { return binary(Op::sub, "-", a, b, false); }
Expr operator==(const Expr& a, const Operand& b) { return binary(Op::eq, "==", a, b, true); }
Expr operator!=(const Expr& a, const Operand& b) { return binary(Op::ne, "!=", a, b, true); }
Expr operator<(const Expr& a, const Operand& b) { return binary(Op::lt, "<", a, b, true); }
Expr operator<=(const Expr& a, const Operand& b) { return binary(Op::le, "<=", a, b, true); }
Expr operator>(const Expr& a, const Operand& b) { return binary(Op::gt, ">", a, b, true); }
Expr operator>=(const Expr& a, const Operand& b) { return binary(Op::ge, ">=", a, b, true); }

Expr operator*(const Expr& a, const Operand& b) {
  require_valid(a, "*", b.loc);
  Expr rb = b.is_int ? b.resolve(a.width(), a.is_signed()) : b.e;
  if (a.is_signed() != rb.is_signed())
    throw RtlError(ErrorKind::type, describe(a.node()),
                   fmt::format("operands of '*' are {} and {}; convert one with as_signed()/as_unsigned()",
                               type_word(a.is_signed()), type_word(rb.is_signed())),
                   b.loc);
  return Expr(make(Op::mul, a.width() + rb.width(), a.is_signed(), {a.node(), rb.node()}));
}

static Expr shift_const(Op op, const Expr& a, int amount) {
  if (amount < 0) throw RtlError(ErrorKind::usage, describe(a.node()), "negative shift amount", {});
  auto n = std::make_shared<ExprNode>(*make(op, a.width(), a.is_signed(), {a.node()}));
  n->hi = amount;
  return Expr(n);
}

Expr operator<<(const Expr& a, int amount) { return shift_const(Op::shl, a, amount); }
Expr operator>>(const Expr& a, int amount) { return shift_const(Op::shr, a, amount); }

Expr operator<<(const Expr& a, const Expr& amount) {
  if (amount.is_signed()) throw RtlError(ErrorKind::type, describe(amount.node()), "shift amount must be UInt", {});
  return Expr(make(Op::shl_dyn, a.width(), a.is_signed(), {a.node(), amount.node()}));
}

Expr operator>>(const Expr& a, const Expr& amount) {
  if (amount.is_signed()) throw RtlError(ErrorKind::type, describe(amount.node()), "shift amount must be UInt", {});
  return Expr(make(Op::shr_dyn, a.width(), a.is_signed(), {a.node(), amount.node()}));
}

Expr mux(const Expr& sel, const Operand& a, const Operand& b, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  require_valid(sel, "mux", loc);
  if (sel.width() != 1 || sel.is_signed())
    throw RtlError(ErrorKind::width, describe(sel.node()), fmt::format("mux select must be UInt<1>, is {} bits", sel.width()), loc);
  if (a.is_int && b.is_int)
    throw RtlError(ErrorKind::usage, "mux", "at least one mux input must be an expression to give the width", loc);
  Expr ea = a.is_int ? a.resolve(b.e.width(), b.e.is_signed()) : a.e;
  Expr eb = b.is_int ? b.resolve(ea.width(), ea.is_signed()) : b.e;
  if (ea.width() != eb.width() || ea.is_signed() != eb.is_signed())
    throw RtlError(ErrorKind::width, describe(ea.node()),
                   fmt::format("mux inputs have types {}<{}> and {}<{}> ('{}')", type_word(ea.is_signed()), ea.width(),
                               type_word(eb.is_signed()), eb.width(), describe(eb.node())),
                   loc);
  return Expr(make(Op::mux, ea.width(), ea.is_signed(), {sel.node(), ea.node(), eb.node()}));
}

Expr cat(const std::vector<Expr>& parts) {
  if (parts.empty()) throw RtlError(ErrorKind::usage, "cat", "concatenation of nothing", {});
  if (parts.size() == 1) return parts[0].as_unsigned();
  int w = 0;
  std::vector<ExprPtr> args;
  for (const Expr& p : parts) {
    w += p.width();
    args.push_back(p.node());
  }
  return Expr(make(Op::cat, w, false, std::move(args)));
}

Expr cat(std::initializer_list<Expr> parts) { return cat(std::vector<Expr>(parts)); }

Expr repl(const Expr& a, int times, std::source_location l) {
  if (times < 1) throw RtlError(ErrorKind::usage, describe(a.node()), "replication count must be at least 1", SourceLoc::from(l));
  if (times == 1) return a.as_unsigned();
  auto n = std::make_shared<ExprNode>(*make(Op::repl, a.width() * times, false, {a.node()}));
  n->hi = times;
  return Expr(n);
}

Expr select(const std::vector<Expr>& items, const Expr& index, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (items.empty()) throw RtlError(ErrorKind::usage, "select", "select from an empty list", loc);
  if (index.is_signed()) throw RtlError(ErrorKind::type, describe(index.node()), "select index must be UInt", loc);
  if ((size_t{1} << std::min(index.width(), 30)) < items.size())
    throw RtlError(ErrorKind::width, describe(index.node()),
                   fmt::format("a {}-bit index cannot address {} items", index.width(), items.size()), loc);
  // Binary tree on the index bits, least significant level first: log2(n) levels of 2:1 muxes.
  std::vector<Expr> level = items;
  for (int b = 0; level.size() > 1; ++b) {
    std::vector<Expr> next;
    for (size_t i = 0; i < level.size(); i += 2)
      next.push_back(i + 1 < level.size() ? mux(index.bit(b), level[i + 1], level[i], l) : level[i]);
    level = std::move(next);
  }
  return level[0];
}

Sig::Sig(SignalPtr s) : Expr(nullptr), sig_(std::move(s)) {
  auto n = std::make_shared<ExprNode>();
  n->op = Op::ref;
  n->width = sig_->width;
  n->is_signed = sig_->is_signed;
  n->sig = sig_;
  node_ = n;
}

void Sig::operator<<=(const Operand& v) const { sig_->owner->assign(*this, v); }

}  // namespace fetta::rtl
