// Saved intermediates brought back by DMA gathers (mapper/gathered_results.hpp).
#include "mapper/gathered_results.hpp"

#include <algorithm>

#include "arch/dma.hpp"
#include "mapper/movement.hpp"

namespace fetta::mapper {

GatheredResults::GatheredResults(const arch::ArchConfig& cfg) : cfg_(cfg), geometry_(arch::dma_geometry(cfg)) {}

void GatheredResults::new_layer() {
  saves_.clear();
  pads_.clear();
  plans_.clear();
}

void GatheredResults::saved(int32_t report, size_t job, uint64_t at) {
  saves_[report][job] = at >> geometry_.beat_shift();
}

void GatheredResults::made(int32_t t, int32_t report, const CompiledGemm& c) {
  const auto s = saves_.find(report);
  if (s == saves_.end()) return;
  const std::array<int64_t, 2> sb = saved_beats(c, arch::host_port_lanes(cfg_));
  SavedRows rows{{}, sb[0], sb[1]};
  for (size_t job : output_chunks(c)) {
    const auto at = s->second.find(job);
    if (at == s->second.end()) return;
    rows.chunk_beat.push_back(at->second);
  }
  sources_[t] = {c, std::move(rows)};
  saves_.erase(s);
}

uint16_t GatheredResults::pad_of(bool as_a) const {
  return as_a && cfg_.dtype == arch::DataType::bf16 ? 0x8000 : 0;  // -0 keeps an IA pad out of every sum
}

bool GatheredResults::plan(int32_t t, const CompiledGemm& c, bool as_a, DramMap& dram) {
  const auto src = sources_.find(t);
  if (src == sources_.end()) return false;
  auto pad = pads_.find(pad_of(as_a));
  if (pad == pads_.end()) pad = pads_.emplace(pad_of(as_a), Pad{dram.allocate(geometry_.lanes, geometry_.width / 8)}).first;
  std::vector<GatherPlan> plans;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    plans.push_back(plan_gather(cfg_, src->second.producer, c, as_a, j, src->second.rows,
                                pad->second.at >> geometry_.beat_shift(), false));
    if (!plans.back().ok()) return false;
  }
  plans_[{&c, as_a}] = {t, std::move(plans)};
  return true;
}

const GatherPlan* GatheredResults::planned(const CompiledGemm& c, bool as_a, size_t j, int32_t t) const {
  const auto it = plans_.find({&c, as_a});
  if (it == plans_.end() || it->second.first != t || j >= it->second.second.size()) return nullptr;
  return &it->second.second[j];
}

std::optional<GatheredResults::PadBeat> GatheredResults::pad_to_place(const GatherPlan& plan, bool as_a) {
  const auto pad = pads_.find(pad_of(as_a));
  if (plan.pad_beats == 0 || pad == pads_.end() || pad->second.placed) return std::nullopt;
  pad->second.placed = true;
  return PadBeat{pad->second.at, pad->first};
}

}  // namespace fetta::mapper
