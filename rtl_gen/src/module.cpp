#include "rtl_gen/module.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "rtl_gen/check.hpp"
#include "rtl_gen/naming.hpp"

namespace fetta::rtl {

// ---------------------------------------------------------------------------------------- Data

Data::Data(Type t, std::vector<SignalPtr> leaves, std::vector<bool> flips, std::string name)
    : type_(std::move(t)), leaves_(std::move(leaves)), flips_(std::move(flips)), name_(std::move(name)) {}

Data Data::operator[](const std::string& fname) const {
  if (type_.kind() != Type::Kind::bundle)
    throw RtlError(ErrorKind::type, name_, fmt::format("field '{}' requested from a {}", fname, type_.str()), {});
  int idx = type_.field_index(fname);
  if (idx < 0) {
    std::vector<std::string> names;
    for (const Field& f : type_.fields()) names.push_back(f.name);
    throw RtlError(ErrorKind::type, name_, fmt::format("no field '{}'; fields: {}", fname, fmt::join(names, ", ")), {});
  }
  size_t off = 0;
  for (int i = 0; i < idx; ++i) off += type_.fields()[i].type->leaf_count();
  const Field& f = type_.fields()[idx];
  size_t n = f.type->leaf_count();
  std::vector<SignalPtr> l(leaves_.begin() + off, leaves_.begin() + off + n);
  std::vector<bool> fl(flips_.begin() + off, flips_.begin() + off + n);
  return Data(*f.type, std::move(l), std::move(fl), name_ + "_" + fname);
}

Data Data::field_if_any(const std::string& fname) const {
  if (type_.kind() != Type::Kind::bundle || type_.field_index(fname) < 0) return Data{};
  return (*this)[fname];
}

Data Data::operator[](int index) const {
  if (type_.kind() != Type::Kind::vec)
    throw RtlError(ErrorKind::type, name_, fmt::format("element {} requested from a {}", index, type_.str()), {});
  if (index < 0 || index >= type_.count())
    throw RtlError(ErrorKind::type, name_, fmt::format("index {} outside 0..{}", index, type_.count() - 1), {});
  size_t n = type_.elem().leaf_count();
  size_t off = n * index;
  std::vector<SignalPtr> l(leaves_.begin() + off, leaves_.begin() + off + n);
  std::vector<bool> fl(flips_.begin() + off, flips_.begin() + off + n);
  return Data(type_.elem(), std::move(l), std::move(fl), fmt::format("{}_{}", name_, index));
}

int Data::size() const { return type_.kind() == Type::Kind::vec ? type_.count() : 1; }

Sig Data::sig() const {
  if (leaves_.empty())
    throw RtlError(ErrorKind::usage, name_, "an empty handle: the bundle it was taken from has no such field", {});
  if (!type_.is_ground())
    throw RtlError(ErrorKind::type, name_, fmt::format("a {} is not a single signal; select a field or element", type_.str()), {});
  return Sig(leaves_.at(0));
}

void connect(const Data& sink, const Data& source, std::source_location l) {
  if (!(sink.type() == source.type()))
    throw RtlError(ErrorKind::type, sink.name(),
                   fmt::format("cannot connect a {} to a {} ('{}')", source.type().str(), sink.type().str(), source.name()),
                   SourceLoc::from(l));
  for (size_t i = 0; i < sink.leaves().size(); ++i) {
    Sig a(sink.leaves()[i]), b(source.leaves()[i]);
    if (sink.flips()[i])
      b.signal()->owner->assign(b, Operand(a, l));
    else
      a.signal()->owner->assign(a, Operand(b, l));
  }
}

// ---------------------------------------------------------------------------------------- Module

Module::Module(std::string name, Design* design) : name_(std::move(name)), design_(design) {
  block_stack_.push_back(&body_);
}

void Module::claim_name(const std::string& n, const SourceLoc& loc) {
  if (std::string why = identifier_problem(n); !why.empty())
    throw RtlError(ErrorKind::name, n, fmt::format("cannot be used as a name in module '{}': {}", name_, why), loc);
  auto [it, fresh] = names_.emplace(n, loc);
  if (!fresh)
    throw RtlError(ErrorKind::name, n,
                   fmt::format("name already used in module '{}' (declared at {})", name_, it->second.str()), loc);
}

SignalPtr Module::make_signal(const std::string& n, int width, bool is_signed, SigKind kind, const SourceLoc& loc) {
  if (sealed_) throw RtlError(ErrorKind::usage, n, fmt::format("module '{}' is already elaborated", name_), loc);
  // The first declaration made by build() locates the generator's code in the header, the
  // same whoever elaborates the module first.
  if (!origin_from_build_ && !loc.file.empty()) {
    origin_ = loc;
    origin_from_build_ = true;
  }
  claim_name(n, loc);
  auto s = std::make_shared<SignalNode>();
  s->name = n;
  s->width = width;
  s->is_signed = is_signed;
  s->kind = kind;
  s->decl = loc;
  s->owner = this;
  signals_.push_back(s);
  return s;
}

Data Module::declare(const std::string& n, const Type& t, SigKind unflipped, SigKind flipped_kind, const SourceLoc& loc) {
  if (std::string why = identifier_problem(n); !why.empty())
    throw RtlError(ErrorKind::name, n, fmt::format("cannot be used as a name in module '{}': {}", name_, why), loc);
  std::vector<SignalPtr> leaves;
  std::vector<bool> flips;
  for (const Leaf& l : t.leaves()) {
    leaves.push_back(make_signal(n + l.suffix, l.width, l.is_signed, l.flipped ? flipped_kind : unflipped, loc));
    flips.push_back(l.flipped);
  }
  return Data(t, std::move(leaves), std::move(flips), n);
}

Data Module::input(const std::string& n, const Type& t, std::source_location l) {
  Data d = declare(n, t, SigKind::input, SigKind::output, SourceLoc::from(l));
  ports_.push_back(PortDecl{n, t, true, d});
  return d;
}

Data Module::output(const std::string& n, const Type& t, std::source_location l) {
  Data d = declare(n, t, SigKind::output, SigKind::input, SourceLoc::from(l));
  ports_.push_back(PortDecl{n, t, false, d});
  return d;
}

Data Module::wire(const std::string& n, const Type& t, std::source_location l) {
  return declare(n, t, SigKind::wire, SigKind::wire, SourceLoc::from(l));
}

Expr Module::constant(const std::string& n, uint64_t value, int width, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (sealed_) throw RtlError(ErrorKind::usage, n, fmt::format("module '{}' is already elaborated", name_), loc);
  if (width < 1 || width > 64 || (width < 64 && value >> width))
    throw RtlError(ErrorKind::width, n, fmt::format("the constant {} does not fit UInt<{}> (widths 1..64)", value, width), loc);
  claim_name(n, loc);
  auto c = std::make_shared<ExprNode>(*lit(value, width, l).node());
  c->const_name = n;
  c->const_owner = this;
  constants_.push_back(c);
  return Expr(c);
}

Sig Module::node(const std::string& n, const Expr& value, std::source_location l) {
  Sig s = wire(n, value.is_signed() ? SInt(value.width()) : UInt(value.width()), l).sig();
  assign(s, Operand(value, l));
  return s;
}

void Module::ensure_clock(const SourceLoc& loc) {
  if (!clk_) clk_ = make_signal("clk", 1, false, SigKind::input, loc);
}

void Module::ensure_reset(const SourceLoc& loc) {
  ensure_clock(loc);
  if (!rst_) rst_ = make_signal("rst", 1, false, SigKind::input, loc);
}

RegOptions& RegOptions::reset_to(const Expr& constant) {
  if (!constant.valid() || constant.node()->op != Op::constant)
    throw RtlError(ErrorKind::usage, "reset_to", "a reset value must be a constant (lit() or Module::constant())", {});
  const int w = constant.width();
  if (w > 63) throw RtlError(ErrorKind::width, "reset_to", "a reset constant has at most 63 bits", {});
  const uint64_t v = constant.node()->value.low64();
  // Signed: sign-extended from bit w-1, as BitVec::from_int will truncate it back.
  reset = constant.is_signed() ? static_cast<int64_t>(v << (64 - w)) >> (64 - w) : static_cast<int64_t>(v);
  reset_constant = constant;
  return *this;
}

Sig Module::reg(const std::string& n, const Type& t, RegOptions opt, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (opt.reset_constant.valid()) {
    check_expr_owner(opt.reset_constant, n, loc);
    if (opt.reset_constant.width() != t.width())
      throw RtlError(ErrorKind::width, n, fmt::format("reset constant is {} bits, the register {}",
                                                      opt.reset_constant.width(), t.width()), loc);
  }
  if (!t.is_ground())
    throw RtlError(ErrorKind::type, n, fmt::format("registers hold ground types; got {} (declare one per leaf)", t.str()), loc);
  if (opt.reset && !BitVec::fits(*opt.reset, t.width(), t.is_signed()))
    throw RtlError(ErrorKind::width, n, fmt::format("reset value {} does not fit {}", *opt.reset, t.str()), loc);
  if (opt.enable.valid() && (opt.enable.width() != 1 || opt.enable.is_signed()))
    throw RtlError(ErrorKind::width, n, fmt::format("register enable must be UInt<1>, is {} bits", opt.enable.width()), loc);
  if (opt.enable.valid()) check_expr_owner(opt.enable, n, loc);
  if (opt.clock && opt.clock->owner != this)
    throw RtlError(ErrorKind::usage, n, fmt::format("its gated clock belongs to another module than '{}'", name_), loc);
  ensure_clock(loc);
  if (opt.reset) ensure_reset(loc);
  SignalPtr s = make_signal(n, t.width(), t.is_signed(), SigKind::reg, loc);
  if (opt.reset) s->reset = BitVec::from_int(*opt.reset, t.width());
  if (opt.reset_constant.valid()) s->reset_name = opt.reset_constant.node()->const_name;
  if (opt.enable.valid()) s->enable = opt.enable.node();
  if (opt.clock) {
    Gate& g = gates_.at(opt.clock->index);
    if (design_->clock_gating() == ClockGating::cells) {  // its gate's cycles are the only ones it loads in
      s->clock = gated_clock(g, opt.reset.has_value(), loc);
    } else {  // no gate: the enable does the gate's work
      s->enable = s->enable ? (Expr(g.enable) & Expr(s->enable)).node() : g.enable;
    }
  }
  return Sig(s);
}

GatedClock Module::clock_gate(const std::string& n, const Expr& enable, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (sealed_) throw RtlError(ErrorKind::usage, n, fmt::format("module '{}' is already elaborated", name_), loc);
  if (!enable.valid() || enable.width() != 1 || enable.is_signed())
    throw RtlError(ErrorKind::width, n, "a clock gate's enable must be UInt<1>", loc);
  check_expr_owner(enable, n, loc);
  for (const Gate& g : gates_)
    if (g.name == n) throw RtlError(ErrorKind::name, n, "a clock gate of this name exists already", loc);
  gates_.push_back(Gate{.name = n, .enable = enable.node(), .gclk = {}});
  return GatedClock{.index = gates_.size() - 1, .owner = this};
}

SignalPtr Module::gated_clock(Gate& g, bool opens_on_reset, const SourceLoc& loc) {
  SignalPtr& gclk = g.gclk[opens_on_reset ? 1 : 0];
  if (gclk) return gclk;
  const std::string inst = "cg_" + g.name + (opens_on_reset ? "_rst" : "");
  InstanceRef cg = instance(ClockGateCell{}, inst);
  Expr en(g.enable);
  if (opens_on_reset) en = en | Sig(rst_);  // a reset loads through a closed gate
  Operand v(en);
  v.loc = loc;
  assign(cg.io("en").sig(), v);
  Operand off(lit(0, 1));
  off.loc = loc;
  assign(cg.io("test_en").sig(), off);  // scan insertion drives it; this flow has none
  gclk = cg.io("gclk").sig().signal();
  return gclk;
}

Sig Module::clock_input(std::source_location l) {
  ensure_clock(SourceLoc::from(l));
  return Sig(clk_);
}

MemRef Module::memory(const std::string& n, const Type& elem, int depth, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (!elem.is_ground() || elem.is_signed())
    throw RtlError(ErrorKind::type, n, fmt::format("memory elements must be UInt; got {}", elem.str()), loc);
  if (depth < 2) throw RtlError(ErrorKind::usage, n, fmt::format("memory depth {} is below 2", depth), loc);
  claim_name(n, loc);
  ensure_clock(loc);
  auto m = std::make_unique<Memory>();
  m->name = n;
  m->width = elem.width();
  m->depth = depth;
  m->addr_width = clog2(depth);
  m->loc = loc;
  memories_.push_back(std::move(m));
  return MemRef(this, memories_.back().get());
}

Sig MemRef::read_port(const std::string& n, const Expr& addr, const Expr& enable, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (addr.width() != mem_->addr_width || addr.is_signed())
    throw RtlError(ErrorKind::width, mem_->name,
                   fmt::format("read address must be UInt<{}>, is {} bits", mem_->addr_width, addr.width()), loc);
  if (enable.width() != 1) throw RtlError(ErrorKind::width, mem_->name, "read enable must be UInt<1>", loc);
  m_->check_expr_owner(addr, n, loc);
  m_->check_expr_owner(enable, n, loc);
  Data d = m_->wire(n, UInt(mem_->width), l);
  SignalPtr s = d.leaves()[0];
  s->kind = SigKind::mem_read;
  s->mem = mem_;
  mem_->reads.push_back(MemReadPort{s, addr.node(), enable.node(), loc});
  return Sig(s);
}

void MemRef::write_port(const Expr& addr, const Expr& data, const Expr& enable, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (addr.width() != mem_->addr_width || addr.is_signed())
    throw RtlError(ErrorKind::width, mem_->name,
                   fmt::format("write address must be UInt<{}>, is {} bits", mem_->addr_width, addr.width()), loc);
  if (data.width() != mem_->width)
    throw RtlError(ErrorKind::width, mem_->name,
                   fmt::format("write data must be {} bits, is {} bits", mem_->width, data.width()), loc);
  if (enable.width() != 1) throw RtlError(ErrorKind::width, mem_->name, "write enable must be UInt<1>", loc);
  for (const Expr* e : {&addr, &data, &enable}) m_->check_expr_owner(*e, mem_->name, loc);
  mem_->writes.push_back(MemWritePort{addr.node(), data.as_unsigned().node(), enable.node(), loc});
}

InstanceRef Module::instance(const GeneratorBase& gen, const std::string& n, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (sealed_) throw RtlError(ErrorKind::usage, n, fmt::format("module '{}' is already elaborated", name_), loc);
  std::shared_ptr<const Module> def = design_->elaborate(gen, l);
  claim_name(n, loc);
  auto inst = std::make_unique<Instance>();
  inst->name = n;
  inst->def = def;
  inst->loc = loc;
  for (const SignalPtr& cs : def->signals()) {
    if (cs->kind != SigKind::input && cs->kind != SigKind::output) continue;
    SignalPtr ps;
    if (cs == def->clock()) {
      ensure_clock(loc);
      ps = clk_;
    } else if (cs == def->reset()) {
      ensure_reset(loc);
      ps = rst_;
    } else {
      ps = make_signal(n + "_" + cs->name, cs->width, cs->is_signed,
                       cs->kind == SigKind::input ? SigKind::inst_in : SigKind::inst_out, loc);
      ps->inst = inst.get();
      ps->port = cs->name;
    }
    inst->ports.push_back(ps);
  }
  instances_.push_back(std::move(inst));
  return InstanceRef(instances_.back().get(), def.get());
}

Data InstanceRef::io(const std::string& port, std::source_location l) const {
  for (const PortDecl& p : def_->ports()) {
    if (p.name != port) continue;
    std::vector<SignalPtr> leaves;
    for (const SignalPtr& cl : p.data.leaves()) {
      const auto& sigs = def_->signals();
      size_t k = 0;
      for (const SignalPtr& cs : sigs) {
        if (cs->kind != SigKind::input && cs->kind != SigKind::output) continue;
        if (cs == cl) break;
        ++k;
      }
      leaves.push_back(inst_->ports.at(k));
    }
    return Data(p.type, std::move(leaves), p.data.flips(), inst_->name + "_" + port);
  }
  std::vector<std::string> names;
  for (const PortDecl& p : def_->ports()) names.push_back(p.name);
  throw RtlError(ErrorKind::port, inst_->name + "." + port,
                 fmt::format("module '{}' has no port '{}'; its ports: {}", def_->name(), port, fmt::join(names, ", ")),
                 SourceLoc::from(l));
}

void Module::check_expr_owner(const Expr& e, const std::string& what, const SourceLoc& loc) const {
  if (!e.valid()) throw RtlError(ErrorKind::usage, what, "empty expression", loc);
  std::vector<const ExprNode*> stack{e.node().get()};
  while (!stack.empty()) {
    const ExprNode* n = stack.back();
    stack.pop_back();
    if (n->op == Op::ref && n->sig->owner != this)
      throw RtlError(ErrorKind::usage, n->sig->name,
                     fmt::format("signal of module '{}' used in module '{}'; pass values through ports",
                                 n->sig->owner->name(), name_),
                     loc);
    if (n->op == Op::constant && n->const_owner && n->const_owner != this)
      throw RtlError(ErrorKind::usage, n->const_name,
                     fmt::format("named constant of module '{}' used in module '{}'; declare it in each module",
                                 n->const_owner->name(), name_),
                     loc);
    for (const ExprPtr& a : n->args) stack.push_back(a.get());
  }
}

void Module::push_stmt(std::unique_ptr<Stmt> s) {
  if (sealed_) throw RtlError(ErrorKind::usage, name_, "statement added after elaboration", s->loc);
  block_stack_.back()->push_back(std::move(s));
}

void Module::with_block(Block* b, const std::function<void()>& body) {
  block_stack_.push_back(b);
  try {
    body();
  } catch (...) {
    block_stack_.pop_back();
    throw;
  }
  block_stack_.pop_back();
}

void Module::assign(const Sig& target, const Operand& v) {
  const SignalPtr& s = target.signal();
  const SourceLoc& loc = v.loc;
  if (s->owner != this)
    throw RtlError(ErrorKind::usage, s->name, fmt::format("belongs to module '{}', not '{}'", s->owner->name(), name_), loc);
  switch (s->kind) {
    case SigKind::input:
      throw RtlError(ErrorKind::multiple_drivers, s->name, "is an input port of this module; it is driven from outside", loc);
    case SigKind::inst_out:
      throw RtlError(ErrorKind::multiple_drivers, s->name, "is driven by an output of instance " + s->inst->name, loc);
    case SigKind::mem_read:
      throw RtlError(ErrorKind::multiple_drivers, s->name, "is the read data of memory " + s->mem->name, loc);
    default: break;
  }
  Expr e = v.resolve(s->width, s->is_signed);
  if (e.width() != s->width)
    throw RtlError(ErrorKind::width, s->name,
                   fmt::format("{}-bit value assigned to a {}-bit signal; extend or truncate explicitly", e.width(), s->width),
                   loc);
  if (e.is_signed() != s->is_signed)
    throw RtlError(ErrorKind::type, s->name,
                   fmt::format("{} value assigned to a {} signal; use as_signed()/as_unsigned()",
                               e.is_signed() ? "SInt" : "UInt", s->is_signed ? "SInt" : "UInt"),
                   loc);
  check_expr_owner(e, s->name, loc);
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::connect;
  st->loc = loc;
  st->target = s;
  st->value = e.node();
  push_stmt(std::move(st));
}

WhenChain Module::when(const Expr& cond, const std::function<void()>& body, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (!cond.valid() || cond.width() != 1 || cond.is_signed())
    throw RtlError(ErrorKind::width, "when", fmt::format("condition must be UInt<1>, is {} bits", cond.valid() ? cond.width() : 0), loc);
  check_expr_owner(cond, "when", loc);
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::when;
  st->loc = loc;
  st->cond = cond.node();
  Stmt* raw = st.get();
  push_stmt(std::move(st));
  with_block(&raw->then_body, body);
  return WhenChain(this, raw);
}

WhenChain WhenChain::elsewhen(const Expr& cond, const std::function<void()>& body, std::source_location l) {
  if (!stmt_->else_body.empty())
    throw RtlError(ErrorKind::usage, "elsewhen", "this when already has an else branch", SourceLoc::from(l));
  // The nested when lives directly inside this when's else block.
  auto st = std::make_unique<Stmt>();
  SourceLoc loc = SourceLoc::from(l);
  if (cond.width() != 1 || cond.is_signed())
    throw RtlError(ErrorKind::width, "elsewhen", fmt::format("condition must be UInt<1>, is {} bits", cond.width()), loc);
  m_->check_expr_owner(cond, "elsewhen", loc);
  st->kind = Stmt::Kind::when;
  st->loc = loc;
  st->cond = cond.node();
  Stmt* nested = st.get();
  stmt_->else_body.push_back(std::move(st));
  m_->with_block(&nested->then_body, body);
  return WhenChain(m_, nested);
}

void WhenChain::otherwise(const std::function<void()>& body) {
  if (!stmt_->else_body.empty())
    throw RtlError(ErrorKind::usage, "otherwise", "this when already has an else branch", stmt_->loc);
  m_->with_block(&stmt_->else_body, body);
}

SwitchChain Module::switch_on(const Expr& subject, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  check_expr_owner(subject, "switch", loc);
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::switch_;
  st->loc = loc;
  st->subject = subject.as_unsigned().node();
  Stmt* raw = st.get();
  push_stmt(std::move(st));
  return SwitchChain(this, raw);
}

SwitchChain SwitchChain::is(int64_t value, const std::function<void()>& body, std::source_location l) {
  return is({value}, body, l);
}

SwitchChain SwitchChain::is(std::initializer_list<int64_t> values, const std::function<void()>& body,
                            std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (stmt_->has_default) throw RtlError(ErrorKind::usage, "switch", "is() after otherwise()", loc);
  int w = stmt_->subject->width;
  SwitchCase c;
  c.loc = loc;
  for (int64_t v : values) {
    if (!BitVec::fits(v, w, false))
      throw RtlError(ErrorKind::width, std::to_string(v), fmt::format("case value does not fit the {}-bit switch subject", w), loc);
    BitVec b = BitVec::from_int(v, w);
    for (const SwitchCase& prev : stmt_->cases)
      if (std::find(prev.values.begin(), prev.values.end(), b) != prev.values.end())
        throw RtlError(ErrorKind::usage, std::to_string(v), fmt::format("case value already handled at {}", prev.loc.str()), loc);
    c.values.push_back(b);
    c.names.emplace_back();
  }
  stmt_->cases.push_back(std::move(c));
  m_->with_block(&stmt_->cases.back().body, body);
  return *this;
}

SwitchChain SwitchChain::is(const Expr& value, const std::function<void()>& body, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  if (!value.valid() || value.node()->op != Op::constant)
    throw RtlError(ErrorKind::usage, "switch", "a case label must be a constant (lit() or Module::constant())", loc);
  m_->check_expr_owner(value, "switch", loc);
  const ExprNode& n = *value.node();
  if (n.width != stmt_->subject->width)
    throw RtlError(ErrorKind::width, n.const_name.empty() ? n.value.to_sv(false) : n.const_name,
                   fmt::format("case label is {} bits, the switch subject {}", n.width, stmt_->subject->width), loc);
  SwitchChain next = is({static_cast<int64_t>(n.value.low64())}, body, l);
  stmt_->cases.back().names.back() = n.const_name;
  return next;
}

void SwitchChain::otherwise(const std::function<void()>& body, std::source_location l) {
  if (stmt_->has_default) throw RtlError(ErrorKind::usage, "switch", "otherwise() given twice", SourceLoc::from(l));
  stmt_->has_default = true;
  m_->with_block(&stmt_->default_body, body);
}

void Module::set_origin(std::string generator, ParamList params, SourceLoc loc) {
  generator_ = std::move(generator);
  params_ = std::move(params);
  origin_ = std::move(loc);
}

// ---------------------------------------------------------------------------------------- Design

std::string to_string(View v) { return v == View::simulation ? "simulation" : "synthesis"; }

View parse_view(const std::string& s) {
  if (s == "synthesis") return View::synthesis;
  if (s == "simulation") return View::simulation;
  throw std::invalid_argument(fmt::format("view '{}'; allowed: synthesis, simulation", s));
}

std::string to_string(ClockGating g) { return g == ClockGating::cells ? "cells" : "enables"; }

ClockGating parse_clock_gating(const std::string& s) {
  if (s == "cells") return ClockGating::cells;
  if (s == "enables") return ClockGating::enables;
  throw std::invalid_argument(fmt::format("clock gating '{}'; allowed: cells, enables", s));
}

void ClockGateCell::build(Module& m) const {
  m.clock_input();
  m.input("en", UInt(1));
  m.input("test_en", UInt(1));
  m.output("gclk", UInt(1));
  m.add_comment("Integrated clock gate: the enable is latched while clk is low, so gclk cannot glitch.");
  m.set_verbatim_body(
      "  logic en_latched;\n\n"
      "  always_latch begin\n"
      "    if (!clk) begin\n"
      "      en_latched = en | test_en;\n"
      "    end\n"
      "  end\n\n"
      "  assign gclk = clk & en_latched;\n");
}

std::shared_ptr<const Module> Design::elaborate(const GeneratorBase& gen, std::source_location l) {
  SourceLoc loc = SourceLoc::from(l);
  std::string name = gen.module_name();
  ParamList params = gen.params();
  if (std::string why = identifier_problem(name); !why.empty())
    throw RtlError(ErrorKind::name, name, fmt::format("generator {} gives an unusable module name: {}", gen.generator_name(), why), loc);
  for (const auto& m : modules_)
    if (m->name() == name) {
      if (m->params() != params || m->generator() != gen.generator_name())
        throw RtlError(ErrorKind::name, name,
                       fmt::format("two different generators/parameter sets map to this module name ({} vs {})",
                                   m->generator(), gen.generator_name()),
                       loc);
      return m;
    }
  if (std::find(building_.begin(), building_.end(), name) != building_.end())
    throw RtlError(ErrorKind::usage, name, "module instantiates itself (recursive hierarchy)", loc);
  building_.push_back(name);
  auto m = std::make_shared<Module>(name, this);
  m->set_origin(gen.generator_name(), params, loc);
  try {
    gen.build(*m);
    check_module(*m);
  } catch (...) {
    building_.pop_back();
    throw;
  }
  building_.pop_back();
  m->seal();
  modules_.push_back(m);
  return m;
}

std::shared_ptr<const Module> Design::find(const std::string& name) const {
  for (const auto& m : modules_)
    if (m->name() == name) return m;
  return nullptr;
}

std::vector<std::shared_ptr<const Module>> Design::hierarchy(const std::string& top) const {
  std::vector<std::shared_ptr<const Module>> order;
  std::set<const Module*> seen;
  std::function<void(const std::shared_ptr<const Module>&)> visit = [&](const std::shared_ptr<const Module>& m) {
    if (!seen.insert(m.get()).second) return;
    for (const auto& inst : m->instances()) visit(inst->def);
    order.push_back(m);
  };
  auto t = find(top);
  if (!t) throw RtlError(ErrorKind::usage, top, "no such module in the design", {});
  visit(t);
  return order;
}

}  // namespace fetta::rtl
