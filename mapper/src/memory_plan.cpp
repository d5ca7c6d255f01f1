#include "mapper/memory_plan.hpp"

#include <algorithm>

namespace fetta::mapper {

void UnifiedMemoryPlan::release_read_by(int step) {
  std::erase_if(parked_, [step](const Parked& pk) { return pk.consumer <= step; });
}

std::vector<RowRange> UnifiedMemoryPlan::parked_in(size_t half) const {
  std::vector<RowRange> r;
  for (const Parked& pk : parked_)
    if (pk.half == half) r.push_back(pk.rows);
  return r;
}

namespace {

// The ranges of [0, half_rows) that no range of `taken` overlaps, in row order.
std::vector<RowRange> clear_ranges(int64_t half_rows, std::vector<RowRange> taken) {
  std::sort(taken.begin(), taken.end(), [](const RowRange& a, const RowRange& b) { return a.first < b.first; });
  std::vector<RowRange> clear;
  int64_t row = 0;
  for (const RowRange& t : taken) {
    if (t.rows <= 0) continue;
    if (t.first > row) clear.push_back({row, std::min(t.first, half_rows) - row});
    row = std::max(row, t.end());
    if (row >= half_rows) break;
  }
  if (row < half_rows) clear.push_back({row, half_rows - row});
  std::erase_if(clear, [](const RowRange& r) { return r.rows <= 0; });
  return clear;
}

// The fewest of `clear` that hold `rows` rows: the largest first (the higher of two equal ones),
// in row order, the last cut to what is left; nullopt when all of them together are too few.
std::optional<std::vector<RowRange>> fewest_holding(std::vector<RowRange> clear, int64_t rows) {
  std::sort(clear.begin(), clear.end(),
            [](const RowRange& a, const RowRange& b) { return a.rows != b.rows ? a.rows > b.rows : a.first > b.first; });
  std::vector<RowRange> pieces;
  for (const RowRange& c : clear) {
    if (rows <= 0) break;
    pieces.push_back({c.first, std::min(c.rows, rows)});
    rows -= pieces.back().rows;
  }
  if (rows > 0) return std::nullopt;
  std::sort(pieces.begin(), pieces.end(), [](const RowRange& a, const RowRange& b) { return a.first < b.first; });
  return pieces;
}

}  // namespace

std::optional<std::vector<std::vector<RowRange>>> UnifiedMemoryPlan::place_staging(const std::vector<Job>& jobs) const {
  std::vector<std::vector<RowRange>> at(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].save) continue;
    // Images the DMA or the host write come after the save (the DMA runs in order; the host's port
    // waits for it), so only what a later job finds there already is in the way.
    std::vector<RowRange> later;
    for (size_t u = i + 1; u < jobs.size(); ++u)
      if (jobs[u].half == jobs[i].half) later.insert(later.end(), jobs[u].writes.begin(), jobs[u].writes.end());
    const std::vector<RowRange> parked = parked_in(jobs[i].half);
    later.insert(later.end(), parked.begin(), parked.end());
    if (const std::optional<int64_t> row = place_rows(half_rows_, jobs[i].save_rows, 0, later)) {
      at[i] = {{*row, jobs[i].save_rows}};
      continue;
    }
    if (!jobs[i].split || jobs[i].save_rows < 1) return std::nullopt;
    std::optional<std::vector<RowRange>> pieces = fewest_holding(clear_ranges(half_rows_, later), jobs[i].save_rows);
    if (!pieces) return std::nullopt;
    at[i] = std::move(*pieces);
  }
  return at;
}

}  // namespace fetta::mapper
