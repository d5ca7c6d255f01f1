// Just enough Liberty for the ASAP7 flow and the power views: one reader of the group syntax
// (parse_liberty), whose tree also says where each group and attribute is written, so that the
// text can be cut (merging libraries for ABC) or edited (flows/power_view.hpp) without reading it
// again; listing cells, and reading a flip-flop's clock-to-Q and setup tables.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fetta::flows::synth {

// An attribute: `key : value;`, its value's text (trimmed, quotes stripped), or a complex one,
// `key (...);` (`index_1 ("...")`, `values (...)`), the inside of its parentheses. Comments and
// line continuations are left out of the value.
struct LibertyAttribute {
  std::string key;
  std::string value;
  size_t begin = 0;  // byte offset of the key's first character in the parsed text
  size_t end = 0;    // past the value and its ';'
};

// A Liberty group: `name (args) { attributes; groups }`, args trimmed and unquoted. The offsets
// point into the parsed text.
struct LibertyGroup {
  std::string name;
  std::string args;
  std::vector<LibertyAttribute> attributes;
  std::vector<LibertyGroup> groups;
  int line = 0;           // of the name
  size_t begin = 0;       // the name's first character
  size_t args_begin = 0;  // past '('
  size_t args_end = 0;    // its ')'
  size_t open = 0;        // '{'
  size_t close = 0;       // its '}'

  // The first attribute `key` written in this group itself (not in its subgroups).
  const std::string* attribute(const std::string& key) const;
  const LibertyAttribute* find_attribute(const std::string& key) const;
  std::vector<const LibertyGroup*> children(const std::string& group_name) const;
  const LibertyGroup* child(const std::string& group_name, const std::string& group_args) const;
};

// The library group the text begins with (after comments). Between tokens, whitespace, `/* */`
// comments and backslash line continuations are skipped; strings are `"..."`. Throws
// std::runtime_error `<what>:<line>: Liberty syntax: ...` naming `what` (a file name).
LibertyGroup parse_liberty(const std::string& text, const std::string& what);

// One library from several: the header (everything before the first cell) of the first,
// renamed `name`, then every `cell` group of each, in order, each with the rest of the lines it
// starts and ends on. Throws on a cell defined twice, a text without a cell, or a syntax error
// (naming `merge_liberty: library <index>`).
std::string merge_liberty(const std::vector<std::string>& texts, const std::string& name);

// Names of the library's cells, in file order; throws on a syntax error (naming `Liberty text`).
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
