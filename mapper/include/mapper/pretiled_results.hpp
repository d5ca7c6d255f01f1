// Saved intermediates in their readers' layouts (ProgramOptions::gather, docs/dma.md §5,
// "Pre-tiled saves"): on a top that reorders on chip, each output chunk of the producer STOREs the
// rows of its readers' operand images that it holds, packed into staging rows, and the DMA saves
// them as they are. The readers' jobs then load their images with row copies at the DRAM's burst
// rate instead of gathering them element by element from the accumulator's layout. A result
// several networks read (a shared one) is saved once per reader. This unit plans the pieces (one
// per output chunk, reader and distinct reader image), records where each was saved, and gives
// the readers' load descriptors.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arch/config.hpp"
#include "arch/dma.hpp"
#include "mapper/compile.hpp"
#include "mapper/store.hpp"

namespace fetta::mapper {

class PretiledResults {
 public:
  explicit PretiledResults(const arch::ArchConfig& cfg);

  // A reader of the result: its contraction, the operand (IA when as_a), and per job the job
  // whose image it loads (jobs over M share a B image, saved once).
  struct Reader {
    CompiledGemm gemm;
    bool as_a = true;
    std::vector<size_t> image_of;
  };
  // The rows of one reader image that one output chunk writes, packed in staging rows from
  // `offset` (from the chunk's first staging row) on, and where the DMA saved them.
  struct Piece {
    size_t reader = 0;
    size_t job = 0;                            // the reader job whose image they are
    std::vector<int64_t> rows;                 // image rows, ascending (from the image's first row)
    std::vector<std::vector<uint64_t>> masks;  // per row, per beat: the lanes the reader loads from this piece
    int64_t offset = 0;                        // staging row, from the chunk's first
    std::optional<uint64_t> at;                // DRAM byte address once saved
  };
  struct Plan {
    CompiledGemm producer;
    std::vector<Reader> readers;
    std::vector<std::vector<Piece>> chunks;  // per output chunk of the producer (output_chunks order)
    int64_t store_cycles = 0;                // the STOREs' busy cycles and pushes
    int64_t staging_rows(size_t chunk) const;
    // Bytes the readers' loads move: every job its image's pieces (rows several chunks share, once each).
    uint64_t load_bytes(const arch::DmaGeometry& g) const;
    // "<rows> rows of its reader's images (as A) in <n> pieces, packed by STOREs of <c> cycles, loaded back by row copies"
    std::string describe() const;
  };
  // How producer p's result would be saved as the images of `readers` (contraction, as IA), or
  // nullopt and why not: some image row has no element on lane 0 or only padding, a STORE cannot
  // form a piece, this top does not reorder on chip and a piece would move an element out of its
  // lane, or a chunk's pieces would not fit in a half. `shift`: the integer requantization.
  std::optional<Plan> plan(const CompiledGemm& p, const std::vector<std::pair<const CompiledGemm*, bool>>& readers,
                           uint32_t shift, std::string& why) const;

  // The result being emitted is saved pre-tiled by `plan` (until made() or cancel()).
  void start(Plan plan) { current_ = std::move(plan); }
  Plan* current() { return current_ ? &*current_ : nullptr; }
  const Plan* current() const { return current_ ? &*current_ : nullptr; }
  void cancel() { current_.reset(); }
  // The current plan's result became tensor t: its readers load it from the pieces' DRAM.
  void made(int32_t t);
  void new_layer() { saved_.clear(), current_.reset(); }
  // Which reader of tensor t contraction c is for its operand (IA when as_a), if t was saved
  // pre-tiled for it: the same mapping (CompiledGemm::describe) and images.
  std::optional<size_t> reader_of(int32_t t, const CompiledGemm& c, bool as_a) const;
  // Job j of reader r of t: its image loaded into the rows from `first_row` of `half`, a piece at a time.
  std::vector<arch::DmaDescriptor> loads(int32_t t, size_t r, size_t j, int64_t first_row, bool half) const;

 private:
  // Per row, per beat of the host port's lanes, the DMA lane mask of the image lanes set in `lanes`.
  std::vector<std::vector<uint64_t>> beat_masks(const std::vector<std::vector<bool>>& lanes) const;
  // Adds reader r's pieces to `pl`; false and why not.
  bool add_reader(Plan& pl, size_t r, uint32_t shift, std::string& why) const;

  const arch::ArchConfig& cfg_;
  arch::DmaGeometry geometry_;
  std::optional<Plan> current_;
  std::map<int32_t, Plan> saved_;  // pre-tiled intermediates of this layer
};

}  // namespace fetta::mapper
