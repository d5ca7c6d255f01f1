// fetta sweep and fetta sweep-point: the command line of the sweep engine (app/sweep/).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <memory>

#include "commands.hpp"
#include "sweep/sweep.hpp"

namespace fetta::app {

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<sweep::Options>();
  auto* cmd = app.add_subcommand("sweep", "Sweep a grid of configurations: generate, lint, synthesize, count cycles "
                                          "and energy; CSV/JSON results, here or on a Slurm cluster");
  cmd->add_option("--grid", o->grid, "Grid description (YAML; see docs/results.md and scripts/grids/)")->required();
  cmd->add_option("--out", o->out, "Output directory: results.csv, results.jsonl, points/<point>/")->capture_default_str();
  cmd->add_option("--backend", o->backend, "Where the points run: local (threads here) or slurm (one job array)")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "local: points run in parallel")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_flag("--resume", o->resume,
                "Skip the points already recorded in <out> (results.jsonl, and the records of Slurm tasks); with "
                "slurm, follow a job array still running there first");
  cmd->add_flag("--retry-failed", o->retry_failed,
                "With --resume: run the points recorded as failed again (their records are dropped first)");
  cmd->add_option("--slurm-opt", o->slurm_opts, "slurm: options for sbatch, e.g. \"--partition=cpu --time=2:00:00\" "
                                                "(repeatable; split on blanks)");
  cmd->add_option("--max-running", o->max_running, "slurm: at most this many tasks at once (the array's %N)")
      ->check(CLI::Range(1, 100000));
  cmd->add_flag("--no-wait", o->no_wait, "slurm: submit and return; a later --resume collects the results");
  cmd->add_option("--cache-dir", o->cache_dir,
                  "Verilated model cache of the points' RTL runs (default $FETTA_CACHE_DIR or ~/.cache/fetta); with "
                  "slurm, on a filesystem every node sees");
  cmd->callback([o] {
    if (const int code = sweep::run(*o); code != 0) throw CLI::RuntimeError(code);
  });

  auto spec = std::make_shared<std::string>();
  auto* task = app.add_subcommand("sweep-point", "One point of a sweep submitted to Slurm (what each task of the job "
                                                 "array runs; not for direct use)");
  task->add_option("--spec", *spec, "The task's spec (<out>/slurm/sub<N>/task<i>.json)")->required();
  task->callback([spec] {
    const int code = sweep::run_task(*spec);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace fetta::app
