// fetta lint: run an emitted design through Verilator -Wall, Icarus and Yosys.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <stdexcept>

#include "commands.hpp"
#include "flows/lint.hpp"

namespace fetta::app {

bool print_lint(const std::string& dir, const std::string& top) {
  auto results = flows::lint_design(dir, top);
  for (const auto& r : results) {
    fmt::print("  {:<10} {}\n", r.tool, !r.available ? "MISSING" : r.clean ? "clean" : "FAILED");
    if (!r.clean && !r.output.empty()) fmt::print("{}\n", r.output);
  }
  return flows::all_clean(results);
}

void add_lint_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("lint", "Lint an emitted design with Verilator -Wall, Icarus and Yosys");
  auto dir = std::make_shared<std::string>();
  auto top = std::make_shared<std::string>();
  cmd->add_option("--dir", *dir, "Directory written by `fetta gen` (holds filelist.f)")->required();
  cmd->add_option("--top", *top, "Top module (default: from manifest.json)");
  cmd->callback([dir, top] {
    std::string t = *top;
    if (t.empty()) t = read_manifest_top(*dir);
    fmt::print("lint {} (top {})\n", *dir, t);
    if (!print_lint(*dir, t)) throw std::runtime_error("lint failed");
  });
}

}  // namespace fetta::app
