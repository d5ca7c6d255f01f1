// The lint flow: an emitted design (a directory with filelist.f) must pass
// `verilator --lint-only -Wall` with no waivers, elaborate in Icarus (-g2012) and read in Yosys
// with no latches and no `check` warnings.
#pragma once

#include <string>
#include <vector>

namespace fetta::flows {

struct LintResult {
  std::string tool;      // verilator | iverilog | yosys
  std::string package;   // Debian package that installs it
  bool available = false;
  bool clean = false;
  std::string command;
  std::string output;
};

std::vector<LintResult> lint_design(const std::string& dir, const std::string& top);
// The files an emitted design's filelist.f names (relative to `dir`), in order; empty when it has none.
std::vector<std::string> read_filelist(const std::string& dir);
bool all_clean(const std::vector<LintResult>& r);

}  // namespace fetta::flows
