// Results that leave the chip by DMA (docs/dma.md §5, docs/program.md "On the DMA path"): each
// job's finished rows, STOREd into a half as row copies, are saved once the next FLIP gives the host
// that half; the reads of the saved rows follow: the host's, early while a later job computes or
// where the consumer fetches the intermediate, again for a later network that reuses it, and the
// scoreboard's at the layer's end for a final result. This unit keeps the saves pending and the
// reads waiting, and emits them into the op stream (mapper/op_stream.hpp) when their time comes.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "mapper/op_stream.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

class SavedResults {
 public:
  // A job's save descriptor (pushed after the next FLIP) and the scoreboard's read of the DRAM it
  // fills. `early`: the rows are an intermediate's, which the host may read as soon as they are saved.
  void queue(const Op& descriptor, const Op& read, bool early);
  bool pending() const { return !pending_.empty(); }
  // The pending saves' descriptors, their cycles counted to `report` as `account`; returns the
  // indices of the reads they allow early.
  std::vector<int64_t> push_pending(OpStream& s, int32_t report, Account account);
  // The host reads those rows into tensor `into` for step `report` (once the DMA is idle).
  void read_early(OpStream& s, const std::vector<int64_t>& early, int32_t into, int32_t report);

  // The current contraction saved a final result: its reads, check (of the rounded words) and step
  // end wait for the layer's end.
  void defer_result(int32_t report, int32_t z, Convert convert, int shift);
  // The layer's end: a FLIP frees the half the last saving job computed on, the last saves go, and
  // once the DMA is idle (every result in DRAM) the deferred reads, checks and step ends run.
  void end_layer(OpStream& s);

  // The current contraction saved intermediate `t` of step `producer`: the reads not done early wait
  // for its consumer's fetch. `shared`: later networks read it again. `checked`: kept on chip for its
  // next reader too, checked and finished there.
  void keep(int32_t t, int32_t producer, Convert convert, int shift, bool shared, bool checked);
  // Whether t is a saved intermediate not fetched yet, and its producer's step.
  bool waiting(int32_t t) const { return fetch_.contains(t); }
  int32_t producer(int32_t t) const { return fetch_.at(t).producer; }
  // Whether t is a saved intermediate a later network reads again.
  bool read_again(int32_t t) const { return again_.contains(t); }
  // A new layer: its networks read nothing of the one before again.
  void forget_reads_again() { again_.clear(); }

  // Operand t into the host's buffer for step `report`: a DRAM read, or for a saved intermediate its
  // saved rows (fetch), or those read again. `overlap`: at the hoist point instead, while the GEMM
  // there computes. `gathered`: a saved intermediate the DMA gathers into the reader's images: only
  // the saves it needs are pushed (before the gathers), and the scoreboard reads and checks its rows
  // at the layer's end.
  void fetch(OpStream& s, int32_t t, int32_t report, bool overlap, bool gathered = false);

 private:
  void fetch_again(OpStream& s, const std::vector<Op>& reads, int32_t report);
  static Op host_read(Op rd, int32_t t, int32_t report);

  struct Pending {
    Op descriptor;
    int64_t early_read = -1;  // its read in reads_ the host may do once it is done, or -1
  };
  // An intermediate the DMA saved: its producer's step, how it was rounded, the reads of its rows.
  struct Fetch {
    int32_t producer = -1;
    Convert convert = Convert::bf16;
    int shift = 0;
    std::vector<Op> reads;  // of its saved rows, those the host did not read early
    bool shared = false;    // later networks read it too (again_)
    std::vector<Op> all;    // every read of its saved rows
    bool checked = false;   // kept on chip for its next reader too
  };
  std::vector<Pending> pending_;
  std::vector<Op> deferred_;       // the saved results' reads, checks and step ends, at the layer's end
  std::vector<Op> reads_;          // the reads of the rows the current contraction's jobs saved
  std::vector<bool> read_early_;   // per reads_ entry: the host read it while a later job computed
  std::map<int32_t, Fetch> fetch_;           // per intermediate, until its consumer fetches it
  std::map<int32_t, std::vector<Op>> again_;  // a saved intermediate's reads, for its later readers

  void defer_check(int32_t t, std::map<int32_t, Fetch>::iterator it);
  void keep_reads_again(int32_t t, const Fetch& f, int32_t report);
  static void check_and_finish(int32_t t, const Fetch& f, std::vector<Op>& ops);
};

}  // namespace fetta::mapper
