#include "rtl_gen/emit.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <nlohmann/json.hpp>
#include <set>

#include "rtl_gen/check.hpp"

namespace fetta::rtl {

namespace {

std::string decl_type(int width, bool is_signed) {
  std::string s = "logic";
  if (is_signed) s += " signed";
  if (width > 1 || is_signed) s += fmt::format(" [{}:0]", width - 1);
  return s;
}

// Appends "name" (all bits) or "name[hi:lo]" for every run of bits that `read` marks unread.
void unread_ranges(const std::string& name, const std::vector<bool>& read, std::vector<std::string>& out) {
  const int width = static_cast<int>(read.size());
  for (int hi = width - 1; hi >= 0;) {
    if (read[hi]) {
      --hi;
      continue;
    }
    int lo = hi;
    while (lo > 0 && !read[lo - 1]) --lo;
    if (lo == 0 && hi == width - 1)
      out.push_back(name);
    else
      out.push_back(hi == lo ? fmt::format("{}[{}]", name, hi) : fmt::format("{}[{}:{}]", name, hi, lo));
    hi = lo - 1;
  }
}

// Ops whose SystemVerilog width follows the context (IEEE 1800 11.6.1). Inside a widening
// context (the operands of `*`) they would compute with more bits than the IR says.
bool context_determined(Op op) {
  switch (op) {
    case Op::bit_not: case Op::neg: case Op::bit_and: case Op::bit_or: case Op::bit_xor:
    case Op::add: case Op::sub: case Op::mul: case Op::shl: case Op::shr:
    case Op::shl_dyn: case Op::shr_dyn: case Op::mux:
      return true;
    default:
      return false;
  }
}

// Which operands are written in parentheses. SystemVerilog's precedence (IEEE 1800 11.3.2) would
// allow fewer, but a reader should not need the table: an operand goes bare when it is a name,
// literal, slice, concatenation or cast, or a ~, - or ! of one; when it continues a chain of the
// same associative operator (a & b & c, a + b + c) or a left-leaning + / - chain (a + b - c); and
// inside a conditional, whose operators all bind tighter, except a conditional in its condition or
// its then-branch (an else-branch conditional continues a select chain: a ? x : b ? y : z).
enum class Side { left, right, cond, then_branch, else_branch, unary };

bool is_primary(Op op) {
  switch (op) {
    case Op::constant: case Op::ref: case Op::slice: case Op::cat: case Op::repl: case Op::zext:
    case Op::sext: case Op::as_signed: case Op::as_unsigned:
    case Op::mul:  // as an operand, always a named temporary
      return true;
    default:
      return false;
  }
}

bool is_plain_unary(Op op) { return op == Op::bit_not || op == Op::neg || op == Op::logic_not; }
bool is_associative(Op op) { return op == Op::bit_and || op == Op::bit_or || op == Op::bit_xor || op == Op::add; }
bool is_additive(Op op) { return op == Op::add || op == Op::sub; }

bool needs_parens(Op child, Op parent, Side side) {
  if (is_primary(child)) return false;
  switch (side) {
    case Side::unary: return true;  // ~(&x) is not ~&x, and -(a + b) needs them anyway
    case Side::cond: case Side::then_branch: return child == Op::mux;
    case Side::else_branch: return false;
    case Side::left: case Side::right:
      if (is_plain_unary(child)) return false;
      if (child == parent && is_associative(parent)) return false;
      if (side == Side::left && is_additive(child) && is_additive(parent)) return false;
      return true;
  }
  return true;
}

const char* binop(Op op) {
  switch (op) {
    case Op::bit_and: return "&";
    case Op::bit_or: return "|";
    case Op::bit_xor: return "^";
    case Op::add: return "+";
    case Op::sub: return "-";
    case Op::mul: return "*";
    case Op::eq: return "==";
    case Op::ne: return "!=";
    case Op::lt: return "<";
    case Op::le: return "<=";
    case Op::gt: return ">";
    case Op::ge: return ">=";
    default: return "?";
  }
}

constexpr size_t kMaxLine = 100;

// A statement longer than kMaxLine, broken at spaces (SystemVerilog ignores them, and no literal
// or name holds one): each break at the shallowest bracket depth that still fills the line to a
// third, before an operator rather than after it, continuation lines indented four more than the
// statement. Comments are left whole.
std::string wrap_line(const std::string& line) {
  const size_t indent = line.find_first_not_of(' ');
  if (line.size() <= kMaxLine || indent == std::string::npos || line.compare(indent, 2, "//") == 0) return line;
  const size_t code_end = std::min(line.find("//"), line.size());
  std::vector<std::pair<size_t, int>> spaces;  // position, bracket depth
  int depth = 0;
  for (size_t i = indent; i < code_end; ++i) {
    const char c = line[i];
    if (c == '(' || c == '{' || c == '[') ++depth;
    if (c == ')' || c == '}' || c == ']') --depth;
    // Not right after an operator: a continuation line starts with the operator it continues.
    if (c == ' ' && std::string_view("|&^+-*?:=<>!~").find(line[i - 1]) == std::string_view::npos)
      spaces.emplace_back(i, depth);
  }
  const std::string cont(indent + 4, ' ');
  std::string out;
  size_t start = 0, prefix = 0;  // the segment's first character, and the indentation it gets
  for (;;) {
    const size_t room = kMaxLine - prefix;
    if (line.size() - start <= room) break;
    std::optional<std::pair<size_t, int>> best, first_after;
    for (const auto& [pos, d] : spaces) {
      if (pos <= start) continue;
      if (pos - start > room) {
        if (!first_after) first_after = std::make_pair(pos, d);
        continue;
      }
      if (pos - start < room / 3) continue;
      if (!best || d <= best->second) best = std::make_pair(pos, d);
    }
    if (!best) best = first_after;
    if (!best) break;
    out += (prefix ? cont : std::string()) + line.substr(start, best->first - start) + "\n";
    start = best->first + 1;
    prefix = cont.size();
  }
  return out + (prefix ? cont : std::string()) + line.substr(start);
}

class ModuleEmitter {
 public:
  explicit ModuleEmitter(const Module& m) : m_(m) {
    for (const SignalPtr& s : m.signals()) names_.insert(s->name);
    for (const auto& i : m.instances()) names_.insert(i->name);
    for (const auto& mem : m.memories()) names_.insert(mem->name);
  }

