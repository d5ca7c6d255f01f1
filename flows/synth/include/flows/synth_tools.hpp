// The external programs each synthesis target runs, the Debian package of each, and their
// versions for the report.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "flows/synth_report.hpp"

namespace fetta::flows::synth {

struct Tool {
  std::string program;  // as found on PATH
  std::string package;  // Debian package that installs it
  std::string version_command;
};

std::vector<Tool> tools_for(Target t);

// Thrown when a target's programs are missing; the message names each program and the
// `apt-get install` line that provides them.
class MissingToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws MissingToolError unless every tool of `t` is on PATH.
void require_tools(Target t);
// program -> first line of its version output.
std::map<std::string, std::string> tool_versions(Target t);

// Runs `command` in `cwd`, appends it to `log` (when given) and returns its output; throws
// std::runtime_error with the tail of the output when it exits non-zero.
std::string run_checked(const std::string& what, const std::string& command, const std::string& cwd,
                        std::vector<std::string>* log);

std::string read_text(const std::string& path);  // throws naming the path
void write_text(const std::string& path, const std::string& text);

}  // namespace fetta::flows::synth
