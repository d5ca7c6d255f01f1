// fetta equiv: prove configurations' simulation views equal to their synthesis views.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>

#include "commands.hpp"
#include "flows/equiv.hpp"

namespace fetta::app {

void add_equiv_command(CLI::App& app) {
  struct Opts {
    std::vector<std::string> configs{"configs/default.yaml"};
    std::string part = "top";
    std::string out = "out/equiv";
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "equiv", "Prove that the simulation view (what Verilated models run) computes the same bits as the synthesis "
               "view, module by module (Yosys miter + SAT; docs/rtl_gen.md, \"Views\")");
  cmd->add_option("--config", o->configs, "Architecture configuration (YAML); repeatable, each distinct module proven once")
      ->capture_default_str();
  cmd->add_option("--part", o->part, "What to compare (as fetta gen --part)")->capture_default_str();
  cmd->add_option("--out", o->out, "Work directory: both views' RTL and each proof's Yosys script and log")
      ->capture_default_str();
  cmd->callback([o] {
    std::set<std::string> done;
    int proven = 0, failed = 0;
    for (size_t i = 0; i < o->configs.size(); ++i) {
      const std::filesystem::path out = std::filesystem::path(o->out) / fmt::format("{}_{}", i, std::filesystem::path(o->configs[i]).stem().string());
      generate(o->configs[i], o->part, (out / "synthesis").string(), false, "synthesis");
      generate(o->configs[i], o->part, (out / "simulation").string(), false, "simulation");
      const std::vector<flows::ViewProof> proofs = flows::prove_views((out / "synthesis").string(),
                                                                      (out / "simulation").string(), (out / "proofs").string(), done);
      for (const flows::ViewProof& p : proofs) {
        const flows::EquivResult& r = p.result;
        if (!r.available) throw std::runtime_error(r.output);
        done.insert(p.module);
        fmt::print("  {:<36} latency {:>2}: {} ({:.1f} s)\n", p.module, p.latency, r.proven ? "proven equal" : "NOT EQUAL",
                   r.seconds);
        if (r.proven) {
          ++proven;
          continue;
        }
        ++failed;
        fmt::print("{}", r.counterexample.empty() ? r.output : "    counterexample:\n" + r.counterexample);
        fmt::print("    {}\n", r.command);
      }
    }
    if (proven + failed == 0)
      fmt::print("fetta equiv: no module has a simulation view of its own: the two views are the same RTL\n");
    else
      fmt::print("fetta equiv: {} of {} view pair(s) proven equal\n", proven, proven + failed);
    if (failed > 0) throw CLI::RuntimeError(1);
  });
}

}  // namespace fetta::app