  std::string run();

 private:
  std::vector<std::string> unread_bits();
  std::string header() const;
  std::string port_list() const;
  std::string declarations(const std::vector<std::string>& unused, std::string& sink);
  // Expression printing. `owner` names temporaries (<owner>_t<k>), so a temp's name only
  // changes when the statement that needs it changes.
  std::string expr(const ExprPtr& e, const std::string& owner, bool self_determined, bool root = false);
  // An expression in a position delimited by the syntax around it (assign RHS, if condition).
  std::string top(const ExprPtr& e, const std::string& owner, bool root) { return expr(e, owner, !root, root); }
  // An operand of `parent`, in parentheses where needs_parens says.
  std::string operand(const ExprPtr& e, const std::string& owner, bool self_determined, Op parent, Side side) {
    std::string text = expr(e, owner, self_determined);
    return needs_parens(e->op, parent, side) ? "(" + text + ")" : text;
  }
  // A named temporary holding `e`; bits hi..lo (default: all) are marked as read.
  std::string temp(const ExprPtr& e, const std::string& owner, int hi = -1, int lo = 0);
  std::string make_temp(const ExprPtr& e, const std::string& owner);
  std::string as_ref(const ExprPtr& e, const std::string& owner, int hi = -1, int lo = 0) {
    return e->op == Op::ref ? e->sig->name : temp(e, owner, hi, lo);
  }

  // A literal, or the name of a named constant (declared as a localparam once used): in
  // expressions, case labels and reset values alike.
  std::string constant(const std::string& name, const BitVec& value, bool is_signed) {
    if (name.empty()) return value.to_sv(is_signed);
    used_constants_.insert(name);
    return name;
  }

  void note_use(const ExprPtr& e);
  void mark_bits(const SignalNode* s, int hi, int lo);

  bool touches(const Block& b, const SignalNode* s) const;
  bool touches_stmt(const Stmt& st, const SignalNode* s) const;
  void block(const Block& b, const SignalNode* s, int ind, bool nb, std::string& out);
  std::string driver(const SignalPtr& s);
  std::string memory(const Memory& mem);
  std::string instance(const Instance& inst);

