#include "flows/sta.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <fstream>

#include "flows/run.hpp"

namespace fetta::flows::sta {

namespace {

// Markers the script prints around each report, so that the log splits without guessing.
constexpr const char* kBegin = "fetta-sta-begin ";
constexpr const char* kEnd = "fetta-sta-end ";

// The text between `fetta-sta-begin <name>` and `fetta-sta-end <name>` in the log.
std::string section(const std::string& log, const std::string& name) {
  const std::string b = kBegin + name + "\n", e = kEnd + name + "\n";
  size_t s = log.find(b);
  if (s == std::string::npos) return {};
  s += b.size();
  size_t t = log.find(e, s);
  return log.substr(s, t == std::string::npos ? std::string::npos : t - s);
}


void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
  out << text;
}

}  // namespace

void validate(const Constraints& c) {
  if (!(c.period_ps > 0 && std::isfinite(c.period_ps)))
    throw std::invalid_argument(fmt::format("sta: clock period {} ps; allowed: a finite period > 0", c.period_ps));
  if (!(c.input_delay_ps >= 0 && c.input_delay_ps < c.period_ps))
    throw std::invalid_argument(
        fmt::format("sta: input delay {} ps; allowed: 0 .. the period ({} ps)", c.input_delay_ps, c.period_ps));
  if (!(c.output_delay_ps >= 0 && c.output_delay_ps < c.period_ps))
    throw std::invalid_argument(
        fmt::format("sta: output delay {} ps; allowed: 0 .. the period ({} ps)", c.output_delay_ps, c.period_ps));
  if (!(c.load_ff >= 0 && std::isfinite(c.load_ff)))
    throw std::invalid_argument(fmt::format("sta: output load {} fF; allowed: >= 0", c.load_ff));
}

std::string write_sdc(const Constraints& c) {
  validate(c);
  std::string s;
  s += "# fetta: constraints of one module timed out of context (docs/synthesis.md, \"Sign-off timing\").\n";
  s += "# Units: ps and fF (the ASAP7 libraries'). Ideal clock: no clock tree, skew or uncertainty.\n";
  std::string inputs = "[all_inputs]";
  if (c.clock_port.empty()) {
    s += "# No clock port: a virtual clock times every input-to-output path.\n";
    s += fmt::format("create_clock -name {} -period {:.3f}\n", c.clock_name, c.period_ps);
  } else {
    s += fmt::format("create_clock -name {} -period {:.3f} [get_ports {}]\n", c.clock_name, c.period_ps, c.clock_port);
    inputs = fmt::format("[delete_from_list [all_inputs] [get_ports {}]]", c.clock_port);
  }
  s += "# Ports are registered outside: inputs change a flop's clock-to-Q after the edge, outputs\n";
  s += "# must settle a flop's setup time before the next edge.\n";
  s += fmt::format("set_input_delay {:.3f} -clock {} {}\n", c.input_delay_ps, c.clock_name, inputs);
  s += fmt::format("set_output_delay {:.3f} -clock {} [all_outputs]\n", c.output_delay_ps, c.clock_name);
  if (!c.driving_cell.empty()) s += fmt::format("set_driving_cell -lib_cell {} {}\n", c.driving_cell, inputs);
  s += fmt::format("set_load {:.3f} [all_outputs]\n", c.load_ff);
  return s;
}

std::optional<double> StaResult::min_period_ps() const {
  if (!worst_slack_ps) return std::nullopt;
  return period_ps - *worst_slack_ps;
}

std::optional<double> StaResult::fmax_mhz() const {
  std::optional<double> p = min_period_ps();
  if (!p || *p <= 0) return std::nullopt;
  return 1e6 / *p;
}

