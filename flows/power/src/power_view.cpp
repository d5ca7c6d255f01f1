#include "flows/power_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <stdexcept>

namespace fetta::flows::power {
namespace {

struct Group {
  std::string name, args;
  size_t begin = 0;  // the name's first character
  size_t open = 0;   // '{'
  size_t close = 0;  // its '}'
};

struct Attribute {
  size_t pos = 0, len = 0;  // the whole `key : value ;`
  std::string value;        // unquoted
};

struct Edit {
  size_t pos = 0, len = 0;
  std::string text;
};

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

// Liberty's group structure, found by brace matching; comments and strings are skipped so that
// braces inside them do not count. Everything else (attributes, values) stays text.
class Scanner {
 public:
  Scanner(const std::string& text, const std::string& what) : t_(text), what_(what) {}

  // The groups directly inside [from, to).
  std::vector<Group> children(size_t from, size_t to) const {
    std::vector<Group> out;
    for (size_t i = from; i < to;) {
      if (const size_t j = skip(i); j != i) {
        i = j;
        continue;
      }
      if (t_[i] == '}') fail(i, "'}' without its '{'");
      if (t_[i] != '{') {
        ++i;
        continue;
      }
      Group g = header(i);
      g.close = match(i);
      out.push_back(g);
      i = g.close + 1;
    }
    return out;
  }

  std::vector<Group> children(const Group& g) const { return children(g.open + 1, g.close); }

  // The attribute `key` written in g itself (not in its subgroups).
  std::optional<Attribute> own_attribute(const Group& g, const std::string& key) const {
    static std::map<std::string, std::regex> cache;
    auto it = cache.find(key);
    if (it == cache.end())
      it = cache.emplace(key, std::regex("(^|[^A-Za-z0-9_])(" + key + "\\s*:\\s*(\"[^\"]*\"|[^;{}]*?)\\s*;)")).first;
    size_t seg = g.open + 1;
    auto search = [&](size_t b, size_t e) -> std::optional<Attribute> {
      std::smatch m;
      const std::string part = t_.substr(b, e - b);
      if (!std::regex_search(part, m, it->second)) return std::nullopt;
      Attribute a{b + static_cast<size_t>(m.position(2)), static_cast<size_t>(m.length(2)), m.str(3)};
      if (a.value.size() >= 2 && a.value.front() == '"') a.value = a.value.substr(1, a.value.size() - 2);
      return a;
    };
    for (const Group& c : children(g)) {
      if (auto a = search(seg, c.begin)) return a;
      seg = c.close + 1;
    }
    return search(seg, g.close);
  }

  [[noreturn]] void fail(size_t at, const std::string& msg) const {
    const long line = 1 + std::count(t_.begin(), t_.begin() + static_cast<long>(std::min(at, t_.size())), '\n');
    throw std::runtime_error(fmt::format("{}:{}: {} (a power view needs Liberty's group syntax)", what_, line, msg));
  }

 private:
  // Past a comment or string starting at i; i itself when none starts there.
  size_t skip(size_t i) const {
    if (t_.compare(i, 2, "/*") == 0) {
      const size_t e = t_.find("*/", i + 2);
      if (e == std::string::npos) fail(i, "unterminated comment");
      return e + 2;
    }
    if (t_[i] == '"') {
      size_t j = i + 1;
      while (j < t_.size() && t_[j] != '"') j += t_[j] == '\\' ? 2 : 1;
      if (j >= t_.size()) fail(i, "unterminated string");
      return j + 1;
    }
    return i;
  }

  size_t match(size_t open) const {
    int depth = 0;
    for (size_t i = open; i < t_.size();) {
      if (const size_t j = skip(i); j != i) {
        i = j;
        continue;
      }
      if (t_[i] == '{') ++depth;
      if (t_[i] == '}' && --depth == 0) return i;
      ++i;
    }
    fail(open, "'{' without its '}'");
  }

  // `name (args)` right before the '{' at `open`.
  Group header(size_t open) const {
    Group g;
    g.open = open;
    size_t e = open;
    while (e > 0 && std::isspace(static_cast<unsigned char>(t_[e - 1]))) --e;
    if (e == 0 || t_[e - 1] != ')') fail(open, "a group without '(...)' before its '{'");
    const size_t lp = t_.rfind('(', e - 1);
    if (lp == std::string::npos) fail(open, "a group without '(' before its '{'");
    g.args = t_.substr(lp + 1, e - 2 - lp);
    size_t n = lp;
    while (n > 0 && std::isspace(static_cast<unsigned char>(t_[n - 1]))) --n;
    size_t b = n;
    while (b > 0 && ident_char(t_[b - 1])) --b;
    if (b == n) fail(open, "a group without a name");
    g.name = t_.substr(b, n - b);
    g.begin = b;
    return g;
  }

