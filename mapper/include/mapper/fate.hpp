// Where a contraction's result goes (docs/program.md, "Where intermediates go"): an intermediate
// stays on chip, written by STORE into its consumer's operand images, or leaves through DRAM for
// one reason of a few. The compiler records it per step (ProgramStep::fate), program.json keeps
// it, `fetta compile` and `fetta run` count it.
#pragma once

#include <cstdint>
#include <string>

namespace fetta::mapper {

enum class Fate : uint8_t {
  result,          // a network's result, not an intermediate: it always leaves
  on_chip,         // kept on chip: STOREs write it into its consumer's images
  option,          // --through-host: no intermediate stays on chip
  shared,          // read by several contractions (later networks reuse it): kept in DRAM for all
  deferred_term,   // its consumer is a term's last contraction, run later with the other terms
  no_room,         // its consumer's images find no rows clear of what runs before them
  cannot_join,     // no STORE program turns the result's layout into its consumer's
  reorder_off_chip,  // the layout changes and the configuration reorders only through DRAM
  store_slower,    // the STOREs would take longer than the way through DRAM
  waits_for_network,  // interleaved: its consumer, or a step before it, waits for another network's result
};
inline constexpr int kFates = 10;

// "on_chip", "shared", ... (program.json, `--json`).
std::string to_string(Fate f);
// The inverse; std::invalid_argument naming the allowed values.
Fate parse_fate(const std::string& s);
// A short phrase for reports: "kept on chip", "read by several networks", ...
std::string describe(Fate f);

}  // namespace fetta::mapper
