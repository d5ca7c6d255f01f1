// Drives a bf16 x bf16 + fp32 MAC (hw/arith FpMac: clk, a, b, acc -> out) with the operands of a
// PE in a contraction engine: a and b bf16 values of a unit normal distribution (weights and
// activations), acc an fp32 partial sum of a normal distribution of deviation 4. Writes an FST
// trace and prints a checksum of every output after the pipeline filled, so that two models of the same MAC (the RTL and
// its gate-level netlist, bench/power/gate_level.sh) can be compared on the same stimulus.
//   fp_mac_trace OUT.fst CYCLES SEED
// The model comes from fetta_mac_model.h on the include path: its Verilated header and
// `using FettaMac = V<top>;` (gate_level.sh writes it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "fetta_mac_model.h"
#include "../../tests/power/traced_clock.hpp"

namespace {

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Round to nearest even into bf16 (the upper half of an fp32).
uint16_t to_bf16(float f) {
  const uint32_t u = bits_of(f);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s OUT.fst CYCLES SEED\n", argv[0]);
    return 2;
  }
  const long cycles = std::atol(argv[2]);
  const uint64_t seed = std::strtoull(argv[3], nullptr, 0);
  if (cycles < 1) {
    std::fprintf(stderr, "cycles: %s; allowed: >= 1\n", argv[2]);
    return 2;
  }
  std::printf("fp_mac_trace: %ld cycles, seed=%llu\n", cycles, static_cast<unsigned long long>(seed));
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  FettaMac dut{&ctx};
  TracedClock clock(dut, argv[1]);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> unit(0.0f, 1.0f), psum(0.0f, 4.0f);
  uint64_t checksum = 1469598103934665603ull;  // FNV-1a over every cycle's output
  for (long c = 0; c < cycles; ++c) {
    dut.a = to_bf16(unit(rng));
    dut.b = to_bf16(unit(rng));
    dut.acc = bits_of(psum(rng));
    clock.tick();
    const uint32_t out = dut.out;
    if (c < 4) continue;  // the pipeline's initial contents: no reset, and a netlist's flip-flops start otherwise
    for (int i = 0; i < 4; ++i) checksum = (checksum ^ ((out >> (8 * i)) & 0xff)) * 1099511628211ull;
  }
  clock.close();
  std::printf("outputs checksum %016llx\n", static_cast<unsigned long long>(checksum));
  return 0;
}
