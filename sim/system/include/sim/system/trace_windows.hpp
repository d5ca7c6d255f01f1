// Where a run's waveform goes (fetta run --trace, docs/power.md "Sampled activity"): the whole
// run into one FST file, or with --trace-sample W/N the first W cycles of every N into a file each
// (window_00000.fst, ...) in a directory, with sampling.json listing them. Sampling keeps a
// long run's trace small enough to write and read back (the default top writes about 58 KB per
// traced cycle) while the activity still comes from every part of the run.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/cli/trace_sample.hpp"

namespace fetta::sim::system {

// Waveform hooks of the Verilated top: `open` starts writing a file (the first call attaches the
// model), `close` ends it.
struct TraceHooks {
  std::function<void(const std::string& path)> open;
  std::function<void()> close;
};

// The file of window k of a sampled trace in `dir`.
std::string trace_window_file(const std::string& dir, int64_t k);

class TraceWindows : public sc_core::sc_module {
 public:
  // Nothing happens without a path. A sampled trace's directory is created, and window files an
  // earlier run left there are removed.
  TraceWindows(sc_core::sc_module_name name, std::string path, TraceSample sample, TraceHooks hooks,
               sc_core::sc_time period);
  // After the run: closes the open file and, for a sampled trace, writes sampling.json
  // (run_cycles: the run's clock cycles, every window's included).
  void finish(int64_t run_cycles);

 private:
  void run();
  std::string path_;
  TraceSample sample_;
  TraceHooks hooks_;
  sc_core::sc_time period_;
  bool open_ = false;
  std::vector<std::string> files_;
};

}  // namespace fetta::sim::system
