// The program's DMA descriptors (mapper/dma_transfers.hpp).
#include "mapper/dma_transfers.hpp"

#include <numeric>

namespace fetta::mapper {

int64_t image_beats_per_row(const arch::DmaGeometry& g, int64_t lanes) { return (lanes + g.lanes - 1) / g.lanes; }

std::vector<uint64_t> image_row_masks(const arch::DmaGeometry& g, int64_t lanes) {
  std::vector<uint64_t> m(static_cast<size_t>(image_beats_per_row(g, lanes)), ~uint64_t{0});
  if (lanes % g.lanes != 0) m.back() = (uint64_t{1} << (lanes % g.lanes)) - 1;
  return m;
}

std::vector<arch::DmaDescriptor> packed_rows_load(const arch::DmaGeometry& g, int64_t first_row,
                                                  const std::vector<int64_t>& rows,
                                                  const std::vector<std::vector<uint64_t>>& masks, uint64_t at,
                                                  bool half) {
  const int64_t groups = int64_t{1} << g.group_bits;
  struct Run {
    int64_t row, len, saved;  // first image row, rows, first packed row
  };
  std::vector<Run> runs;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Run& r = runs.empty() ? Run{} : runs.back();
    if (!runs.empty() && r.row + r.len == rows[i] && masks[i] == masks[static_cast<size_t>(r.saved)]) {
      ++runs.back().len;
    } else {
      runs.push_back({rows[i], 1, static_cast<int64_t>(i)});
    }
  }
  std::vector<arch::DmaDescriptor> out;
  for (size_t i = 0; i < runs.size();) {
    const Run& r = runs[i];
    const std::vector<uint64_t>& m = masks[static_cast<size_t>(r.saved)];
    const auto per_row = static_cast<int64_t>(m.size());
    size_t n = 1;  // runs folded: one length, spacing and masks, packed one after another
    const int64_t gap = i + 1 < runs.size() ? runs[i + 1].row - r.row : 0;
    while (i + n < runs.size() && runs[i + n].len == r.len && runs[i + n].row - runs[i + n - 1].row == gap &&
           masks[static_cast<size_t>(runs[i + n].saved)] == m)
      ++n;
    for (int64_t b = 0; b < per_row;) {
      int64_t e = b + 1;
      while (e < per_row && m[static_cast<size_t>(e)] == m[static_cast<size_t>(b)]) ++e;
      if (m[static_cast<size_t>(b)] != 0) {
        arch::DmaDescriptor d;
        d.half = half;
        d.dram_base = (at >> g.beat_shift()) + static_cast<uint64_t>(r.saved * per_row + b);
        d.slot_base = static_cast<uint64_t>((first_row + r.row) * groups + b);
        d.bound = {static_cast<uint64_t>(e - b), static_cast<uint64_t>(r.len), static_cast<uint64_t>(n)};
        d.dram_stride = {1, per_row, n > 1 ? r.len * per_row : 0};
        d.slot_stride = {1, groups, n > 1 ? gap * groups : 0};
        d.lane_mask = m[static_cast<size_t>(b)];
        out.push_back(d);
      }
      b = e;
    }
    i += n;
  }
  return out;
}

std::vector<arch::DmaDescriptor> image_load(const arch::DmaGeometry& g, int64_t first_row, int64_t rows, int64_t lanes,
                                            uint64_t at, bool half) {
  std::vector<int64_t> all(static_cast<size_t>(rows));
  std::iota(all.begin(), all.end(), int64_t{0});
  return packed_rows_load(g, first_row, all, std::vector<std::vector<uint64_t>>(all.size(), image_row_masks(g, lanes)), at,
                          half);
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