  const std::string& t_;
  const std::string& what_;
};

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t b = 0;
  while (b < s.size() && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  return s.substr(b);
}

struct BusType {
  int from = 0, to = 0;
};

}  // namespace

PowerView power_view(const std::string& text, const std::string& what, bool twin_logic) {
  const Scanner s(text, what);
  const std::vector<Group> top = s.children(0, text.size());
  const auto lib = std::find_if(top.begin(), top.end(), [](const Group& g) { return g.name == "library"; });
  if (lib == top.end()) s.fail(0, "no library group");

  std::map<std::string, BusType> types;
  const std::vector<Group> cells = s.children(*lib);
  for (const Group& g : cells) {
    if (g.name != "type") continue;
    const auto from = s.own_attribute(g, "bit_from"), to = s.own_attribute(g, "bit_to");
    if (from && to) types[trimmed(g.args)] = {std::stoi(from->value), std::stoi(to->value)};
  }

  PowerView view;
  std::vector<Edit> edits;
  for (const Group& cell : cells) {
    if (cell.name != "cell") continue;
    const std::string cell_name = trimmed(cell.args);
    const std::vector<Group> parts = s.children(cell);
    const bool sequential = std::any_of(parts.begin(), parts.end(), [](const Group& g) {
      return g.name == "ff" || g.name == "latch" || g.name == "ff_bank" || g.name == "latch_bank" || g.name == "statetable";
    });
    // An integrated clock gate: its gated clock's state_function over the latch's internal node
    // crashes OpenSTA 2.0.17's activity search, and any function over the gate's inputs would be
    // priced from their propagated estimates (the search overwrites an annotated output). The
    // gated clock becomes a twin input instead, which the run annotates from the traced latch.
    if (s.own_attribute(cell, "clock_gating_integrated_cell")) {
      for (const Group& pin : parts) {
        const auto state = pin.name == "pin" && s.own_attribute(pin, "clock_gate_out_pin")
                               ? s.own_attribute(pin, "state_function") : std::nullopt;
        if (!state) continue;
        const std::string twin = kTwinPrefix + trimmed(pin.args);
        edits.push_back({state->pos, state->len, fmt::format("function : \"{}\";", twin)});
        edits.push_back({pin.close + 1, 0, fmt::format("\n    pin ({}) {{ direction : input; capacitance : 0; }}", twin)});
        view.clock_gates.push_back({cell_name, trimmed(pin.args)});
      }
      continue;
    }
    for (const Group& pin : parts) {
      if (pin.name != "pin" && pin.name != "bus") continue;
      const auto dir = s.own_attribute(pin, "direction");
      if (!dir || trimmed(dir->value) != "output") continue;
      const std::string pin_name = trimmed(pin.args);
      const auto function = s.own_attribute(pin, "function");
      std::vector<Attribute> edge_arcs;
      bool bit_pins = false;
      for (const Group& g : s.children(pin)) {
        bit_pins |= g.name == "pin";
        if (g.name != "timing") continue;
        const auto type = s.own_attribute(g, "timing_type");
        if (type && (trimmed(type->value) == "rising_edge" || trimmed(type->value) == "falling_edge")) edge_arcs.push_back(*type);
      }
      auto make_combinational = [&] {
        for (const Attribute& a : edge_arcs) edits.push_back({a.pos, a.len, "timing_type : combinational;"});
      };
      const std::string f = function ? trimmed(function->value) : "";
      if (function && (f == "0" || f == "1")) {
        edits.push_back({function->pos, function->len, ""});
        view.constants.push_back({cell_name, pin_name, f == "1"});
      } else if (sequential && function && !edge_arcs.empty()) {
        make_combinational();
        view.clocked_arcs += static_cast<int>(edge_arcs.size());
      } else if (!sequential && !function && !edge_arcs.empty() && !bit_pins) {
        make_combinational();
        const std::string twin = kTwinPrefix + pin_name;
        if (pin.name == "pin") {
          edits.push_back({pin.open + 1, 0, fmt::format(" function : \"{}\";", twin)});
          edits.push_back({pin.close + 1, 0, fmt::format("\n    pin ({}) {{ direction : input; capacitance : 0; }}", twin)});
        } else {
          const auto bus_type = s.own_attribute(pin, "bus_type");
          const auto type = bus_type ? types.find(trimmed(bus_type->value)) : types.end();
          if (type == types.end())
            s.fail(pin.open, fmt::format("bus {} of cell {}: no type group for its bus_type", pin_name, cell_name));
          std::string bits;
          for (int i = std::min(type->second.from, type->second.to); i <= std::max(type->second.from, type->second.to); ++i)
            bits += fmt::format(" pin ({0}[{1}]) {{ function : \"{2}[{1}]\"; }}", pin_name, i, twin);
          edits.push_back({pin.close, 0, bits + " "});  // after bus_type, which the bits need
          edits.push_back({pin.close + 1, 0,
                           fmt::format("\n    bus ({}) {{ bus_type : {}; direction : input; capacitance : 0; }}", twin,
                                       trimmed(bus_type->value))});
        }
        view.macro_outputs.push_back({cell_name, pin_name});
      } else if (twin_logic && !sequential && function && pin.name == "pin") {
        const std::string twin = kTwinPrefix + pin_name;
        edits.push_back({function->pos, function->len, fmt::format("function : \"{}\";", twin)});
        edits.push_back({pin.close + 1, 0, fmt::format("\n    pin ({}) {{ direction : input; capacitance : 0; }}", twin)});
        view.logic_outputs.push_back({cell_name, pin_name});
      }
    }
  }
  // Applied back to front, so that every position still points into the original text.
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
  view.liberty = text;
  for (const Edit& e : edits) view.liberty.replace(e.pos, e.len, e.text);
  return view;
}

}  // namespace fetta::flows::power
