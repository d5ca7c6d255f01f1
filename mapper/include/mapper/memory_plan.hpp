// What each unified-memory half holds while the compiler emits a program, and where a result's
// rows wait: the images STOREd for a later contraction (live until it runs), the B image each half
// holds for the jobs over M that share it, and the staging rows a DMA save needs (docs/program.md,
// "Where intermediates go"; docs/architecture.md §6). Within a network: the images of a result
// kept on chip wait for a consumer of the same network; a result later networks read leaves by DMA.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "mapper/movement.hpp"
#include "mapper/placement.hpp"

namespace fetta::mapper {

class UnifiedMemoryPlan {
 public:
  // A B image: (the B tensor's key, its N tile, its K tile). Jobs over M with the same one share it.
  using BImage = std::array<int64_t, 3>;

  explicit UnifiedMemoryPlan(int64_t half_rows) : half_rows_(half_rows) {}
  int64_t half_rows() const { return half_rows_; }

  // An image STOREd into `rows` of `half`, live until step `consumer` of the network reads it.
  void park(size_t half, RowRange rows, int consumer) { parked_.push_back({half, rows, consumer}); }
  // The images step `step` reads, and those of earlier steps, are dead.
  void release_read_by(int step);
  // A network starts: nothing of the one before waits on chip.
  void clear_parked() { parked_.clear(); }
  bool any_parked() const { return !parked_.empty(); }
  const std::vector<Parked>& parked() const { return parked_; }
  // The rows of `half` that parked images hold.
  std::vector<RowRange> parked_in(size_t half) const;

  // Whether `half` holds B image `b` already (its jobs' host or DMA writes can be skipped).
  bool holds(size_t half, const BImage& b) const { return b_in_half_[half] == b; }
  void hold(size_t half, const BImage& b) { b_in_half_[half] = b; }
  // STOREs overwrote the halves (after a producer's last job): neither holds a B image any more.
  void forget_b_images() { b_in_half_[0] = b_in_half_[1] = kNone; }

  // One job of a contraction's sequence, in order: the half it computes on (they alternate), the
  // rows it writes there before it runs (its B image, and its A image when a STORE put it there),
  // and, when it saves its results, how many rows they take and whether they may wait in pieces
  // (rows copied in order, a save descriptor per piece; a pre-tiled save's pieces have offsets of
  // their own and may not).
  struct Job {
    size_t half = 0;
    std::vector<RowRange> writes;
    bool save = false;
    int64_t save_rows = 0;
    bool split = false;
  };
  // The staging rows of every saving job (none for the others): rows of its half that no later job
  // of the sequence on that half writes and no parked image holds, where its results wait for the
  // DMA's save after the next FLIP. One range where one fits: row 0 when clear, else the highest
  // clear range (place_rows). Else, for a job that may split, the fewest clear ranges that hold
  // its rows (the largest first, the higher of two equal ones), in row order, the last one cut to
  // what is left. nullopt when one finds no room.
  std::optional<std::vector<std::vector<RowRange>>> place_staging(const std::vector<Job>& jobs) const;

 private:
  static constexpr BImage kNone{-1, -1, -1};
  int64_t half_rows_;
  std::vector<Parked> parked_;
  std::array<BImage, 2> b_in_half_{kNone, kNone};
};

}  // namespace fetta::mapper
