#include "mapper/einsum.hpp"

#include <fmt/core.h>

#include <cctype>
#include <charconv>
#include <vector>

#include "mapper/problem.hpp"

namespace fetta::mapper {

namespace {

std::string strip(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    out.push_back(s.substr(start, pos == std::string::npos ? std::string::npos : pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

}  // namespace

std::map<std::string, int64_t> parse_dims(const std::string& text) {
  std::map<std::string, int64_t> dims;
  const std::string t = strip(text);
  if (t.empty()) return dims;
  for (const auto& entry : split(t, ',')) {
    const size_t eq = entry.find('=');
    if (entry.empty() || eq == std::string::npos || eq == 0 || eq + 1 == entry.size() ||
        entry.find('=', eq + 1) != std::string::npos) {
      throw SearchError(fmt::format("malformed --dims entry '{}' (expected label=size, e.g. a=4)", entry));
    }
    const std::string label = entry.substr(0, eq);
    const std::string value = entry.substr(eq + 1);
    if (label.size() != 1 || !std::isalpha(static_cast<unsigned char>(label[0]))) {
      throw SearchError(fmt::format("--dims label '{}' is not a single letter", label));
    }
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec == std::errc::result_out_of_range) {
      throw SearchError(fmt::format("size of label '{}' is too large: {}", label, value));
    }
    if (ec != std::errc() || ptr != value.data() + value.size()) {
      throw SearchError(fmt::format("size of label '{}' is not an integer: '{}'", label, value));
    }
    if (v <= 0) throw SearchError(fmt::format("size of label '{}' must be positive, got {}", label, v));
    if (!dims.emplace(label, v).second) throw SearchError(fmt::format("--dims gives label '{}' twice", label));
  }
  return dims;
}

verif::TensorNetwork parse_einsum(const std::string& expr, const std::map<std::string, int64_t>& dims) {
  const std::string e = strip(expr);
  if (e.empty()) throw SearchError("malformed einsum: the expression is empty");
  const size_t arrow = e.find("->");
  if (arrow != std::string::npos && e.find("->", arrow + 2) != std::string::npos) {
    throw SearchError(fmt::format("malformed einsum '{}': more than one '->'", e));
  }
  const std::string lhs = e.substr(0, arrow);
  verif::TensorNetwork net;
  std::map<char, int> operands_of;  // label -> number of operands holding it
  const auto inputs = split(lhs, ',');
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& op = inputs[i];
    if (op.empty()) throw SearchError(fmt::format("malformed einsum '{}': operand {} is empty", e, i));
    verif::NetworkNode node;
    node.name = fmt::format("T{}", i);
    for (char c : op) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        throw SearchError(fmt::format("malformed einsum '{}': '{}' in operand {} is not a letter", e, c, i));
      }
      const std::string l(1, c);
      for (const auto& prev : node.labels) {
        if (prev == l) throw SearchError(fmt::format("label '{}' is repeated in operand {} '{}'", l, i, op));
      }
      node.labels.push_back(l);
      if (++operands_of[c] == 3) {
        throw SearchError(fmt::format(
            "label '{}' appears in three or more operands (a hyperedge); each label may join at most two", l));
      }
    }
    net.nodes.push_back(std::move(node));
  }
  if (arrow != std::string::npos) {
    const std::string rhs = e.substr(arrow + 2);
    for (char c : rhs) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        throw SearchError(fmt::format("malformed einsum '{}': '{}' in the output is not a letter", e, c));
      }
      const std::string l(1, c);
      for (const auto& prev : net.output_labels) {
        if (prev == l) throw SearchError(fmt::format("output label '{}' appears twice", l));
      }
      if (operands_of.find(c) == operands_of.end()) {
        throw SearchError(fmt::format("output label '{}' does not appear in any input", l));
      }
      net.output_labels.push_back(l);
    }
  } else {
    for (const auto& [c, n] : operands_of) {  // std::map: alphabetical
      if (n == 1) net.output_labels.emplace_back(1, c);
    }
  }
  for (const auto& [c, n] : operands_of) {
    const std::string l(1, c);
    auto it = dims.find(l);
    if (it == dims.end()) throw SearchError(fmt::format("label '{}' has no size (add {}=N to --dims)", l, l));
    if (it->second <= 0) throw SearchError(fmt::format("size of label '{}' must be positive, got {}", l, it->second));
    net.dims.emplace(l, it->second);
  }
  return net;
}

verif::TensorNetwork parse_einsum(const std::string& expr, const std::string& dims) {
  return parse_einsum(expr, parse_dims(dims));
}

}  // namespace fetta::mapper
