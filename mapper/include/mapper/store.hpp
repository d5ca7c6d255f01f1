// Intermediates on chip: the STORE program (arch::StoreInstr, docs/isa.md §store) that moves a
// contraction's result from the accumulator into the operand image its consumer reads, so the
// result never leaves the chip (docs/architecture.md §6).
//
// The producer's result Z sits in the accumulator where mapper::z_slot says (weight-stationary:
// rows (N tile, m), column j of the tile on lane col_lane[j]; output-stationary: rows (N tile,
// M tile, r), lanes (CE, c)); the consumer reads it as its operand image (mapper::a_slot /
// b_slot: K on the lanes, or with output-stationary M or N on the lanes). Every
// element is one (accumulator row, lane) -> (unified row, lane) pair; runs of lanes that stay
// together on both sides become moves of `count` lanes, and the moves in the consumer's row order
// are fitted exactly into 4-level affine nests (several instructions when more levels are
// needed). Where those moves are narrower than the banks (a transposition: a result row's
// elements go to different unified rows), diagonal moves (one element per bank, each bank at its
// own rows) are planned too, and the cheaper program kept. When the layouts cannot be joined
// this way the plan says why.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "mapper/compile.hpp"

namespace fetta::mapper {

struct StorePlan {
  std::vector<arch::StoreInstr> program;  // empty when not possible
  std::string why_not;                    // the reason, when not possible
  int64_t moves = 0;                      // segments moved (one per cycle)
  int64_t predicted_cycles = 0;           // the controller's busy cycles for the program
  int64_t nests = 0;                      // affine nests the moves were split into (every part's)
  int64_t diagonal_moves = 0;             // of `moves`, the diagonal ones (one element per bank each)
  int64_t elements = 0;                   // elements written (a move's lanes, a diagonal move's banks)
  // One part per output chunk of the producer that holds some of the image, in the producer's job
  // order: part i is program[part_begin[i] ..] up to the next part and must run right after the
  // producer's job after_job[i] (which completes that chunk), before its next job overwrites the
  // accumulator rows.
  std::vector<size_t> part_begin, after_job;
  size_t part_end(size_t i) const { return i + 1 < part_begin.size() ? part_begin[i + 1] : program.size(); }
  bool ok() const { return !program.empty(); }
};

// The STORE program writing producer `p`'s whole result into consumer `c`'s operand image of job
// `job` (as IA when `as_a`, else as IB), bf16 padding as that role pads (-0 for IA, +0 for IB),
// integer results shifted by `shift`. Without `per_chunk` the producer must hold its whole result
// in the accumulator at once (one output chunk); with it, each output chunk gets its own part of
// the program (a row of the image written by several chunks must get its lane 0, which pads the
// row, from the first of them). The consumer's role must be served by one image (no operand
// replication: with fixed wiring only a B loaded from the top qualifies). Instructions write the
// compute half; the caller sets other_half. A part that would take more than `max_part_instrs`
// instructions both as ordinary and as diagonal moves is refused (a sequence that fragmented is far
// slower than the host path; the cap bounds the planner's work).
inline constexpr int64_t kMaxStorePartInstrs = 4096;
StorePlan plan_store(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                     uint32_t shift = 0, bool per_chunk = false, int64_t max_part_instrs = kMaxStorePartInstrs);

// Whether a STORE program moves any element out of its lane (a rotation, a lane gather, a
// diagonal move): what a configuration without on-chip reordering (memory.store_reorder: false)
// cannot do.
bool changes_layout(const arch::ArchConfig& cfg, const StorePlan& sp);

// A result saved pre-tiled (docs/dma.md §5, "Pre-tiled saves"): each output chunk of producer `p`
// STOREs the rows of consumer `c`'s operand image of job `job` that it holds, packed one after
// another into staging rows, and the DMA saves them as they are, so the reader loads its image
// with row copies (under a lane mask where several chunks share a row). image_rows_by_chunk gives,
// per output chunk (output_chunks(p) order), the image rows (from the image's first row,
// ascending) it writes and, per row, the image lanes it fills: its elements, and the row's padding
// when it holds the row's lane 0 (whose move pads the row). "" when it can, else why not (a row
// with no element on lane 0, or only padding).
struct ChunkRows {
  std::vector<int64_t> rows;
  std::vector<std::vector<bool>> lanes;  // per row, per image lane
};
std::string image_rows_by_chunk(const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                                std::vector<ChunkRows>& rows);
// The STORE part of output chunk `chunk` writing its image rows (`rows`, from image_rows_by_chunk)
// packed from unified row `first_row` of the compute half on, integer results shifted by `shift`.
StorePlan plan_store_rows(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                          size_t job, uint32_t shift, size_t chunk, const std::vector<int64_t>& rows, int64_t first_row,
                          int64_t max_part_instrs = kMaxStorePartInstrs);
// plan_store_rows for every output chunk at once, each packed from row 0 (an empty plan for a
// chunk with no rows): the image's elements are placed once, not once per chunk.
std::vector<StorePlan> plan_store_pieces(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c,
                                         bool as_a, size_t job, uint32_t shift, const std::vector<ChunkRows>& rows);

// Where each element of producer `p`'s result sits in consumer `c`'s operand image of job `job`
// (as IA when `as_a`, else as IB): its unified row (from the compute half's row 0) and lane, and
// the output chunk (output_chunks(p) index), accumulator row (from the chunk job's acc_base) and
// lane it leaves the producer in; in the result's row-major order. "" when every label of the
// result is in the operand, else why not (el then incomplete). The STORE planner's and the DMA
// gather's common map.
struct ImageElement {
  size_t chunk = 0;
  int64_t dst_row = 0, dst_lane = 0, src_row = 0, src_lane = 0;
};
std::string result_image_elements(const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                                  std::vector<ImageElement>& el);

// Fits a sequence of 4-vectors exactly as an affine nest base + sum_l i_l * stride_l (level 0
// innermost, bounds >= 2); returns false when the sequence is not one. Exposed for tests.
struct AffineLevel {
  int64_t bound = 1;
  std::array<int64_t, 4> stride{};
};
bool fit_affine_nest(const std::vector<std::array<int64_t, 4>>& seq, std::array<int64_t, 4>& base,
                     std::vector<AffineLevel>& levels);

// A sequence as consecutive affine nests, every bound <= max_bound: the whole as one when it is
// one, else greedily the longest nest from each position on (a sequence broken where the
// consumer's tiles cut across the producer's label digits is often a few regular stretches).
// Expanded in order, the nests give back the sequence exactly. Exposed for tests.
struct AffineNest {
  std::array<int64_t, 4> base{};
  std::vector<AffineLevel> levels;
};
std::vector<AffineNest> split_affine_nests(const std::vector<std::array<int64_t, 4>>& seq, int64_t max_bound);

}  // namespace fetta::mapper
