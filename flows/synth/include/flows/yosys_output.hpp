// Readers for what Yosys, ABC and nextpnr print. Kept apart from the flows so that each is
// unit-tested on captured text.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

// `stat` / `stat -liberty` of one (flattened) module: cell counts by type and the chip area
// (absent without -liberty). Cells whose area the library does not know are listed.
struct StatResult {
  std::map<std::string, long long> cells;
  long long total_cells = 0;
  std::optional<double> chip_area;
  std::vector<std::string> unknown_area;
};
StatResult parse_stat(const std::string& text);

// The worst "Delay = X ps" that ABC's `stime -p` printed in a Yosys log; none when ABC did not
// run (a module without combinational logic).
std::optional<double> parse_abc_delay_ps(const std::string& log);

// The cell that `dfflibmap` mapped $_DFF_P_ to, empty when none.
std::string parse_dfflibmap_cell(const std::string& log, const std::string& yosys_type = "$_DFF_P_");

// The bits of a Yosys constant as `dump` prints it ("4'0110", "1'x", "5"), bit 0 first; x and z
// read as 0. A constant wider than its digits (never printed by Yosys) is not padded.
std::vector<bool> yosys_const_bits(const std::string& v);

// Memories from a `dump t:$mem_v2` (or $mem) of one module: name, width, depth, ports, and which
// read and write ports are never enabled together (RD_COLLISION_X_MASK, `never_together`).
std::vector<MemoryMacro> parse_memory_dump(const std::string& text);

// Yosys "Warning:" lines, with the ASAP7 scan-flop Liberty warnings split off (see
// docs/synthesis.md: Yosys cannot parse the SDF* cells' `next_state` expressions and skips
// those cells, which the flow never needs).
struct Warnings {
  std::vector<std::string> kept;
  int scan_flop_skipped = 0;
};
Warnings split_warnings(const std::string& log);

// nextpnr-ice40 `--report` JSON: Fmax of the (first) clock and the utilisation.
struct NextpnrReport {
  std::optional<double> fmax_mhz;
  std::optional<double> constraint_mhz;
  std::string clock;
  std::map<std::string, std::pair<long long, long long>> utilisation;  // bel -> (used, available)
};
NextpnrReport parse_nextpnr_report(const std::string& json_text);

// "Device utilisation" of a nextpnr log (also printed when placement fails).
std::map<std::string, std::pair<long long, long long>> parse_nextpnr_utilisation(const std::string& log);

}  // namespace fetta::flows::synth
