// Helpers shared by the Verilated network tests: bit fields of Verilator ports of any width
// (CData .. QData, VlWide), one clock cycle for clocked and purely combinational models, and
// streaming a list of jobs through a testbench.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "verilated.h"

namespace nettest {

// Random routed patterns per network configuration (>= 10^4 must route; 10^6 in large runs).
#ifdef FETTA_NET_LARGE
constexpr int kRandomPatterns = 1000000;
#else
constexpr int kRandomPatterns = 12000;
#endif

template <typename P>
void put_bits(P& port, int lsb, int width, uint64_t v) {
  if constexpr (std::is_integral_v<P>) {
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    uint64_t cur = static_cast<uint64_t>(port);
    cur = (cur & ~(mask << lsb)) | ((v & mask) << lsb);
    port = static_cast<P>(cur);
  } else {
    for (int b = 0; b < width; ++b) {
      const int bit = lsb + b;
      EData& word = port.at(bit / 32);
      const EData m = EData{1} << (bit % 32);
      word = ((v >> b) & 1) ? (word | m) : (word & ~m);
    }
  }
}

template <typename P>
uint64_t get_bits(const P& port, int lsb, int width) {
  if constexpr (std::is_integral_v<P>) {
    const uint64_t mask = width >= 64 ? ~uint64_t{0} : ((uint64_t{1} << width) - 1);
    return (static_cast<uint64_t>(port) >> lsb) & mask;
  } else {
    uint64_t v = 0;
    for (int b = 0; b < width; ++b) {
      const int bit = lsb + b;
      v |= static_cast<uint64_t>((port.at(bit / 32) >> (bit % 32)) & 1) << b;
    }
    return v;
  }
}

template <typename V>
constexpr bool has_clock = requires(V& v) { v.clk; };

// Settle the inputs just applied (outputs of this cycle become readable).
template <typename V>
void settle(V& dut) {
  if constexpr (has_clock<V>) dut.clk = 0;
  dut.eval();
}

// The rising edge that ends the cycle (nothing for a combinational model).
template <typename V>
void edge(V& dut) {
  if constexpr (has_clock<V>) {
    dut.clk = 1;
    dut.eval();
  }
}

// Every output lane of a network model: `lanes` words of `width` bits packed in `dout`.
template <typename P>
std::vector<uint64_t> read_lanes(const P& dout, int lanes, int width) {
  std::vector<uint64_t> out(static_cast<size_t>(lanes));
  for (int i = 0; i < lanes; ++i) out[static_cast<size_t>(i)] = get_bits(dout, i * width, width);
  return out;
}

// Streams `jobs` through a testbench, one a cycle, and has it check job t `tb.latency` cycles
// after it entered; after the last job the last one is applied again (its output is checked once).
template <typename Tb, typename Job>
void stream_jobs(Tb& tb, const std::vector<Job>& jobs) {
  const int total = static_cast<int>(jobs.size());
  for (int t = 0; t < total + tb.latency; ++t) {
    tb.apply(jobs[static_cast<size_t>(std::min(t, total - 1))]);
    settle(tb.dut);
    if (t >= tb.latency) tb.check(jobs[static_cast<size_t>(t - tb.latency)], t - tb.latency);
    edge(tb.dut);
  }
}

}  // namespace nettest
