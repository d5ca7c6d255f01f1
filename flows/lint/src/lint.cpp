#include "flows/lint.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "flows/run.hpp"

namespace fetta::flows {

std::vector<std::string> read_filelist(const std::string& dir) {
  std::ifstream in(dir + "/filelist.f");
  std::vector<std::string> files;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) files.push_back(line);
  return files;
}

namespace {

LintResult run_tool(const std::string& tool, const std::string& package, const std::string& cmd,
                    const std::string& dir, bool output_must_be_empty) {
  LintResult r{tool, package, tool_available(tool), false, cmd, {}};
  if (!r.available) {
    r.output = fmt::format("{} is not installed (apt-get install {})", tool, package);
    return r;
  }
  CommandResult c = run_command(cmd, dir);
  r.output = c.output;
  r.clean = c.exit_code == 0 && (!output_must_be_empty || c.output.find_first_not_of(" \n") == std::string::npos);
  return r;
}

}  // namespace

std::vector<LintResult> lint_design(const std::string& dir, const std::string& top) {
  std::vector<std::string> files = read_filelist(dir);
  std::vector<LintResult> out;
  if (files.empty()) {
    out.push_back(LintResult{"filelist", "", true, false, "", fmt::format("no filelist.f (or an empty one) in {}", dir)});
    return out;
  }
  std::string list = fmt::format("{}", fmt::join(files, " "));
  out.push_back(run_tool("verilator", "verilator",
                         fmt::format("verilator --lint-only -Wall --top-module {} {}", top, list), dir, true));
  out.push_back(run_tool("iverilog", "iverilog",
                         fmt::format("iverilog -g2012 -Wall -s {} -o /dev/null {}", top, list), dir, true));
  // `check -assert` fails on undriven/multiply-driven nets; the select fails on any latch but the
  // one of rtl_gen's clock gate (fetta_clock_gate, docs/rtl_gen.md "Clock gating").
  out.push_back(run_tool(
      "yosys", "yosys",
      fmt::format("yosys -q -p 'read_verilog -sv {}; hierarchy -check -top {}; proc; "
                  "select -assert-none t:$dlatch t:$adlatch t:$dlatchsr t:$sr %u %u %u fetta_clock_gate/* %d; "
                  "check -assert'",
                  list, top),
      dir, false));
  return out;
}

bool all_clean(const std::vector<LintResult>& r) {
  for (const LintResult& x : r)
    if (!x.clean) return false;
  return !r.empty();
}

}  // namespace fetta::flows
