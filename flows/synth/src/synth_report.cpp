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

double SramModel::area_um2(long long bits, int rd_ports, int wr_ports, int shared_ports) const {
  int extra = std::max(0, rd_ports + wr_ports - shared_ports - 2);
  return static_cast<double>(bits) * um2_per_bit * (1.0 + extra_port_factor * extra) / array_efficiency;
}

void SramModel::validate() const {
  if (!(um2_per_bit > 0 && um2_per_bit < 10))
    throw std::invalid_argument(fmt::format("--sram-um2-per-bit: {} is outside (0, 10) um^2", um2_per_bit));
  if (!(array_efficiency > 0 && array_efficiency <= 1))
    throw std::invalid_argument(fmt::format("--sram-efficiency: {} is outside (0, 1]", array_efficiency));
  if (!(extra_port_factor >= 0 && extra_port_factor <= 10))
    throw std::invalid_argument(fmt::format("--sram-port-factor: {} is outside [0, 10]", extra_port_factor));
  if (!(clk_to_q_ps > 0 && clk_to_q_ps < 100000))
    throw std::invalid_argument(fmt::format("--sram-clk-to-q-ps: {} is outside (0, 100000) ps", clk_to_q_ps));
  if (!(setup_ps >= 0 && setup_ps < 100000))
    throw std::invalid_argument(fmt::format("--sram-setup-ps: {} is outside [0, 100000) ps", setup_ps));
  if (!(hold_ps >= 0 && hold_ps < 100000) || !(min_period_ps >= 0 && min_period_ps < 100000))
    throw std::invalid_argument("SRAM model: hold and minimum period must be in [0, 100000) ps");
  if (!(leakage_nw_per_bit >= 0 && leakage_nw_per_bit < 1000))
    throw std::invalid_argument(fmt::format("SRAM model: leakage {} nW per bit is outside [0, 1000)", leakage_nw_per_bit));
  if (!(input_cap_ff >= 0 && input_cap_ff < 1000) || !(clock_cap_ff >= 0 && clock_cap_ff < 1000))
    throw std::invalid_argument("SRAM model: pin capacitances must be in [0, 1000) fF");
}

