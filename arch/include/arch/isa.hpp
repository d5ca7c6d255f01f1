// The instruction set of the accelerator's controller (docs/isa.md): the bit layout of every
// instruction for one configuration, and its encoder / disassembler. Shared by the RTL decoder
// (hw) and the compiler (mapper), so the two can never disagree on a field.
//
// An instruction is `bits()` wide (a multiple of 32) and travels to the controller as `words()`
// 32-bit words, word 0 first, word w holding bits [32w+31 : 32w]. Bits [3:0] are the opcode.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/config.hpp"

namespace fetta::arch {

enum class Opcode : uint32_t { gemm = 1, red_cfg = 2, flip = 3, store = 4 };
std::string to_string(Opcode op);

// An instruction that cannot be encoded: the message names the field, the value and the range.
class IsaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct IsaField {
  std::string name;
  int lsb = 0;
  int width = 0;
};

// One GEMM tile loop (docs/isa.md §GEMM): Z[m][n] (+)= sum_k A[m][k] B[k][n], weight-stationary
// with IB loaded from the left (a group of CEs at a time) or from the top (every CE at once). Counts are stored minus one; addresses are rows of the compute
// half (unified memory) or of the accumulator.
struct GemmInstr {
  uint32_t m = 1;             // M: IA rows streamed per fold
  uint32_t k_tiles = 1;       // folds along K (each K tile = Gk*R lanes)
  uint32_t n_tiles = 1;       // folds along N (each N tile = Gn*C columns)
  uint32_t gn = 1;            // Gn: CE groups holding different columns (power of two)
  uint32_t gk = 1;            // Gk: CEs per group splitting K (Gn * Gk = CE count)
  uint32_t a_base = 0, a_kt_stride = 0;                       // IA row = a_base + kt*stride + m
  uint32_t b_base = 0, b_kt_stride = 0, b_nt_stride = 0;      // IB row = b_base + kt*.. + nt*.. + n
  uint32_t acc_base = 0, acc_nt_stride = 0;                   // acc row = acc_base + nt*stride + m
  bool acc_accumulate = false;  // 0: the first K tile writes; 1: every tile accumulates
  uint32_t ia_sel = 0, ia_mask = 0;  // cheap distribution-network control, IA network
  bool ia_tr = false;
  uint32_t ib_sel = 0, ib_mask = 0;  // IB network
  bool ib_tr = false;
  bool ib_top = false;  // IB loaded from the top: B stored per CE, R rows per fold (docs/isa.md §2)
  // Output-stationary (docs/isa.md §2c; only on configurations whose CEs have it): the fields
  // then mean m = K (IA and IB rows streamed per fold), k_tiles = M tiles of Gm*R rows, n_tiles =
  // N tiles of Gn*C columns, a_kt_stride = IA rows between M tiles; IB row = b_base +
  // nt*b_nt_stride + k; acc row = acc_base + nt*acc_nt_stride + mt*R + r.
  bool os = false;
};

// Moves accumulator results into unified memory (docs/isa.md §store): `moves` segments of
// `count` lanes, each converted to the operand type (bf16: round to nearest even; integers:
// arithmetic shift right by `shift`, saturated). Move (i_0 .. i_3), level 0 innermost, copies
// accumulator row src_row, lanes src_lane .. src_lane + count - 1, to unified-memory row
// dst_row, lanes dst_lane .. dst_lane + count - 1 (lanes modulo the lane count), where
//   src_row = src_row_base + sum_l i_l * src_row_stride[l]   (and likewise the other three),
// each address modulo its field's range (a negative stride steps back). A move with dst_lane 0
// also writes the pad value (+0, or -0 with pad_neg) into every other lane of its row, so a
// row's lane-0 move must come before its other moves.
// Diagonal (`diag`, docs/isa.md §2b): a move is `count` (<= banks) elements j, one per bank, from
// accumulator lane src_lane + T*j to unified lane dst_lane + T*j (T = elements per bank), each
// bank at its own row: accumulator row src_row + the sum of src_row_bank_stride[h] over the bits
// h set in the element's unified bank, unified row dst_row + likewise dst_row_bank_stride[h] over
// its accumulator bank's bits. No padding. This is how a transposition moves a result row's
// elements, which all go to different unified rows, at one element per bank per cycle instead of
// one per cycle; a stride per bank bit follows label digits that change with the bank in mixed
// radix.
struct StoreInstr {
  static constexpr int kLevels = 4;
  std::array<uint32_t, kLevels> bound{1, 1, 1, 1};  // iterations of each level
  std::array<int64_t, kLevels> src_row_stride{}, src_lane_stride{}, dst_row_stride{}, dst_lane_stride{};
  uint32_t src_row_base = 0, src_lane_base = 0, dst_row_base = 0, dst_lane_base = 0;
  uint32_t count = 1;        // lanes per move
  bool other_half = false;   // write the half the host port addresses instead of the compute half
  bool pad_neg = false;      // bf16 only: pad with -0 (the IA padding) instead of +0
  uint32_t shift = 0;        // integer types only: requantization shift
  static constexpr int kMaxBankBits = 10;  // up to 1024 banks
  bool diag = false;
  // Diagonal moves only, per bit of the bank number (bits past log2(banks) must be 0); modulo the field.
  std::array<int64_t, kMaxBankBits> src_row_bank_stride{}, dst_row_bank_stride{};
  int64_t moves() const { return int64_t{bound[0]} * bound[1] * bound[2] * bound[3]; }
};

class IsaLayout {
 public:
  explicit IsaLayout(const ArchConfig& cfg);

