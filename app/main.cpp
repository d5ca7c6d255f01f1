// fetta: generate, verify and measure FETTA-class tensor-contraction accelerators.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <exception>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"fetta: a generator for tensor-contraction training accelerators"};
  app.require_subcommand(1);
  fetta::app::add_gen_command(app);
  fetta::app::add_lint_command(app);
  fetta::app::add_run_command(app);
  fetta::app::add_compile_command(app);
  fetta::app::add_exec_command(app);
  fetta::app::add_search_command(app);
  fetta::app::add_synth_command(app);
  fetta::app::add_sweep_command(app);
  fetta::app::add_power_command(app);
  fetta::app::add_equiv_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {  // a command that already reported, with its exit code
    return e.get_exit_code();
  } catch (const CLI::ParseError& e) {  // (RuntimeError derives from it: caught first)
    return app.exit(e);
  } catch (const std::exception& e) {
    fmt::print(stderr, "fetta: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
