// A sampled trace's windows (fetta run --trace-sample W/N, sim/system/trace_windows.hpp). Apart
// from run_flags.hpp so that the simulator's headers need no CLI11.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>

namespace fetta::sim::system {

struct TraceSample {
  int64_t window = 0, every = 0;  // W cycles of every N; 0: the whole run in one file
  bool sampled() const { return every > 0; }
};

// "W/N" as {W, N} when it is a sample (1 <= W <= N); nullopt otherwise.
inline std::optional<TraceSample> match_trace_sample(const std::string& text) {
  static const std::regex form(R"(^(\d{1,12})/(\d{1,12})$)");
  std::smatch m;
  if (!std::regex_match(text, m, form)) return std::nullopt;
  const TraceSample s{std::stoll(m[1]), std::stoll(m[2])};
  if (s.window < 1 || s.every < s.window) return std::nullopt;
  return s;
}

// Why `text` is not a W/N sample: "<text>: allowed: ..."; empty when it is one.
inline std::string trace_sample_refusal(const std::string& text) {
  if (match_trace_sample(text)) return {};
  return fmt::format("{}: allowed: W/N, W traced cycles of every N with 1 <= W <= N (e.g. 1000/10000)", text);
}

// "W/N" -> {W, N}; throws std::invalid_argument naming the option and the allowed values.
inline TraceSample parse_trace_sample(const std::string& text) {
  if (const std::optional<TraceSample> s = match_trace_sample(text)) return *s;
  throw std::invalid_argument("--trace-sample " + trace_sample_refusal(text));
}

}  // namespace fetta::sim::system
