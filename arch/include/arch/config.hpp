// The architecture configuration: one struct, parsed once from YAML, shared by the generators
// (hw), the performance model and compiler (mapper) and the testbenches (sim).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fetta::arch {

// Operand type of the PEs. The accumulator type follows: bf16 -> fp32, int8 -> int32, int16 -> int48.
enum class DataType { bf16, int8, int16 };
// Stationary modes hold IB in the PEs; OS keeps the Psums in place.
enum class Dataflow { ws, is, os };

std::string to_string(DataType t);
std::string to_string(Dataflow d);
int operand_bits(DataType t);      // 16, 8, 16
// Fraction bits of the integer operands' fixed point (value = integer / 2^bits): 6 for int8, 8 for
// int16 (inputs in [-1, 1] span [-64, 64] and [-256, 256]); the host's conversion and the
// compiler's requantization shift both use it. bf16: 0.
int operand_frac_bits(DataType t);
int accumulator_bits(DataType t);  // 32, 32, 48

struct CeConfig {
  int rows = 4;
  int cols = 4;
  int count = 16;
  std::vector<Dataflow> dataflows{Dataflow::ws, Dataflow::is, Dataflow::os};
  bool ib_double_buffer = true;
  bool psum_double_buffer = true;
  int mac_pipeline_stages = 0;  // register stages inside the MAC's adder (stationary only: the row skew grows)
  // Register stages between the multiplier and the adder: the product is registered, the
  // accumulation operand (the Psum from above, or the PE's own accumulator in OS) enters the
  // adder directly, so the row skew and OS's one accumulate per cycle stay; results leave this
  // many cycles later. 1 is what closes 1 GHz on ASAP7 (docs/arith.md, docs/ce.md).
  int mac_product_stages = 1;

  bool operator==(const CeConfig&) const = default;
};

// butterfly: the transposable distribution and reduction networks of FETTA. fixed: the baselines'
// wiring, CE g row r <- memory lane g*R + r and CE g column c -> accumulator lane g*C + c (no
// multicast, no spatial reduction, no transposition).
enum class NetworkTopology { butterfly, fixed };
std::string to_string(NetworkTopology t);

struct NetworkConfig {
  int lanes = 64;                // scalar lanes of both networks; = banks * elems_per_bank
  int dist_pipeline_every = 0;   // register after every k butterfly levels (0: purely combinational)
  // A register at the distribution network's output (the CEs' input register): the memory's
  // read, the butterfly and the CE's first MAC stage then take a cycle each instead of one
  // together. Butterfly only; implied when dist_pipeline_every already ends on the last stage.
  bool dist_output_register = true;
  NetworkTopology topology = NetworkTopology::butterfly;

  bool operator==(const NetworkConfig&) const = default;
};

struct MemoryConfig {
  int banks = 16;
  int elems_per_bank = 4;     // T: elements per bank row
  int unified_depth = 4096;   // rows per bank (16 banks x 4 x 2 B x 4096 = 512 KB)
  int accum_depth = 512;      // rows per accumulator bank (16 x 4 x 4 B x 512 = 128 KB)
  // The accumulation unit's read-modify-write depth: 2 = read, then add and write; 3 = read,
  // register the row, then add and write (the memory's access time and the adder in separate
  // cycles; docs/memory.md).
  int accum_pipeline = 3;
  // Whether a STORE may change a result's layout on its way into the next operand image (move
  // lanes, rotate, transpose). false models the paper's TPU-Offchip baseline: a STORE may only
  // copy rows with every element in its lane; every other layout change goes through DRAM.
  bool store_reorder = true;

  bool operator==(const MemoryConfig&) const = default;
};

// The binary32 adders (bf16 only): basic (one path, small) or two_path (near/far paths with
// parallel-prefix adders: about twice as fast, 1.6 times the area; docs/arith.md); the prefix
// network of the two-path adders. `fp32_adder` is the PEs' and the accumulation unit's, whose
// loops leave one cycle an add; the reduction network's switches, with no loop, have their own
// adder and register stages inside it (the pass path waits beside it), so that a level with
// adders takes 1 + reduction_adder_stages cycles.
enum class Fp32Adder { basic, two_path };
enum class PrefixAdder { kogge_stone, sklansky, brent_kung };
std::string to_string(Fp32Adder a);
std::string to_string(PrefixAdder p);

struct ArithConfig {
  Fp32Adder fp32_adder = Fp32Adder::two_path;
  PrefixAdder prefix = PrefixAdder::sklansky;
  Fp32Adder reduction_adder = Fp32Adder::basic;
  int reduction_adder_stages = 1;

  bool operator==(const ArithConfig&) const = default;
};

// The vector unit (docs/vector.md): its floating-point lanes. A unified-memory row of W elements
// (memory.banks x memory.elems_per_bank) passes in W / lanes beats, a cycle each.
struct VectorConfig {
  int lanes = 0;  // 0: one lane per element of a row; else a power of two, 2 .. W

  bool operator==(const VectorConfig&) const = default;
};

struct DramConfig {
  double bandwidth_gbps = 25.6;  // LPDDR4
  double latency_ns = 100.0;
  int capacity_mb = 4096;        // where the layers' tensors live (sim: the TLM-2.0 DRAM target)

  bool operator==(const DramConfig&) const = default;
};

