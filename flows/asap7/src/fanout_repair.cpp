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

namespace {

// The netlist as read: declarations (every vector's range, the ports in order) and the cell
// instances with their place in the text, which the writer copies around.
struct Netlist {
  std::map<std::string, Range> ranges;
  std::vector<std::pair<std::string, bool>> ports;  // (name, is_output), declaration order
  std::vector<Instance> insts;
  size_t decl_end = 0;  // the text's offset after the last declaration
};

// The bits of `r`: a whole vector's, msb first, else `r` itself.
void expand_bits(const std::map<std::string, Range>& ranges, const std::string& r, std::vector<std::string>& bits) {
  auto it = ranges.find(r);
  if (it == ranges.end() || !it->second.vector) {
    bits.push_back(r);
    return;
  }
  const Range& rg = it->second;
  for (int i = rg.msb;; i += rg.msb >= rg.lsb ? -1 : 1) {
    bits.push_back(fmt::format("{}[{}]", r, i));
    if (i == rg.lsb) break;
  }
}

class NetlistReader {
 public:
  NetlistReader(const std::string& text, const std::string& path) : lx_(text, path) {}

  Netlist read(const std::string& top) {
    Token t = lx_.next();
    while (!t.text.empty() && t.text != "module") t = lx_.next();
    Token name = lx_.next();
    if (name.text != top) lx_.fail(name.line, fmt::format("expected module {}, found '{}'", top, name.text));
    while (!t.text.empty() && t.text != ";") t = lx_.next();  // the port list
    n_.decl_end = lx_.pos();
    for (;;) {
      const size_t stmt_begin = lx_.pos();
      t = lx_.next();
      if (t.text.empty()) lx_.fail(t.line, "no endmodule");
      if (t.text == "endmodule") break;
      if (t.text == "assign") lx_.fail(t.line, "an assign statement (the flow writes none after splitnets and insbuf)");
      if (t.text == "input" || t.text == "output" || t.text == "inout" || t.text == "wire")
        declaration(t);
      else
        n_.insts.push_back(instance(t, stmt_begin));
    }
    return std::move(n_);
  }

 private:
  void expect(const std::string& want) {
    Token t = lx_.next();
    if (t.text != want) lx_.fail(t.line, fmt::format("expected '{}', found '{}'", want, t.text));
  }

  void declaration(const Token& kind) {
    if (!n_.insts.empty()) lx_.fail(kind.line, "a declaration after the first cell instance");
    Range r;
    Token n = lx_.next();
    if (n.text == "[") {
      r.msb = std::stoi(lx_.next().text);
      expect(":");
      r.lsb = std::stoi(lx_.next().text);
      expect("]");
      r.vector = true;
      n = lx_.next();
    }
    n_.ranges[n.text] = r;
    if (kind.text == "input" || kind.text == "output") n_.ports.emplace_back(n.text, kind.text == "output");
    expect(";");
    n_.decl_end = lx_.pos();
  }

  // A net: a name, or a bit of a vector (name [ n ]); `after` is the token that follows.
  std::string ref(const Token& first, Token& after) {
    std::string r = first.text;
    after = lx_.next();
    if (after.text == "[") {
      r += "[" + lx_.next().text + "]";
      expect("]");
      after = lx_.next();
    }
    return r;
  }

  // .PIN(CONN) after the '.': a net, a concatenation or nothing.
  Conn connection() {
    Conn c;
    c.pin = lx_.next().text;
    expect("(");
    Token v = lx_.next();
    Token after;
    if (v.text == "{") {
      c.concat = true;
      Token e = lx_.next();
      for (;;) {
        expand_bits(n_.ranges, ref(e, after), c.bits);
        if (after.text == "}") break;
        if (after.text != ",")
          lx_.fail(after.line, fmt::format("expected ',' or '}}' in a concatenation, found '{}'", after.text));
        e = lx_.next();
      }
      after = lx_.next();
    } else if (v.text == ")") {
      after = v;  // unconnected
    } else {
      expand_bits(n_.ranges, ref(v, after), c.bits);
      if (c.bits.size() > 1) c.concat = true;
    }
    if (after.text != ")") lx_.fail(after.line, fmt::format("expected ')' after pin {}, found '{}'", c.pin, after.text));
    return c;
  }

