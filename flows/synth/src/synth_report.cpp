#include "flows/synth_report.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

namespace fetta::flows::synth {

Target parse_target(const std::string& name) {
  if (name == "asap7") return Target::asap7;
  if (name == "xilinx") return Target::xilinx;
  if (name == "ice40") return Target::ice40;
  throw std::invalid_argument(fmt::format("--target: unknown target '{}'; allowed: {}", name, target_names()));
}

std::string to_string(Target t) {
  switch (t) {
    case Target::asap7: return "asap7";
    case Target::xilinx: return "xilinx";
    case Target::ice40: return "ice40";
  }
  return "?";
}

std::string target_names() { return "asap7, xilinx, ice40"; }

double SramModel::area_um2(long long bits, int rd_ports, int wr_ports) const {
  int extra = std::max(0, rd_ports + wr_ports - 2);
  return static_cast<double>(bits) * um2_per_bit * (1.0 + extra_port_factor * extra) / array_efficiency;
}

void SramModel::validate() const {
  if (!(um2_per_bit > 0 && um2_per_bit < 10))
    throw std::invalid_argument(fmt::format("--sram-um2-per-bit: {} is outside (0, 10) um^2", um2_per_bit));
  if (!(array_efficiency > 0 && array_efficiency <= 1))
    throw std::invalid_argument(fmt::format("--sram-efficiency: {} is outside (0, 1]", array_efficiency));
  if (!(extra_port_factor >= 0 && extra_port_factor <= 10))
    throw std::invalid_argument(fmt::format("--sram-port-factor: {} is outside [0, 10]", extra_port_factor));
}

namespace {

using nlohmann::json;

// Figures are rounded so that the deterministic part of the report does not carry float noise.
double round_to(double v, int digits) {
  double s = std::pow(10.0, digits);
  return std::round(v * s) / s;
}

json module_json(const ModuleResult& m) {
  json j;
  j["name"] = m.name;
  j["top"] = m.top;
  j["generator"] = m.generator;
  j["parameters"] = m.parameters;
  if (m.asap7) {
    const Asap7Metrics& a = *m.asap7;
    j["area_um2"] = round_to(a.area_um2, 3);
    j["logic_area_um2"] = round_to(a.logic_area_um2, 3);
    j["sram_area_um2"] = round_to(a.sram_area_um2, 3);
    j["cells"] = a.cells;
    j["flops"] = a.flops;
    j["logic_delay_ps"] = round_to(a.logic_delay_ps, 2);
    j["flop_overhead_ps"] = round_to(a.flop_overhead_ps, 2);
    j["delay_ps"] = round_to(a.delay_ps, 2);
    j["slack_ps"] = round_to(a.slack_ps, 2);
    j["flop_cell"] = a.flop_cell;
    json mems = json::array();
    for (const MemoryMacro& mm : a.memories)
      mems.push_back({{"name", mm.name},
                      {"width", mm.width},
                      {"depth", mm.depth},
                      {"bits", mm.bits()},
                      {"rd_ports", mm.rd_ports},
                      {"wr_ports", mm.wr_ports},
                      {"area_um2", round_to(mm.area_um2, 3)}});
    j["memories"] = mems;
  }
  if (m.xilinx) {
    const XilinxMetrics& x = *m.xilinx;
    j["luts"] = x.luts;
    j["lutram_cells"] = x.lutram_cells;
    j["srls"] = x.srls;
    j["ffs"] = x.ffs;
    j["dsps"] = x.dsps;
    j["carries"] = x.carries;
    j["ramb36"] = x.ramb36;
    j["ramb18"] = x.ramb18;
    j["brams"] = x.brams;
  }
  if (m.ice40) {
    const Ice40Metrics& i = *m.ice40;
    j["luts"] = i.luts;
    j["ffs"] = i.ffs;
    j["carries"] = i.carries;
    j["brams"] = i.brams;
    j["dsps"] = i.dsps;
    j["lcs"] = i.lcs;
    j["lcs_available"] = i.lcs_available;
    j["ios"] = i.ios;
    j["fmax_mhz"] = i.fmax_mhz ? json(round_to(*i.fmax_mhz, 2)) : json(nullptr);
    j["target_mhz"] = i.target_mhz;
    j["target_met"] = i.target_met;
  }
  j["cells_by_type"] = m.cells_by_type;
  j["warnings"] = m.warnings;
  j["notes"] = m.notes;
  j["work_dir"] = m.work_dir;
  return j;
}

}  // namespace

json to_json(const SynthReport& r) {
  json j;
  j["schema"] = "fetta.synth.v1";
  j["target"] = to_string(r.target);
  j["design"] = {{"rtl_dir", r.rtl_dir}, {"top", r.top}, {"config", r.design_config}};
  if (!r.config_file.empty()) j["config"] = {{"file", r.config_file}, {"yaml", r.config_text}};
  j["clock_mhz"] = r.clock_mhz;
  j["clock_period_ps"] = r.clock_mhz > 0 ? json(round_to(1e6 / r.clock_mhz, 3)) : json(nullptr);
  j["settings"] = r.settings;
  j["tools"] = r.tools;
  j["commands"] = r.commands;
  json mods = json::array();
  for (const ModuleResult& m : r.modules) mods.push_back(module_json(m));
  j["modules"] = mods;
  j["run"] = {{"started", r.started}, {"finished", r.finished}, {"seconds", round_to(r.seconds, 1)}};
  return j;
}

void write_report_json(const SynthReport& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
  out << to_json(r).dump(2) << "\n";
}

std::string format_table(const SynthReport& r) {
  size_t w = 6;
  for (const ModuleResult& m : r.modules) w = std::max(w, m.name.size() + (m.top ? 2 : 0));
  std::string out;
  auto name = [&](const ModuleResult& m) { return m.top ? m.name + " *" : m.name; };
  switch (r.target) {
    case Target::asap7:
      out += fmt::format("ASAP7 RVT TT, clock {} MHz (period {:.0f} ps); * = top\n", r.clock_mhz, 1e6 / r.clock_mhz);
      out += fmt::format("{:<{}}  {:>12} {:>12} {:>8} {:>7} {:>9} {:>9}\n", "module", w, "area um^2", "sram um^2",
                         "cells", "flops", "delay ps", "slack ps");
      for (const ModuleResult& m : r.modules) {
        const Asap7Metrics& a = *m.asap7;
        out += fmt::format("{:<{}}  {:>12.2f} {:>12.2f} {:>8} {:>7} {:>9.1f} {:>9.1f}\n", name(m), w, a.area_um2,
                           a.sram_area_um2, a.cells, a.flops, a.delay_ps, a.slack_ps);
      }
      break;
    case Target::xilinx:
      out += fmt::format("Xilinx {} (Yosys synth_xilinx, out of context, no I/O buffers); * = top\n",
                         r.settings.count("family") ? r.settings.at("family") : "");
      out += fmt::format("{:<{}}  {:>8} {:>8} {:>6} {:>7} {:>6} {:>8}\n", "module", w, "LUTs", "LUTRAM", "SRLs",
                         "FFs", "DSPs", "BRAM36");
      for (const ModuleResult& m : r.modules) {
        const XilinxMetrics& x = *m.xilinx;
        out += fmt::format("{:<{}}  {:>8} {:>8} {:>6} {:>7} {:>6} {:>8}\n", name(m), w, x.luts, x.lutram_cells, x.srls,
                           x.ffs, x.dsps, x.brams);
      }
      break;
    case Target::ice40:
      out += fmt::format("iCE40 {} {} (Yosys synth_ice40 + nextpnr-ice40), target {} MHz; * = top\n",
                         r.settings.count("device") ? r.settings.at("device") : "",
                         r.settings.count("package") ? r.settings.at("package") : "", r.clock_mhz);
      out += fmt::format("{:<{}}  {:>7} {:>7} {:>7} {:>6} {:>5} {:>5} {:>10}\n", "module", w, "LCs", "LUTs", "FFs",
                         "BRAMs", "DSPs", "IOs", "Fmax MHz");
      for (const ModuleResult& m : r.modules) {
        const Ice40Metrics& i = *m.ice40;
        out += fmt::format("{:<{}}  {:>7} {:>7} {:>7} {:>6} {:>5} {:>5} {:>10}\n", name(m), w, i.lcs, i.luts, i.ffs,
                           i.brams, i.dsps, i.ios,
                           i.fmax_mhz ? fmt::format("{:.2f}", *i.fmax_mhz) : std::string("no clock"));
      }
      break;
  }
  return out;
}

ModuleResult module_result_for(const DesignDir& design, const DesignModule& module, const std::string& work_dir) {
  ModuleResult r;
  r.name = module.name;
  r.generator = module.generator;
  r.parameters = module.parameters;
  r.top = module.name == design.top;
  r.work_dir = work_dir;
  return r;
}

}  // namespace fetta::flows::synth