  const Module& m_;
  std::set<std::string> names_;
  std::map<std::string, int> temp_count_;
  std::map<const ExprNode*, std::string> temp_of_;
  std::string temp_decls_, temp_assigns_;
  std::map<const SignalNode*, std::vector<bool>> used_;
  std::vector<std::string> temp_order_;
  std::map<std::string, std::vector<bool>> temp_used_;  // bits of each temporary that are read
  std::set<std::string> used_constants_;
};

std::string ModuleEmitter::temp(const ExprPtr& e, const std::string& owner, int hi, int lo) {
  std::string name = make_temp(e, owner);
  auto& used = temp_used_[name];
  if (hi < 0) hi = e->width - 1, lo = 0;
  for (int i = lo; i <= hi; ++i) used[i] = true;
  return name;
}

std::string ModuleEmitter::make_temp(const ExprPtr& e, const std::string& owner) {
  auto it = temp_of_.find(e.get());
  if (it != temp_of_.end()) return it->second;
  std::string body = top(e, owner, true);
  std::string name;
  do {
    name = fmt::format("{}_t{}", owner, temp_count_[owner]++);
  } while (names_.count(name));
  names_.insert(name);
  temp_of_[e.get()] = name;
  temp_order_.push_back(name);
  temp_used_[name].assign(e->width, false);
  temp_decls_ += fmt::format("  {} {};\n", decl_type(e->width, e->is_signed), name);
  temp_assigns_ += fmt::format("  assign {} = {};\n", name, body);
  return name;
}

std::string ModuleEmitter::expr(const ExprPtr& e, const std::string& owner, bool self_determined, bool root) {
  const auto& a = e->args;
  switch (e->op) {
    case Op::constant: return constant(e->const_name, e->value, e->is_signed);
    case Op::ref: return e->sig->name;
    case Op::bit_not: return "~" + operand(a[0], owner, false, e->op, Side::unary);
    case Op::neg: return "-" + operand(a[0], owner, false, e->op, Side::unary);
    case Op::logic_not: return "!" + operand(a[0], owner, true, e->op, Side::unary);
    case Op::mul: {
      if (!root || self_determined) return temp(e, owner);
      auto factor = [&](const ExprPtr& x) {
        return context_determined(x->op) ? temp(x, owner) : operand(x, owner, true, Op::mul, Side::left);
      };
      return factor(a[0]) + " * " + factor(a[1]);
    }
    case Op::bit_and: case Op::bit_or: case Op::bit_xor: case Op::add: case Op::sub:
    case Op::eq: case Op::ne: case Op::lt: case Op::le: case Op::gt: case Op::ge:
      return fmt::format("{} {} {}", operand(a[0], owner, false, e->op, Side::left), binop(e->op),
                         operand(a[1], owner, false, e->op, Side::right));
    case Op::shl: return fmt::format("{} << {}", operand(a[0], owner, false, e->op, Side::left), e->hi);
    case Op::shr:
      return fmt::format("{} {} {}", operand(a[0], owner, false, e->op, Side::left), e->is_signed ? ">>>" : ">>", e->hi);
    case Op::shl_dyn:
      return fmt::format("{} << {}", operand(a[0], owner, false, e->op, Side::left),
                         operand(a[1], owner, true, e->op, Side::right));
    case Op::shr_dyn:
      return fmt::format("{} {} {}", operand(a[0], owner, false, e->op, Side::left), e->is_signed ? ">>>" : ">>",
                         operand(a[1], owner, true, e->op, Side::right));
    case Op::red_and: return "&" + operand(a[0], owner, true, e->op, Side::unary);
    case Op::red_or: return "|" + operand(a[0], owner, true, e->op, Side::unary);
    case Op::red_xor: return "^" + operand(a[0], owner, true, e->op, Side::unary);
    case Op::mux:
      return fmt::format("{} ? {} : {}", operand(a[0], owner, true, e->op, Side::cond),
                         operand(a[1], owner, false, e->op, Side::then_branch),
                         operand(a[2], owner, false, e->op, Side::else_branch));
    case Op::slice: {
      std::string base = as_ref(a[0], owner, e->hi, e->lo);
      if (e->hi - e->lo + 1 == a[0]->width) return "$unsigned(" + base + ")";
      if (e->hi == e->lo) return fmt::format("{}[{}]", base, e->hi);
      return fmt::format("{}[{}:{}]", base, e->hi, e->lo);
    }
    case Op::cat: {
      std::vector<std::string> parts;
      for (const ExprPtr& p : a) parts.push_back(expr(p, owner, true));
      return "{" + fmt::format("{}", fmt::join(parts, ", ")) + "}";
    }
    case Op::repl: return fmt::format("{{{}{{{}}}}}", e->hi, expr(a[0], owner, true));
    case Op::zext: return fmt::format("{{{}'d0, {}}}", e->width - a[0]->width, expr(a[0], owner, true));
    case Op::sext: {
      std::string base = as_ref(a[0], owner);
      std::string msb = a[0]->width == 1 && !a[0]->is_signed ? base : fmt::format("{}[{}]", base, a[0]->width - 1);
      std::string s = fmt::format("{{{{{}{{{}}}}}, {}}}", e->width - a[0]->width, msb, base);
      return e->is_signed ? "$signed(" + s + ")" : s;
    }
    case Op::as_signed: return "$signed(" + expr(a[0], owner, true) + ")";
    case Op::as_unsigned: return "$unsigned(" + expr(a[0], owner, true) + ")";
  }
  return "?";
}

void ModuleEmitter::mark_bits(const SignalNode* s, int hi, int lo) {
  auto& v = used_[s];
  if (v.empty()) v.assign(s->width, false);
  for (int i = lo; i <= hi; ++i) v[i] = true;
}

void ModuleEmitter::note_use(const ExprPtr& e) {
  if (e->op == Op::ref) {
    mark_bits(e->sig.get(), e->width - 1, 0);
    return;
  }
  if (e->op == Op::slice && e->args[0]->op == Op::ref) {
    mark_bits(e->args[0]->sig.get(), e->hi, e->lo);
    return;
  }
  for (const ExprPtr& x : e->args) note_use(x);
}

bool ModuleEmitter::touches_stmt(const Stmt& st, const SignalNode* s) const {
  switch (st.kind) {
    case Stmt::Kind::connect: return st.target.get() == s;
    case Stmt::Kind::when: return touches(st.then_body, s) || touches(st.else_body, s);
    case Stmt::Kind::switch_:
      for (const SwitchCase& c : st.cases)
        if (touches(c.body, s)) return true;
      return touches(st.default_body, s);
  }
  return false;
}

bool ModuleEmitter::touches(const Block& b, const SignalNode* s) const {
  for (const auto& st : b)
    if (touches_stmt(*st, s)) return true;
  return false;
}

void ModuleEmitter::block(const Block& b, const SignalNode* s, int ind, bool nb, std::string& out) {
  std::string pad(ind * 2, ' ');
  for (const auto& st : b) {
    switch (st->kind) {
      case Stmt::Kind::connect:
        if (st->target.get() == s)
          out += fmt::format("{}{} {} {};\n", pad, s->name, nb ? "<=" : "=", top(st->value, s->name, true));
        break;
      case Stmt::Kind::when: {
        if (!touches_stmt(*st, s)) break;
        const Stmt* w = st.get();
        out += fmt::format("{}if ({}) begin\n", pad, top(w->cond, s->name, false));
        block(w->then_body, s, ind + 1, nb, out);
        // Flatten else-if chains built by elsewhen().
        while (w->else_body.size() == 1 && w->else_body[0]->kind == Stmt::Kind::when && touches(w->else_body, s)) {
          w = w->else_body[0].get();
          out += fmt::format("{}end else if ({}) begin\n", pad, top(w->cond, s->name, false));
          block(w->then_body, s, ind + 1, nb, out);
        }
        if (touches(w->else_body, s)) {
          out += pad + "end else begin\n";
          block(w->else_body, s, ind + 1, nb, out);
        }
        out += pad + "end\n";
        break;
      }
      case Stmt::Kind::switch_: {
        if (!touches_stmt(*st, s)) break;
        out += fmt::format("{}case ({})\n", pad, top(st->subject, s->name, false));
        for (const SwitchCase& c : st->cases) {
          std::vector<std::string> vals;
          for (size_t k = 0; k < c.values.size(); ++k) vals.push_back(constant(c.names[k], c.values[k], false));
          out += fmt::format("{}  {}: begin\n", pad, fmt::join(vals, ", "));
          block(c.body, s, ind + 2, nb, out);
          out += pad + "  end\n";
        }
        out += pad + "  default: begin\n";
        block(st->default_body, s, ind + 2, nb, out);
        out += pad + "  end\n";
        out += pad + "endcase\n";
        break;
      }
    }
  }
}

std::string ModuleEmitter::driver(const SignalPtr& s) {
  const SignalNode* sp = s.get();
  if (!touches(m_.body(), sp)) return {};
  if (s->kind == SigKind::reg) {
    std::string out = fmt::format("  always_ff @(posedge {}) begin\n", s->clock ? s->clock->name : std::string("clk"));
    int ind = 2;
    if (s->reset) {
      out += fmt::format("    if (rst) begin\n      {} <= {};\n    end else", s->name,
                         constant(s->reset_name, *s->reset, s->is_signed));
      if (s->enable) {
        out += fmt::format(" if ({}) begin\n", top(s->enable, s->name, false));
      } else {
        out += " begin\n";
      }
      ind = 3;
    } else if (s->enable) {
      out += fmt::format("    if ({}) begin\n", top(s->enable, s->name, false));
      ind = 3;
    }
    block(m_.body(), sp, ind, true, out);
    if (ind == 3) out += "    end\n";
    out += "  end\n";
    return out;
  }
  // A single unconditional connect is a continuous assignment; anything else is always_comb.
  const auto& b = m_.body();
  int n_connect = 0;
  const Stmt* only = nullptr;
  bool conditional = false;
  for (const auto& st : b) {
    if (st->kind == Stmt::Kind::connect) {
      if (st->target.get() == sp) ++n_connect, only = st.get();
    } else if (touches_stmt(*st, sp)) {
      conditional = true;
    }
  }
  if (!conditional && n_connect == 1) return fmt::format("  assign {} = {};\n", s->name, top(only->value, s->name, true));
  std::string out = "  always_comb begin\n";
  block(b, sp, 2, false, out);
  out += "  end\n";
  return out;
}

std::string ModuleEmitter::memory(const Memory& mem) {
  std::string out;
  for (const MemWritePort& w : mem.writes) {
    out += "  always_ff @(posedge clk) begin\n";
    out += fmt::format("    if ({}) begin\n", top(w.enable, mem.name, false));
    out += fmt::format("      {}[{}] <= {};\n", mem.name, expr(w.addr, mem.name, true), expr(w.data, mem.name, false, true));
    out += "    end\n  end\n";
  }
  for (const MemReadPort& r : mem.reads) {
    out += "  always_ff @(posedge clk) begin\n";
    out += fmt::format("    if ({}) begin\n", top(r.enable, r.data->name, false));
    out += fmt::format("      {} <= {}[{}];\n", r.data->name, mem.name, expr(r.addr, r.data->name, true));
    out += "    end\n  end\n";
  }
  return out;
}

std::string ModuleEmitter::instance(const Instance& inst) {
  std::vector<std::string> child_ports;
  for (const SignalPtr& cs : inst.def->signals())
    if (cs->kind == SigKind::input || cs->kind == SigKind::output) child_ports.push_back(cs->name);
  // Clock and reset first, as the child declares them.
  std::vector<size_t> order;
  for (size_t i = 0; i < child_ports.size(); ++i)
    if (child_ports[i] == "clk" || child_ports[i] == "rst") order.push_back(i);
  for (size_t i = 0; i < child_ports.size(); ++i)
    if (child_ports[i] != "clk" && child_ports[i] != "rst") order.push_back(i);
  size_t w = 0;
  for (const std::string& p : child_ports) w = std::max(w, p.size());
  std::string out = fmt::format("  {} {} (\n", inst.def->name(), inst.name);
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    out += fmt::format("    .{:<{}} ({}){}\n", child_ports[i], w, inst.ports[i]->name, k + 1 < order.size() ? "," : "");
  }
  out += "  );\n";
  return out;
}

std::string ModuleEmitter::run() {
  // Logic first (it may create temporaries), declarations printed above it.
  std::string logic = m_.verbatim_body();  // a primitive's text reads every input
  if (!logic.empty())
    for (const SignalPtr& s : m_.signals())
      if (s->kind == SigKind::input) mark_bits(s.get(), s->width - 1, 0);
  for (const SignalPtr& s : m_.signals()) {
    if (s->kind == SigKind::input || s->kind == SigKind::inst_out || s->kind == SigKind::mem_read) continue;
    logic += driver(s);
  }
  std::string mems;
  for (const auto& mem : m_.memories()) mems += memory(*mem);
  std::string insts;
  for (const auto& inst : m_.instances()) {
    if (!insts.empty()) insts += '\n';
    insts += instance(*inst);
  }
  const std::vector<std::string> unused = unread_bits();

  std::string out = header() + port_list();
  std::string sink;
  const std::string decls = declarations(unused, sink);
  if (!decls.empty()) out += "\n" + decls;
  if (!temp_assigns_.empty()) out += "\n" + temp_assigns_;
  if (!logic.empty()) out += "\n" + logic;
  if (!mems.empty()) out += "\n" + mems;
  if (!insts.empty()) out += "\n" + insts;
  if (!sink.empty()) out += "\n" + sink;
  out += "endmodule\n\n`default_nettype wire\n";
  return wrap_long_lines(out);
}

// Bit-level read analysis: the ranges of signals and temporaries nothing reads (for the sink).
std::vector<std::string> ModuleEmitter::unread_bits() {
  std::function<void(const Block&)> uses = [&](const Block& b) {
    for (const auto& st : b) {
      if (st->value) note_use(st->value);
      if (st->cond) note_use(st->cond);
      if (st->subject) note_use(st->subject);
      uses(st->then_body);
      uses(st->else_body);
      for (const SwitchCase& c : st->cases) uses(c.body);
      uses(st->default_body);
    }
  };
  uses(m_.body());
  for (const SignalPtr& s : m_.signals()) {
    if (s->enable) note_use(s->enable);
    if (s->kind == SigKind::reg && s->reset) mark_bits(m_.reset().get(), 0, 0);
    if (s->kind == SigKind::reg) mark_bits(s->clock ? s->clock.get() : m_.clock().get(), 0, 0);
  }
  for (const auto& mem : m_.memories()) {
    mark_bits(m_.clock().get(), 0, 0);
    for (const auto& w : mem->writes) note_use(w.addr), note_use(w.data), note_use(w.enable);
    for (const auto& r : mem->reads) note_use(r.addr), note_use(r.enable);
  }
  for (const auto& inst : m_.instances())
    for (const SignalPtr& p : inst->ports)
      if (p->kind == SigKind::inst_in || p->kind == SigKind::input) mark_bits(p.get(), p->width - 1, 0);
  std::vector<std::string> unused;
  for (const SignalPtr& s : m_.signals()) {
    if (s->kind == SigKind::output || s->kind == SigKind::inst_in) continue;
    auto it = used_.find(s.get());
    unread_ranges(s->name, it == used_.end() ? std::vector<bool>(s->width, false) : it->second, unused);
  }
  for (const std::string& t : temp_order_) unread_ranges(t, temp_used_[t], unused);
  return unused;
}

// The file's comment header: what made the module, from which parameters.
std::string ModuleEmitter::header() const {
  std::string out;
  out += "// Generated by fetta rtl_gen. Do not edit: change the generator and regenerate.\n";
  out += fmt::format("// module     : {}\n", m_.name());
  out += fmt::format("// generator  : {} ({})\n", m_.generator(), m_.origin().str());
  std::vector<std::string> ps;
  for (const auto& [k, v] : m_.params()) ps.push_back(k + "=" + v);
  out += fmt::format("// parameters : {}\n", ps.empty() ? "(none)" : fmt::format("{}", fmt::join(ps, ", ")));
  if (!m_.simulation_view().empty()) out += fmt::format("// view       : simulation: {}\n", m_.simulation_view());
  for (const std::string& c : m_.comments()) out += "// " + c + "\n";
  out += "`default_nettype none\n\n";
  return out;
}

// `module name ( ... );`: the clock and reset first, then the ports in declaration order.
std::string ModuleEmitter::port_list() const {
  std::vector<const SignalNode*> ports;
  for (const SignalPtr& s : m_.signals())
    if ((s == m_.clock() || s == m_.reset())) ports.push_back(s.get());
  for (const SignalPtr& s : m_.signals())
    if ((s->kind == SigKind::input || s->kind == SigKind::output) && s != m_.clock() && s != m_.reset())
      ports.push_back(s.get());
  size_t tw = 0;
  for (const SignalNode* p : ports) tw = std::max(tw, decl_type(p->width, p->is_signed).size());
  std::string out = fmt::format("module {} (\n", m_.name());
  for (size_t i = 0; i < ports.size(); ++i) {
    const SignalNode* p = ports[i];
    out += fmt::format("  {:<6} {:<{}} {}{}\n", p->kind == SigKind::input ? "input" : "output",
                       decl_type(p->width, p->is_signed), tw, p->name, i + 1 < ports.size() ? "," : "");
  }
  out += ");\n";
  return out;
}

// Constants, signals, memories and temporaries, and the sink of unread bits (its assign in `sink`).
std::string ModuleEmitter::declarations(const std::vector<std::string>& unused, std::string& sink) {
  std::string decls;
  for (const ExprPtr& c : m_.constants())
    if (used_constants_.count(c->const_name))
      decls += fmt::format("  localparam {} {} = {};\n", decl_type(c->width, false), c->const_name, c->value.to_sv(false));
  for (const SignalPtr& s : m_.signals()) {
    if (s->kind == SigKind::input || s->kind == SigKind::output) continue;
    decls += fmt::format("  {} {};\n", decl_type(s->width, s->is_signed), s->name);
  }
  for (const auto& mem : m_.memories())
    decls += fmt::format("  {} {} [0:{}];\n", decl_type(mem->width, false), mem->name, mem->depth - 1);
  decls += temp_decls_;
  if (!unused.empty()) {
    std::string name = "unused_bits";
    for (int k = 1; names_.count(name); ++k) name = fmt::format("unused_bits_{}", k);
    decls += fmt::format("  logic {};\n", name);
    sink = fmt::format("  // Bits no logic here reads (the interface keeps them); collected so lint stays clean.\n"
                       "  assign {} = ^{{{}}};\n",
                       name, fmt::join(unused, ", "));
  }
  return decls;
}

}  // namespace

