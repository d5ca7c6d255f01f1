// Shared pieces of the memory-system tests: seeds, clocking, and uniform access to the
// Verilated ports of a Vec (flattened by rtl_gen to <name>_0, <name>_1, ...).
#pragma once

#include <fmt/core.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace mem_test {

// The seed of a test: `fallback`, or FETTA_SEED from the environment to replay another run.
// Printed either way so a failure can be reproduced.
inline uint64_t seed(const std::string& what, uint64_t fallback) {
  uint64_t s = fallback;
  if (const char* env = std::getenv("FETTA_SEED")) s = std::strtoull(env, nullptr, 0);
  std::cout << fmt::format("[mem] {} seed=0x{:x}\n", what, s);
  return s;
}

// Large runs: FETTA_MEM_SCALE=k multiplies the random operation counts (the [mem_large] tests
// use 50).
inline int scale(int fallback = 1) {
  if (const char* env = std::getenv("FETTA_MEM_SCALE")) return std::max(1, std::atoi(env));
  return fallback;
}

inline uint64_t mask_bits(int w) { return w >= 64 ? ~0ull : (1ull << w) - 1; }

// One Verilated port of any width up to 64 bits (CData/SData/IData/QData).
class Port {
 public:
  template <typename T>
  Port(T& x) : p_(&x), bytes_(sizeof(T)) {}  // NOLINT: implicit on purpose, for lists
  void set(uint64_t v) const {
    switch (bytes_) {
      case 1: *static_cast<uint8_t*>(p_) = static_cast<uint8_t>(v); break;
      case 2: *static_cast<uint16_t*>(p_) = static_cast<uint16_t>(v); break;
      case 4: *static_cast<uint32_t*>(p_) = static_cast<uint32_t>(v); break;
      default: *static_cast<uint64_t*>(p_) = v; break;
    }
  }
  uint64_t get() const {
    switch (bytes_) {
      case 1: return *static_cast<uint8_t*>(p_);
      case 2: return *static_cast<uint16_t*>(p_);
      case 4: return *static_cast<uint32_t*>(p_);
      default: return *static_cast<uint64_t*>(p_);
    }
  }

 private:
  void* p_;
  int bytes_;
};

using Ports = std::vector<Port>;

// A cycle is settle() (inputs of the cycle applied, outputs read) then edge(). Benches check the
// outputs after settle(), with the next cycle's inputs already applied, so an output that
// wrongly follows an input combinationally (instead of the value registered at the read) fails.
template <typename V>
void settle(V& dut) {
  dut.clk = 0;
  dut.eval();
}

template <typename V>
void edge(V& dut) {
  dut.clk = 1;
  dut.eval();
}

template <typename V>
void tick(V& dut) {
  settle(dut);
  edge(dut);
}

// Two cycles of reset (modules without registers that need one have no `rst` port).
template <typename V>
void reset(V& dut) {
  if constexpr (requires { dut.rst; }) {
    dut.rst = 1;
    tick(dut);
    tick(dut);
    dut.rst = 0;
  } else {
    tick(dut);
  }
}

// Collects mismatches; the test reports the count and the first few.
struct Mismatches {
  size_t count = 0;
  std::string first;
  void note(const std::string& what) {
    if (count++ < 8) first += what + "\n";
  }
};

}  // namespace mem_test

// Port lists of flattened Vec ports: MEM_PORTS4(dut, ia_addr) -> {dut.ia_addr_0, .. _3}.
#define MEM_PORTS1(d, n) mem_test::Ports{d.n##_0}
#define MEM_PORTS2(d, n) mem_test::Ports{d.n##_0, d.n##_1}
#define MEM_PORTS3(d, n) mem_test::Ports{d.n##_0, d.n##_1, d.n##_2}
#define MEM_PORTS4(d, n) mem_test::Ports{d.n##_0, d.n##_1, d.n##_2, d.n##_3}
#define MEM_PORTS6(d, n) mem_test::Ports{d.n##_0, d.n##_1, d.n##_2, d.n##_3, d.n##_4, d.n##_5}
#define MEM_PORTS8(d, n) \
  mem_test::Ports{d.n##_0, d.n##_1, d.n##_2, d.n##_3, d.n##_4, d.n##_5, d.n##_6, d.n##_7}
