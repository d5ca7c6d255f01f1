// `fetta sweep`: a grid of configurations run point by point, on this machine (local backend,
// threads) or as one Slurm job array (slurm backend); results.jsonl / results.csv either way
// (docs/results.md, "Sweeps").
#pragma once
#include <string>
#include <vector>

namespace fetta::app::sweep {

struct Options {
  std::string grid, out = "out/sweep";
  std::string backend = "local";        // local | slurm
  int jobs = 1;                         // local: points at once
  bool resume = false, retry_failed = false;
  std::vector<std::string> slurm_opts;  // slurm: the user's sbatch options (each value split on blanks)
  int max_running = 0;                  // slurm: tasks at once (the array's %max); 0: Slurm's limits
  bool no_wait = false;                 // slurm: submit and return; a later --resume collects
  std::string cache_dir;                // the points' Verilated model cache (FETTA_CACHE_DIR); shared by nodes
};

// The whole sweep. Bad input throws (std::invalid_argument, std::runtime_error) before any point
// runs; a failure during the sweep is printed and gives a non-zero exit code.
int run(const Options& o);

// One point of a submitted sweep, as a Slurm task runs it (`fetta sweep-point --spec FILE`): writes
// the point's record into <out>/slurm/records/. Returns the exit code.
int run_task(const std::string& spec_file);

}  // namespace fetta::app::sweep
