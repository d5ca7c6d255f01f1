// The DRAM model of the system bench (TLM-2.0 target and the host's initiator), without RTL:
// data round trips, the annotated delay of every transaction, and refused accesses.
#include <catch2/catch.hpp>

#include <numeric>

#include "sim/system/dram.hpp"

using namespace fetta::sim::system;

// libsystemc.so refers to sc_main; Catch's main runs these tests (no simulation is started: the
// transports are plain calls during elaboration).
int sc_main(int, char**) { return 0; }

namespace {

struct Link {
  DramTarget dram;
  DramInitiator dma;
  explicit Link(const fetta::arch::DramConfig& c) : dram("dram", c), dma("dma") { dma.socket.bind(dram.socket); }
};

fetta::arch::DramConfig config(double gbps, double latency_ns, int mb) {
  fetta::arch::DramConfig c;
  c.bandwidth_gbps = gbps;
  c.latency_ns = latency_ns;
  c.capacity_mb = mb;
  return c;
}

}  // namespace

TEST_CASE("DRAM: data written is read back; each transaction costs latency + bytes / bandwidth", "[dram]") {
  Link l(config(25.6, 100, 4));
  std::vector<uint8_t> data(4096);
  std::iota(data.begin(), data.end(), uint8_t{0});
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  l.dma.write(64, data, t);
  CHECK(t == sc_core::sc_time(100.0 + 4096 / 25.6, sc_core::SC_NS));
  std::vector<uint8_t> back(4096, 0xAA);
  l.dma.read(64, back, t);
  CHECK(back == data);
  CHECK(t == sc_core::sc_time(2 * (100.0 + 4096 / 25.6), sc_core::SC_NS));
  CHECK(l.dram.transactions() == 2);
  CHECK(l.dram.bytes_read() == 4096);
  CHECK(l.dram.bytes_written() == 4096);

  // A preload (debug transport) moves data in zero time and is not counted.
  l.dma.preload(1 << 20, {1, 2, 3});
  std::vector<uint8_t> three(3);
  sc_core::sc_time u = sc_core::SC_ZERO_TIME;
  l.dma.read(1 << 20, three, u);
  CHECK(three == std::vector<uint8_t>{1, 2, 3});
  CHECK(u == l.dram.transfer_time(3));
  CHECK(l.dram.bytes_written() == 4096);

  // Never-written bytes read as zero (the neighbours of the write above).
  std::vector<uint8_t> edge(4, 0xFF);
  l.dma.read(62, edge, u);
  CHECK(edge == std::vector<uint8_t>{0, 0, 0, 1});
}

TEST_CASE("DRAM: accesses beyond the capacity are refused with the TLM address error", "[dram]") {
  Link l(config(10, 0, 1));
  CHECK(l.dram.capacity_bytes() == (1u << 20));
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  std::vector<uint8_t> d(16);
  CHECK_NOTHROW(l.dma.read((1 << 20) - 16, d, t));
  CHECK_THROWS_WITH(l.dma.read((1 << 20) - 15, d, t), Catch::Contains("refused") && Catch::Contains("ADDRESS_ERROR"));
  CHECK_THROWS_WITH(l.dma.write(uint64_t{1} << 40, d, t), Catch::Contains("write of 16 bytes"));
  CHECK_THROWS(l.dma.preload(1 << 20, d));
  // Refused transactions take no time and move nothing.
  CHECK(t == l.dram.transfer_time(16));
  CHECK(l.dram.transactions() == 1);
}
