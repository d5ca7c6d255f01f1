// fetta gen: elaborate the accelerator for a configuration and emit its SystemVerilog.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "arch/config.hpp"
#include "commands.hpp"
#include "hw/top.hpp"
#include "rtl_gen/emit.hpp"

namespace fetta::app {

std::string read_manifest_top(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  if (!in) throw std::runtime_error(fmt::format("{}/manifest.json not found; pass --top", dir));
  return nlohmann::json::parse(in).at("top").get<std::string>();
}

namespace {

bool generate_one(const arch::ArchConfig& cfg, const std::string& config, const std::string& part,
                  const std::string& out, bool lint, const rtl::Design& proto) {
  rtl::Design design(proto.view(), proto.clock_gating());
  const rtl::View view = design.view();
  std::string top = hw::elaborate_part(design, cfg, part);
  auto res = rtl::write_design(design, top, out, hw::config_summary(cfg));
  fmt::print("fetta gen: {} ({}, {} view, clock gating by {}) -> {}\n", cfg.name, config, rtl::to_string(view),
             rtl::to_string(design.clock_gating()), out);
  fmt::print("  top module {}, {} modules:\n", top, res.files.size());
  for (const auto& f : res.files)
    fmt::print("    {:<40} {:>8} bytes  sha256 {}\n", f.file, f.bytes, f.sha256.substr(0, 16));
  fmt::print("  filelist.f, manifest.json\n");
  if (!lint) return true;
  fmt::print("lint:\n");
  return print_lint(out, top);
}

}  // namespace

void generate(const std::string& config, const std::string& part, const std::string& out, bool lint,
              const std::string& view_name, const std::string& clock_gating) {
  const rtl::View view = rtl::parse_view(view_name);
  const rtl::Design proto = clock_gating.empty() ? rtl::Design(view) : rtl::Design(view, rtl::parse_clock_gating(clock_gating));
  arch::ArchConfig cfg = arch::load_arch_config(config);
  std::vector<std::string> failed;
  if (part == "all") {
    for (const std::string& p : hw::part_list())
      if (!generate_one(cfg, config, p, out + "/" + p, lint, proto)) failed.push_back(p);
  } else if (!generate_one(cfg, config, part, out, lint, proto)) {
    failed.push_back(part);
  }
  if (!failed.empty())
    throw std::runtime_error(fmt::format("the generated RTL of {} is not lint-clean", fmt::join(failed, ", ")));
}

void add_gen_command(CLI::App& app) {
  struct Opts {
    std::string config = "configs/default.yaml";
    std::string out = "out/rtl";
    std::string part = "all";
    std::string view = "synthesis";
    std::string clock_gating;
    bool lint = true;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("gen", "Generate the SystemVerilog of an accelerator configuration");
  cmd->add_option("--config", o->config, "Architecture configuration (YAML)")->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->capture_default_str();
  cmd->add_option("--part", o->part, "What to generate: " + hw::part_names() + ", or all (one directory each)")->capture_default_str();
  cmd->add_option("--view", o->view,
                  "synthesis (the structural arithmetic that synthesis maps and times) or simulation (behavioural "
                  "arithmetic with the same ports, latency and bits, proven equal by `ctest -L equiv`: what the "
                  "Verilated models run; docs/rtl_gen.md, \"Views\")")
      ->check(CLI::IsMember({"synthesis", "simulation"}))
      ->capture_default_str();
  cmd->add_option("--clock-gating", o->clock_gating,
                  "How registers on gated clocks are built: cells (integrated clock gates, for ASIC synthesis; the "
                  "synthesis view's default) or enables (load enables on the one clock, for FPGA flows; the "
                  "simulation view's default). The same bits every cycle either way (docs/rtl_gen.md, \"Clock gating\")")
      ->check(CLI::IsMember({"cells", "enables"}));
  cmd->add_flag("!--no-lint", o->lint, "Skip the lint flow after emitting");
  cmd->callback([o] { generate(o->config, o->part, o->out, o->lint, o->view, o->clock_gating); });
}

}  // namespace fetta::app