  int bits() const { return bits_; }
  int words() const { return bits_ / 32; }
  int half_addr_bits() const { return half_addr_bits_; }  // rows of one unified-memory half
  int acc_addr_bits() const { return acc_addr_bits_; }
  int levels() const { return levels_; }                  // log2(lanes)
  int banks() const { return banks_; }                    // unified-memory (and accumulator) banks
  int bank_bits() const;                                  // log2(banks)
  int count_bits() const { return 16; }
  int group_bits() const { return 8; }
  // The reduction network's control register: levels() words of `lanes` bits (2 per switch),
  // then the `lanes` transpose bits; RED_CFG writes it in chunks.
  int red_cfg_bits() const { return red_cfg_bits_; }
  int red_chunk_bits() const { return bits_ - 12; }
  int red_chunks() const { return (red_cfg_bits_ + red_chunk_bits() - 1) / red_chunk_bits(); }

  const std::vector<IsaField>& gemm_fields() const { return gemm_; }
  const std::vector<IsaField>& store_fields() const { return store_; }
  // A GEMM or STORE field (the STORE ones start with "st_"), "op", "chunk" or "payload".
  const IsaField& field(const std::string& name) const;
  bool has_field(const std::string& name) const;

 private:
  int bits_ = 0, half_addr_bits_ = 0, acc_addr_bits_ = 0, levels_ = 0, red_cfg_bits_ = 0, banks_ = 1;
  std::vector<IsaField> gemm_;
  std::vector<IsaField> store_;
  std::vector<IsaField> other_;
};

using Words = std::vector<uint32_t>;

// Pipeline latencies of the generated top, part of the ISA's timing contract (docs/isa.md):
// the generators check that their blocks have exactly these latencies.
struct SystemTiming {
  int dist_latency = 0;  // distribution network: floor((log2 N + 1) / dist_pipeline_every), + 1 for the output
                         // register unless that already ends on a register; 0 if fixed
  int red_latency = 0;   // reduction network: a register after every level, log2 N + 1, and a binary32
                         // adder's stages at every level with adders (red_first_add_level on); 0 if fixed
  int ctrl_delay = 0;    // read issue -> CE input: 1 (registered RAM read) + dist_latency
  int acc_delay = 0;     // read issue -> accumulator op: ctrl_delay + R*(mac stages + 1) + product stages + red_latency
  int drain = 0;         // DRAIN state cycles after the last IA read's GEMM-state exit: acc_delay + 2 + accum_pipeline - 1
  int ib_top_load = 0;   // cycles of one IB load from the top: 1 + (R - 1) * (mac stages + 1)
};
SystemTiming system_timing(const ArchConfig& cfg);

// The reduction network's lowest butterfly level with adders: a CE's C columns are consecutive
// lanes that are never summed (the compiler sums the same column of several CEs, lanes C apart),
// so with C a power of two levels 0 .. log2(C)-1 only pass or swap and are built without adders;
// 0 otherwise.
int red_first_add_level(const ArchConfig& cfg);

// Throws IsaError for a value that does not fit its field (or a count of 0).
Words encode_gemm(const IsaLayout& isa, const GemmInstr& g);
// `cfg_bits` = the whole red_cfg register (red_cfg_bits() entries of 0/1); chunk c of it.
Words encode_red_cfg(const IsaLayout& isa, int chunk, const std::vector<uint8_t>& cfg_bits);
Words encode_flip(const IsaLayout& isa);
// Instructions the top's controller queues (hw::ControllerParams; the wall-cycle model's too).
inline constexpr int kTopInstrQueueDepth = 4;
// Cycles the system bench holds the top's reset before it releases it and, a cycle later, starts
// the program (sim::SystemBench; the wall-cycle model's first cycles).
inline constexpr int kBenchResetCycles = 2;
// Throws IsaError for a base or count out of range (a diagonal move's count: 1 .. banks), a
// bound of 0 or above the field, or a conversion field the configuration's type does not have
// (pad_neg: bf16; shift: integers).
Words encode_store(const IsaLayout& isa, const StoreInstr& s);

// Cycles the controller is busy for one STORE (pop, start, one move per cycle, the last write).
int64_t store_instr_cycles(const StoreInstr& s);

// One line per instruction, e.g. "gemm m=64 k_tiles=1 ...", "red_cfg chunk=2", "flip".
std::string disassemble(const IsaLayout& isa, const Words& words);
// Field value of an instruction (for the decoder tests).
uint64_t field_value(const Words& words, const IsaField& f);

}  // namespace fetta::arch