  // TYPE NAME ( .PIN(CONN), ... );
  Instance instance(const Token& type, size_t begin) {
    Instance in;
    in.type = type.text;
    in.name = lx_.next().text;
    in.begin = begin;
    expect("(");
    Token p = lx_.next();
    while (p.text == ".") {
      in.conns.push_back(connection());
      p = lx_.next();
      if (p.text == ",") p = lx_.next();
    }
    if (p.text != ")") lx_.fail(p.line, fmt::format("expected ')' closing instance {}, found '{}'", in.name, p.text));
    expect(";");
    in.end = lx_.pos();
    return in;
  }

  Lexer lx_;
  Netlist n_;
};

// Every net's sinks (cell input pins, and the output ports at the SDC's load), and which nets a
// tie cell drives.
struct NetLoads {
  std::unordered_map<std::string, std::vector<Sink>> sinks;
  std::unordered_map<std::string, bool> tie_driven;
};

NetLoads net_loads(const Netlist& n, const CellLibrary& lib, const std::string& path) {
  NetLoads nl;
  for (size_t i = 0; i < n.insts.size(); ++i) {
    const Instance& in = n.insts[i];
    auto cell = lib.find(in.type);
    if (cell == lib.end())
      throw std::runtime_error(
          fmt::format("{}: netlist: cell type {} of instance {} is in no library", path, in.type, in.name));
    for (size_t k = 0; k < in.conns.size(); ++k) {
      const Conn& c = in.conns[k];
      auto pin = cell->second.pins.find(c.pin);
      if (pin == cell->second.pins.end())
        throw std::runtime_error(
            fmt::format("{}: netlist: cell {} has no pin {} (instance {})", path, in.type, c.pin, in.name));
      for (size_t b = 0; b < c.bits.size(); ++b) {
        const std::string& net = c.bits[b];
        if (is_constant(net)) continue;
        if (pin->second.output) {
          if (cell->second.tie) nl.tie_driven[net] = true;
        } else {
          nl.sinks[net].push_back({i, k, b, pin->second.cap_ff});
        }
      }
    }
  }
  const double port_load = 4.0;  // an output port: the SDC's load
  const size_t port_inst = n.insts.size();
  for (const auto& [port, output] : n.ports) {
    if (!output) continue;
    std::vector<std::string> bits;
    expand_bits(n.ranges, port, bits);
    for (const std::string& b : bits) nl.sinks[b].push_back({port_inst, 0, 0, port_load});
  }
  return nl;
}

// The nets over the limits, sorted; the worst fanout into `st`.
std::vector<std::string> nets_over_limits(const NetLoads& nl, const std::string& clock, const FanoutLimits& limits,
                                          FanoutRepairStats& st) {
  std::vector<std::string> over;
  for (const auto& [net, ss] : nl.sinks) {
    const auto fanout = static_cast<long long>(ss.size());
    if (fanout > st.worst_fanout || (fanout == st.worst_fanout && net < st.worst_net)) {
      st.worst_fanout = fanout;
      st.worst_net = net;
    }
    if (net == clock || nl.tie_driven.count(net)) continue;
    double load = 0;
    for (const Sink& s : ss) load += s.cap;
    if (static_cast<int>(ss.size()) > limits.max_fanout || load > limits.max_load_ff) over.push_back(net);
  }
  std::sort(over.begin(), over.end());
  return over;
}

// Buffer trees on the nets over the limits: the new wires and buffer instances, and the sinks'
// connections moved onto them.
class BufferInserter {
 public:
  BufferInserter(std::vector<Instance>& insts, const CellLibrary& lib, const FanoutLimits& limits,
                 FanoutRepairStats& st)
      : insts_(insts), limits_(limits), st_(st), port_inst_(insts.size()) {
    auto buf = lib.find(limits.buffer_cell);
    if (buf == lib.end())
      throw std::runtime_error(fmt::format("fanout repair: buffer cell {} is in no library", limits.buffer_cell));
    buf_area_ = buf->second.area_um2;
    buf_in_cap_ = buf->second.pins.count(limits.buffer_in) ? buf->second.pins.at(limits.buffer_in).cap_ff : 1.0;
  }

