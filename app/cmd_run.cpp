// fetta run: the main job on a configuration. It grows with the project: today it generates
// the RTL of every block of the accelerator and lints it; simulation against the golden model joins it as the
// system testbench lands.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "commands.hpp"

namespace fetta::app {

void add_run_command(CLI::App& app) {
  struct Opts {
    std::string config = "configs/default.yaml";
    std::string out = "out/run";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("run", "The main job: generate, lint (and, as it lands, simulate) a configuration");
  cmd->add_option("--config", o->config, "Architecture configuration (YAML)")->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->capture_default_str();
  cmd->callback([o] {
    generate(o->config, "all", o->out + "/rtl", true);
    fmt::print("fetta run: done\n");
  });
}

}  // namespace fetta::app
