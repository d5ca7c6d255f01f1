#include "yaml_input/strict.hpp"

#include <fmt/core.h>

#include <map>
#include <sstream>
#include <vector>

namespace fetta::yaml_input {

int line_of(const YAML::Node& n, int fallback) { return n.Mark().is_null() ? fallback : n.Mark().line + 1; }

std::string format(const Problem& p, const std::string& file) {
  return p.line > 0 ? fmt::format("{}:{}: {}: {}", file, p.line, p.field, p.message)
                    : fmt::format("{}: {}: {}", file, p.field, p.message);
}

Document load_one_document(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    return {{}, Problem{e.mark.is_null() ? 0 : e.mark.line + 1, "<syntax>", e.msg}};
  }
  if (docs.empty() || (docs.size() == 1 && docs[0].IsNull()))
    return {{}, Problem{0, "<file>", "the file holds no YAML document (empty, or only comments)"}};
  if (docs.size() > 1)
    return {{}, Problem{line_of(docs[1]), "<file>",
                        fmt::format("{} YAML documents (separated by ---); allowed: exactly one", docs.size())}};
  return {docs[0], std::nullopt};
}

namespace {

std::optional<Problem> duplicate_in(const YAML::Node& n, const std::string& path) {
  if (n.IsMap()) {
    std::map<std::string, int> first_line;
    for (const auto& kv : n) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "<non-scalar key>";
      const std::string field = path.empty() ? key : path + "." + key;
      const int line = line_of(kv.first);
      if (auto [it, fresh] = first_line.emplace(key, line); !fresh)
        return Problem{line, field, fmt::format("given twice (first at line {}); allowed: each key once", it->second)};
      if (auto p = duplicate_in(kv.second, field)) return p;
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i)
      if (auto p = duplicate_in(n[i], fmt::format("{}[{}]", path, i))) return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Problem> find_duplicate_key(const YAML::Node& root) { return duplicate_in(root, ""); }

std::optional<LineDifference> first_difference(const std::string& a, const std::string& b) {
  if (a == b) return std::nullopt;
  std::istringstream sa(a), sb(b);
  LineDifference d;
  for (;;) {
    ++d.line;
    const bool ha = static_cast<bool>(std::getline(sa, d.a)), hb = static_cast<bool>(std::getline(sb, d.b));
    if (!ha) d.a = "(end of file)";
    if (!hb) d.b = "(end of file)";
    // Equal texts were returned above, so the lines differ somewhere, or one text has a last
    // newline the other lacks (both end here).
    if (d.a != d.b || (!ha && !hb)) return d;
  }
}

}  // namespace fetta::yaml_input
