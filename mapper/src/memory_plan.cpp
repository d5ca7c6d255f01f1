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

std::optional<std::vector<int64_t>> UnifiedMemoryPlan::place_staging(const std::vector<Job>& jobs) const {
  std::vector<int64_t> at(jobs.size(), -1);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (!jobs[i].save) continue;
    // Images the DMA or the host write come after the save (the DMA runs in order; the host's port
    // waits for it), so only what a later job finds there already is in the way.
    std::vector<RowRange> later;
    for (size_t u = i + 1; u < jobs.size(); ++u)
      if (jobs[u].half == jobs[i].half) later.insert(later.end(), jobs[u].writes.begin(), jobs[u].writes.end());
    const std::vector<RowRange> parked = parked_in(jobs[i].half);
    later.insert(later.end(), parked.begin(), parked.end());
    const std::optional<int64_t> row = place_rows(half_rows_, jobs[i].save_rows, 0, later);
    if (!row) return std::nullopt;
    at[i] = *row;
  }
  return at;
}

}  // namespace fetta::mapper
