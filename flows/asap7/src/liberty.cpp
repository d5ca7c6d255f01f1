#include "flows/liberty.hpp"

#include <fmt/core.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace fetta::flows::synth {

namespace {

std::string trim_quotes(std::string s) {
  auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && blank(s.back())) s.pop_back();
  size_t b = 0;
  while (b < s.size() && blank(s[b])) ++b;
  s = s.substr(b);
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') s = s.substr(1, s.size() - 2);
  return s;
}

// Recursive-descent reader of Liberty's group/attribute syntax.
class Parser {
 public:
  Parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

  LibertyGroup parse_top() {
    skip();
    LibertyGroup g;
    if (!statement(g) || g.groups.empty())
      fail("no library group");
    return std::move(g.groups.front());
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw std::runtime_error(fmt::format("{}:{}: Liberty syntax: {}", what_, line_, msg));
  }

  // Whitespace, comments and backslash line continuations.
  void skip() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '\n') {
        ++line_;
        ++i_;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && (s_[i_ + 1] == '\n' || s_[i_ + 1] == '\r')) {
        ++i_;
      } else if (c == '/' && i_ + 1 < s_.size() && s_[i_ + 1] == '*') {
        size_t e = s_.find("*/", i_ + 2);
        if (e == std::string::npos) fail("unterminated comment");
        line_ += static_cast<int>(std::count(s_.begin() + static_cast<long>(i_), s_.begin() + static_cast<long>(e), '\n'));
        i_ = e + 2;
      } else {
        break;
      }
    }
  }

  std::string identifier() {
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
      ++i_;
    if (b == i_) fail(fmt::format("expected a name, found '{}'", s_[i_]));
    return s_.substr(b, i_ - b);
  }

  // Text up to the parenthesis that closes the one just consumed (quotes respected).
  std::string until_close_paren() {
    std::string out;
    int depth = 1;
    bool quoted = false;
    while (i_ < s_.size()) {
      char c = s_[i_++];
      if (c == '\n') ++line_;
      if (c == '"') quoted = !quoted;
      if (!quoted && c == '(') ++depth;
      if (!quoted && c == ')' && --depth == 0) return out;
      if (c == '\\' && i_ < s_.size() && (s_[i_] == '\n' || s_[i_] == '\r')) continue;
      out += c;
    }
    fail("unterminated '('");
  }

  // A simple attribute's value: up to ';' or the end of the line, quotes respected.
  std::string value() {
    std::string out;
    bool quoted = false;
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (c == '"') quoted = !quoted;
      if (!quoted && (c == ';' || c == '\n' || c == '}')) break;
      out += c;
      ++i_;
    }
    if (i_ < s_.size() && s_[i_] == ';') ++i_;
    return trim_quotes(out);
  }

  // One statement into `parent`; false at '}' or the end of the text.
  bool statement(LibertyGroup& parent) {
    skip();
    if (i_ >= s_.size() || s_[i_] == '}') return false;
    std::string name = identifier();
    skip();
    if (i_ < s_.size() && s_[i_] == ':') {
      ++i_;
      skip();
      parent.attributes.emplace_back(name, value());
      return true;
    }
    if (i_ >= s_.size() || s_[i_] != '(') fail(fmt::format("expected ':' or '(' after '{}'", name));
    ++i_;
    std::string args = until_close_paren();
    skip();
    if (i_ < s_.size() && s_[i_] == '{') {
      ++i_;
      LibertyGroup g;
      g.name = name;
      g.args = trim_quotes(args);
      while (statement(g)) {
      }
      skip();
      if (i_ >= s_.size() || s_[i_] != '}') fail(fmt::format("group '{} ({})' is not closed", name, g.args));
      ++i_;
      parent.groups.push_back(std::move(g));
      return true;
    }
    if (i_ < s_.size() && s_[i_] == ';') ++i_;
    parent.attributes.emplace_back(name, args);
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

// Top-level `cell (...) { ... }` groups of a library text: [begin, end) byte ranges, each from
// the start of its line to the end of the line holding its closing brace.
struct CellSpan {
  std::string name;
  size_t begin = 0;
  size_t end = 0;
};

std::vector<CellSpan> cell_spans(const std::string& s) {
  std::vector<CellSpan> out;
  int depth = 0;
  bool quoted = false;
  size_t cell_start = std::string::npos;
  std::string cell_name;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (!quoted && c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      size_t e = s.find("*/", i + 2);
      if (e == std::string::npos) break;
      i = e + 1;
      continue;
    }
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
      if (depth == 1 && cell_start != std::string::npos) {
        size_t e = s.find('\n', i);
        size_t end = e == std::string::npos ? s.size() : e + 1;
        out.push_back({cell_name, cell_start, end});
        cell_start = std::string::npos;
        i = end - 1;
      }
    } else if (depth == 1 && cell_start == std::string::npos && s.compare(i, 4, "cell") == 0 &&
               (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])))) {
      size_t j = i + 4;
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      if (j < s.size() && s[j] == '(') {
        size_t close = s.find(')', j);
        cell_name = trim_quotes(s.substr(j + 1, close - j - 1));
        size_t line_begin = s.rfind('\n', i);
        cell_start = line_begin == std::string::npos ? 0 : line_begin + 1;
      }
    }
  }
  return out;
}

}  // namespace

const std::string* LibertyGroup::attribute(const std::string& key) const {
  for (const auto& [k, v] : attributes)
    if (k == key) return &v;
  return nullptr;
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

LibertyGroup parse_liberty(const std::string& text, const std::string& what) { return Parser(text, what).parse_top(); }

std::string merge_liberty(const std::vector<std::string>& texts, const std::string& name) {
  if (texts.empty()) throw std::invalid_argument("merge_liberty: no library given");
  std::string out;
  std::set<std::string> seen;
  for (size_t t = 0; t < texts.size(); ++t) {
    const std::string& s = texts[t];
    std::vector<CellSpan> cells = cell_spans(s);
    if (cells.empty()) throw std::runtime_error(fmt::format("merge_liberty: library {} has no cell", t));
    if (t == 0) {
      std::string header = s.substr(0, cells.front().begin);
      size_t lib = header.find("library");
      size_t open = lib == std::string::npos ? lib : header.find('(', lib);
      size_t close = open == std::string::npos ? open : header.find(')', open);
      if (close == std::string::npos) throw std::runtime_error("merge_liberty: the first text has no library group");
      out = header.substr(0, open + 1) + name + header.substr(close);
    }
    for (const CellSpan& c : cells) {
      if (!seen.insert(c.name).second) throw std::runtime_error(fmt::format("merge_liberty: cell {} defined twice", c.name));
      out.append(s, c.begin, c.end - c.begin);
    }
  }
  out += "}\n";
  return out;
}

std::vector<std::string> liberty_cell_names(const std::string& text) {
  std::vector<std::string> out;
  for (const CellSpan& c : cell_spans(text)) out.push_back(c.name);
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