std::optional<TimingPath> parse_report_checks(const std::string& text) {
  if (text.find("No paths found") != std::string::npos) return std::nullopt;
  // A stage: "<delay> <time> <edge> <pin> (<cell>)", possibly after cap and slew columns.
  static const std::regex stage_re(R"(^\s*(?:-?[0-9.]+\s+)*?(-?[0-9.]+)\s+(-?[0-9.]+)\s+([v^])\s+(\S+)\s+\(([^)]*)\)\s*$)");
  static const std::regex value_re(R"(^\s*(-?[0-9.]+)\s+(data arrival time|data required time|slack \((MET|VIOLATED)\)))");
  TimingPath p;
  bool seen_start = false, arrival_done = false, have_slack = false;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (line.rfind("Startpoint: ", 0) == 0) {
      if (seen_start) break;  // only the first path
      p.startpoint = line.substr(12);
      seen_start = true;
      continue;
    }
    if (line.rfind("Endpoint: ", 0) == 0) {
      p.endpoint = line.substr(10);
      continue;
    }
    if (line.rfind("Path Group: ", 0) == 0) {
      p.path_group = line.substr(12);
      continue;
    }
    if (std::regex_search(line, m, value_re)) {
      double v = std::stod(m[1]);
      const std::string what = m[2];
      if (what == "data arrival time") {
        // Printed twice (after the path and in the summary): the first ends the stages.
        if (!arrival_done) p.arrival_ps = v;
        arrival_done = true;
      } else if (what == "data required time") {
        p.required_ps = v;
      } else {
        p.slack_ps = v;
        have_slack = true;
      }
      continue;
    }
    if (seen_start && !arrival_done && std::regex_match(line, m, stage_re)) {
      PathStage s;
      s.delay_ps = std::stod(m[1]);
      s.time_ps = std::stod(m[2]);
      s.edge = m[3];
      s.pin = m[4];
      s.cell = m[5];
      p.stages.push_back(s);
    }
  }
  if (!seen_start || !have_slack) return std::nullopt;
  return p;
}

double parse_metric(const std::string& text, const std::string& key, const std::string& what) {
  const std::regex re("(^|\\n)\\s*" + key + "\\s+(-?[0-9.]+(?:e[-+]?[0-9]+)?|INF|-INF)");
  std::smatch m;
  if (!std::regex_search(text, m, re))
    throw std::runtime_error(fmt::format("OpenSTA output of {}: no '{}' figure in it", what, key));
  const std::string v = m[2];
  if (v == "INF") return INFINITY;
  if (v == "-INF") return -INFINITY;
  return std::stod(v);
}

long long count_violated_endpoints(const std::string& text) {
  long long n = 0;
  for (const std::string& line : lines_of(text))
    if (line.find("(VIOLATED)") != std::string::npos) ++n;
  return n;
}

std::vector<double> endpoint_slacks(const std::string& text) {
  // "cg_a.icg/ENA (ICGx1_ASAP7_75t_R)   961.47   131.37   830.10 (MET)": endpoint, its cell, the
  // required and actual delays, the slack.
  static const std::regex re(R"(^\S+(?:\s+\([^)]*\))?\s+-?[0-9.]+\s+-?[0-9.]+\s+(-?[0-9.]+) \((MET|VIOLATED)\))");
  std::vector<double> v;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_search(line, m, re)) v.push_back(std::stod(m[1]));
  }
  return v;
}

std::string sta_script(const Run& run) {
  std::string s;
  s += "# fetta: sign-off static timing of one mapped netlist (docs/synthesis.md, \"Sign-off timing\").\n";
  for (const std::string& lib : run.liberty) s += fmt::format("read_liberty {}\n", tcl_path(lib));
  s += fmt::format("read_verilog {}\n", tcl_path(run.netlist));
  s += fmt::format("link_design {}\n", run.top);
  s += fmt::format("read_sdc {}\n", tcl_path(run.sdc));
  auto report = [&](const std::string& name, const std::string& cmd) {
    s += fmt::format("puts \"{}{}\"\n{}\nputs \"{}{}\"\n", kBegin, name, cmd, kEnd, name);
  };
  report("endpoints", "puts \"endpoints [llength [sta::endpoints]]\"");
  report("worst_slack", "report_worst_slack");
  report("wns", "report_wns");
  report("tns", "report_tns");
  report("path", "report_checks -path_delay max -digits 2");
  report("path_detail", "report_checks -path_delay max -fields {slew cap input_pins} -digits 2");
  report("violated", "report_checks -path_delay max -format end -group_count 100000000 -endpoint_count 1 "
                     "-slack_max 0 -digits 2");
  // The enables of the integrated clock gates (ICG* cells), checked against the clock they pass.
  report("clock_gating",
         "set fetta_enables {}\n"
         "foreach c [get_cells -hierarchical *] {\n"
         "  if {![$c is_leaf] || ![string match ICG* [get_property [get_property $c liberty_cell] name]]} { continue }\n"
         "  foreach p [get_pins -of_objects $c] { if {[get_property $p lib_pin_name] eq \"ENA\"} { lappend fetta_enables $p } }\n"
         "}\n"
         "puts \"clock_gates [llength $fetta_enables]\"\n"
         "if {[llength $fetta_enables]} { report_checks -path_delay max -format end -group_count 100000000 "
         "-endpoint_count 1 -to $fetta_enables -digits 2 }");
  return s;
}

