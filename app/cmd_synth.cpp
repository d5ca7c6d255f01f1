// fetta synth: synthesize an accelerator configuration (or an emitted RTL directory) for ASAP7,
// a Xilinx family or an iCE40, write report.json and print a table (docs/synthesis.md).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "arch/config.hpp"
#include "commands.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"
#include "hw/top.hpp"

namespace fetta::app {

namespace {

struct SynthOpts {
  std::string config;
  std::string rtl;
  std::string part = "ce";
  std::string target;
  std::string out = "out/synth";
  double clock_mhz = 0;
  bool lint = false;
  flows::synth::Options flow;
};

void run(const SynthOpts& o) {
  namespace sy = flows::synth;
  if (o.config.empty() == o.rtl.empty())
    throw std::invalid_argument("fetta synth: give exactly one of --config FILE (generate, then synthesize) or --rtl DIR "
                                "(an emitted design)");
  sy::Options opt = o.flow;
  opt.target = sy::parse_target(o.target);
  opt.clock_mhz = o.clock_mhz;
  sy::validate_options(opt);  // before spending time on generation
  sy::require_tools(opt.target);

  std::string rtl = o.rtl;
  std::string config_text;
  if (!o.config.empty()) {
    arch::ArchConfig cfg = arch::load_arch_config(o.config);
    // The configuration's clock is the ASIC target; FPGA targets keep their own default.
    if (opt.clock_mhz == 0 && opt.target == sy::Target::asap7) opt.clock_mhz = cfg.clock_mhz;
    rtl = (std::filesystem::path(o.out) / "rtl").string();
    // FPGA fabrics take no derived clocks: a gated register becomes a load enable there.
    generate(o.config, o.part, rtl, o.lint, "synthesis", opt.target == sy::Target::asap7 ? "cells" : "enables");
    config_text = sy::read_text(o.config);
  }
  std::string work = (std::filesystem::path(o.out) / sy::to_string(opt.target)).string();
  fmt::print("fetta synth: {} -> {} (target {})\n", rtl, o.out, sy::to_string(opt.target));
  sy::SynthReport rep = sy::run_synth(rtl, work, opt);
  if (!o.config.empty()) {
    rep.config_file = std::filesystem::absolute(o.config).lexically_normal().string();
    rep.config_text = config_text;
  }
  std::string report = (std::filesystem::path(o.out) / "report.json").string();
  sy::write_report_json(rep, report);
  fmt::print("{}", sy::format_table(rep));
  for (const auto& m : rep.modules)
    for (const auto& w : m.warnings) fmt::print("  {}: {}\n", m.name, w);
  fmt::print("report: {} ({:.1f} s)\n", report, rep.seconds);
}

}  // namespace

void add_synth_command(CLI::App& app) {
  auto o = std::make_shared<SynthOpts>();
  auto* cmd = app.add_subcommand("synth", "Synthesize a configuration or an emitted design (ASAP7, Xilinx, iCE40)");
  cmd->add_option("--config", o->config, "Architecture configuration (YAML): generate --part, then synthesize it");
  cmd->add_option("--rtl", o->rtl, "Or: a directory written by `fetta gen` (filelist.f, manifest.json)");
  cmd->add_option("--part", o->part, "With --config, what to generate: " + hw::part_names())->capture_default_str();
  cmd->add_option("--target", o->target, "asap7 | xilinx | ice40")->required();
  cmd->add_option("--out", o->out, "Output directory (report.json, rtl/, <target>/<module>/ logs)")->capture_default_str();
  cmd->add_option("--clock-mhz", o->clock_mhz,
                  "Clock target: asap7 (default: the config's clock_mhz, else 1000), ice40 (default 50)");
  cmd->add_option("--modules", o->flow.modules, "all | top | comma-separated module names")->capture_default_str();
  cmd->add_flag("--keep-hierarchy", o->flow.keep_hierarchy,
                "asap7: map each distinct submodule once (out of context), then flatten the mapped netlist for the "
                "figures and OpenSTA, instead of flattening first: the default top in a few minutes");
  cmd->add_flag("--fmax", o->flow.fmax,
                "asap7: also find each module's highest clock: resynthesize at the period OpenSTA says the netlist "
                "needs until that stops improving by 1 % (up to 4 mappings per module)");
  cmd->add_option("--pdk", o->flow.pdk_dir, "asap7: directory of the ASAP7 .lib.gz files (default: ../shared/pdk/asap7 "
                                             "of the repository, or $FETTA_ASAP7_DIR)");
  cmd->add_option("--cache-dir", o->flow.cache_dir, "asap7: where the merged Liberty files are kept (default: "
                                                     "$FETTA_CACHE_DIR or ~/.cache/fetta)");
  cmd->add_option("--device", o->flow.device, "xilinx: family (default xcup); ice40: part (default hx8k)");
  cmd->add_option("--package", o->flow.package, "ice40: package (default: the part's largest)");
  cmd->add_option("--seed", o->flow.seed, "ice40: nextpnr placement seed")->capture_default_str();
  cmd->add_option("--sram-um2-per-bit", o->flow.sram.um2_per_bit, "asap7 SRAM model: bitcell area")->capture_default_str();
  cmd->add_option("--sram-efficiency", o->flow.sram.array_efficiency, "asap7 SRAM model: array efficiency")
      ->capture_default_str();
  cmd->add_option("--sram-port-factor", o->flow.sram.extra_port_factor,
                  "asap7 SRAM model: area growth per port beyond 1R+1W")
      ->capture_default_str();
  cmd->add_option("--sram-clk-to-q-ps", o->flow.sram.clk_to_q_ps, "asap7 SRAM macros: read data after the clock edge")
      ->capture_default_str();
  cmd->add_option("--sram-setup-ps", o->flow.sram.setup_ps, "asap7 SRAM macros: setup of every input")
      ->capture_default_str();
  cmd->add_flag("--lint", o->lint, "With --config: lint the generated RTL before synthesis");
  cmd->callback([o] { run(*o); });
}

}  // namespace fetta::app
