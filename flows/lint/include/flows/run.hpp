// Running external tools (Verilator, Yosys, Icarus, ...) and capturing what they print.
#pragma once

#include <string>
#include <vector>

namespace fetta::flows {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr, interleaved
};

// Runs `command` through /bin/sh in `cwd` (empty: current directory).
CommandResult run_command(const std::string& command, const std::string& cwd = {});
bool tool_available(const std::string& tool);
std::string shell_quote(const std::string& s);
// A tool's output (or any text) split at its newlines, without them.
std::vector<std::string> lines_of(const std::string& text);

}  // namespace fetta::flows
