// Each subcommand lives in its own cmd_<name>.cpp and registers itself on the CLI here.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace fetta::app {
void add_gen_command(CLI::App& app);
void add_lint_command(CLI::App& app);
void add_run_command(CLI::App& app);
void add_compile_command(CLI::App& app);
void add_exec_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_synth_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_power_command(CLI::App& app);
void add_equiv_command(CLI::App& app);

// Shared helpers.
bool print_lint(const std::string& dir, const std::string& top);  // true when every tool is clean
std::string read_manifest_top(const std::string& dir);
// Generates `part` of the configuration into `out`, prints the files; lints unless told not to.
// view: "synthesis" or "simulation" (rtl::View); clock_gating: "cells", "enables" (rtl::ClockGating)
// or empty for the view's default.
void generate(const std::string& config, const std::string& part, const std::string& out, bool lint,
              const std::string& view = "synthesis", const std::string& clock_gating = "");
}  // namespace fetta::app
