// The compiler: one binary contraction of a contraction sequence -> a GEMM mapping on the
// accelerator, the memory layout of its operands and result, the network control (through the
// routers) and the instructions (arch/isa.hpp, docs/isa.md). Also the cycle model of the
// generated controller and the reduction order the hardware applies (for the golden model).
//
// The GEMM: Z[m, n] = sum_k A[m, k] B[k, n], m / k / n each a group of tensor labels, linearized
// row-major (first label slowest). Weight-stationary (WS): A streams through the CEs as IA (one
// row m per cycle), B is held in the PEs (loaded from the left or the top). The G CEs form Gn
// groups of Gk CEs: a K tile is Gk*R lanes (the Gk CEs of a group split it; the reduction network
// sums them), an N tile is Gn*C columns (group gn holds columns gn*C .. gn*C+C-1; the groups share
// IA). Output-stationary (OS, on configurations whose CEs have it; mapper/os_gemm.hpp): A and B
// both stream, one k per cycle, and each of Gm x Gn CEs accumulates an R x C block of Z, drained
// into the accumulator; its A image has M on the lanes and K over the rows.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "route/red.hpp"
#include "mapper/os_gemm.hpp"
#include "mapper/problem.hpp"
#include "verif/contract.hpp"
#include "verif/layer.hpp"
#include "verif/tensor.hpp"

