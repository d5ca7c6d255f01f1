// The options a system simulation takes on the command line, declared once: `fetta run` and
// `fetta exec` parse them (so a typo fails before a model is built) and pass them on to the
// simulator they start, which parses them again with the same declarations.
#pragma once

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <string>

#include "sim/cli/trace_sample.hpp"

namespace fetta::sim::system {

struct RunFlags {
  uint64_t seed = 1;         // of the random tensors
  std::string inputs;        // inputs from <layer>_in_<tensor>.npy files (as --dump-dir writes them); empty: random from seed
  std::string dump_dir;      // every input and output tensor as .npy plus manifest.json; empty: none
  std::string trace;         // FST waveform file, or with trace_sample a directory of windows; empty: none
  std::string trace_sample;  // "W/N" (parse_trace_sample); empty: the whole run in one file
  bool json = false;         // JSON report on stdout instead of the tables
};

// Declares the flags on `app`; --trace-sample needs --trace and is checked by parse_trace_sample.
inline void add_run_flags(CLI::App& app, RunFlags& f) {
  app.add_option("--seed", f.seed, "Seed of the random tensors (printed)")
      ->check(CLI::Validator(
          [](const std::string& v) {
            // Checked as text: a negative number would otherwise wrap to a huge unsigned seed.
            uint64_t seed = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
            if (!v.empty() && ec == std::errc() && end == v.data() + v.size()) return std::string();
            return fmt::format("{}: allowed: an integer 0 .. 18446744073709551615", v);
          },
          "UINT64"))
      ->capture_default_str();
  app.add_option("--inputs", f.inputs, "Read the layers' inputs from <layer>_in_<tensor>.npy files (as --dump-dir writes them)");
  app.add_option("--dump-dir", f.dump_dir, "Write every input and output tensor as .npy, with manifest.json");
  CLI::Option* trace =
      app.add_option("--trace", f.trace, "FST waveform file (fetta run builds a traced model for it; open with GTKWave)");
  app.add_option("--trace-sample", f.trace_sample,
                 "W/N: trace only the first W cycles of every N, each window a file in the directory --trace names "
                 "(a long run's activity for fetta power, docs/power.md \"Sampled activity\")")
      ->needs(trace)
      ->check(CLI::Validator(trace_sample_refusal, "W/N"));
  app.add_flag("--json", f.json, "JSON report on stdout instead of the tables");
}

}  // namespace fetta::sim::system
