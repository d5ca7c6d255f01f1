// Drives the corpus's clock-gated registers (gated_regs_cells, rtl::ClockGating::cells) and writes
// an FST trace for the power tests: `busy` (both gates open every cycle), `idle` (both closed,
// out of reset) or `partial` (gate a open in 3 of every 10 cycles, gate b in 7); d random.
//   gated_regs_trace OUT.fst busy|idle|partial CYCLES SEED
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "Vgated_regs_cells.h"
#include "traced_clock.hpp"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s OUT.fst busy|idle|partial CYCLES SEED\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[2];
  const long cycles = std::atol(argv[3]);
  const uint64_t seed = std::strtoull(argv[4], nullptr, 0);
  if ((mode != "busy" && mode != "idle" && mode != "partial") || cycles < 1) {
    std::fprintf(stderr, "mode: %s; allowed: busy, idle, partial; cycles >= 1\n", argv[2]);
    return 2;
  }
  std::printf("gated_regs_trace: %s, %ld cycles, seed=%llu\n", mode.c_str(), cycles, static_cast<unsigned long long>(seed));
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  Vgated_regs_cells dut{&ctx};
  TracedClock<Vgated_regs_cells> clock(dut, argv[1]);
  std::mt19937_64 rng(seed);
  dut.rst = 1;
  dut.en_a = dut.en_b = 0;
  clock.tick();
  clock.tick();
  dut.rst = 0;
  for (long c = 0; c < cycles; ++c) {
    dut.en_a = mode == "busy" || (mode == "partial" && c % 10 < 3);
    dut.en_b = mode == "busy" || (mode == "partial" && c % 10 < 7);
    dut.own_en = 1;
    dut.d = static_cast<uint8_t>(rng());
    clock.tick();
  }
  return 0;
}
