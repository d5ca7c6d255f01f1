#include "mapper/placement.hpp"

#include <algorithm>

namespace fetta::mapper {

namespace {

// The lowest first row of the ranges in `taken` that overlap `r`, or nullopt if none does.
std::optional<int64_t> lowest_in_the_way(const RowRange& r, const std::vector<RowRange>& taken) {
  std::optional<int64_t> low;
  for (const RowRange& t : taken)
    if (r.overlaps(t)) low = std::min(low.value_or(t.first), t.first);
  return low;
}

}  // namespace

std::optional<int64_t> place_rows(int64_t half_rows, int64_t rows, int64_t preferred, const std::vector<RowRange>& taken) {
  if (rows < 1 || rows > half_rows) return std::nullopt;
  if (preferred >= 0 && preferred + rows <= half_rows && !lowest_in_the_way({preferred, rows}, taken)) return preferred;
  // Each step moves below everything in the way, so the first row falls strictly: at most
  // taken.size() + 1 steps.
  for (int64_t first = half_rows - rows; first >= 0;) {
    const std::optional<int64_t> low = lowest_in_the_way({first, rows}, taken);
    if (!low) return first;
    first = *low - rows;
  }
  return std::nullopt;
}

}  // namespace fetta::mapper
