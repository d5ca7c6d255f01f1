// The DMA descriptors a program uses (docs/dma.md §2, docs/program.md "On the DMA path"): an
// operand image placed in DRAM pre-tiled, loaded into the unified-memory half its job computes on,
// and a job's finished result rows saved from a half to DRAM. Both move whole beats of the host
// port's lanes; the compiler decides where (the DRAM map, the rows) and when (the hoist point).
#pragma once

#include <cstdint>
#include <vector>

#include "arch/dma.hpp"

namespace fetta::mapper {

// Beats per row of an image of `lanes` lanes: whole beats, the last one's lanes past `lanes` zero.
int64_t image_beats_per_row(const arch::DmaGeometry& g, int64_t lanes);

// Loads an image of `rows` rows of `lanes` lanes, pre-tiled at DRAM byte address `at`
// (image_beats_per_row beats a row, rows one after another), into rows first_row.. of `half`:
// one descriptor of the beats whose every lane is the image's, and one of the last beat of each
// row under a lane mask when the rows end inside a beat (so lanes past the image keep their value).
std::vector<arch::DmaDescriptor> image_load(const arch::DmaGeometry& g, int64_t first_row, int64_t rows, int64_t lanes,
                                            uint64_t at, bool half);

// The lane masks of a row of an image of `lanes` lanes, one per beat: every lane of the image.
std::vector<uint64_t> image_row_masks(const arch::DmaGeometry& g, int64_t lanes);

// Loads image rows `rows` (from the image's first row, ascending), saved packed one after another
// at DRAM byte address `at` (masks[i].size() beats each), into rows first_row + rows[i] of `half`,
// beat b of row i under lane mask masks[i][b] (0: not loaded): a descriptor per run of consecutive
// rows with the same masks and per run of beats with the same mask, runs of one length, spacing
// and masks folded into the descriptor's outer level.
std::vector<arch::DmaDescriptor> packed_rows_load(const arch::DmaGeometry& g, int64_t first_row,
                                                  const std::vector<int64_t>& rows,
                                                  const std::vector<std::vector<uint64_t>>& masks, uint64_t at,
                                                  bool half);

// Saves beats first_beat .. first_beat + beats - 1 of rows row .. row + rows - 1 of `half` to DRAM
// byte address `at`, row after row, `beats` beats each.
arch::DmaDescriptor result_save(const arch::DmaGeometry& g, int64_t row, int64_t rows, int64_t first_beat, int64_t beats,
                                uint64_t at, bool half);

}  // namespace fetta::mapper