namespace {

using nlohmann::json;

// Figures are rounded so that the deterministic part of the report does not carry float noise.
double round_to(double v, int digits) {
  double s = std::pow(10.0, digits);
  return std::round(v * s) / s;
}

json sta_json(const sta::StaResult& r, const std::string& sdc) {
  json j;
  j["tool"] = "OpenSTA";
  j["constraints"] = sdc;
  j["period_ps"] = round_to(r.period_ps, 3);
  j["worst_slack_ps"] = r.worst_slack_ps ? json(round_to(*r.worst_slack_ps, 2)) : json(nullptr);
  j["wns_ps"] = round_to(r.wns_ps, 2);
  j["tns_ps"] = round_to(r.tns_ps, 2);
  j["failing_endpoints"] = r.failing_endpoints;
  j["endpoints"] = r.endpoints;
  if (r.clock_gates > 0)
    j["clock_gating"] = {{"gates", r.clock_gates},
                         {"failing_enables", r.gating_failing},
                         {"worst_enable_slack_ps", round_to(*r.gating_worst_slack_ps, 2)}};
  j["min_period_ps"] = r.min_period_ps() ? json(round_to(*r.min_period_ps(), 2)) : json(nullptr);
  j["fmax_mhz"] = r.fmax_mhz() ? json(round_to(*r.fmax_mhz(), 2)) : json(nullptr);
  if (r.worst_path) {
    const sta::TimingPath& p = *r.worst_path;
    json stages = json::array();
    for (const sta::PathStage& s : p.stages)
      stages.push_back({{"pin", s.pin}, {"cell", s.cell}, {"edge", s.edge}, {"delay_ps", round_to(s.delay_ps, 2)},
                        {"time_ps", round_to(s.time_ps, 2)}});
    j["worst_path"] = {{"startpoint", p.startpoint},
                       {"endpoint", p.endpoint},
                       {"path_group", p.path_group},
                       {"arrival_ps", round_to(p.arrival_ps, 2)},
                       {"required_ps", round_to(p.required_ps, 2)},
                       {"slack_ps", round_to(p.slack_ps, 2)},
                       {"stages", stages}};
  } else {
    j["worst_path"] = nullptr;
  }
  return j;
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
    j["clock_gates"] = a.clock_gates;
    j["abc_logic_delay_ps"] = round_to(a.abc_logic_delay_ps, 2);
    j["flop_overhead_ps"] = round_to(a.flop_overhead_ps, 2);
    j["abc_delay_ps"] = round_to(a.abc_delay_ps, 2);
    j["abc_slack_ps"] = round_to(a.abc_slack_ps, 2);
    j["mapped_period_ps"] = round_to(a.mapped_period_ps, 3);
    j["fanout_repair"] = {{"buffers", a.fanout_buffers},
                          {"nets", a.fanout_nets},
                          {"worst_fanout", a.worst_fanout},
                          {"worst_fanout_net", a.worst_fanout_net}};
    j["flop_cell"] = a.flop_cell;
    auto mem_json = [](const MemoryMacro& mm) {
      json e{{"name", mm.name},         {"width", mm.width},       {"depth", mm.depth},
             {"bits", mm.bits()},       {"rd_ports", mm.rd_ports}, {"wr_ports", mm.wr_ports},
             {"rw_ports", mm.rw_ports()}, {"area_um2", round_to(mm.area_um2, 3)}};
      if (!mm.cell.empty()) e["cell"] = mm.cell;
      return e;
    };
    json mems = json::array(), flop_mems = json::array();
    for (const MemoryMacro& mm : a.memories) mems.push_back(mem_json(mm));
    for (const MemoryMacro& mm : a.memories_in_flops) flop_mems.push_back(mem_json(mm));
    j["memories"] = mems;
    j["memories_in_flops"] = flop_mems;
    if (a.sta) j["sta"] = sta_json(*a.sta, a.sta_constraints);
    if (!a.fmax_search.empty()) {
      json tries = json::array();
      for (const auto& t : a.fmax_search)
        tries.push_back({{"mapped_period_ps", round_to(t.mapped_period_ps, 3)}, {"min_period_ps", round_to(t.min_period_ps, 2)}});
      j["fmax_search"] = tries;
    }
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
  j["schema"] = "fetta.synth.v2";
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
      out += fmt::format("ASAP7 RVT TT, clock {} MHz (period {:.0f} ps); timing: OpenSTA on the mapped netlist "
                         "(sign-off), ABC's estimate beside it; * = top\n",
                         r.clock_mhz, 1e6 / r.clock_mhz);
      out += fmt::format("{:<{}}  {:>12} {:>12} {:>8} {:>7} {:>9} {:>12} {:>8} {:>9} {:>9}\n", "module", w, "area um^2",
                         "sram um^2", "cells", "flops", "WNS ps", "TNS ps", "failing", "fmax MHz", "ABC ps");
      for (const ModuleResult& m : r.modules) {
        const Asap7Metrics& a = *m.asap7;
        std::string wns = "-", tns = "-", failing = "-", fmax = "-";
        if (a.sta) {
          wns = fmt::format("{:.1f}", a.sta->wns_ps);
          tns = fmt::format("{:.1f}", a.sta->tns_ps);
          failing = std::to_string(a.sta->failing_endpoints);
          fmax = a.sta->fmax_mhz() ? fmt::format("{:.1f}", *a.sta->fmax_mhz()) : std::string("no path");
        }
        out += fmt::format("{:<{}}  {:>12.2f} {:>12.2f} {:>8} {:>7} {:>9} {:>12} {:>8} {:>9} {:>9.1f}\n", name(m), w,
                           a.area_um2, a.sram_area_um2, a.cells, a.flops, wns, tns, failing, fmax, a.abc_delay_ps);
      }
      for (const ModuleResult& m : r.modules)
        if (m.asap7->sta && m.asap7->sta->clock_gates > 0)
          out += fmt::format("  {}: {} clock gates, enable checks failing {}, worst enable slack {:.1f} ps\n", m.name,
                             m.asap7->sta->clock_gates, m.asap7->sta->gating_failing,
                             *m.asap7->sta->gating_worst_slack_ps);
      for (const ModuleResult& m : r.modules)
        if (m.asap7->sta && m.asap7->sta->worst_path && m.asap7->sta->wns_ps < 0)
          out += fmt::format("  {}: worst path {} -> {}, slack {:.1f} ps\n", m.name, m.asap7->sta->worst_path->startpoint,
                             m.asap7->sta->worst_path->endpoint, m.asap7->sta->worst_path->slack_ps);
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