// The analytical model's energy constants (docs/power.md, "Energy model"): per operation in pJ,
// and the power drawn whatever the array does, in mW. The defaults are the default top's,
// measured (bench/power/energy_model.py).
struct EnergyConfig {
  double mac_pj = 2.921;                  // every block's dynamic energy of the computation
  double sram_read_pj_per_byte = 0.28;    // CACTI per access, weighted by the macros' accesses
  double sram_write_pj_per_byte = 0.134;
  double network_hop_pj = 0.0;            // measured inside mac_pj
  double dram_read_pj_per_byte = 68.3;    // the LPDDR4 model (flows/power/dram_energy.hpp)
  double dram_write_pj_per_byte = 40.8;
  double static_mw = 94.6;                // clock, leakage and idle logic, for every cycle

  bool operator==(const EnergyConfig&) const = default;
};

struct ArchConfig {
  std::string name = "fetta_default";
  std::string source = "<built-in default>";  // file the config came from, for messages
  DataType dtype = DataType::bf16;
  double clock_mhz = 1000.0;
  CeConfig ce;
  ArithConfig arith;
  NetworkConfig network;
  MemoryConfig memory;
  VectorConfig vector;
  DramConfig dram;
  EnergyConfig energy;

  int total_pes() const { return ce.rows * ce.cols * ce.count; }
  bool has_dataflow(Dataflow d) const;
  // Every architectural field (not `source`, which says where the values came from).
  bool same_architecture(const ArchConfig& o) const;
};

// A configuration error names where it happened and what would have been accepted.
class ConfigError : public std::runtime_error {
 public:
  ConfigError(std::string file, int line, std::string field, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& field() const { return field_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string field_;
  std::string message_;
};

// The limits of a buildable configuration: what the generators, the ISA's fields, the compiler and
// the simulator rely on, checked once by validate() so that every subcommand and part accepts or
// refuses a file the same way (configs/default.yaml lists them beside each key).
namespace limits {
struct IntRange {
  int lo, hi;
};
struct RealRange {
  double lo, hi;  // finite, lo <= v <= hi
};
inline constexpr IntRange kCeDim{1, 256};           // ce.rows, ce.cols: powers of two
inline constexpr IntRange kCeCount{1, 1024};        // powers of two: CE groups split K and N by halving
inline constexpr IntRange kLanes{2, 1024};          // powers of two (the result writer's lane select)
inline constexpr IntRange kBanks{2, 256};           // powers of two: banks are selected by address bits
inline constexpr IntRange kElemsPerBank{1, 64};     // powers of two
inline constexpr IntRange kUnifiedDepth{4, 1 << 17};  // powers of two: two halves of 2..2^16 rows (16-bit ISA rows)
inline constexpr IntRange kAccumDepth{2, 1 << 16};    // powers of two (16-bit ISA rows)
inline constexpr IntRange kMacPipelineStages{0, 8};
inline constexpr IntRange kMacProductStages{0, 4};
inline constexpr IntRange kReductionAdderStages{0, 4};
inline constexpr IntRange kAccumPipeline{2, 3};
inline constexpr IntRange kVectorLanes{2, 1024};      // powers of two, at most a unified-memory row (0: one per element)
inline constexpr IntRange kDramCapacityMb{1, 1 << 20};
inline constexpr RealRange kClockMhz{1.0, 10000.0};
inline constexpr RealRange kBandwidthGbps{0.001, 100000.0};
inline constexpr RealRange kLatencyNs{0.0, 1e6};
inline constexpr double kEnergyPjMax = 1e6;         // energy.*: finite, > 0
}  // namespace limits

// Nanoseconds one DRAM transaction of `bytes` takes: latency + bytes / bandwidth (1 GB/s = 1 byte/ns).
double dram_transfer_ns(const DramConfig& dram, uint64_t bytes);
// The same in whole cycles of the configuration's clock (rounded up).
int64_t dram_transfer_cycles(const ArchConfig& cfg, uint64_t bytes);
// Bytes the DRAM moves per cycle of the configuration's clock (1 GB/s = 1 byte/ns).
double dram_bytes_per_cycle(const ArchConfig& cfg);

// Bank rows the host/DMA port moves per cycle: the smallest power of two whose bandwidth at the
// TCU clock covers the DRAM bandwidth (capped at the bank count). Default: 25.6 GB/s at 1 GHz =
// 25.6 B/cycle, 8 B per bank row -> 4. The generators size the port by it, the compiler prices
// host transfers by it.
int host_port_banks(const ArchConfig& cfg);
// Elements the host port moves per cycle: host_port_banks * elems_per_bank.
int host_port_lanes(const ArchConfig& cfg);
// The vector unit's lanes: vector.lanes, or a row's elements when it is 0.
int vector_lanes(const ArchConfig& cfg);

ArchConfig load_arch_config(const std::string& path);
// `source_name` is what messages call the text (a path, or "<string>").
ArchConfig parse_arch_config(const std::string& yaml_text, const std::string& source_name = "<string>");
// The configuration as a YAML file that parse_arch_config reads back to the same architecture
// (every field written, so the file does not depend on the parser's defaults).
std::string to_yaml(const ArchConfig& cfg);
// Every limit above and the cross-field rules (also run by the parsers, which then report the
// field's line); throws ConfigError with line 0 for built structs.
void validate(const ArchConfig& cfg);

}  // namespace fetta::arch
