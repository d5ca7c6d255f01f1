// Drives the corpus's pipelined adder tree (adder_tree_n8_w8) and writes an FST trace for the
// power tests: `random` (new inputs every cycle, the sum checked against the reference) or
// `idle` (held in reset, inputs 0); with W/N sampled, OUT a directory of windows (traced_clock.hpp).
//   adder_tree_trace OUT.fst random|idle CYCLES SEED [W/N]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "Vadder_tree_n8_w8.h"
#include "traced_clock.hpp"

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: %s OUT.fst random|idle CYCLES SEED [W/N]\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[2];
  const long cycles = std::atol(argv[3]);
  const uint64_t seed = std::strtoull(argv[4], nullptr, 0);
  if ((mode != "random" && mode != "idle") || cycles < 1) {
    std::fprintf(stderr, "mode: %s; allowed: random, idle; cycles >= 1\n", argv[2]);
    return 2;
  }
  std::printf("adder_tree_trace: %s, %ld cycles, seed=%llu\n", mode.c_str(), cycles, static_cast<unsigned long long>(seed));
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  Vadder_tree_n8_w8 dut{&ctx};
  long long window = 0, every = 0;
  if (argc == 6 && (std::sscanf(argv[5], "%lld/%lld", &window, &every) != 2 || window < 1 || every < window)) {
    std::fprintf(stderr, "sample: %s; allowed: W/N with 1 <= W <= N\n", argv[5]);
    return 2;
  }
  if (every > 0) std::filesystem::create_directories(argv[1]);
  std::unique_ptr<TracedClock<Vadder_tree_n8_w8>> owned =
      every > 0 ? std::make_unique<TracedClock<Vadder_tree_n8_w8>>(dut, std::string(argv[1]), window, every)
                : std::make_unique<TracedClock<Vadder_tree_n8_w8>>(dut, argv[1]);
  TracedClock<Vadder_tree_n8_w8>& clock = *owned;
  std::mt19937_64 rng(seed);
  std::deque<unsigned> expected{0, 0, 0};
  dut.rst = 1;
  clock.tick();
  clock.tick();
  dut.rst = mode == "idle" ? 1 : 0;
  for (long c = 0; c < cycles; ++c) {
    unsigned in[8], sum = 0;
    for (auto& v : in) sum += (v = mode == "idle" ? 0u : static_cast<unsigned>(rng() & 0xff));
    dut.in_0 = in[0], dut.in_1 = in[1], dut.in_2 = in[2], dut.in_3 = in[3];
    dut.in_4 = in[4], dut.in_5 = in[5], dut.in_6 = in[6], dut.in_7 = in[7];
    clock.tick();
    expected.push_back(sum);
    dut.eval();
    if (mode == "random" && dut.sum != expected[expected.size() - 3]) {
      std::fprintf(stderr, "cycle %ld: sum %u, expected %u\n", c, static_cast<unsigned>(dut.sum), expected[expected.size() - 3]);
      return 1;
    }
  }
  clock.close();
  return 0;
}
