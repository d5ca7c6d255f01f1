// The program's DMA descriptors (mapper/dma_transfers.hpp).
#include "mapper/dma_transfers.hpp"

namespace fetta::mapper {

int64_t image_beats_per_row(const arch::DmaGeometry& g, int64_t lanes) { return (lanes + g.lanes - 1) / g.lanes; }

std::vector<arch::DmaDescriptor> image_load(const arch::DmaGeometry& g, int64_t first_row, int64_t rows, int64_t lanes,
                                            uint64_t at, bool half) {
  const int64_t groups = int64_t{1} << g.group_bits;  // beats per unified row
  const int64_t per_row = image_beats_per_row(g, lanes);
  const int64_t whole = lanes / g.lanes;  // beats with every lane of the image
  std::vector<arch::DmaDescriptor> out;
  auto descriptor = [&](int64_t first_beat, int64_t beats, uint64_t mask) {
    arch::DmaDescriptor d;
    d.half = half;
    d.dram_base = (at >> g.beat_shift()) + static_cast<uint64_t>(first_beat);
    d.slot_base = static_cast<uint64_t>(first_row * groups + first_beat);
    d.bound = {static_cast<uint64_t>(beats), static_cast<uint64_t>(rows), 1};
    d.dram_stride = {1, per_row, 0};
    d.slot_stride = {1, groups, 0};
    d.lane_mask = mask;
    out.push_back(d);
  };
  if (whole > 0) descriptor(0, whole, ~uint64_t{0});
  if (whole < per_row) descriptor(whole, 1, (uint64_t{1} << (lanes % g.lanes)) - 1);
  return out;
}

arch::DmaDescriptor result_save(const arch::DmaGeometry& g, int64_t row, int64_t rows, int64_t first_beat, int64_t beats,
                                uint64_t at, bool half) {
  const int64_t groups = int64_t{1} << g.group_bits;
  arch::DmaDescriptor d;
  d.to_dram = true;
  d.half = half;
  d.dram_base = at >> g.beat_shift();
  d.slot_base = static_cast<uint64_t>(row * groups + first_beat);
  d.bound = {static_cast<uint64_t>(beats), static_cast<uint64_t>(rows), 1};
  d.dram_stride = {1, beats, 0};
  d.slot_stride = {1, groups, 0};
  d.lane_mask = ~uint64_t{0};
  return d;
}

}  // namespace fetta::mapper
