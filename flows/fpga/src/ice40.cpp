#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "flows/fpga.hpp"
#include "flows/run.hpp"
#include "flows/synth_tools.hpp"
#include "flows/yosys_output.hpp"

namespace fetta::flows::synth {

namespace fs = std::filesystem;

namespace {

struct DeviceInfo {
  const char* device;
  std::vector<std::string> packages;  // default first: the one with the most I/O
  bool has_dsp;
};

// The iCE40 parts nextpnr-ice40 0.4 knows, with their packages.
const std::vector<DeviceInfo> kDevices{
    {"hx8k", {"ct256", "cb132", "bg121", "cm225"}, false},
    {"hx4k", {"tq144", "cb132", "bg121"}, false},
    {"hx1k", {"tq144", "vq100"}, false},
    {"lp8k", {"cm225", "cm121", "cm81"}, false},
    {"lp4k", {"cm225", "cm121", "cm81"}, false},
    {"lp1k", {"cm121", "cb121", "qn84", "cm81", "cb81", "cm49", "cm36", "swg16tr"}, false},
    {"lp384", {"cm49", "cm36", "qn32"}, false},
    {"up5k", {"sg48", "uwg30"}, true},
    {"up3k", {"sg48", "uwg30"}, true},
    {"u4k", {"sg48"}, true},
};

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

std::string device_names() {
  std::vector<std::string> n;
  for (const DeviceInfo& d : kDevices) n.push_back(d.device);
  return fmt::format("{}", fmt::join(n, ", "));
}

// What a human calls the nextpnr bel types in a "does not fit" message.
std::string bel_meaning(const std::string& bel) {
  if (bel == "ICESTORM_LC") return "logic cells";
  if (bel == "ICESTORM_RAM") return "4 kbit block RAMs";
  if (bel == "SB_IO") return "I/O pins";
  if (bel == "ICESTORM_DSP") return "DSP blocks";
  return bel;
}

}  // namespace

Ice40Device ice40_device(const std::string& device, const std::string& package) {
  for (const DeviceInfo& d : kDevices) {
    if (device != d.device) continue;
    if (package.empty()) return {d.device, d.packages.front(), d.has_dsp};
    if (std::find(d.packages.begin(), d.packages.end(), package) == d.packages.end())
      throw std::invalid_argument(fmt::format("--package: '{}' is not a package of the iCE40 {}; allowed: {}", package,
                                              device, fmt::join(d.packages, ", ")));
    return {d.device, package, d.has_dsp};
  }
  throw std::invalid_argument(fmt::format("--device: unknown iCE40 device '{}'; allowed: {}", device, device_names()));
}

std::optional<std::vector<Port>> parse_module_ports(const std::string& sv_text, const std::string& module) {
  static const std::regex port_re(R"(^\s*(input|output)\s+logic\s+(signed\s+)?(?:\[(\d+):0\]\s+)?(\w+)\s*,?\s*$)");
  std::stringstream ss(sv_text);
  std::vector<Port> ports;
  bool in_header = false;
  for (std::string line; std::getline(ss, line);) {
    if (!in_header) {
      in_header = line.rfind("module " + module + " (", 0) == 0;
      continue;
    }
    if (line.rfind(");", 0) == 0) return ports.empty() ? std::nullopt : std::optional(ports);
    std::smatch m;
    if (!std::regex_match(line, m, port_re)) return std::nullopt;
    ports.push_back({m[4], m[1] == "input", m[2].matched, m[3].matched ? std::stoi(m[3]) + 1 : 1});
  }
  return std::nullopt;
}

std::string ooc_wrapper(const std::string& module, const std::vector<Port>& ports) {
  auto decl = [](const Port& p) {
    return fmt::format("logic {}{}", p.is_signed ? "signed " : "", p.width > 1 ? fmt::format("[{}:0] ", p.width - 1) : "");
  };
  bool has_clk = std::any_of(ports.begin(), ports.end(), [](const Port& p) { return p.input && p.name == "clk"; });
  std::vector<std::string> header, body, regs, conns;
  if (!has_clk) header.push_back("  input  logic clk");
  for (const Port& p : ports) {
    header.push_back(fmt::format("  {} {}{}", p.input ? "input " : "output", decl(p), p.name));
    if (p.input && p.name == "clk") {
      conns.push_back("    .clk(clk)");
      continue;
    }
    body.push_back(fmt::format("  {}{}_q;", decl(p), p.name));
    if (p.input) {
      regs.push_back(fmt::format("    {0}_q <= {0};", p.name));
      conns.push_back(fmt::format("    .{0}({0}_q)", p.name));
    } else {
      body.push_back(fmt::format("  {}{}_d;", decl(p), p.name));
      regs.push_back(fmt::format("    {0}_q <= {0}_d;", p.name));
      conns.push_back(fmt::format("    .{0}({0}_d)", p.name));
      body.push_back(fmt::format("  assign {0} = {0}_q;", p.name));
    }
  }
  return fmt::format(
      "// Out-of-context timing harness written by fetta synth: every port of {0} registered.\n"
      "module fetta_ooc_{0} (\n{1}\n);\n{2}\n  always_ff @(posedge clk) begin\n{3}\n  end\n  {0} u_dut (\n{4}\n  );\n"
      "endmodule\n",
      module, fmt::join(header, ",\n"), fmt::join(body, "\n"), fmt::join(regs, "\n"), fmt::join(conns, ",\n"));
}

Ice40Metrics ice40_metrics(const std::map<std::string, long long>& cells) {
  Ice40Metrics m;
  for (const auto& [type, n] : cells) {
    if (type == "SB_LUT4") m.luts += n;
    else if (starts(type, "SB_DFF")) m.ffs += n;
    else if (type == "SB_CARRY") m.carries += n;
    else if (starts(type, "SB_RAM")) m.brams += n;
    else if (type == "SB_MAC16") m.dsps += n;
  }
  return m;
}

ModuleResult synth_ice40_module(const DesignDir& design, const DesignModule& module, const Ice40Device& dev,
                                double clock_mhz, int seed, const std::string& work_dir,
                                std::vector<std::string>* commands) {
  fs::create_directories(work_dir);
  // Resources are the module's own; place and route runs on the harness that registers its
  // ports, so that the Fmax covers every path of the module (port paths included).
  std::optional<std::vector<Port>> ports;
  if (const DesignModule* dm = design.find(module.name); dm && !dm->file.empty())
    ports = parse_module_ports(read_text(design.dir + "/" + dm->file), module.name);
  std::string pnr_top = ports ? "fetta_ooc_" + module.name : module.name;
  if (ports) write_text(work_dir + "/" + pnr_top + ".sv", ooc_wrapper(module.name, *ports));
  std::string s;
  s += fmt::format("# fetta synth --target ice40: module {} out of context for the {} ({})\n", module.name, dev.device,
                   dev.package);
  s += fmt::format("read_verilog -sv {}{}\n", fmt::join(design.files, " "), ports ? " " + work_dir + "/" + pnr_top + ".sv" : "");
  s += "design -save sources\n";
  s += fmt::format("synth_ice40 -top {}{}\n", module.name, dev.has_dsp ? " -dsp" : "");
  s += fmt::format("tee -q -o {}/stat.txt stat\n", work_dir);
  if (ports) {
    s += "design -load sources\n";
    s += fmt::format("synth_ice40 -top {}{}\n", pnr_top, dev.has_dsp ? " -dsp" : "");
  }
  s += fmt::format("write_json {}/netlist.json\n", work_dir);
  write_text(work_dir + "/synth.ys", s);
  run_checked(fmt::format("Yosys (ice40, module {})", module.name), "yosys -q -l yosys.log -s synth.ys", work_dir,
              commands);

  ModuleResult r = module_result_for(design, module, work_dir);
  StatResult stat = parse_stat(read_text(work_dir + "/stat.txt"));
  r.cells_by_type = stat.cells;
  Ice40Metrics m = ice40_metrics(stat.cells);
  m.target_mhz = clock_mhz;
  r.warnings = split_warnings(read_text(work_dir + "/yosys.log")).kept;

  // Timing-driven placement towards the target; the achieved Fmax is reported either way.
  std::string pnr = fmt::format(
      "nextpnr-ice40 --{} --package {} --json netlist.json --freq {} --seed {} --timing-allow-fail "
      "--report pnr_report.json > nextpnr.log 2>&1",
      dev.device, dev.package, clock_mhz, seed);
  if (commands) commands->push_back(fmt::format("(cd {} && {})", work_dir, pnr));
  CommandResult c = run_command(pnr, work_dir);
  std::string log = read_text(work_dir + "/nextpnr.log");
  if (c.exit_code != 0) {
    for (const auto& [bel, ua] : parse_nextpnr_utilisation(log))
      if (ua.first > ua.second)
        throw std::runtime_error(fmt::format(
            "module {} does not fit the iCE40 {}: it needs {} {} ({}), the device has {}; synthesize a smaller "
            "configuration or a part of it (--part, --modules), or choose a larger --device",
            module.name, dev.device, ua.first, bel_meaning(bel), bel, ua.second));
    if (log.find("$sb_io'") != std::string::npos && log.find("Unable to find a placement location") != std::string::npos) {
      auto util = parse_nextpnr_utilisation(log);
      long long ios = util.count("SB_IO") ? util["SB_IO"].first : 0;
      throw std::runtime_error(fmt::format(
          "module {} does not fit the iCE40 {} in package {}: its ports need {} I/O pins, more than the package "
          "bonds; synthesize a smaller module (--modules) or choose a package with more pins (--package)",
          module.name, dev.device, dev.package, ios));
    }
    std::string tail = log.size() > 3000 ? "..." + log.substr(log.size() - 3000) : log;
    throw std::runtime_error(fmt::format("nextpnr-ice40 failed on module {} (exit code {}); see {}/nextpnr.log\n{}",
                                         module.name, c.exit_code, work_dir, tail));
  }
  NextpnrReport rep = parse_nextpnr_report(read_text(work_dir + "/pnr_report.json"));
  if (rep.utilisation.count("ICESTORM_LC")) {
    m.lcs = rep.utilisation["ICESTORM_LC"].first;
    m.lcs_available = rep.utilisation["ICESTORM_LC"].second;
  }
  if (rep.utilisation.count("SB_IO")) m.ios = rep.utilisation["SB_IO"].first;
  m.fmax_mhz = rep.fmax_mhz;
  m.target_met = rep.fmax_mhz && *rep.fmax_mhz >= clock_mhz;
  if (ports) {
    r.notes.push_back("placed and routed inside a harness that registers every port (fetta_ooc_<module>.sv): Fmax covers "
                      "port-to-register paths too; lcs and ios include the harness");
  } else {
    r.notes.push_back("ports not recognised: placed and routed without a harness, Fmax is register to register only");
  }
  if (!rep.fmax_mhz) r.notes.push_back("no clocked path: nextpnr reports no Fmax");
  r.ice40 = m;
  return r;
}

}  // namespace fetta::flows::synth
