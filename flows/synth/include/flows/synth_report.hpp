// What a synthesis flow measures, per module of an emitted design, and how it is written out
// (report.json, the printed table). The same types serve the ASAP7, Xilinx and iCE40 flows;
// each module carries the metrics of the target it was synthesized for.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "flows/design_dir.hpp"
#include "flows/sta.hpp"

namespace fetta::flows::synth {

enum class Target { asap7, xilinx, ice40 };

// Throws std::invalid_argument naming `--target`, the bad value and the allowed ones.
Target parse_target(const std::string& name);
std::string to_string(Target t);
std::string target_names();  // "asap7, xilinx, ice40"

// The model of every memory the ASAP7 flow turns into an SRAM macro (docs/synthesis.md, "The SRAM
// model"). Area is analytical:
//   area = bits * um2_per_bit * (1 + extra_port_factor * (ports - 2 clipped at 0)) / array_efficiency
// where ports = read ports + write ports - shared ports, the physical ports of the macro (a read
// and a write port merged into one read/write port count once): one read and one write port
// (1R1W), or one read and one read/write port (1R1RW), is the base two-port macro.
// Timing and leakage are those OpenROAD's ASAP7 platform gives its FakeRAM2.0 macros
// (fakeram7_*.lib): a registered read, data out clk_to_q after the edge, every input sampled with
// setup and hold around it; leakage per bit from fakeram7_2048x39 (128.9 uW over 79,872 bits).
struct SramModel {
  double um2_per_bit = 0.027;      // 6T high-density bitcell, 7 nm FinFET (TSMC N7, ISSCC 2017)
  double array_efficiency = 0.70;  // bitcell area / macro area (decoders, sense amps, I/O, control)
  double extra_port_factor = 0.5;  // cell growth per port beyond 1R + 1W (wider cell, more wires)
  double clk_to_q_ps = 218;        // read data after the clock edge
  double setup_ps = 50;            // address, enables, write data and mask before the edge
  double hold_ps = 50;
  double min_period_ps = 157;
  double leakage_nw_per_bit = 1.614;
  double input_cap_ff = 5;         // every input pin but the clock
  double clock_cap_ff = 25;

