#include "sim/system/trace_windows.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace fetta::sim::system {

namespace fs = std::filesystem;

std::string trace_window_file(const std::string& dir, int64_t k) {
  return (fs::path(dir) / fmt::format("window_{:05d}.fst", k)).string();
}

TraceWindows::TraceWindows(sc_core::sc_module_name name, std::string path, TraceSample sample, TraceHooks hooks,
                           sc_core::sc_time period)
    : sc_core::sc_module(name), path_(std::move(path)), sample_(sample), hooks_(std::move(hooks)), period_(period) {
  if (path_.empty()) return;
  if (sample_.sampled()) {
    if (fs::exists(path_) && !fs::is_directory(path_))
      throw std::invalid_argument(fmt::format("--trace {}: a sampled trace is a directory, and this is a file", path_));
    fs::create_directories(path_);
    static const std::regex window(R"(^window_\d{5,}\.fst$)");
    for (const auto& e : fs::directory_iterator(path_))
      if (std::regex_match(e.path().filename().string(), window)) fs::remove(e.path());
    fs::remove(fs::path(path_) / "sampling.json");
  }
  SC_HAS_PROCESS(TraceWindows);
  SC_THREAD(run);
}

void TraceWindows::run() {
  if (!sample_.sampled()) {
    hooks_.open(path_);
    open_ = true;
    return;
  }
  // Window k spans cycles kN .. kN + W - 1: it opens half a cycle before the first one's rising
  // edge (its first dump, which only sets the values, is that falling edge) and closes half a
  // cycle before the rising edge after the last, so that it counts its W rising edges. The
  // first window opens at 0, on the first rising edge (in reset), which it cannot count.
  const sc_core::sc_time half = period_ * 0.5;
  for (int64_t k = 0;; ++k) {
    files_.push_back(trace_window_file(path_, k));
    hooks_.open(files_.back());
    open_ = true;
    wait(period_ * static_cast<double>(sample_.window) - (k == 0 ? half : sc_core::SC_ZERO_TIME));
    hooks_.close();
    open_ = false;
    wait(period_ * static_cast<double>(sample_.every - sample_.window));
  }
}

void TraceWindows::finish(int64_t run_cycles) {
  if (path_.empty()) return;
  if (open_) hooks_.close();
  open_ = false;
  if (!sample_.sampled()) return;
  nlohmann::json files = nlohmann::json::array();
  for (const std::string& f : files_) files.push_back(fs::path(f).filename().string());
  const nlohmann::json j = {{"format", "fetta-trace-sample-1"},
                            {"window_cycles", sample_.window},
                            {"every_cycles", sample_.every},
                            {"run_cycles", run_cycles},
                            {"files", files}};
  std::ofstream(fs::path(path_) / "sampling.json") << j.dump(1) << "\n";
}

}  // namespace fetta::sim::system
