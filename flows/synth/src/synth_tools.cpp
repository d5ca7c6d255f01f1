#include "flows/synth_tools.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "flows/run.hpp"
#include "yaml_input/file.hpp"

namespace fetta::flows::synth {

std::vector<Tool> tools_for(Target t) {
  // Debian's Yosys runs ABC as the separate program berkeley-abc (a dependency of its package).
  std::vector<Tool> tools{{"yosys", "yosys", "yosys -V"}, {"berkeley-abc", "berkeley-abc", "berkeley-abc -q version"}};
  if (t == Target::asap7) tools.push_back({"sta", "opensta", "sta -version"});  // sign-off timing (OpenSTA)
  if (t == Target::ice40) tools.push_back({"nextpnr-ice40", "nextpnr-ice40", "nextpnr-ice40 --version"});
  return tools;
}

void require_tools(Target t) {
  std::vector<std::string> missing, packages;
  for (const Tool& tool : tools_for(t))
    if (!tool_available(tool.program)) {
      missing.push_back(tool.program);
      packages.push_back(tool.package);
    }
  if (!missing.empty())
    throw MissingToolError(fmt::format("--target {} needs {}, not found on PATH; install with: apt-get install {}",
                                       to_string(t), fmt::join(missing, ", "), fmt::join(packages, " ")));
}

std::map<std::string, std::string> tool_versions(Target t) {
  std::map<std::string, std::string> out;
  for (const Tool& tool : tools_for(t)) {
    CommandResult r = run_command(tool.version_command);
    std::string first;
    std::stringstream ss(r.output);
    while (std::getline(ss, first) && first.find_first_not_of(" \t") == std::string::npos) {
    }
    out[tool.program] = first;
  }
  return out;
}

std::string run_checked(const std::string& what, const std::string& command, const std::string& cwd,
                        std::vector<std::string>* log) {
  if (log) log->push_back(cwd.empty() ? command : fmt::format("(cd {} && {})", cwd, command));
  CommandResult r = run_command(command, cwd);
  if (r.exit_code != 0) {
    std::string tail = r.output.size() > 3000 ? "..." + r.output.substr(r.output.size() - 3000) : r.output;
    throw std::runtime_error(fmt::format("{} failed (exit code {}): {}\n{}", what, r.exit_code, command, tail));
  }
  return r.output;
}

std::string read_text(const std::string& path) { return yaml_input::read_file_or_throw(path); }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

}  // namespace fetta::flows::synth
