// Talking to Slurm through its client commands (sbatch, squeue, scontrol, scancel): the sweep's
// Slurm backend submits one job array per sweep and follows its tasks (docs/results.md, "Sweeps
// on a Slurm cluster").
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fetta::app::sweep::slurm {

// sbatch, squeue, scontrol and scancel on PATH, or an error naming the Debian packages.
void require_client();

struct Submission {
  std::string script;               // run by every task (SLURM_ARRAY_TASK_ID picks its point)
  size_t tasks = 0;                 // array 0 .. tasks-1
  int max_running = 0;              // %max of the array; 0: no limit
  std::string chdir;                // the tasks' working directory
  std::string log_pattern;          // --output (with %a for the task)
  std::vector<std::string> options; // the user's own sbatch options, each word apart
};
// Submits the array; returns its job id. A rejected submission throws with Slurm's message.
std::string submit(const Submission& s);

enum class Phase { pending, running, ended };
struct TaskState {
  Phase phase = Phase::pending;
  std::string state;  // Slurm's: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, ...
  int exit_code = 0;  // of an ended task
  int signal = 0;     // the signal that ended it, 0 if none
};
// The tasks of an array that Slurm still knows (squeue -t all; a pending range counts each task),
// then for each task asked about but absent there, scontrol's record of it if it has one.
// Nothing when squeue does not answer (a job it has forgotten is an answer: no task listed).
std::optional<std::map<size_t, TaskState>> array_states(const std::string& job, const std::vector<size_t>& tasks);

// True while any task of the job is pending, running or completing.
bool active(const std::string& job);

// Splits a --slurm-opt value into words (blanks separate them; no quoting).
std::vector<std::string> split_options(const std::string& s);

}  // namespace fetta::app::sweep::slurm
