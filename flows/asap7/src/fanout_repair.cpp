#include "flows/fanout_repair.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "flows/synth_tools.hpp"

namespace fetta::flows::synth {

void add_cells(CellLibrary& lib, const LibertyGroup& library) {
  std::map<std::string, int> bus_width;
  for (const LibertyGroup* t : library.children("type"))
    if (const std::string* w = t->attribute("bit_width")) bus_width[t->args] = std::stoi(*w);
  for (const LibertyGroup* c : library.children("cell")) {
    CellInfo info;
    if (const std::string* a = c->attribute("area")) info.area_um2 = std::stod(*a);
    bool any_input = false;
    auto add_pin = [&](const LibertyGroup& p, int width) {
      PinInfo pin;
      const std::string* dir = p.attribute("direction");
      pin.output = dir && *dir == "output";
      if (const std::string* cap = p.attribute("capacitance")) pin.cap_ff = std::stod(*cap);
      pin.width = width;
      any_input = any_input || !pin.output;
      info.pins[p.args] = pin;
    };
    for (const LibertyGroup* p : c->children("pin")) add_pin(*p, 1);
    for (const LibertyGroup* b : c->children("bus")) {
      const std::string* type = b->attribute("bus_type");
      auto it = type ? bus_width.find(*type) : bus_width.end();
      add_pin(*b, it == bus_width.end() ? 1 : it->second);
    }
    info.tie = !any_input;  // TIEHI/TIELO: outputs only
    lib[c->args] = std::move(info);
  }
}

namespace {

// ---- a reader for the netlists Yosys writes (write_verilog -noattr after splitnets)

struct Token {
  std::string text;
  int line = 0;
};

class Lexer {
 public:
  Lexer(const std::string& s, std::string what) : s_(s), what_(std::move(what)) {}

  // The next token, or an empty text at the end.
  Token next() {
    skip();
    Token t;
    t.line = line_;
    if (i_ >= s_.size()) return t;
    const size_t b = i_;
    char c = s_[i_];
    if (c == '\\') {  // escaped identifier: up to white space
      while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$') {
      while (i_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '$'))
        ++i_;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {  // 12, 1'b0, 4'h0
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '\'')) ++i_;
    } else {
      ++i_;
    }
    t.text = s_.substr(b, i_ - b);
    return t;
  }
  size_t pos() const { return i_; }
  int line() const { return line_; }
  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw std::runtime_error(fmt::format("{}:{}: netlist: {}", what_, line, msg));
  }

 private:
  void skip() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t e = s_.find("*/", i_ + 2);
        for (size_t k = i_; k < std::min(e, s_.size()); ++k) line_ += s_[k] == '\n';
        i_ = e == std::string::npos ? s_.size() : e + 2;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '/') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  const std::string& s_;
  std::string what_;
  size_t i_ = 0;
  int line_ = 1;
};

bool is_constant(const std::string& ref) { return !ref.empty() && std::isdigit(static_cast<unsigned char>(ref[0])); }

// A pin's connection: one net per bit, most significant first (as written).
struct Conn {
  std::string pin;
  std::vector<std::string> bits;
  bool concat = false;  // written as { ... }
};

struct Instance {
  std::string type, name;
  std::vector<Conn> conns;
  size_t begin = 0, end = 0;  // the statement's text in the file
  bool changed = false;
};

struct Sink {
  size_t inst;  // instances.size() for a module output port
  size_t conn;
  size_t bit;
  double cap;
};

struct Range {
  int msb = 0, lsb = 0;
  bool vector = false;
};

std::string emit_ref(const std::string& r) { return r[0] == '\\' ? r + " " : r; }

std::string emit_instance(const Instance& in) {
  std::string s = fmt::format("  {} {} (\n", emit_ref(in.type), emit_ref(in.name));
  for (size_t k = 0; k < in.conns.size(); ++k) {
    const Conn& c = in.conns[k];
    std::string v;
    if (c.concat) {
      v = "{ ";
      for (size_t b = 0; b < c.bits.size(); ++b) v += (b ? ", " : "") + emit_ref(c.bits[b]);
      v += " }";
    } else if (!c.bits.empty()) {
      v = emit_ref(c.bits[0]);
    }
    s += fmt::format("    .{}({}){}\n", c.pin, v, k + 1 < in.conns.size() ? "," : "");
  }
  s += "  );\n";
  return s;
}

}  // namespace