  void repair(const std::string& net, const std::vector<Sink>& sinks) {
    // Output ports stay on the net (a port cannot be renamed); every other sink is buffered.
    std::vector<Sink> level;
    for (const Sink& s : sinks)
      if (s.inst != port_inst_) level.push_back(s);
    std::stable_sort(level.begin(), level.end(),
                     [&](const Sink& a, const Sink& b) { return insts_[a.inst].name < insts_[b.inst].name; });
    // Each level's groups get a buffer; the buffers' inputs are the next level's sinks, until
    // the original driver is within the limits.
    while (!within_limits(level)) level = buffer_level(net, level);
    ++st_.nets_repaired;
    st_.buffer_area_um2 = static_cast<double>(st_.buffers) * buf_area_;
  }

  std::vector<std::string> new_wires;
  std::vector<Instance> new_bufs;

 private:
  bool within_limits(const std::vector<Sink>& level) const {
    double load = 0;
    for (const Sink& s : level) load += s.cap;
    return static_cast<int>(level.size()) <= limits_.max_fanout && load <= limits_.max_load_ff;
  }

  // Groups of at most max_fanout sinks and max_load_ff each, each behind a new buffer on `net`;
  // returns the buffers' inputs (inst = port_inst + 1 + index into new_bufs).
  std::vector<Sink> buffer_level(const std::string& net, const std::vector<Sink>& level) {
    std::vector<Sink> up;
    size_t i = 0;
    while (i < level.size()) {
      double g_load = 0;
      size_t j = i;
      while (j < level.size() && static_cast<int>(j - i) < limits_.max_fanout &&
             (j == i || g_load + level[j].cap <= limits_.max_load_ff)) {
        g_load += level[j].cap;
        ++j;
      }
      const size_t id = static_cast<size_t>(st_.buffers++);
      const std::string out_net = fmt::format("\\fanout_net_{}", id);
      new_wires.push_back(out_net);
      for (size_t k = i; k < j; ++k) reconnect(level[k], out_net);
      Instance b;
      b.type = limits_.buffer_cell;
      b.name = fmt::format("\\fanout_buf_{}", id);
      b.conns.push_back({limits_.buffer_in, {net}, false});
      b.conns.push_back({limits_.buffer_out, {out_net}, false});
      new_bufs.push_back(std::move(b));
      up.push_back({port_inst_ + new_bufs.size(), 0, 0, buf_in_cap_});
      i = j;
    }
    return up;
  }

  void reconnect(const Sink& s, const std::string& net) {
    if (s.inst > port_inst_) {
      new_bufs[s.inst - port_inst_ - 1].conns[s.conn].bits[s.bit] = net;
    } else {
      insts_[s.inst].conns[s.conn].bits[s.bit] = net;
      insts_[s.inst].changed = true;
    }
  }

  std::vector<Instance>& insts_;
  const FanoutLimits& limits_;
  FanoutRepairStats& st_;
  const size_t port_inst_;
  double buf_area_ = 0, buf_in_cap_ = 1.0;
};

// Header and declarations as read, the new wires, every instance (changed ones re-emitted), the
// buffers.
void write_netlist(const std::string& path, const std::string& text, const Netlist& n, const BufferInserter& b) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
  out << text.substr(0, n.decl_end) << "\n";
  for (const std::string& w : b.new_wires) out << "  wire " << emit_ref(w) << ";\n";
  size_t at = n.decl_end;
  for (const Instance& in : n.insts) {
    if (!in.changed) continue;
    out << text.substr(at, in.begin - at) << "\n" << emit_instance(in);
    at = in.end;
  }
  const size_t endmod = text.rfind("endmodule");
  out << text.substr(at, endmod - at) << "\n";
  for (const Instance& i : b.new_bufs) out << emit_instance(i);
  out << text.substr(endmod);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

}  // namespace

FanoutRepairStats repair_fanout(const std::string& in_path, const std::string& out_path, const std::string& top,
                                const std::string& clock, const CellLibrary& lib, const FanoutLimits& limits) {
  const std::string text = read_text(in_path);
  Netlist n = NetlistReader(text, in_path).read(top);
  const NetLoads loads = net_loads(n, lib, in_path);
  FanoutRepairStats st;
  const std::vector<std::string> over = nets_over_limits(loads, clock, limits, st);
  BufferInserter buffers(n.insts, lib, limits, st);
  for (const std::string& net : over) buffers.repair(net, loads.sinks.at(net));
  write_netlist(out_path, text, n, buffers);
  return st;
}

}  // namespace fetta::flows::synth
