#include "flows/liberty.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string_view>

namespace fetta::flows::synth {

namespace {

bool blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.'; }

std::string trim_quotes(std::string s) {
  while (!s.empty() && blank(s.back())) s.pop_back();
  size_t b = 0;
  while (b < s.size() && blank(s[b])) ++b;
  s = s.substr(b);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

// Recursive-descent reader of Liberty's group/attribute syntax: the only code that knows its
// lexical rules (comments, strings, line continuations). Everything else reads the tree, whose
// offsets say where each group and attribute is written.
class Parser {
 public:
  Parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  LibertyGroup library() {
    skip_blank();
    const int line = line_;
    LibertyGroup top;
    if (!statement(top) || top.groups.empty() || top.groups.front().name != "library") fail_at(line, "no library group");
    return std::move(top.groups.front());
  }

 private:
  [[noreturn]] void fail_at(int line, const std::string& msg) const {
    throw std::runtime_error(fmt::format("{}:{}: Liberty syntax: {}", what_, line, msg));
  }
  [[noreturn]] void fail(const std::string& msg) const { fail_at(line_, msg); }

  bool at(char c) const { return i_ < s_.size() && s_[i_] == c; }

  // The one place the position moves, so that lines are counted once.
  void step(size_t n = 1) {
    for (; n > 0 && i_ < s_.size(); --n)
      if (s_[i_++] == '\n') ++line_;
  }

  // Steps over the comment starting here; false if none does.
  bool skip_comment() {
    if (s_.compare(i_, 2, "/*") != 0) return false;
    const size_t e = s_.find("*/", i_ + 2);
    if (e == std::string::npos) fail("unterminated comment");
    step(e + 2 - i_);
    return true;
  }

  // The length of the line continuation starting here (a backslash and its line's end), or 0.
  size_t continuation_length() const {
    if (!at('\\') || i_ + 1 >= s_.size()) return 0;
    if (s_.compare(i_ + 1, 2, "\r\n") == 0) return 3;
    return s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r' ? 2 : 0;
  }

  // Whitespace, comments and line continuations.
  void skip_blank() {
    while (i_ < s_.size()) {
      if (const size_t n = continuation_length())
        step(n);
      else if (blank(s_[i_]))
        step();
      else if (!skip_comment())
        return;
    }
  }

  // The string starting here, quotes included, onto `out`; a backslash escapes the next character.
  void string_onto(std::string& out) {
    const int line = line_;
    const size_t b = i_;
    step();
    while (i_ < s_.size() && s_[i_] != '"') step(s_[i_] == '\\' ? 2 : 1);
    if (i_ >= s_.size()) fail_at(line, "unterminated string");
    step();
    out.append(s_, b, i_ - b);
  }

  // The text up to the first of `stops` outside strings, comments, nested parentheses and line
  // continuations (the stop itself is not read). Comments and the continuations' backslashes are
  // left out of it; their line ends stay.
  std::string text_until(std::string_view stops) {
    std::string out;
    int depth = 0;
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (depth == 0 && stops.find(c) != std::string_view::npos) break;
      if (c == '"') {
        string_onto(out);
      } else if (const size_t n = continuation_length()) {
        out.append(s_, i_ + 1, n - 1);
        step(n);
      } else if (!skip_comment()) {
        if (c == '(')
          ++depth;
        else if (c == ')' && depth > 0)
          --depth;
        out += c;
        step();
      }
    }
    return out;
  }

  // The inside of the parentheses opened here; steps past their ')'.
  std::string parenthesized() {
    const int line = line_;
    step();
    std::string inside = text_until(")");
    if (!at(')')) fail_at(line, "unterminated '('");
    step();
    return inside;
  }

  std::string identifier() {
    const size_t b = i_;
    while (i_ < s_.size() && name_char(s_[i_])) step();
    if (b == i_) fail(fmt::format("expected a name, found '{}'", s_[i_]));
    return s_.substr(b, i_ - b);
  }

  // `key : value` from the ':' on: the value runs to ';' or the end of the line.
  LibertyAttribute simple_attribute(std::string key, size_t begin) {
    step();
    skip_blank();
    std::string value = trim_quotes(text_until(";\n}"));
    if (at(';')) step();
    return {std::move(key), std::move(value), begin, i_};
  }

  // The statements of group `g` from its '{' (here) through its '}'.
  LibertyGroup group_body(LibertyGroup g) {
    g.open = i_;
    step();
    while (statement(g)) {
    }
    if (!at('}')) fail_at(g.line, fmt::format("group '{} ({})' is not closed", g.name, g.args));
    g.close = i_;
    step();
    return g;
  }

  // One statement into `parent`; false at '}' or the end of the text.
  bool statement(LibertyGroup& parent) {
    skip_blank();
    if (i_ >= s_.size() || at('}')) return false;
    const int line = line_;
    const size_t begin = i_;
    std::string name = identifier();
    skip_blank();
    if (at(':')) {
      parent.attributes.push_back(simple_attribute(std::move(name), begin));
      return true;
    }
    if (!at('(')) fail(fmt::format("expected ':' or '(' after '{}'", name));
    const size_t args_begin = i_ + 1;
    std::string args = parenthesized();
    const size_t args_end = i_ - 1;
    skip_blank();
    if (at('{')) {
      LibertyGroup g;
      g.name = std::move(name);
      g.args = trim_quotes(std::move(args));
      g.line = line;
      g.begin = begin;
      g.args_begin = args_begin;
      g.args_end = args_end;
      parent.groups.push_back(group_body(std::move(g)));
      return true;
    }
    size_t end = args_end + 1;
    if (at(';')) {
      step();
      end = i_;
    }
    parent.attributes.push_back({std::move(name), std::move(args), begin, end});
    return true;
  }

  const std::string& s_;
  std::string what_;
  size_t i_ = 0;
  int line_ = 1;
};

std::vector<double> numbers(const std::string& text) {
  std::vector<double> out;
  const char* p = text.c_str();
  while (*p) {
    if (std::isdigit(static_cast<unsigned char>(*p)) || *p == '-' || *p == '+' || *p == '.') {
      char* end = nullptr;
      double v = std::strtod(p, &end);
      if (end != p) {
        out.push_back(v);
        p = end;
        continue;
      }
    }
    ++p;
  }
  return out;
}

// Position of x in a sorted axis: the segment [k, k+1] and the fraction inside it (clamped).
std::pair<size_t, double> locate(const std::vector<double>& axis, double x) {
  if (axis.size() < 2) return {0, 0.0};
  if (x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  size_t k = 0;
  while (k + 2 < axis.size() && x > axis[k + 1]) ++k;
  return {k, (x - axis[k]) / (axis[k + 1] - axis[k])};
}

// A cell's text in its library: from the start of the line its name is on through the end of the
// line of its '}', so that what is written beside it moves with it, but never into the library's
// header, another cell or the library's '}'.
struct CellSpan {
  std::string name;
  size_t begin = 0;
  size_t end = 0;
};

std::vector<CellSpan> cell_spans(const std::string& text, const LibertyGroup& library) {
  const std::vector<const LibertyGroup*> cells = library.children("cell");
  std::vector<CellSpan> out;
  size_t floor = library.open + 1;
  for (size_t k = 0; k < cells.size(); ++k) {
    const LibertyGroup& c = *cells[k];
    const size_t line_begin = text.rfind('\n', c.begin);
    const size_t line_end = text.find('\n', c.close);
    const size_t ceiling = k + 1 < cells.size() ? cells[k + 1]->begin : library.close;
    const size_t begin = std::max(floor, line_begin == std::string::npos ? 0 : line_begin + 1);
    const size_t end = std::min(ceiling, line_end == std::string::npos ? text.size() : line_end + 1);
    out.push_back({c.args, begin, end});
    floor = end;
  }
  return out;
}

}  // namespace

const LibertyAttribute* LibertyGroup::find_attribute(const std::string& key) const {
  for (const LibertyAttribute& a : attributes)
    if (a.key == key) return &a;
  return nullptr;
}

const std::string* LibertyGroup::attribute(const std::string& key) const {
  const LibertyAttribute* a = find_attribute(key);
  return a ? &a->value : nullptr;
}

std::vector<const LibertyGroup*> LibertyGroup::children(const std::string& group_name) const {
  std::vector<const LibertyGroup*> out;
  for (const LibertyGroup& g : groups)
    if (g.name == group_name) out.push_back(&g);
  return out;
}

const LibertyGroup* LibertyGroup::child(const std::string& group_name, const std::string& group_args) const {
  for (const LibertyGroup& g : groups)
    if (g.name == group_name && g.args == group_args) return &g;
  return nullptr;
}

LibertyGroup parse_liberty(const std::string& text, const std::string& what) { return Parser(text, what).library(); }

std::string merge_liberty(const std::vector<std::string>& texts, const std::string& name) {
  if (texts.empty()) throw std::invalid_argument("merge_liberty: no library given");
  std::string out;
  std::set<std::string> seen;
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& s = texts[t];
    const LibertyGroup library = parse_liberty(s, fmt::format("merge_liberty: library {}", t));
    const std::vector<CellSpan> cells = cell_spans(s, library);
    if (cells.empty()) throw std::runtime_error(fmt::format("merge_liberty: library {} has no cell", t));
    if (t == 0)
      out = s.substr(0, library.args_begin) + name + s.substr(library.args_end, cells.front().begin - library.args_end);
    for (const CellSpan& c : cells) {
      if (!seen.insert(c.name).second) throw std::runtime_error(fmt::format("merge_liberty: cell {} defined twice", c.name));
      out.append(s, c.begin, c.end - c.begin);
    }
  }
  out += "}\n";
  return out;
}

std::vector<std::string> liberty_cell_names(const std::string& text) {
  const LibertyGroup library = parse_liberty(text, "Liberty text");
  std::vector<std::string> out;
  for (const LibertyGroup* c : library.children("cell")) out.push_back(c->args);
  return out;
}

double table_lookup(const LibertyGroup& table, double x1, double x2) {
  const std::string* i1 = table.attribute("index_1");
  const std::string* i2 = table.attribute("index_2");
  const std::string* vs = table.attribute("values");
  if (!i1 || !i2 || !vs) throw std::runtime_error(fmt::format("Liberty table '{}' is not a 2-D table", table.name));
  std::vector<double> a1 = numbers(*i1), a2 = numbers(*i2), v = numbers(*vs);
  if (a1.empty() || a2.empty() || v.size() != a1.size() * a2.size())
    throw std::runtime_error(fmt::format("Liberty table '{}' has {} values for a {}x{} grid", table.name, v.size(),
                                         a1.size(), a2.size()));
  auto at = [&](size_t r, size_t c) { return v[r * a2.size() + c]; };
  auto [r, fr] = locate(a1, x1);
  auto [c, fc] = locate(a2, x2);
  if (a1.size() == 1) fr = 0;
  if (a2.size() == 1) fc = 0;
  size_t r1 = std::min(r + 1, a1.size() - 1), c1 = std::min(c + 1, a2.size() - 1);
  double top = at(r, c) * (1 - fc) + at(r, c1) * fc;
  double bottom = at(r1, c) * (1 - fc) + at(r1, c1) * fc;
  return top * (1 - fr) + bottom * fr;
}

FlopTiming flop_timing(const LibertyGroup& library, const std::string& cell, double slew_ps, double load_ff) {
  const LibertyGroup* c = library.child("cell", cell);
  if (!c) throw std::runtime_error(fmt::format("flip-flop cell {} is not in library {}", cell, library.args));
  FlopTiming t;
  bool have_cq = false, have_setup = false;
  for (const LibertyGroup* pin : c->children("pin"))
    for (const LibertyGroup* tm : pin->children("timing")) {
      const std::string* type = tm->attribute("timing_type");
      if (!type) continue;
      if (*type == "rising_edge") {
        for (const char* table : {"cell_rise", "cell_fall"})
          for (const LibertyGroup* g : tm->children(table)) {
            t.clk_to_q_ps = std::max(t.clk_to_q_ps, table_lookup(*g, slew_ps, load_ff));
            have_cq = true;
          }
      } else if (*type == "setup_rising") {
        for (const char* table : {"rise_constraint", "fall_constraint"})
          for (const LibertyGroup* g : tm->children(table)) {
            t.setup_ps = std::max(t.setup_ps, table_lookup(*g, slew_ps, slew_ps));
            have_setup = true;
          }
      }
    }
  if (!have_cq || !have_setup)
    throw std::runtime_error(fmt::format("flip-flop cell {} has no {} table", cell, have_cq ? "setup" : "clock-to-Q"));
  return t;
}

std::string gunzip_file(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(fmt::format("cannot open {}", path));
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  int err = 0;
  const char* msg = gzerror(f, &err);
  std::string error = n < 0 ? std::string(msg ? msg : "read error") : std::string();
  gzclose(f);
  if (!error.empty()) throw std::runtime_error(fmt::format("cannot decompress {}: {}", path, error));
  return out;
}

}  // namespace fetta::flows::synth