std::string emit_module(const Module& m) { return ModuleEmitter(m).run(); }

std::string wrap_long_lines(const std::string& text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    out += wrap_line(text.substr(pos, nl - pos));
    if (nl < text.size()) out += '\n';
    pos = nl + 1;
  }
  return out;
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

namespace {
// Leaves a file untouched when its content would not change, so build systems that depend on
// the emitted RTL (Verilated models) do not rebuild after a generator run that changed nothing.
void write_if_changed(const std::filesystem::path& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::string old((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (old == text) return;
    }
  }
  std::ofstream(path, std::ios::binary) << text;
}
}  // namespace

EmitResult write_design(const Design& d, const std::string& top, const std::filesystem::path& dir, const ParamList& info) {
  std::filesystem::create_directories(dir);
  EmitResult res;
  res.dir = dir;
  res.top = top;
  nlohmann::ordered_json manifest;
  manifest["top"] = top;
  manifest["generator"] = "fetta rtl_gen";
  nlohmann::ordered_json cfg = nlohmann::ordered_json::object();
  for (const auto& [k, v] : info) cfg[k] = v;
  manifest["config"] = cfg;
  if (d.view() == View::simulation) manifest["view"] = to_string(d.view());
  manifest["clock_gating"] = to_string(d.clock_gating());
  manifest["modules"] = nlohmann::ordered_json::array();
  std::string filelist;
  for (const auto& m : d.hierarchy(top)) {
    std::string text = emit_module(*m);
    EmittedFile f{m->name(), m->name() + ".sv", sha256_hex(text), text.size()};
    write_if_changed(dir / f.file, text);
    filelist += f.file + "\n";
    nlohmann::ordered_json params = nlohmann::ordered_json::object();
    for (const auto& [k, v] : m->params()) params[k] = v;
    manifest["modules"].push_back({{"name", f.module}, {"file", f.file}, {"generator", m->generator()},
                                   {"source", m->origin().str()}, {"parameters", params}, {"sha256", f.sha256}});
    if (!m->simulation_view().empty()) {
      manifest["modules"].back()["view"] = m->simulation_view();
      manifest["modules"].back()["view_latency"] = m->view_latency();
    }
    res.files.push_back(f);
  }
  write_if_changed(dir / "filelist.f", filelist);
  write_if_changed(dir / "manifest.json", manifest.dump(2) + "\n");
  return res;
}

}  // namespace fetta::rtl
