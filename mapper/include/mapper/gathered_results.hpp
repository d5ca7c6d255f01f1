// Saved intermediates brought back by DMA gathers (ProgramOptions::gather, docs/dma.md §2,
// "Gathers"): where each producer's jobs saved their rows, the saved rows of each intermediate, the
// gathers planned into the images of the reader being emitted, and the layer's pad beats in DRAM.
// The program builder asks it whether a reader's operand can be gathered, then takes each job's
// descriptors from it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "arch/config.hpp"
#include "mapper/compile.hpp"
#include "mapper/dram_map.hpp"
#include "mapper/gather.hpp"

namespace fetta::mapper {

class GatheredResults {
 public:
  explicit GatheredResults(const arch::ArchConfig& cfg);

  // A new layer: its DRAM starts over (no pad beat placed yet, no rows saved).
  void new_layer();
  // Job `job` of step `report` saved its finished rows from DRAM byte address `at` on
  // (mapper::result_save of mapper::saved_beats).
  void saved(int32_t report, size_t job, uint64_t at);
  // Step `report` (contraction `c`) made saved intermediate `t`: its rows are what the step's
  // output chunks saved. Nothing is recorded unless every chunk was saved.
  void made(int32_t t, int32_t report, const CompiledGemm& c);

  // Plans the gathers of `t` into reader `c`'s operand image (IA when `as_a`) of every job; false
  // when t has no saved rows or some job's image cannot be gathered (then it is planned nowhere).
  // The pad beat a plan reads is allocated in `dram` the first time.
  bool plan(int32_t t, const CompiledGemm& c, bool as_a, DramMap& dram);
  // Job j's gather of t into reader c's image, planned by plan(); nullptr when there is none.
  const GatherPlan* planned(const CompiledGemm& c, bool as_a, size_t j, int32_t t) const;

  // A DRAM beat holding `pad` in every lane, for the program to place before a gather reads it.
  struct PadBeat {
    uint64_t at = 0;  // byte address
    uint16_t pad = 0;
  };
  // The pad beat a plan of an IA (as_a) or IB image reads, if it reads one not placed yet (now marked placed).
  std::optional<PadBeat> pad_to_place(const GatherPlan& plan, bool as_a);

 private:
  struct Source {
    CompiledGemm producer;
    SavedRows rows;
  };
  struct Pad {
    uint64_t at = 0;  // byte address
    bool placed = false;
  };
  uint16_t pad_of(bool as_a) const;

  const arch::ArchConfig& cfg_;
  const arch::DmaGeometry geometry_;
  std::map<int32_t, std::map<size_t, uint64_t>> saves_;  // step -> job -> first saved beat
  std::map<int32_t, Source> sources_;                     // saved intermediate -> its rows
  std::map<uint16_t, Pad> pads_;                          // this layer's pad beats, by value
  // The plans of the reader being emitted: (reader, as IA) -> its tensor and one plan per job.
  std::map<std::pair<const CompiledGemm*, bool>, std::pair<int32_t, std::vector<GatherPlan>>> plans_;
};

}  // namespace fetta::mapper
