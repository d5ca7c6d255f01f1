// The program: everything a run of layers on one configuration does, decided before any data
// exists. The compiler plans each contraction (layer_search, compile), decides which
// intermediates stay on chip (STORE) and where their images wait, allocates DRAM, and writes the
// host's work as a flat list of operations over tensors: DRAM reads and writes, unified-memory
// row writes through an element map, instruction pushes (FLIPs, RED_CFG, GEMMs, STOREs, every
// flag final), waits, accumulator reads. An executor (sim/system) performs the operations on a
// Verilated top; a scoreboard checks each step's result against the golden model. Nothing in the
// list depends on data values. On disk: docs/program.md (save_program / load_program).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "mapper/compile.hpp"
#include "mapper/fate.hpp"
#include "verif/layer.hpp"

namespace fetta::mapper {

inline constexpr int kProgramFormatVersion = 9;

// The order the layer's networks are emitted in (docs/program.md, "Interleaved networks"):
// sequential, each to its end before the next; interleaved, step by step in turns, two at a time,
// so that the host reads one network's operands and writes its first images while another's
// contraction computes; fastest, whichever of the two the wall-cycle model predicts shorter
// (Program::interleaved says which).
enum class NetworkOrder { sequential, interleaved, fastest };
NetworkOrder parse_network_order(const std::string& s);  // std::invalid_argument naming the allowed values
std::string to_string(NetworkOrder o);

// How the compiler decides (the options of `fetta compile` / `fetta run`).
struct ProgramOptions {
  MapFor map_for = MapFor::fastest;  // a program mapped for compute and one for end to end, the shorter
  bool through_host = false;      // no intermediate kept on chip
  bool terms_separately = false;  // sums of terms: each term read and checked on its own
  // The layer's inputs and weights reach the unified memory through the DMA (docs/dma.md): each
  // operand image is placed in DRAM pre-tiled, beside the tensor, and one or two descriptors per
  // job load it into its half while the job before computes. Intermediates keep their path.
  // false: they go through the host's port, like intermediates.
  bool dma = true;
  // A contraction an earlier network of the layer computes already (the same operands contracted
  // the same way to the same labels: the WG gradients share prefixes, and with FP and BP) is not
  // repeated: that result is kept in DRAM and every later network reads it (ARCHITECTURE.md §1,
  // "intermediates from FP may be kept for WG"). false: every network contracts on its own.
  bool reuse = true;
  NetworkOrder order = NetworkOrder::fastest;
  // On the DMA path, with reuse: a result later networks read too may also stay on chip for its
  // next reader, where the wall-cycle model finds the program shorter (docs/program.md, "A
  // contraction computed once"). false: such results stay in DRAM for all their readers.
  bool shared_on_chip = true;
  // On the DMA path: a saved intermediate comes back by DMA gathers straight from its saved rows
  // into each reader's operand images (docs/dma.md §2, "Gathers"), or is saved in its readers'
  // layouts (§5), so the host moves no element of it; the scoreboard checks it at the layer's end.
  // false (a comparison, not a real host): the host reads it from DRAM and writes the images,
  // permuting on the way at no cost.
  bool gather = true;
  bool operator==(const ProgramOptions&) const = default;
};

struct ProgramLayer {
  std::string name;
  std::string yaml;  // the layer file's text (the scoreboard rebuilds the golden networks from it)
  std::vector<verif::Phase> phases;
  int64_t repeats = 0;  // contractions an earlier network computed, not emitted (ProgramOptions::reuse)
  bool operator==(const ProgramLayer&) const = default;
};

// A tensor the host program moves. Values travel as 64-bit words: operand bits (bf16, int8 in the
// low byte, int16) for inputs and intermediates, accumulator words for results.
struct ProgramTensor {
  enum class Kind : uint8_t {
    input,         // a layer's input (X, dY, a core) as a network node names it; preloaded into DRAM
    intermediate,  // a step's result rounded (bf16) or requantized to the operand type
    accumulator,   // a step's result as the accumulator holds it (what the host reads)
  };
  std::string name;
  Kind kind = Kind::input;
  std::vector<std::string> labels;
  std::vector<int64_t> dims;
  int layer = 0;           // index into Program::layers
  std::string input;       // input: the layer tensor it is (X, dY, G1, ...)
  int64_t dram_addr = -1;  // its place in DRAM; -1: never there (on chip, or only read from the accumulator)
  int dram_bytes = 0;      // bytes per element in DRAM
  int64_t numel() const;
  bool operator==(const ProgramTensor&) const = default;
};

// The conversion the host applies to accumulator words before they go to DRAM.
enum class Convert : uint8_t {
  none,     // accumulator words as they are (final results)
  bf16,     // fp32 -> bf16, round to nearest even
  requant,  // arithmetic shift right by `shift`, saturated to the operand type
};

// Where an operation's cycles count in its step's report.
enum class Account : uint8_t {
  compute,  // the contraction's cycles
  store,    // its STOREs' cycles
  none,     // the scoreboard's probes: neither (host cycles are not counted either); a
            // preload_image of the pad beat gathers read: not DRAM traffic of its own
};

enum class OpCode : uint8_t {
  preload,      // DRAM[tensor] <- the input's values, untimed (placing the layer's inputs)
  fetch,        // host buffer[tensor] <- DRAM[tensor], a timed read
  write_rows,   // free half rows [a, a + b), lanes c <- buffer[tensor] through map (-1: pad)
  push,         // one instruction: words [a, a + b) of Program::words; c: the model's busy cycles for it
  wait_idle,    // until the controller is idle with an empty queue
  read_acc,     // buffer[tensor] (accumulator words) <- rows [0, a), lanes list; the words land at map
  check,        // the scoreboard: step `report`'s result (buffer[tensor]) against the golden model
  store,        // DRAM[tensor] <- buffer[source] converted (convert, shift), a timed write
  check_rows,   // the scoreboard: free half rows [a, a + b), lanes c against golden[tensor] through map
  finish,       // step `report` is complete
  preload_image,  // DRAM[a ..] <- an operand image of input tensor: b rows of c lanes through map (-1: pad),
                  // each row as whole beats of the host port's lanes (docs/dma.md), untimed
  dma,          // one DMA descriptor: words [a, a + b) of Program::words into the DMA's queue
  wait_retired,  // until the controller has retired `a` instructions (a FLIP retires when it takes effect)
  read_saved,    // buffer[tensor] <- what the DMA saved at DRAM a: b rows of c lanes, the lanes list of each row;
                 // word i lands at map[i] (untimed: the scoreboard's view of a result in DRAM); source =
                 // tensor: a read again of rows read before (the first read counted the save's bytes)
  wait_dma_idle,  // until the DMA has done every descriptor pushed
};

struct Op {
  OpCode code = OpCode::wait_idle;
  Account account = Account::compute;
  Convert convert = Convert::none;
  bool host_counted = true;  // read_acc: false for the scoreboard's read of a result kept on chip
  uint16_t pad = 0;          // write_rows / check_rows: the value of map entries -1
  int32_t report = -1;       // the step report this op's cycles, host cycles and DRAM traffic go to
  int32_t tensor = -1;
  int32_t source = -1;       // store: the accumulator tensor converted
  int32_t shift = 0;         // store, requant
  int64_t a = 0, b = 0, c = 0;
  uint64_t map = 0, map_len = 0;      // a range of Program::maps: element indices (-1 pad)
  uint64_t lanes = 0, lanes_len = 0;  // read_acc: a range of Program::maps: the lanes read
  // The scoreboard's probe of a result kept on chip (its reads, the FLIPs around them): simulated
  // cycles that checking costs, counted apart from the design's own work and the host's.
  bool is_probe() const { return account == Account::none || !host_counted; }
  bool operator==(const Op&) const = default;
};

// What the golden model needs to rebuild a contraction's reduction order: the GEMM's shape and
// mapping choice (compile_gemm / compile_gemm_os are deterministic given them).
struct GemmRecord {
  GemmShape shape;
  bool os = false, ib_top = false;
  int gk = 1, gm = 1;
  std::string mapping;  // CompiledGemm::describe(), checked when rebuilt
};
// The CompiledGemm a record names; throws CompileError when it does not rebuild to `mapping`.
CompiledGemm rebuild_gemm(const arch::ArchConfig& cfg, const GemmRecord& r);

// One contraction as reported (one row of `fetta run`'s table), and what its check compares.
struct ProgramStep {
  int layer = 0;
  verif::Phase phase = verif::Phase::fp;
  int problem = 0;  // index into verif::phase_problems(layer, phase)
  std::string result;  // the problem's result name
  size_t term = 0, terms = 1;
  int step = 0, steps = 0;
  std::string lhs, rhs;
  std::string mapping;  // CompiledGemm::describe()
  int64_t m = 0, k = 0, n = 0, macs = 0;
  int64_t predicted = 0, store_predicted = 0;
  bool last = false;     // the network's result (else an intermediate)
  bool summed = false;   // a term of a sum formed in the accumulator
  bool on_chip = false;  // its result kept on chip by STORE
  bool saved = false;    // its result leaves by STORE and a DMA save (rounded to the operand type); with on_chip, a
                         // shared result its next reader takes on chip and later networks read from DRAM
  // store: kept on chip, the STOREs that place it; saved (not on chip), the STOREs that pack it in
  // its reader's layout (pre-tiled: docs/dma.md §5), empty when it is saved as the accumulator holds it.
  std::string store, through_host_because;
  bool pretiled() const { return saved && !on_chip && !store.empty(); }
  Fate fate = Fate::result;  // where the result goes (an intermediate: on chip, or why it leaves)
  std::vector<std::array<int64_t, 3>> images;  // kept on chip: per consumer job, (half, first row, rows) of its image
  // The check: A x B (one per term for a sum, checked on the last term's row; earlier terms'
  // rows have none), their operand tensors, and the intermediate the result becomes.
  std::vector<GemmRecord> gemms;
  std::vector<int32_t> a, b;
  int32_t intermediate = -1;
  int requant_shift = 0;
  bool checked() const { return !gemms.empty(); }
};

struct Program {
  int version = kProgramFormatVersion;
  std::string config_yaml;  // arch::to_yaml of the configuration compiled for
  std::string config_name;
  std::string config_hash;  // sha256 of config_yaml: the whole configuration (DRAM timing included)
  std::string hw_id;        // the top's hw_id (8 hex digits) when the compiler's caller knows it; else empty
  ProgramOptions options;
  std::vector<ProgramLayer> layers;
  std::vector<ProgramTensor> tensors;
  std::vector<ProgramStep> steps;
  std::vector<Op> ops;
  std::vector<uint32_t> words;  // instruction words, in push order
  std::vector<int64_t> maps;    // element maps and lane lists the ops refer to
  bool interleaved = false;     // the networks were emitted in turns (ProgramOptions::order)
};

// Compiles the layers (files) for cfg. Throws what plan_network throws (CompileError,
// SearchError), prefixed "<file> (<phase>): ", and CompileError when the layer's tensors exceed
// dram.capacity_mb.
Program compile_program(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
                        const std::vector<verif::Phase>& phases, const ProgramOptions& options = {});

// Where a program's intermediates go (docs/program.md, "Where intermediates go"): per fate, the
// steps whose result it is, network results left out.
struct IntermediateFates {
  int64_t intermediates = 0;
  std::array<int64_t, kFates> count{};
  int64_t pretiled = 0;  // of those that leave, saved in their reader's layout (ProgramStep::pretiled)
  int64_t of(Fate f) const { return count[static_cast<size_t>(f)]; }
};
IntermediateFates intermediate_fates(const Program& p);
// "intermediates: 0 of 10 stay on chip; the others leave through DRAM: 10 read by several contractions (...)"
std::string fates_text(const IntermediateFates& f);

// What running a program costs, known before it runs.
struct ProgramCost {
  int64_t contractions = 0;
  int64_t repeats = 0;         // contractions computed once for several networks (not among them)
  int64_t compute_cycles = 0;  // the model's, which the RTL reproduces
  int64_t macs = 0;
  // The least DRAM traffic any schedule of these layers needs: each layer input read once and
  // each network result written once, at the operand width.
  int64_t least_dram_bytes = 0;
};
ProgramCost program_cost(const Program& p);

// The DRAM bytes each step moves, known from the program alone (the executor counts the same
// operations: a run's steps report exactly these, and the DRAM target's totals are their sums):
// fetches and stores, the DMA's image loads, the saves (counted at their first read) and the
// host's reads of saved rows. The scoreboard's untimed looks are not traffic.
struct StepTraffic {
  int64_t read = 0, written = 0;
};
std::vector<StepTraffic> program_traffic(const Program& p, const arch::ArchConfig& cfg);

// What end to end is measured against (docs/dma.md §6): the larger of the compute cycles and the
// least DRAM traffic at the configuration's bandwidth, in cycles of its clock.
int64_t end_to_end_bound(const ProgramCost& c, const arch::ArchConfig& cfg);

// A program file that cannot be used: the message names the file, what is wrong and how to get a good one.
class ProgramError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `dir`/program.json (the index) and the binary streams it names; the same program gives
// byte-identical files.
void save_program(const Program& p, const std::string& dir);
// Reads a program back, checking the version, every stream's length and sha256 and the index's
// own checksum. Throws ProgramError.
Program load_program(const std::string& dir);
// Throws ProgramError unless `p` was compiled for `cfg` (its hw_id when both are known, and the
// configuration hash), naming both.
void check_program_target(const Program& p, const arch::ArchConfig& cfg, const std::string& hw_id);

// sha256 of `bytes`, 64 hex digits (OpenSSL).
std::string program_sha256(const std::string& bytes);

std::string to_string(ProgramTensor::Kind k);
std::string to_string(OpCode c);

}  // namespace fetta::mapper
