// What moving an intermediate from its producer to its consumer costs, and whether it can stay on
// chip (docs/architecture.md §5–6): the consumer's images placed in the unified-memory half each of
// its jobs computes on, clear of everything written there before it runs (mapper/placement.hpp),
// and STORE programs (mapper/store.hpp) that write the result into them when they take fewer
// cycles than the way through the host and DRAM they replace. The compiler asks it while choosing
// mappings (movement_cost) and while emitting a program (place_and_plan); both get the same answer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "mapper/compile.hpp"
#include "mapper/fate.hpp"
#include "mapper/placement.hpp"
#include "mapper/pretiled_results.hpp"
#include "mapper/store.hpp"

namespace fetta::mapper {

// Requantization of an integer intermediate: arithmetic shift right by the operands' fraction
// bits + ceil(log2 K), saturated to the operand type, so the shifted values stay within the inputs' range.
int requant_shift(arch::DataType t, int64_t K);

// Which B image job j reads (its N and K tiles): jobs over M with the same one share it, so the
// host writes it into a half once and the movement estimate counts it once.
std::array<int64_t, 2> b_image(const GemmJob& j);

// The rows job `j` of c writes into its half: its A and B images.
std::array<RowRange, 2> footprint(const CompiledGemm& c, size_t j);

// The beats of an accumulator row that hold c's result lanes, the ones a DMA save moves: the
// first (a beat is one group of `host_lanes` lanes) and how many.
std::array<int64_t, 2> saved_beats(const CompiledGemm& c, int host_lanes);

// "800 moves of 4 lane(s)"; with diagonal moves (whose width varies) "800 moves (768 diagonal: ...)".
std::string moves_text(const std::vector<StorePlan>& plans);
// "<r> elements per STORE cycle (<lanes> for a row copy)": what the STOREs write per cycle the
// controller is busy with them, against a row copy's; a transposition moves an element per bank a
// cycle at most (moves_text says which kind of move it is).
std::string store_rate_text(const std::vector<StorePlan>& plans, int lanes);

// A quantity summed over the STORE programs of one result (one per consumer job).
template <typename F>
int64_t total(const std::vector<StorePlan>& plans, F of) {
  int64_t n = 0;
  for (const StorePlan& sp : plans) n += static_cast<int64_t>(of(sp));
  return n;
}

// A result kept on chip: STORE programs write it, rounded or requantized, into the operand
// images of the contraction that consumes it (right after the producer: the accumulator is
// overwritten by the next contraction), each into the half its consumer job computes on.
struct OnChip {
  const PlannedStep* consumer = nullptr;
  int consumer_step = 0;
  bool as_a = true;
  std::vector<StorePlan> stores;      // one per job of the consumer (in parts: one per producer chunk)
  std::vector<size_t> half_of;        // per consumer job: the half it computes on
  std::vector<size_t> producer_half;  // per producer job: the half it computes on
  std::vector<RowRange> rows;         // per consumer job: where its image is
};

// An image a STORE wrote that waits in a half for its consumer (a step of the current network).
struct Parked {
  size_t half = 0;
  RowRange rows;
  int consumer = 0;
};

// Why an intermediate leaves the chip, when it does: the fate and the reason in words.
struct Why {
  Fate fate = Fate::on_chip;
  std::string text;
};

class Movement {
 public:
  // `dma`: results leave by STORE and a DMA save (docs/dma.md §5), else through the host's port;
  // `through_host`: no intermediate stays on chip; `gather`: with `dma`, a saved intermediate
  // comes back by DMA gathers into its reader's images (ProgramOptions::gather).
  Movement(const arch::ArchConfig& cfg, bool dma, bool through_host, bool gather = false);

  // Host cycles writing consumer c's A (a_operand) or B images through the host port, as the
  // program does: A for every job, B only when the half the job computes on (they alternate)
  // does not hold that job's B image already.
  int64_t image_write_cycles(const CompiledGemm& c, bool a_operand) const;

