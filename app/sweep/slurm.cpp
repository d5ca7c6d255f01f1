#include "slurm.hpp"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

#include "flows/run.hpp"

namespace fetta::app::sweep::slurm {

namespace {

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

Phase phase_of(const std::string& state) {
  if (state == "PENDING" || state == "REQUEUED" || state == "CONFIGURING" || state == "RESV_DEL_HOLD" ||
      state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "SUSPENDED")
    return Phase::pending;
  if (state == "RUNNING" || state == "COMPLETING" || state == "STAGE_OUT" || state == "SIGNALING" ||
      state == "RESIZING" || state == "STOPPED")
    return Phase::running;
  return Phase::ended;
}

// "3", "4-7", "[4-7%2]", "2,5-6": the task indices of an squeue ArrayTaskID field.
std::vector<size_t> task_ids(std::string f) {
  std::vector<size_t> ids;
  if (!f.empty() && f.front() == '[') f = f.substr(1);
  if (const size_t pct = f.find('%'); pct != std::string::npos) f = f.substr(0, pct);
  if (!f.empty() && f.back() == ']') f.pop_back();
  std::stringstream ss(f);
  for (std::string part; std::getline(ss, part, ',');) {
    if (part.empty()) continue;
    try {
      const size_t dash = part.find('-');
      const size_t lo = std::stoul(part.substr(0, dash));
      const size_t hi = dash == std::string::npos ? lo : std::stoul(part.substr(dash + 1));
      for (size_t i = lo; i <= hi; ++i) ids.push_back(i);
    } catch (const std::exception&) {
      continue;  // "N/A" and the like: not a task of an array
    }
  }
  return ids;
}

// "KEY=value" out of scontrol's one-line record.
std::string field(const std::string& line, const std::string& key) {
  const std::string k = " " + key + "=";
  const size_t i = (" " + line).find(k);
  if (i == std::string::npos) return {};
  const size_t b = i + k.size() - 1;
  const size_t e = line.find(' ', b);
  return line.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

}  // namespace

void require_client() {
  for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel"})
    if (!flows::tool_available(tool))
      throw std::runtime_error(fmt::format(
          "--backend slurm: {} is not on PATH; install the Debian package slurm-client (a cluster also needs "
          "slurmctld, slurmd and munge; scripts/slurm/up.sh starts a single-node one)",
          tool));
}

std::vector<std::string> split_options(const std::string& s) {
  std::vector<std::string> words;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) words.push_back(w);
  return words;
}

std::string submit(const Submission& s) {
  std::string cmd = fmt::format("sbatch --parsable --job-name=fetta-sweep --array=0-{}{} --chdir={} --output={}",
                                s.tasks - 1, s.max_running > 0 ? fmt::format("%{}", s.max_running) : "",
                                flows::shell_quote(s.chdir), flows::shell_quote(s.log_pattern));
  for (const std::string& o : s.options) cmd.append(" ").append(flows::shell_quote(o));
  cmd.append(" ").append(flows::shell_quote(s.script));
  const flows::CommandResult r = flows::run_command(cmd);
  const std::string out = trim(r.output);
  // --parsable prints "jobid" or "jobid;cluster"; anything else is Slurm's refusal.
  const std::string id = out.substr(0, out.find(';'));
  const bool numeric = !id.empty() && id.find_first_not_of("0123456789") == std::string::npos;
  if (r.exit_code != 0 || !numeric)
    throw std::runtime_error(fmt::format("sbatch rejected the sweep's job array (exit {}): {}", r.exit_code, out));
  return id;
}

std::optional<std::map<size_t, TaskState>> array_states(const std::string& job, const std::vector<size_t>& tasks) {
  std::map<size_t, TaskState> states;
  const flows::CommandResult q =
      flows::run_command(fmt::format("squeue -h -t all -j {} -O ArrayTaskID:40,State:24,exit_code:12", job));
  // A job Slurm has forgotten is an answer (no task listed); any other failure is none.
  const bool forgotten = q.output.find("Invalid job id") != std::string::npos;
  if (q.exit_code != 0 && !forgotten) return std::nullopt;
  if (q.exit_code == 0) {
    std::stringstream ss(q.output);
    for (std::string line; std::getline(ss, line);) {
      std::stringstream ls(line);
      std::string ids, state, code;
      if (!(ls >> ids >> state)) continue;
      ls >> code;
      TaskState t;
      t.state = state;
      t.phase = phase_of(state);
      if (t.phase == Phase::ended && !code.empty() && code.find_first_not_of("0123456789") == std::string::npos) {
        const int raw = std::stoi(code);  // a wait status
        if (raw & 0x7f) t.signal = raw & 0x7f;
        else t.exit_code = (raw >> 8) & 0xff;
      }
      for (size_t i : task_ids(ids)) states[i] = t;
    }
  }
  // Tasks squeue no longer lists (past MinJobAge): scontrol may still know them.
  for (size_t i : tasks) {
    if (states.count(i)) continue;
    const flows::CommandResult c = flows::run_command(fmt::format("scontrol -o show job {}_{}", job, i));
    if (c.exit_code != 0) continue;
    const std::string state = field(c.output, "JobState");
    if (state.empty()) continue;
    TaskState t;
    t.state = state;
    t.phase = phase_of(state);
    const std::string code = field(c.output, "ExitCode");  // "code:signal"
    if (const size_t colon = code.find(':'); colon != std::string::npos) {
      try {
        t.exit_code = std::stoi(code.substr(0, colon));
        t.signal = std::stoi(code.substr(colon + 1));
      } catch (const std::exception&) {
      }
    }
    states[i] = t;
  }
  return states;
}

bool active(const std::string& job) {
  const flows::CommandResult q = flows::run_command(fmt::format("squeue -h -j {} -t PD,R,CG,CF,S -O JobID", job));
  return q.exit_code == 0 && !trim(q.output).empty();
}

}  // namespace fetta::app::sweep::slurm
