// The wall-cycle model of a program: how long the system testbench takes to run it end to end,
// predicted from the program alone (docs/program.md, "The wall-cycle model").
#pragma once

#include <cstdint>
#include <string>

#include "arch/config.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

// What the controller waited for: every cycle it was idle (before its first instruction, between
// two, after its last) put on the host's or the DMA's work that held up the next instruction, the
// latest first (a gap is the part of that work compute did not cover).
struct WallStalls {
  int64_t dma = 0;          // the DMA: the host's port or DRAM waiting for it, a FLIP or STORE held for its half
  int64_t host_writes = 0;  // the host writing operand images through its port
  int64_t host_reads = 0;   // the host reading saved rows from DRAM (the first read of each)
  int64_t host_reads_again = 0;   // later networks' reads of a shared result's rows
  int64_t accumulator_reads = 0;  // the host reading results out of the accumulator (the host path)
  // The scoreboard's probes: its reads of results kept on chip (accumulator rows, STOREd images)
  // and the FLIPs around them. Simulated cycles the checking costs, not the design's own work.
  int64_t probes = 0;
  int64_t other = 0;        // pushing instruction and descriptor words, the reset
  int64_t total() const { return dma + host_writes + host_reads + host_reads_again + accumulator_reads + probes + other; }
};

struct WallPrediction {
  int64_t simulated = 0;       // clocked cycles of the run, the bench's reset included
  int64_t dram_accounted = 0;  // the host path's DRAM time, accounted beside them (per step, rounded up)
  int64_t probe = 0;           // of the simulated cycles, the scoreboard's probes
  int64_t dma_hold = 0;        // cycles FLIPs and STOREs waited for the DMA
  int64_t busy = 0;            // the controller's busy cycles (simulated = busy + stalls.total())
  WallStalls stalls;
  int64_t total() const { return simulated + dram_accounted; }
};

// Replays the program's operations against timing models of the host bus (one 32 B beat or
// 32-bit word a cycle), the controller (its instruction queue; each instruction busy for the
// cycles the compiler predicted, which the RTL matches exactly; FLIPs and STOREs into the host's
// half held while the DMA moves it), the DMA (its descriptor queue; one request a cycle) and the
// bench's DRAM port (requests served in order at the bandwidth, answered after the latency).
WallPrediction predict_wall(const Program& p, const arch::ArchConfig& cfg);

// "controller (the wall-cycle model): busy 24265 cycles, idle 53286, waiting for the DMA 41682, ..."
// (the causes, largest first).
std::string stalls_text(const WallPrediction& w);

}  // namespace fetta::mapper