  // The cycles an intermediate takes through DRAM. On the host path: reading its accumulator rows,
  // the DRAM round trip (a write and a read), writing the consumer's operand images (every job).
  // On the DMA path the rows leave by STORE and a save beside the next job, so the STOREs and the
  // host's read of the saved beats (one per job) replace the first two.
  // `saved_anyway`: the rows are saved for later readers whatever this one does (a shared result),
  // so only the host's read of them and the image writes are this consumer's.
  int64_t host_path_cycles(const CompiledGemm& p, const CompiledGemm& c, bool as_a, bool saved_anyway = false) const;

  // The same through DRAM with gathers instead of the host's read and writes: the staging STOREs
  // (unless saved anyway) and the gathers of every job's image run alone (mapper::gather_cycles);
  // nullopt where some job's image cannot be gathered (it then takes the host path).
  std::optional<int64_t> gather_path_cycles(const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                                            bool saved_anyway = false) const;

  // Why saving a result in its readers' layouts (docs/dma.md §5, "Pre-tiled saves") does not pay:
  // its STOREs' cycles and the loads' DRAM time against gathering every reader's images (the
  // first reader's with the staging STOREs, the later ones' alone; a reader that cannot gather
  // would take the host's way); nullopt when it pays.
  std::optional<std::string> pretiling_loses(const PretiledResults::Plan& plan) const;

  // The STOREs that stage p's result rows for their DMA saves, one per output chunk: their cycles.
  int64_t staging_store_cycles(const CompiledGemm& p) const;

  // STORE programs' cost: their busy cycles and the host's pushes of their instructions.
  int64_t store_cost(const std::vector<StorePlan>& plans) const;

  // Whether a STORE program moves any element out of its lane (a rotation, a lane gather, a
  // diagonal move): what a configuration without on-chip reordering cannot do.
  bool changes_layout(const StorePlan& sp) const;

  // The STOREs of p's result into consumer c's operand images, one per job of c, when the
  // hardware can place them there and they take fewer cycles than the host path they replace;
  // else nullopt and why not. `estimate`: the caller wants only the cost, so planning stops as
  // soon as the STOREs planned so far cost the host path. `saved_anyway`: as host_path_cycles.
  std::optional<std::vector<StorePlan>> store_that_pays(const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                                                        Why& why, bool estimate, bool saved_anyway = false) const;

  // Places consumer c's images of p's result, each job's in the half it will compute on, clear of
  // what is written there before it runs (the producer's jobs after its first output chunk, the
  // `between` contractions' jobs, the `waiting` images, the consumer's earlier jobs and its other
  // operand; c's bases move where needed), and plans the STOREs into them, when they pay
  // (store_that_pays); else nullopt and why not. `flips`: FLIPs pushed before the producer's first
  // job (the i-th job from there computes on half (flips + 1 + i) % 2). `saved_anyway`: as
  // host_path_cycles.
  std::optional<OnChip> place_and_plan(const CompiledGemm& p, CompiledGemm& c, bool as_a, int64_t flips,
                                       const std::vector<const CompiledGemm*>& between,
                                       const std::vector<Parked>& waiting, Why& why,
                                       bool estimate = false, bool saved_anyway = false) const;

  // The data movement around step c, for plan_network's choice of mapping (MapFor): for a
  // consumer of the previous result p, the STORE (when it pays; not through the host) or the host
  // path of that operand, plus the host writes of the other operand's images; without p the host
  // writes of both. c runs next after p; images waiting for later consumers are not known yet.
  int64_t movement_cost(const CompiledGemm* p, const CompiledGemm& c, bool as_a) const;

 private:
  const arch::ArchConfig& cfg_;
  bool dma_ = true, through_host_ = false, gather_ = false;
  arch::IsaLayout isa_;
  int host_lanes_ = 0;
};

}  // namespace fetta::mapper