std::string tcl_path(const std::string& p) { return "{" + p + "}"; }

std::string first_failure(const std::string& log) {
  for (const std::string& line : lines_of(log)) {
    const bool error = line.rfind("Error", 0) == 0;
    const bool unlinked = line.rfind("Warning", 0) == 0 && line.find("not found") != std::string::npos;
    if (error || unlinked) return line;
  }
  return {};
}

void require_sta() {
  if (!tool_available("sta"))
    throw std::runtime_error(
        "sign-off timing needs OpenSTA (program sta), not found on PATH; install with: apt-get install opensta");
}

std::string sta_version() {
  CommandResult r = run_command("sta -version");
  std::string v = r.output;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return "OpenSTA " + v;
}

StaResult run_sta(const Run& run, double period_ps, std::vector<std::string>* commands) {
  require_sta();
  write_file(run.work_dir + "/sta.tcl", sta_script(run));
  const std::string command = "sta -no_splash -exit sta.tcl";
  if (commands) commands->push_back(fmt::format("(cd {} && {})", run.work_dir, command));
  CommandResult res = run_command(command, run.work_dir);
  const std::string& log = res.output;
  write_file(run.work_dir + "/sta.log", log);
  if (res.exit_code != 0)
    throw std::runtime_error(fmt::format("OpenSTA failed on module {} (exit code {}; script {}/sta.tcl, log {}/sta.log)",
                                         run.top, res.exit_code, run.work_dir, run.work_dir));
  if (const std::string line = first_failure(log); !line.empty())
    throw std::runtime_error(fmt::format("OpenSTA failed on module {} ({}, {}; script {}/sta.tcl, log {}/sta.log): {}",
                                         run.top, run.netlist, run.sdc, run.work_dir, run.work_dir, line));
  StaResult r;
  r.period_ps = period_ps;
  const std::string what = run.work_dir + "/sta.log";
  r.endpoints = static_cast<long long>(parse_metric(section(log, "endpoints"), "endpoints", what));
  const std::string ws = section(log, "worst_slack");
  double worst = parse_metric(ws, "worst slack", what);
  if (std::isfinite(worst)) r.worst_slack_ps = worst;
  r.wns_ps = std::min(0.0, parse_metric(section(log, "wns"), "wns", what));
  r.tns_ps = std::min(0.0, parse_metric(section(log, "tns"), "tns", what));
  r.worst_path = parse_report_checks(section(log, "path"));
  r.failing_endpoints = count_violated_endpoints(section(log, "violated"));
  const std::string gating = section(log, "clock_gating");
  r.clock_gates = static_cast<long long>(parse_metric(gating, "clock_gates", what));
  for (double slack : endpoint_slacks(gating)) {
    r.gating_failing += slack < 0;
    r.gating_worst_slack_ps = std::min(slack, r.gating_worst_slack_ps.value_or(slack));
  }
  if (r.clock_gates > 0 && !r.gating_worst_slack_ps)
    throw std::runtime_error(fmt::format("OpenSTA output of {}: {} clock gates but no enable check", what, r.clock_gates));

  std::string t;
  t += fmt::format("# OpenSTA, module {}, clock period {:.1f} ps (constraints: {})\n", run.top, period_ps, run.sdc);
  t += fmt::format("worst slack {}  wns {:.2f}  tns {:.2f}  failing endpoints {} of {}\n\n",
                   r.worst_slack_ps ? fmt::format("{:.2f}", *r.worst_slack_ps) : std::string("none (no constrained path)"),
                   r.wns_ps, r.tns_ps, r.failing_endpoints, r.endpoints);
  if (r.clock_gates > 0)
    t += fmt::format("clock gating: {} gates, enable checks failing {}, worst slack {:.2f}\n\n", r.clock_gates,
                     r.gating_failing, *r.gating_worst_slack_ps);
  t += section(log, "path_detail");
  write_file(run.work_dir + "/timing.txt", t);
  return r;
}

}  // namespace fetta::flows::sta
