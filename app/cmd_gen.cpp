// fetta gen: elaborate the accelerator for a configuration and emit its SystemVerilog.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

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

void generate(const std::string& config, const std::string& part, const std::string& out, bool lint) {
  arch::ArchConfig cfg = arch::load_arch_config(config);
  rtl::Design design;
  std::string top = hw::elaborate_part(design, cfg, part);
  auto res = rtl::write_design(design, top, out, hw::config_summary(cfg));
  fmt::print("fetta gen: {} ({}) -> {}\n", cfg.name, config, out);
  fmt::print("  top module {}, {} modules:\n", top, res.files.size());
  for (const auto& f : res.files)
    fmt::print("    {:<40} {:>8} bytes  sha256 {}\n", f.file, f.bytes, f.sha256.substr(0, 16));
  fmt::print("  filelist.f, manifest.json\n");
  if (lint) {
    fmt::print("lint:\n");
    if (!print_lint(out, top)) throw std::runtime_error("the generated RTL is not lint-clean");
  }
}

void add_gen_command(CLI::App& app) {
  struct Opts {
    std::string config = "configs/default.yaml";
    std::string out = "out/rtl";
    std::string part = "top";
    bool lint = true;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("gen", "Generate the SystemVerilog of an accelerator configuration");
  cmd->add_option("--config", o->config, "Architecture configuration (YAML)")->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->capture_default_str();
  cmd->add_option("--part", o->part, "What to generate: " + hw::part_names())->capture_default_str();
  cmd->add_flag("!--no-lint", o->lint, "Skip the lint flow after emitting");
  cmd->callback([o] { generate(o->config, o->part, o->out, o->lint); });
}

}  // namespace fetta::app
