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
int accumulator_bits(DataType t);  // 32, 32, 48

struct CeConfig {
  int rows = 4;
  int cols = 4;
  int count = 16;
  std::vector<Dataflow> dataflows{Dataflow::ws, Dataflow::is, Dataflow::os};
  bool ib_double_buffer = true;
  bool psum_double_buffer = true;
  int mac_pipeline_stages = 0;  // extra register stages inside the MAC (retiming for 1 GHz)
};

// butterfly: the transposable distribution and reduction networks of FETTA. fixed: the baselines'
// wiring, CE g row r <- memory lane g*R + r and CE g column c -> accumulator lane g*C + c (no
// multicast, no spatial reduction, no transposition).
enum class NetworkTopology { butterfly, fixed };
std::string to_string(NetworkTopology t);

struct NetworkConfig {
  int lanes = 64;                // scalar lanes of both networks; = banks * elems_per_bank
  int dist_pipeline_every = 0;   // register after every k butterfly levels (0: purely combinational)
  NetworkTopology topology = NetworkTopology::butterfly;
};

struct MemoryConfig {
  int banks = 16;
  int elems_per_bank = 4;     // T: elements per bank row
  int unified_depth = 4096;   // rows per bank (16 banks x 4 x 2 B x 4096 = 512 KB)
  int accum_depth = 512;      // rows per accumulator bank (16 x 4 x 4 B x 512 = 128 KB)
};

struct DramConfig {
  double bandwidth_gbps = 25.6;  // LPDDR4
  double latency_ns = 100.0;
  int capacity_mb = 4096;        // where the layers' tensors live (sim: the TLM-2.0 DRAM target)
};

// Per-operation energy constants of the analytical model, in pJ.
struct EnergyConfig {
  double mac_pj = 0.23;
  double sram_read_pj_per_byte = 1.2;
  double sram_write_pj_per_byte = 1.4;
  double network_hop_pj = 0.05;
  double dram_pj_per_byte = 20.0;
};

struct ArchConfig {
  std::string name = "fetta_default";
  std::string source = "<built-in default>";  // file the config came from, for messages
  DataType dtype = DataType::bf16;
  double clock_mhz = 1000.0;
  CeConfig ce;
  NetworkConfig network;
  MemoryConfig memory;
  DramConfig dram;
  EnergyConfig energy;

  int total_pes() const { return ce.rows * ce.cols * ce.count; }
  bool has_dataflow(Dataflow d) const;
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

ArchConfig load_arch_config(const std::string& path);
// `source_name` is what messages call the text (a path, or "<string>").
ArchConfig parse_arch_config(const std::string& yaml_text, const std::string& source_name = "<string>");
// Cross-field checks (also run by the parsers); throws ConfigError with line 0 for built structs.
void validate(const ArchConfig& cfg);

}  // namespace fetta::arch