FanoutRepairStats repair_fanout(const std::string& in_path, const std::string& out_path, const std::string& top,
                                const std::string& clock, const CellLibrary& lib, const FanoutLimits& limits) {
  const std::string text = read_text(in_path);
  Lexer lx(text, in_path);
  auto expect = [&](const std::string& want) {
    Token t = lx.next();
    if (t.text != want) lx.fail(t.line, fmt::format("expected '{}', found '{}'", want, t.text));
  };

  // Module header and declarations: the port directions and every vector's range.
  Token t = lx.next();
  while (!t.text.empty() && t.text != "module") t = lx.next();
  Token name = lx.next();
  if (name.text != top) lx.fail(name.line, fmt::format("expected module {}, found '{}'", top, name.text));
  while (!t.text.empty() && t.text != ";") t = lx.next();  // the port list
  std::map<std::string, Range> ranges;
  std::vector<std::pair<std::string, bool>> ports;  // (name, is_output), declaration order
  std::vector<Instance> insts;
  size_t decl_end = lx.pos();
  for (;;) {
    const size_t stmt_begin = lx.pos();
    t = lx.next();
    if (t.text.empty()) lx.fail(t.line, "no endmodule");
    if (t.text == "endmodule") break;
    if (t.text == "assign") lx.fail(t.line, "an assign statement (the flow writes none after splitnets and insbuf)");
    if (t.text == "input" || t.text == "output" || t.text == "inout" || t.text == "wire") {
      const std::string kind = t.text;
      if (!insts.empty()) lx.fail(t.line, "a declaration after the first cell instance");
      Range r;
      Token n = lx.next();
      if (n.text == "[") {
        r.msb = std::stoi(lx.next().text);
        expect(":");
        r.lsb = std::stoi(lx.next().text);
        expect("]");
        r.vector = true;
        n = lx.next();
      }
      ranges[n.text] = r;
      if (kind == "input" || kind == "output") ports.emplace_back(n.text, kind == "output");
      expect(";");
      decl_end = lx.pos();
      continue;
    }
    // A cell instance: TYPE NAME ( .PIN(CONN), ... );
    Instance in;
    in.type = t.text;
    in.name = lx.next().text;
    in.begin = stmt_begin;
    expect("(");
    Token p = lx.next();
    while (p.text == ".") {
      Conn c;
      c.pin = lx.next().text;
      expect("(");
      Token v = lx.next();
      // A net: a name, or a bit of a vector (name [ n ]).
      auto read_ref = [&](Token first, Token& after) {
        std::string r = first.text;
        after = lx.next();
        if (after.text == "[") {
          r += "[" + lx.next().text + "]";
          expect("]");
          after = lx.next();
        }
        return r;
      };
      auto expand = [&](const std::string& r, std::vector<std::string>& bits) {
        auto it = ranges.find(r);
        if (it != ranges.end() && it->second.vector) {  // a whole vector: its bits, msb first
          const Range& rg = it->second;
          for (int i = rg.msb;; i += rg.msb >= rg.lsb ? -1 : 1) {
            bits.push_back(fmt::format("{}[{}]", r, i));
            if (i == rg.lsb) break;
          }
        } else {
          bits.push_back(r);
        }
      };
      Token after;
      if (v.text == "{") {
        c.concat = true;
        Token e = lx.next();
        for (;;) {
          std::string r = read_ref(e, after);
          expand(r, c.bits);
          if (after.text == "}") break;
          if (after.text != ",") lx.fail(after.line, fmt::format("expected ',' or '}}' in a concatenation, found '{}'", after.text));
          e = lx.next();
        }
        after = lx.next();
      } else if (v.text == ")") {
        after = v;  // unconnected
      } else {
        std::string r = read_ref(v, after);
        expand(r, c.bits);
        if (c.bits.size() > 1) c.concat = true;
      }
      if (after.text != ")") lx.fail(after.line, fmt::format("expected ')' after pin {}, found '{}'", c.pin, after.text));
      in.conns.push_back(std::move(c));
      p = lx.next();
      if (p.text == ",") p = lx.next();
    }
    if (p.text != ")") lx.fail(p.line, fmt::format("expected ')' closing instance {}, found '{}'", in.name, p.text));
    expect(";");
    in.end = lx.pos();
    insts.push_back(std::move(in));
  }

  // Drivers and sinks of every net.
  std::unordered_map<std::string, std::vector<Sink>> sinks;
  std::unordered_map<std::string, bool> tie_driven;
  const size_t port_inst = insts.size();
  for (size_t i = 0; i < insts.size(); ++i) {
    const Instance& in = insts[i];
    auto cell = lib.find(in.type);
    if (cell == lib.end())
      throw std::runtime_error(fmt::format("{}: netlist: cell type {} of instance {} is in no library", in_path,
                                           in.type, in.name));
    for (size_t k = 0; k < in.conns.size(); ++k) {
      const Conn& c = in.conns[k];
      auto pin = cell->second.pins.find(c.pin);
      if (pin == cell->second.pins.end())
        throw std::runtime_error(
            fmt::format("{}: netlist: cell {} has no pin {} (instance {})", in_path, in.type, c.pin, in.name));
      for (size_t b = 0; b < c.bits.size(); ++b) {
        const std::string& net = c.bits[b];
        if (is_constant(net)) continue;
        if (pin->second.output) {
          if (cell->second.tie) tie_driven[net] = true;
        } else {
          sinks[net].push_back({i, k, b, pin->second.cap_ff});
        }
      }
    }
  }
  const double port_load = 4.0;  // an output port: the SDC's load
  for (const auto& [port, output] : ports) {
    if (!output) continue;
    std::vector<std::string> bits;
    const Range& r = ranges[port];
    if (r.vector)
      for (int i = r.msb;; i += r.msb >= r.lsb ? -1 : 1) {
        bits.push_back(fmt::format("{}[{}]", port, i));
        if (i == r.lsb) break;
      }
    else
      bits.push_back(port);
    for (const std::string& b : bits) sinks[b].push_back({port_inst, 0, 0, port_load});
  }

  // Nets over the limits, in a stable order.
  std::vector<std::string> over;
  FanoutRepairStats st;
  for (auto& [net, ss] : sinks) {
    if (static_cast<long long>(ss.size()) > st.worst_fanout || (static_cast<long long>(ss.size()) == st.worst_fanout && net < st.worst_net)) {
      st.worst_fanout = static_cast<long long>(ss.size());
      st.worst_net = net;
    }
    if (net == clock || tie_driven.count(net)) continue;
    double load = 0;
    for (const Sink& s : ss) load += s.cap;
    if (static_cast<int>(ss.size()) > limits.max_fanout || load > limits.max_load_ff) over.push_back(net);
  }
  std::sort(over.begin(), over.end());

  auto buf = lib.find(limits.buffer_cell);
  if (buf == lib.end()) throw std::runtime_error(fmt::format("fanout repair: buffer cell {} is in no library", limits.buffer_cell));
  const double buf_in_cap = buf->second.pins.count(limits.buffer_in) ? buf->second.pins.at(limits.buffer_in).cap_ff : 1.0;

  std::vector<std::string> new_wires;
  std::vector<Instance> new_bufs;
  for (const std::string& net : over) {
    // Output ports stay on the net (a port cannot be renamed); every other sink is buffered.
    std::vector<Sink> level;
    for (const Sink& s : sinks[net])
      if (s.inst != port_inst) level.push_back(s);
    std::stable_sort(level.begin(), level.end(), [&](const Sink& a, const Sink& b) {
      return insts[a.inst].name < insts[b.inst].name;
    });
    // Groups of at most max_fanout sinks and max_load_ff each get a buffer; the buffers' inputs
    // are the next level's sinks (inst = port_inst + 1 + index into new_bufs), until the
    // original driver is within the limits.
    for (;;) {
      double load = 0;
      for (const Sink& s : level) load += s.cap;
      if (static_cast<int>(level.size()) <= limits.max_fanout && load <= limits.max_load_ff) break;
      std::vector<Sink> up;
      size_t i = 0;
      while (i < level.size()) {
        double g_load = 0;
        size_t j = i;
        while (j < level.size() && static_cast<int>(j - i) < limits.max_fanout &&
               (j == i || g_load + level[j].cap <= limits.max_load_ff)) {
          g_load += level[j].cap;
          ++j;
        }
        const size_t id = static_cast<size_t>(st.buffers++);
        const std::string out_net = fmt::format("\\fanout_net_{}", id);
        new_wires.push_back(out_net);
        for (size_t k = i; k < j; ++k) {
          const Sink& s = level[k];
          if (s.inst > port_inst) {
            new_bufs[s.inst - port_inst - 1].conns[s.conn].bits[s.bit] = out_net;
          } else {
            insts[s.inst].conns[s.conn].bits[s.bit] = out_net;
            insts[s.inst].changed = true;
          }
        }
        Instance b;
        b.type = limits.buffer_cell;
        b.name = fmt::format("\\fanout_buf_{}", id);
        b.conns.push_back({limits.buffer_in, {net}, false});
        b.conns.push_back({limits.buffer_out, {out_net}, false});
        new_bufs.push_back(std::move(b));
        up.push_back({port_inst + new_bufs.size(), 0, 0, buf_in_cap});
        i = j;
      }
      level = std::move(up);
    }
    ++st.nets_repaired;
  }
  st.buffer_area_um2 = static_cast<double>(st.buffers) * buf->second.area_um2;

  // Write: header and declarations as read, the new wires, every instance (changed ones
  // re-emitted), the buffers.
  std::ofstream out(out_path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", out_path));
  out << text.substr(0, decl_end) << "\n";
  for (const std::string& w : new_wires) out << "  wire " << emit_ref(w) << ";\n";
  size_t at = decl_end;
  for (const Instance& in : insts) {
    if (!in.changed) continue;
    out << text.substr(at, in.begin - at) << "\n" << emit_instance(in);
    at = in.end;
  }
  const size_t endmod = text.rfind("endmodule");
  out << text.substr(at, endmod - at) << "\n";
  for (const Instance& b : new_bufs) out << emit_instance(b);
  out << text.substr(endmod);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", out_path));
  return st;
}

}  // namespace fetta::flows::synth
