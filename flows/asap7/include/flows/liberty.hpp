// Just enough Liberty for the ASAP7 flow: merging libraries for ABC, listing cells, and reading
// a flip-flop's clock-to-Q and setup tables.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fetta::flows::synth {

// A Liberty group: `name (args) { attributes; groups }`. Attribute values keep their text
// (quotes stripped); complex attributes (`index_1 ("...")`, `values (...)`) keep the inside of
// the parentheses.
struct LibertyGroup {
  std::string name;
  std::string args;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<LibertyGroup> groups;

  const std::string* attribute(const std::string& key) const;
  std::vector<const LibertyGroup*> children(const std::string& group_name) const;
  const LibertyGroup* child(const std::string& group_name, const std::string& group_args) const;
};

// Throws std::runtime_error naming `what` (a file name) and the line of a syntax error.
LibertyGroup parse_liberty(const std::string& text, const std::string& what);

// One library from several: the header (everything before the first cell) of the first,
// renamed `name`, then every `cell` group of each, in order. Throws on a cell defined twice or
// a text without a library group.
std::string merge_liberty(const std::vector<std::string>& texts, const std::string& name);

// Names of the top-level cells, in file order.
std::vector<std::string> liberty_cell_names(const std::string& text);

// Bilinear interpolation in a 2-D NLDM table (`index_1`, `index_2`, `values`), clamped at the
// table's edges. Throws when the group has no such table.
double table_lookup(const LibertyGroup& table, double x1, double x2);

// Clock-to-Q (worst of rise and fall, at clock slew `slew_ps` and load `load_ff`) plus setup
// (worst of rise and fall, data and clock slew `slew_ps`) of flip-flop `cell`. Throws naming the
// cell when it or its tables are missing.
struct FlopTiming {
  double clk_to_q_ps = 0;
  double setup_ps = 0;
};
FlopTiming flop_timing(const LibertyGroup& library, const std::string& cell, double slew_ps, double load_ff);

// The decompressed content of a .gz file; throws naming the file.
std::string gunzip_file(const std::string& path);

}  // namespace fetta::flows::synth
