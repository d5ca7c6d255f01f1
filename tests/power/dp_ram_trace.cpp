// Drives the corpus's dual-port RAM (dp_ram_w16_d32) with random reads and writes, checks every
// read against a reference memory, writes an FST trace for the SRAM access test and prints how
// many cycles read and how many wrote ("reads N writes M").
//   dp_ram_trace OUT.fst CYCLES SEED
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "Vdp_ram_w16_d32.h"
#include "traced_clock.hpp"

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
  std::printf("dp_ram_trace: %ld cycles, seed=%llu\n", cycles, static_cast<unsigned long long>(seed));
  VerilatedContext ctx;
  ctx.traceEverOn(true);
  Vdp_ram_w16_d32 dut{&ctx};
  TracedClock clock(dut, argv[1]);
  std::mt19937_64 rng(seed);
  std::array<unsigned, 32> ref{};
  // Every word written first, so that every read has a known value.
  long reads = 0, writes = 0;
  for (unsigned a = 0; a < 32; ++a) {
    dut.we = 1, dut.waddr = a, dut.wdata = ref[a] = static_cast<unsigned>(rng() & 0xffff), dut.re = 0;
    clock.tick();
    ++writes;
  }
  for (long c = 0; c < cycles; ++c) {
    const bool re = rng() % 3 == 0, we = rng() % 4 == 0;  // reads and writes apart and together
    const unsigned raddr = static_cast<unsigned>(rng() % 32), waddr = static_cast<unsigned>(rng() % 32);
    const unsigned wdata = static_cast<unsigned>(rng() & 0xffff);
    dut.re = re, dut.raddr = raddr, dut.we = we, dut.waddr = waddr, dut.wdata = wdata;
    const unsigned expected = ref[raddr];  // read-first: the old word on a write to the same address
    clock.tick();
    if (re && dut.rdata != expected) {
      std::fprintf(stderr, "cycle %ld: read %u at %u, expected %u\n", c, static_cast<unsigned>(dut.rdata), raddr, expected);
      return 1;
    }
    if (we) ref[waddr] = wdata;
    reads += re, writes += we;
  }
  dut.re = 0, dut.we = 0;
  clock.close();
  std::printf("reads %ld writes %ld\n", reads, writes);
  return 0;
}
