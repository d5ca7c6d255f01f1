// A sampled trace's windows (fetta run --trace-sample W/N, sim/system/trace_windows.hpp). Apart
// from run_flags.hpp so that the simulator's headers need no CLI11.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <regex>
#include <stdexcept>
#include <string>

namespace fetta::sim::system {

struct TraceSample {
  int64_t window = 0, every = 0;  // W cycles of every N; 0: the whole run in one file
  bool sampled() const { return every > 0; }
};

// Why `text` is not a W/N sample: "<text>: allowed: ..."; empty when it is one.
inline std::string trace_sample_refusal(const std::string& text) {
  static const std::regex form(R"(^(\d{1,12})/(\d{1,12})$)");
  std::smatch m;
  TraceSample s;
  if (std::regex_match(text, m, form)) {
    s.window = std::stoll(m[1]);
    s.every = std::stoll(m[2]);
  }
  if (s.window >= 1 && s.every >= s.window) return {};
  return fmt::format("{}: allowed: W/N, W traced cycles of every N with 1 <= W <= N (e.g. 1000/10000)", text);
}

// "W/N" -> {W, N}; throws std::invalid_argument naming the option and the allowed values.
inline TraceSample parse_trace_sample(const std::string& text) {
  if (const std::string why = trace_sample_refusal(text); !why.empty()) throw std::invalid_argument("--trace-sample " + why);
  const size_t slash = text.find('/');
  return {std::stoll(text.substr(0, slash)), std::stoll(text.substr(slash + 1))};
}

}  // namespace fetta::sim::system