namespace fetta::mapper {

// A contraction the compiler cannot map (unsupported label structure, does not fit memory, a
// network pattern the hardware cannot route). The message says what and why.
class CompileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LabelGroup {
  std::vector<std::string> labels;
  std::vector<int64_t> dims;
  int64_t size() const;
};

struct GemmShape {
  std::string a_name, b_name;  // operand names (for reports)
  LabelGroup m, k, n;
  std::vector<std::string> a_labels, b_labels;  // the operands' own label orders
  int64_t macs() const { return m.size() * k.size() * n.size(); }
};

// Roles for a binary contraction: `a` streams (IA), `b` is held (IB). Labels of `a` that are kept
// go to m, of `b` to n, shared and not kept to k. Throws CompileError for a label kept while in
// both operands (a batch label) or summed while in only one.
GemmShape gemm_shape(const std::string& a_name, const std::vector<std::string>& a_labels,
                     const std::vector<int64_t>& a_dims, const std::string& b_name,
                     const std::vector<std::string>& b_labels, const std::vector<int64_t>& b_dims,
                     const std::vector<std::string>& keep);

struct GemmMapping {
  int gk = 1, gn = 1;        // CE grid: gk * gn = ce.count (OS: gk = 1, gm * gn = ce.count)
  int64_t k_tile = 0;        // gk * R (OS: the K elements of one job, K chunk; the last one may be shorter)
  int64_t n_tile = 0;        // gn * C
  int64_t k_tiles = 0, n_tiles = 0;
  int64_t k_chunk = 0;       // K tiles per job (all of them unless B's N tile would not fit)
  int64_t n_chunk = 0;       // N tiles per job (B rows of a job: k_chunk * n_chunk * n_tile)
  int64_t m_chunk = 0;       // rows of M per job: the accumulator holds n_chunk * m_chunk rows, a half
                             // holds k_tiles * m_chunk A rows next to the job's B (OS: whole M tiles of
                             // gm * R rows: accumulator rows n_chunk * m_chunk / gm, A rows m_chunk / (gm*R) * K chunk)
  bool ib_top = false;       // IB loaded from the top (per-CE B image, Lt cycles per fold) or the left
  bool os = false;           // output-stationary (else weight-stationary)
  int gm = 1;                // OS: CE rows of the grid, each holding R rows of an M tile
  int rows = 1, cols = 1;    // R, C of the configuration's CEs
};

// Cycles the controller is busy for one GEMM instruction of `m` rows (docs/isa.md §Timing),
// including its pop, start and drain.
int64_t gemm_instr_cycles(const arch::ArchConfig& cfg, int64_t m, const GemmMapping& map);

struct GemmJob {
  int64_t m0 = 0, m_count = 0;    // the rows of M this instruction computes
  int64_t nt0 = 0, nt_count = 0;  // its N tiles
  int64_t kt0 = 0, kt_count = 0;  // and K tiles (jobs after the first K chunk accumulate; OS: K chunk kt0, kt_count 1)
  bool last_k = true;             // the accumulator rows are complete after this job
  int64_t a_base = 0, b_base = 0; // its images' first rows (the compiler's a_base / b_base unless relocated)
  arch::GemmInstr instr;
  int64_t predicted_cycles = 0;
};

struct CompiledGemm {
  GemmShape shape;
  GemmMapping map;
  // Unified-memory layout (rows of the compute half; lanes = bank*T + elem), per job (its m0,
  // m_count rows of M; the host writes them into the free half before the job's FLIP), a_base and
  // b_base being the job's own (relocate_image may move one image of a job):
  //   A: row a_base + (kt - kt0)*m_count + (m - m0),                 lane k - kt*k_tile (padding: -0 / 0)
  //   B from the left: row b_base + (kt - kt0)*nt_count*n_tile + (n - nt0*n_tile), lane k - kt*k_tile
  //   B from the top: row b_base + ((kt - kt0)*nt_count + (nt - nt0))*R + r, lane g*C + c, for
  //     k = kt*k_tile + q*R + r, n = nt*n_tile + gn*C + c, CE g = gn*gk + q (b_slot)
  //   (B padding, k >= K or n >= N: +0)
  int64_t a_base = 0, a_rows = 0, b_base = 0, b_rows = 0, b_kt_stride = 0;  // as compiled; rows: the largest job's
  //   OS: os_a_slot / os_b_slot of the job's OsGemm (os_job): A row a_base + (mt - mt0)*Kc + (k - k0),
  //     B row b_base + (nt - nt0)*Kc + (k - k0), Kc the job's K elements (a_slot / b_slot)
  // Accumulator: column j of N tile nt, row m of a job: row (nt - nt0)*m_count + (m - m0), lane col_lane[j]
  // (OS: os_z_slot; col_lane empty). z_slot says where for either.
  std::vector<int> col_lane;
  route::RedRoute red;            // one group per column j of an N tile, in j order
  std::vector<int> lane_gk;       // CE output lane -> gk of its CE (for the golden order)
  std::vector<uint8_t> red_cfg;   // the RED_CFG register image
  uint32_t ia_sel = 0, ia_mask = 0;
  uint32_t ib_sel = 0, ib_mask = 0;  // the IA multicast (from the left) or the identity (from the top)
  int replicate = 1;  // copies of each K slice in a row (network.topology fixed: one per CE)
  std::vector<arch::Words> program;  // RED_CFG chunks, then one GEMM per job (each preceded by a FLIP)
  std::vector<GemmJob> jobs;
  int64_t predicted_cycles = 0;      // RED_CFG pops + per job FLIP + GEMM
  size_t red_cfg_words() const { return program.size() - jobs.size(); }  // the RED_CFG chunks at its head
  std::string describe() const;      // one line: roles, grid, tiles, folds
};

// Maps a GEMM with the given grid (gk must divide ce.count) and IB load path. Throws CompileError.
CompiledGemm compile_gemm(const arch::ArchConfig& cfg, const GemmShape& shape, int gk, bool ib_top = false);
// The output-stationary mapping on a grid of gm x (ce.count / gm) CEs. Jobs: N tiles, then M
// tiles, then K chunks (later chunks accumulate onto the rows the first wrote), each as large as
// a half of unified memory (A and B side by side) and the accumulator hold. Throws CompileError
// (no OS in ce.dataflows, a grid that is not a power of two, nothing fits).
CompiledGemm compile_gemm_os(const arch::ArchConfig& cfg, const GemmShape& shape, int gm);
// Every legal grid, load path and dataflow (`only`: just that one, ws or os), the one with the
// fewest predicted cycles (ties: weight-stationary, more CEs on K, the load from the left; then
// output-stationary, more CEs on M).
CompiledGemm compile_gemm(const arch::ArchConfig& cfg, const GemmShape& shape,
                          std::optional<arch::Dataflow> only = std::nullopt);

// What a step's mapping minimizes. `compute`: the model's cycles (which the RTL reproduces
// exactly); among equally fast mappings the least data movement. `end_to_end`: the model's cycles
// plus the data movement, so a contraction may take a few compute cycles more when its data
// moves for fewer. `fastest` is a program's choice, not a step's (compile_program): a program
// mapped each way, the shorter by the wall-cycle model.
enum class MapFor { compute, end_to_end, fastest };
MapFor parse_map_for(const std::string& s);  // "compute" | "end-to-end" | "fastest"; std::invalid_argument otherwise
std::string to_string(MapFor m);

// A binary contraction with the roles chosen by the model: tries both operand orders, every grid,
// both load paths and both dataflows, and keeps the fewest predicted cycles, `data_cost` (when given: the caller's
// estimate of the data movement a mapping implies, in cycles, >= 0) breaking ties or, for
// MapFor::end_to_end, added to the cycles. Remaining ties: the first in preference order (lhs
// streaming, weight-stationary, more CEs on K, the load from the left).
struct CompiledStep {
  bool lhs_is_a = true;
  CompiledGemm gemm;
};
CompiledStep compile_step(const arch::ArchConfig& cfg, const std::string& lhs_name,
                          const std::vector<std::string>& lhs_labels, const std::vector<int64_t>& lhs_dims,
                          const std::string& rhs_name, const std::vector<std::string>& rhs_labels,
                          const std::vector<int64_t>& rhs_dims, const std::vector<std::string>& keep,
                          const std::function<int64_t(const CompiledStep&)>& data_cost = {},
                          MapFor objective = MapFor::compute);

// Every contraction of one term of a phase problem, planned before any data exists: the search
// picks the sequence (minimum MACs), the compiler maps each step. Intermediates are named
// "<result>_t<term>_s<step>" and carry the labels m + n of the step that produced them; the last
// step keeps the problem's result labels. Throws CompileError (naming the step) or SearchError.
struct PlannedStep {
  NodeSet left = 0, right = 0;  // groups of network nodes (mapper/problem.hpp)
  std::string lhs, rhs, out;    // operand and result names
  std::vector<std::string> lhs_labels, rhs_labels, keep;
  std::vector<int64_t> lhs_dims, rhs_dims;
  bool last = false;
  CompiledStep compiled;
};
struct NetworkPlan {
  Problem problem;
  std::vector<PlannedStep> steps;
};
//
// `movement` (when given) is the data movement the caller would spend around a step, in cycles (>= 0):
// for a step `c` consuming the previous step's result (`p`, taken as c's A when as_a, else its B)
// a STORE or the way through the host for that operand plus the host writes of the other; for
// any other step (`p` null; asked only for MapFor::end_to_end) the host writes of both operands.
// MapFor::compute: among equally fast mappings of a step the least movement wins, so the result
// can land in a layout the producer can store into (B loaded from the top turns a transposition
// into moves of C lanes); compute cycles never change.
// MapFor::end_to_end: every step minimizes cycles + movement (also a grid whose images cross the
// host port in fewer rows).
// Both look one step ahead: when the next step consumes a step's result, each of the step's
// candidates also counts the least its consumer would then spend (compute: movement over the
// consumer's fastest mappings; end to end: cycles + movement over all), so the producer's layout
// is chosen with its consumer's, not before it. A term's last contraction in a sum of terms takes
// the fastest mapping (every term must leave the same accumulator layout). Without `movement`,
// the first fastest.
using MovementCost = std::function<int64_t(const CompiledGemm* p, const CompiledGemm& c, bool as_a)>;
NetworkPlan plan_network(const arch::ArchConfig& cfg, const verif::PhaseProblem& prob, size_t term,
                         const MovementCost& movement = {}, MapFor objective = MapFor::compute);
// How a run keeps a layer's tensors in DRAM (the simulator's TLM-2.0 target): operands (inputs,
// rounded or requantized intermediates) in their width, 1 or 2 bytes; final results as
// accumulator words, 4 bytes (fp32, int32) or 8 (int48, sign-extended); little-endian, row-major,
// each tensor at a 64-byte boundary; every input once, then every result (except intermediates
// kept on chip by STORE), none freed.
int dram_operand_bytes(arch::DataType t);
int dram_result_bytes(arch::DataType t);
uint64_t dram_extent(int64_t elements, int bytes);

// plan_network (the fastest mapping of every contraction, no data-movement policy) for every
// problem and term of the layers' phases: bad layers and contractions the hardware cannot run fail
// here, the message prefixed with "<file> (<phase>): ". What a run costs at least, known in a
// fraction of compile_program's time (which also builds every image map): `fetta run` checks its
// budget with it before compiling. The program's own cycles are mapper::program_cost.
struct LayersPlan {
  int64_t contractions = 0;
  int64_t compute_cycles = 0;  // the model's, which the RTL reproduces
  int64_t macs = 0;
};
LayersPlan plan_layers(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
                       const std::vector<verif::Phase>& phases);

// The order in which the hardware sums every output (chains of R down a CE column, the
// reduction network's add tree over the Gk CEs of a group, then the K tiles accumulated in
// order): for verif::contract_bf16 with out_labels m + n.
// With `init` (one binary32 per output element, row-major over m dims then n dims): the order of
// an instruction with acc_accumulate = 1 on rows already holding `init`, i.e. the first K tile is
// added onto init (fp32_add(init, t)) instead of written.
verif::AccumulationOrder hardware_order(const CompiledGemm& c, int64_t R, std::vector<uint32_t> init = {});

// The output chunks of c: the jobs that complete accumulator rows (last_k), in job order.
std::vector<size_t> output_chunks(const CompiledGemm& c);

// Moves job `job`'s A (a_operand) or B image to start at unified row `base` of its half: the job's
// base and its GEMM instruction (the program word too). Compute cycles do not change. Throws
// CompileError when the image would leave the half. For images a STORE writes where the host
// would not (mapper/placement.hpp).
void relocate_image(const arch::ArchConfig& cfg, CompiledGemm& c, size_t job, bool a_operand, int64_t base);

// Operand images in the layout above: `rows` x `lanes` bit patterns (16-bit elements; int8 in
// the low byte), lanes = k_tile * replicate. Padding: IA -0 for bf16 (0x8000), else 0.
struct RowImage {
  int64_t first_row = 0, rows = 0;
  int lanes = 0;
  std::vector<uint16_t> data;  // row-major
};
RowImage layout_a(const CompiledGemm& c, const verif::Tensor<uint16_t>& a, uint16_t pad, size_t job);
RowImage layout_b(const CompiledGemm& c, const verif::Tensor<uint16_t>& b, size_t job);

// The rows and lanes of a job's operand image (what layout_a / layout_b return).
struct ImageShape {
  int64_t rows = 0;
  int lanes = 0;
};
ImageShape image_shape(const CompiledGemm& c, bool a_operand, size_t job);
// Where B[k][n] sits in job `jb`'s B image: row (from the image's first row) and lane, the first
// copy with fixed wiring. k and n must be inside the job's K and N tiles.
struct ImageSlot {
  int64_t row = 0, lane = 0;
};
ImageSlot b_slot(const CompiledGemm& c, const GemmJob& jb, int64_t k, int64_t n);
// Where A[m][k] sits in job `jb`'s A image (the first copy with fixed wiring); m and k inside the job's.
ImageSlot a_slot(const CompiledGemm& c, const GemmJob& jb, int64_t m, int64_t k);
// Where Z[m][n] sits in the accumulator after job `jb` (a job completing its rows, last_k): row
// from the job's acc_base (0 as compiled) and lane. m and n must be inside the job's.
ImageSlot z_slot(const CompiledGemm& c, const GemmJob& jb, int64_t m, int64_t n);
// The accumulator rows job `jb` writes (from its acc_base) and the lanes c's results take, ascending.
int64_t acc_rows(const CompiledGemm& c, const GemmJob& jb);
std::vector<int> acc_lanes(const CompiledGemm& c);
// Puts the accumulator words job `jb` left (its acc_rows rows from acc_base, the acc_lanes lanes,
// row-major: what the host reads) at their elements of Z (row-major over m then n, M x N words).
void gather_result(const CompiledGemm& c, const GemmJob& jb, const std::vector<uint64_t>& words,
                   std::vector<uint64_t>& z);
// An output-stationary job as the OsGemm of mapper/os_gemm.hpp (its M rows, K chunk and N columns
// from 0; its bases), for os_a_slot / os_b_slot / os_z_slot and the cycle model.
OsGemm os_job(const CompiledGemm& c, const GemmJob& jb);

}  // namespace fetta::mapper
