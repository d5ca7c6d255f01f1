#include "flows/synth.hpp"

#include <fmt/chrono.h>
#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <stdexcept>

#include "flows/asap7.hpp"
#include "flows/design_dir.hpp"
#include "flows/fpga.hpp"
#include "flows/synth_tools.hpp"

namespace fetta::flows::synth {

namespace fs = std::filesystem;

namespace {

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", tm);
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

double default_clock_mhz(Target t) {
  switch (t) {
    case Target::asap7: return 1000.0;  // the FETTA reference clock
    case Target::ice40: return 50.0;
    case Target::xilinx: return 0.0;    // resource counts only
  }
  return 0.0;
}

std::string default_pdk_dir() {
  std::string e = env("FETTA_ASAP7_DIR");
  if (!e.empty()) return e;
#ifdef FETTA_SOURCE_DIR
  return (fs::path(FETTA_SOURCE_DIR) / ".." / "shared" / "pdk" / "asap7").lexically_normal().string();
#else
  return "../shared/pdk/asap7";
#endif
}

std::string default_cache_dir() {
  std::string e = env("FETTA_CACHE_DIR");
  if (!e.empty()) return e;
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty()) return xdg + "/fetta";
  std::string home = env("HOME");
  return (home.empty() ? std::string("/tmp") : home + "/.cache") + "/fetta";
}

void validate_options(const Options& opt) {
  if (opt.clock_mhz < 0 || opt.clock_mhz > 100000)
    throw std::invalid_argument(fmt::format("--clock-mhz: {} is outside (0, 100000]", opt.clock_mhz));
  if (opt.target == Target::xilinx && opt.clock_mhz > 0)
    throw std::invalid_argument("--clock-mhz: the xilinx target counts resources only and takes no clock");
  if (opt.target != Target::xilinx && opt.target != Target::ice40 && !opt.device.empty())
    throw std::invalid_argument("--device: only for --target xilinx (a family) or ice40 (a part)");
  if (opt.target != Target::asap7 && opt.keep_hierarchy)
    throw std::invalid_argument("--keep-hierarchy: only for --target asap7 (the FPGA flows always flatten)");
  if (opt.target != Target::asap7 && opt.fmax)
    throw std::invalid_argument("--fmax: only for --target asap7 (ice40 always reports nextpnr's Fmax)");
  if (opt.target != Target::ice40 && !opt.package.empty())
    throw std::invalid_argument("--package: only for --target ice40");
  if (opt.modules.empty())
    throw std::invalid_argument("--modules: empty; allowed: all, top or a comma-separated list of modules");
  opt.sram.validate();
  if (opt.target == Target::ice40) ice40_device(opt.device.empty() ? "hx8k" : opt.device, opt.package);
  if (opt.target == Target::xilinx) check_xilinx_family(opt.device.empty() ? "xcup" : opt.device);
}

SynthReport run_synth(const std::string& rtl_dir, const std::string& work_dir, const Options& opt) {
  auto t0 = std::chrono::steady_clock::now();
  SynthReport rep;
  rep.started = now_utc();
  rep.target = opt.target;
  rep.clock_mhz = opt.clock_mhz > 0 ? opt.clock_mhz : default_clock_mhz(opt.target);
  validate_options(opt);
  Ice40Device ice;
  std::string family = opt.device.empty() ? "xcup" : opt.device;
  if (opt.target == Target::ice40) ice = ice40_device(opt.device.empty() ? "hx8k" : opt.device, opt.package);
  // Options first, then tools, then the design: the cheapest mistakes are reported first.
  require_tools(opt.target);
  DesignDir design = read_design_dir(rtl_dir);
  if (opt.target != Target::asap7 && design.gates_clocks_with_cells())
    throw std::runtime_error(fmt::format(
        "{} gates clocks with clock-gate cells (fetta_clock_gate), which an FPGA fabric does not take: regenerate it "
        "with `fetta gen --clock-gating enables`, or synthesize with --config, which does",
        rtl_dir));
  std::vector<DesignModule> modules = select_modules(design, opt.modules);

  rep.rtl_dir = design.dir;
  rep.top = design.top;
  rep.design_config = design.config;
  rep.tools = tool_versions(opt.target);
  rep.settings["modules"] = opt.modules;
  rep.settings["method"] = opt.keep_hierarchy ? "each module out of context, its hierarchy kept: every distinct "
                                                "submodule mapped once, the mapped netlist flattened for the figures"
                                              : "each module out of context, flattened below it";
  fs::create_directories(work_dir);
  const std::string work = fs::absolute(work_dir).lexically_normal().string();

  Asap7Libraries libs;
  if (opt.target == Target::asap7) {
    libs = prepare_asap7_libraries(opt.pdk_dir.empty() ? default_pdk_dir() : opt.pdk_dir,
                                   opt.cache_dir.empty() ? default_cache_dir() : opt.cache_dir);
    rep.settings["pdk_dir"] = libs.pdk_dir;
    rep.settings["liberty_comb"] = libs.comb_lib;
    rep.settings["liberty_seq"] = libs.seq_lib;
    for (size_t i = 0; i < libs.sources.size(); ++i)
      rep.settings[fmt::format("liberty_source_{}", i)] = fs::path(libs.sources[i]).filename().string();
    rep.settings["abc_driver_cell"] = kAsap7DriverCell;
    rep.settings["abc_output_load_ff"] = fmt::format("{}", kAsap7OutputLoadFf);
    rep.settings["flop_timing_at"] = fmt::format("{} ps slew, {} fF load", kAsap7FlopSlewPs, kAsap7FlopLoadFf);
    rep.settings["signoff_timing"] =
        "OpenSTA on the mapped netlist (NLDM, TT 0.7 V 25 C, ideal clock, no wires), constraints.sdc per module";
    rep.settings["sta_io_constraints"] = fmt::format(
        "inputs: a flop's clock-to-Q after the edge through {}; outputs: a flop's setup before it, {} fF",
        kAsap7DriverCell, kAsap7OutputLoadFf);
    rep.settings["sram_um2_per_bit"] = fmt::format("{}", opt.sram.um2_per_bit);
    rep.settings["sram_array_efficiency"] = fmt::format("{}", opt.sram.array_efficiency);
    rep.settings["sram_extra_port_factor"] = fmt::format("{}", opt.sram.extra_port_factor);
    rep.settings["sram_timing"] = fmt::format("clock-to-Q {} ps, setup {} ps, hold {} ps (FakeRAM2.0 ASAP7)",
                                              opt.sram.clk_to_q_ps, opt.sram.setup_ps, opt.sram.hold_ps);
    rep.settings["sram_leakage_nw_per_bit"] = fmt::format("{}", opt.sram.leakage_nw_per_bit);
    const FanoutLimits fl;
    rep.settings["fanout_repair"] = fmt::format("after mapping: a {} tree on every net over {} pins or {} fF "
                                                "(but the clock and constants)",
                                                fl.buffer_cell, fl.max_fanout, fl.max_load_ff);
    if (opt.fmax) rep.settings["fmax"] = "each module resynthesized at the period OpenSTA found until < 1 % better";
  } else if (opt.target == Target::xilinx) {
    rep.settings["family"] = family;
  } else {
    rep.settings["device"] = ice.device;
    rep.settings["package"] = ice.package;
    rep.settings["seed"] = std::to_string(opt.seed);
  }

  for (const DesignModule& m : modules) {
    std::string dir = fmt::format("{}/{}", work, m.name);
    switch (opt.target) {
      case Target::asap7: {
        Asap7Run run;
        run.clock_mhz = rep.clock_mhz;
        run.sram = opt.sram;
        run.hierarchy = opt.keep_hierarchy ? Hierarchy::keep : Hierarchy::flatten;
        run.fmax = opt.fmax;
        rep.modules.push_back(synth_asap7_module(design, m, libs, run, dir, &rep.commands));
        break;
      }
      case Target::xilinx:
        rep.modules.push_back(synth_xilinx_module(design, m, family, dir, &rep.commands));
        break;
      case Target::ice40:
        rep.modules.push_back(synth_ice40_module(design, m, ice, rep.clock_mhz, opt.seed, dir, &rep.commands));
        break;
    }
  }
  rep.finished = now_utc();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace fetta::flows::synth