  double area_um2(long long bits, int rd_ports, int wr_ports, int shared_ports = 0) const;
  double leakage_nw(long long bits) const { return static_cast<double>(bits) * leakage_nw_per_bit; }
  // Throws std::invalid_argument naming the option and its allowed range.
  void validate() const;
};

// A memory found in the RTL (a Yosys $mem_v2 cell after `memory -nomap`). In ASAP7 it becomes an
// instance of a macro (`cell`), or, when no macro can do what it does (an asynchronous read, a
// transparent read, a reset of the read data), flip-flops and multiplexers (`cell` empty).
struct MemoryMacro {
  std::string name;  // hierarchical name inside the module
  int width = 0;
  int depth = 0;
  int abits = 0;
  int rd_ports = 0;
  int wr_ports = 0;
  bool sync_read = true;       // every read port registered on the rising edge
  bool read_first = true;      // no read port transparent to a write of the same cycle
  bool plain_read = true;      // no reset or initial value on the read data, no wide ports
  bool plain_write = true;     // every write port clocked on the rising edge, no wide ports
  bool initialized = false;    // has initial contents
  // Read port i and write port j, entry [i * wr_ports + j]: their addresses come bit for bit from
  // the same drivers (the flow's address probe, docs/synthesis.md), and Yosys found that they are
  // never enabled in the same cycle (RD_COLLISION_X_MASK). Both: they can be one read/write port.
  std::vector<bool> same_address;
  std::vector<bool> never_together;
  // The (read port, write port) pairs the macro merges into read/write ports, in write-port order;
  // set with `cell` (empty: every port is its own).
  std::vector<std::pair<int, int>> rw_pairs;
  std::string cell;            // the macro it became, empty when built from flip-flops
  double area_um2 = 0;         // the macro's, 0 when built from flip-flops
  long long bits() const { return static_cast<long long>(width) * depth; }
  int rw_ports() const { return static_cast<int>(rw_pairs.size()); }
  int physical_ports() const { return rd_ports + wr_ports - rw_ports(); }
};

struct Asap7Metrics {
  double area_um2 = 0;        // standard cells + SRAM macros
  double logic_area_um2 = 0;  // standard cells (Yosys `stat -liberty`)
  double sram_area_um2 = 0;   // sum of the macros' model areas
  long long cells = 0;        // standard cells (macros not counted)
  long long flops = 0;        // cells of the sequential library
  long long clock_gates = 0;  // integrated clock gates (rtl_gen's fetta_clock_gate)
  // ABC's estimate while mapping (secondary: the sign-off figure is `sta`): its longest
  // combinational path (`stime -p`, 0 without logic), plus the flop's clock-to-Q + setup.
  double abc_logic_delay_ps = 0;
  double flop_overhead_ps = 0;
  double abc_delay_ps = 0;   // abc_logic_delay_ps + flop_overhead_ps
  double abc_slack_ps = 0;   // mapped period - abc_delay_ps
  double mapped_period_ps = 0;  // the clock ABC mapped for (the target, or the --fmax search's best)
  // Fanout repair after mapping (docs/synthesis.md): buffers inserted (counted in cells and logic
  // area), nets repaired, and the largest fanout found before it.
  long long fanout_buffers = 0;
  long long fanout_nets = 0;
  long long worst_fanout = 0;
  std::string worst_fanout_net;
  std::string flop_cell;        // the cell `dfflibmap` chose for $_DFF_P_
  std::vector<MemoryMacro> memories;           // macros, one entry per instance (flattened names)
  std::vector<MemoryMacro> memories_in_flops;  // memories no macro could take, built from flip-flops
  std::optional<sta::StaResult> sta;           // OpenSTA on the mapped netlist: the sign-off timing
  std::string sta_constraints;                 // the SDC file it was timed against
  struct FmaxTry {
    double mapped_period_ps = 0;  // ABC's target
    double min_period_ps = 0;     // what OpenSTA found the netlist needs
  };
  std::vector<FmaxTry> fmax_search;  // --fmax: every mapping tried, in order
};

struct XilinxMetrics {
  long long luts = 0;          // LUT1..LUT6 (logic)
  long long lutram_cells = 0;  // RAM32M/RAM64X1D/... distributed-RAM primitives
  long long srls = 0;          // SRL16E/SRLC32E shift registers in LUTs
  long long ffs = 0;           // FDRE/FDSE/FDCE/FDPE
  long long dsps = 0;          // DSP48E2
  long long carries = 0;       // CARRY4/CARRY8
  long long ramb36 = 0;
  long long ramb18 = 0;
  double brams = 0;  // in RAMB36 equivalents: ramb36 + ramb18 / 2
};

struct Ice40Metrics {
  long long luts = 0;     // SB_LUT4
  long long ffs = 0;      // SB_DFF*
  long long carries = 0;  // SB_CARRY
  long long brams = 0;    // SB_RAM40_4K
  long long dsps = 0;     // SB_MAC16
  long long lcs = 0;      // ICESTORM_LC used after packing (nextpnr)
  long long lcs_available = 0;
  long long ios = 0;      // SB_IO used
  std::optional<double> fmax_mhz;  // nextpnr's achieved Fmax of the clock; none without flops
  double target_mhz = 0;
  bool target_met = false;
};

struct ModuleResult {
  std::string name;
  std::string generator;
  std::map<std::string, std::string> parameters;
  bool top = false;
  std::map<std::string, long long> cells_by_type;
  std::optional<Asap7Metrics> asap7;
  std::optional<XilinxMetrics> xilinx;
  std::optional<Ice40Metrics> ice40;
  std::vector<std::string> warnings;  // tool warnings worth a look (known-harmless ones filtered)
  std::vector<std::string> notes;     // what the flow did that a reader should know
  std::string work_dir;               // where the scripts, logs and netlists are
};

// A result for `module` of `design` with its identity filled in; the flows add their figures.
ModuleResult module_result_for(const DesignDir& design, const DesignModule& module, const std::string& work_dir);

struct SynthReport {
  Target target = Target::asap7;
  std::string rtl_dir;
  std::string top;
  nlohmann::json design_config;  // manifest.json "config"
  std::string config_file;       // --config, when the RTL was generated by this run
  std::string config_text;       // its YAML
  double clock_mhz = 0;          // 0: no timing target (xilinx)
  std::map<std::string, std::string> settings;  // pdk, libraries, device, SRAM model, ...
  std::map<std::string, std::string> tools;     // tool -> version line
  std::vector<std::string> commands;            // every command line run, in order
  std::vector<ModuleResult> modules;            // manifest order: children before parents
  // Not deterministic: kept apart so that two runs can be diffed without them.
  std::string started;
  std::string finished;
  double seconds = 0;
};

// report.json: everything but "run" (timestamps, duration) is a function of the inputs.
nlohmann::json to_json(const SynthReport& r);
// A readable table, one row per module, columns chosen by the target.
std::string format_table(const SynthReport& r);
void write_report_json(const SynthReport& r, const std::string& path);

}  // namespace fetta::flows::synth
