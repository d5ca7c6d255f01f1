// Rows for an operand image that a STORE writes before its consumer's turn: a range of one
// unified-memory half that nothing else writes until the consumer has read it (the images of the
// jobs in between, the consumer's other operand, other images waiting there). docs/architecture.md §6.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace fetta::mapper {

struct RowRange {
  int64_t first = 0, rows = 0;
  int64_t end() const { return first + rows; }
  bool overlaps(const RowRange& o) const { return rows > 0 && o.rows > 0 && first < o.end() && o.first < end(); }
};

// The first row of `rows` rows of a half of `half_rows` that overlap none of `taken`: `preferred`
// when that range is clear (the compiler's own place, so nothing moves without need), else the
// highest clear range (first fit from the top, below the ranges in the way). nullopt: no room.
std::optional<int64_t> place_rows(int64_t half_rows, int64_t rows, int64_t preferred, const std::vector<RowRange>& taken);

}  // namespace fetta::mapper
