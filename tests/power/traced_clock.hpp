// The clock of the power tracers (tests/power/*_trace.cpp, bench/power/fp_mac_trace.cpp): a 1 ns
// period in 1 ps units, written to an FST. Inputs set before tick() change with the falling
// edge and are sampled by the rising edge half a period later.
#pragma once

#include <verilated.h>
#include <verilated_fst_c.h>

#include <cstdint>

template <typename Model>
class TracedClock {
 public:
  // The model's context must have traceEverOn(true).
  TracedClock(Model& dut, const char* fst_path) : dut_(dut) {
    dut_.trace(&fst_, 99);
    fst_.open(fst_path);
  }

  void tick() {
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
    fst_.close();
  }

 private:
  Model& dut_;
  VerilatedFstC fst_;
  uint64_t t_ = 0;
};
