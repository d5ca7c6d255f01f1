// A saved intermediate loaded back by the DMA straight into its consumer's operand image: a gather
// (docs/dma.md §2, "Gathers"). The producer's result rows were saved to DRAM as the accumulator
// holds them (mapper::result_save after a staging STORE); the consumer reads another layout. Each
// DMA beat reads one DRAM beat of the saved rows, turns it (lane_rot) so that a run of its lanes
// lands where the image wants it, and writes those lanes (lane_mask) of one slot. A row copy is
// one beat per image beat; a transposition is one beat per element. Lanes of the image that no
// element reaches (padding) are written from a DRAM beat that holds the pad value in every lane.
// Every beat is priced at the DRAM's burst, however few lanes it writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/dma.hpp"
#include "mapper/compile.hpp"

namespace fetta::mapper {

// Where the producer's result sits in DRAM: output chunk i's save (mapper::result_save of its rows
// from accumulator row 0) starts at beat chunk_beat[i]; each accumulator row is `beats` beats, the
// first of them the row's beat `first_beat` (mapper::saved_beats).
struct SavedRows {
  std::vector<uint64_t> chunk_beat;
  int64_t first_beat = 0, beats = 1;
};

// p's saved rows as a program lays them out with nothing between its saves: each output chunk's
// rows right after the one before's, from DRAM beat `first` on.
SavedRows consecutive_saves(const CompiledGemm& p, int host_lanes, uint64_t first);

struct GatherPlan {
  std::vector<arch::DmaDescriptor> descriptors;  // empty when not possible
  std::string why_not;
  int64_t beats = 0;        // DMA beats (DRAM bursts) of all the descriptors
  int64_t image_beats = 0;  // beats a pre-tiled image of the same rows takes (mapper::image_load)
  int64_t elements = 0;     // result elements placed
  int64_t pad_beats = 0;    // of `beats`, those that write padding only
  bool ok() const { return !descriptors.empty(); }
};

// The descriptors loading consumer `c`'s operand image of job `job` (as IA when `as_a`, else IB)
// into `half` from producer `p`'s saved rows; `pad_beat` is a DRAM beat holding the image's pad
// value (-0 for IA, +0 for IB) in every lane. Descriptors are one nest per run of beats with the
// same turn and mask, merged up to the DMA's three levels.
GatherPlan plan_gather(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                       const SavedRows& saved, uint64_t pad_beat, bool half);

// The DMA's cycles for the plan run alone (arch::kDmaTiming): the DRAM's burst per beat, or one
// request a cycle and a gap per descriptor, whichever is slower (each descriptor makes its
// requests beside the one before's responses), and the DRAM's latency once.
int64_t gather_cycles(const arch::ArchConfig& cfg, const GatherPlan& plan);

}  // namespace fetta::mapper
