// The clock of the power tracers (tests/power/*_trace.cpp, bench/power/fp_mac_trace.cpp): a 1 ns
// period in 1 ps units, written to an FST. Inputs set before tick() change with the falling
// edge and are sampled by the rising edge half a period later.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

template <typename Model>
class TracedClock {
 public:
  // The model's context must have traceEverOn(true).
  TracedClock(Model& dut, const char* fst_path) : dut_(dut) {
    dut_.trace(&fst_, 99);
    fst_.open(fst_path);
  }

  // Sampled, as fetta run --trace DIR --trace-sample W/N writes it: the ticks kN .. kN + W - 1 into
  // DIR/window_<k>.fst each, listed in DIR/sampling.json by close().
  TracedClock(Model& dut, const std::string& dir, int64_t window, int64_t every)
      : dut_(dut), dir_(dir), window_(window), every_(every) {
    dut_.trace(&fst_, 99);
  }

  void tick() {
    if (every_ > 0) {
      if (ticks_ % every_ == window_ && fst_.isOpen()) fst_.close();
      if (ticks_ % every_ == 0) {
        char name[32];
        std::snprintf(name, sizeof name, "window_%05lld.fst", static_cast<long long>(ticks_ / every_));
        files_.push_back(name);
        fst_.open((dir_ + "/" + name).c_str());
      }
    }
    ++ticks_;
    dut_.clk = 0;
    dut_.eval();
    fst_.dump(t_);
    t_ += 500;
    dut_.clk = 1;
    dut_.eval();
    fst_.dump(t_);
    t_ += 500;
  }

  // The last falling edge, so that the last cycle's values last a whole period in the trace.
  void close() {
    dut_.clk = 0;
    dut_.eval();
    fst_.dump(t_);
    if (fst_.isOpen()) fst_.close();
    if (every_ == 0) return;
    std::FILE* f = std::fopen((dir_ + "/sampling.json").c_str(), "w");
    std::fprintf(f, "{\"format\": \"fetta-trace-sample-1\", \"window_cycles\": %lld, \"every_cycles\": %lld, "
                 "\"run_cycles\": %lld, \"files\": [", static_cast<long long>(window_), static_cast<long long>(every_),
                 static_cast<long long>(ticks_));
    for (size_t i = 0; i < files_.size(); ++i) std::fprintf(f, "%s\"%s\"", i ? ", " : "", files_[i].c_str());
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }

 private:
  Model& dut_;
  VerilatedFstC fst_;
  uint64_t t_ = 0;
  std::string dir_;
  int64_t window_ = 0, every_ = 0, ticks_ = 0;
  std::vector<std::string> files_;
};
