// The system bench's wait for the DMA, on a whole Verilated top, when nothing can end it: a load
// descriptor for the half the TCU computes on (half 0 after reset) starts only after a FLIP
// (docs/dma.md, "Order and the halves"). With none pushed, SystemBench::wait_dma_idle must end the
// wait itself, within a few thousand cycles and saying why, not run to its timeout. A FLIP then
// frees the half, the descriptor runs, and its rows read back through the host port are the DRAM's.
// Last, a push into the DMA's full queue behind such a descriptor ends the same way.
// Linked against the system tests' models.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include FETTA_TOP_HEADER
#include "arch/config.hpp"
#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "sim/system/bench.hpp"
#include "sim/system/dram.hpp"

namespace {

using namespace fetta;

struct Outcome {
  std::string stuck_message;  // what the first wait threw
  int64_t stuck_after = -1;   // cycles it waited
  int64_t checked = 0, mismatches = 0;
  std::string push_message;  // what a push into the full queue threw
  int64_t push_after = -1;
};

void host(sim::system::SystemBench& bench, const arch::ArchConfig& cfg, sim::system::DramInitiator& dram, uint64_t seed,
          Outcome& out) {
  const arch::DmaGeometry g = arch::dma_geometry(cfg);
  const arch::DmaLayout layout(g);
  const int lanes = g.lanes, bytes = g.width / 8;
  const int64_t rows = 4;  // beats of one group each, rows 0 .. 3 of half 0
  // The DRAM's beats: random operand bits.
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> image(static_cast<size_t>(rows * lanes * bytes));
  for (uint8_t& b : image) b = static_cast<uint8_t>(rng());
  sc_core::sc_time t = sc_core::SC_ZERO_TIME;
  dram.write(0, image, t);

  arch::DmaDescriptor d;
  d.to_dram = false;
  d.half = false;  // the half the TCU computes on after reset
  d.bound = {static_cast<uint64_t>(rows), 1, 1};
  d.dram_stride = {1, 0, 0};
  d.slot_stride = {1 << std::max(0, g.group_bits), 0, 0};  // one row a beat (group 0)
  bench.push_descriptor(arch::encode_dma(layout, d));
  const int64_t t0 = bench.now();
  try {
    bench.wait_dma_idle(10'000'000);
  } catch (const std::runtime_error& e) {
    out.stuck_message = e.what();
  }
  out.stuck_after = bench.now() - t0;

  // A FLIP gives the host half 0: the descriptor runs; the host reads the rows back there.
  bench.push(arch::encode_flip(arch::IsaLayout(cfg)));
  bench.wait_idle(100'000);
  bench.wait_dma_idle(100'000);
  const std::vector<uint16_t> got = bench.read_rows(0, rows, lanes);
  for (size_t i = 0; i < got.size(); ++i) {
    uint16_t want = 0;
    for (int k = 0; k < bytes; ++k) want |= static_cast<uint16_t>(image[i * bytes + k]) << (8 * k);
    ++out.checked;
    out.mismatches += got[i] != want;
  }

  // The TCU is on half 1 now: loads for it fill the queue, and the push of one more waits for a
  // head that never starts. The push must end the same way (the run ends after it: the last
  // descriptor's words stand half pushed).
  d.half = true;
  for (int k = 0; k < arch::kTopDmaQueueDepth; ++k) bench.push_descriptor(arch::encode_dma(layout, d));
  const int64_t t1 = bench.now();
  try {
    bench.push_descriptor(arch::encode_dma(layout, d));
  } catch (const std::runtime_error& e) {
    out.push_message = e.what();
  }
  out.push_after = bench.now() - t1;
}

}  // namespace

int sc_main(int argc, char** argv) {
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  try {
    std::string config;
    uint64_t seed = 5;
    CLI::App app("the system bench ends a wait for the DMA that nothing can end (one Verilated top)");
    app.add_option("--config", config, "Architecture configuration (YAML) the model was generated from")->required();
    app.add_option("--seed", seed, "Seed of the DRAM's contents");
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    const arch::ArchConfig cfg = arch::load_arch_config(config);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    fmt::print("dma_stuck: config {}, seed {}\n", cfg.name, seed);
    FETTA_TOP_CLASS dut("dut");
    sim::system::DramTarget target("dram", cfg.dram);
    sim::system::DramInitiator dram("dma");
    dram.socket.bind(target.socket);
    Outcome out;
    sim::system::SystemBench bench("bench", dut, cfg, [&](sim::system::SystemBench& b) { host(b, cfg, dram, seed, out); }, &dram);
    sc_core::sc_start();
    if (!bench.failure().empty()) {
      std::fprintf(stderr, "error: %s\n", bench.failure().c_str());
      return 2;
    }
    fmt::print("the wait ended after {} cycles: {}\n", out.stuck_after, out.stuck_message.empty() ? "(no error)" : out.stuck_message);
    fmt::print("after a FLIP: {} elements loaded, {} mismatching\n", out.checked, out.mismatches);
    fmt::print("a push into the full queue ended after {} cycles: {}\n", out.push_after,
               out.push_message.empty() ? "(no error)" : out.push_message);
    const int64_t limit = 2 * sim::system::SystemBench::kDmaStuckCycles;
    if (out.stuck_message.find("the DMA is stuck") == std::string::npos || out.stuck_after > limit || out.checked == 0 ||
        out.mismatches != 0 || out.push_message.find("the DMA is stuck") == std::string::npos || out.push_after > limit) {
      std::fprintf(stderr, "FAIL (the wait must end within %lld cycles naming the stuck DMA; the load must then be exact)\n",
                   static_cast<long long>(limit));
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
