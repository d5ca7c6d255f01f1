// The wall-cycle model of a program: how long the system testbench takes to run it end to end,
// predicted from the program alone (docs/program.md, "The wall-cycle model").
#pragma once

#include <cstdint>

#include "arch/config.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

struct WallPrediction {
  int64_t simulated = 0;       // clocked cycles of the run, the bench's reset included
  int64_t dram_accounted = 0;  // the host path's DRAM time, accounted beside them (per step, rounded up)
  int64_t probe = 0;           // of the simulated cycles, the scoreboard's probes
  int64_t dma_hold = 0;        // cycles FLIPs and STOREs waited for the DMA
  int64_t total() const { return simulated + dram_accounted; }
};

// Replays the program's operations against timing models of the host bus (one 32 B beat or
// 32-bit word a cycle), the controller (its instruction queue; each instruction busy for the
// cycles the compiler predicted, which the RTL matches exactly; FLIPs and STOREs into the host's
// half held while the DMA moves it), the DMA (its descriptor queue; one request a cycle) and the
// bench's DRAM port (requests served in order at the bandwidth, answered after the latency).
WallPrediction predict_wall(const Program& p, const arch::ArchConfig& cfg);

}  // namespace fetta::mapper
