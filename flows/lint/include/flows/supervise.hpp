// Long jobs whose child tools (Verilator, Yosys, make, the simulator) must not outlive them.
//
// A supervised job runs in a forked worker that leads its own process group; every child tool
// it starts inherits the group and an environment marker (kJobMarkerVar=<marker>). The worker
// dies with the supervisor (PR_SET_PDEATHSIG, then it kills its whole group), and the supervisor
// kills the group when the worker ends or a signal stops it. Should both be killed at once
// (SIGKILL to each), the orphaned tools still carry the marker: reap_marked finds and stops them
// before the job is started again.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace fetta::flows {

inline constexpr const char* kJobMarkerVar = "FETTA_JOB";

// Runs `work` in a supervised worker (above) and returns its exit code; a worker ended by a
// signal returns 128 + the signal. SIGINT, SIGTERM and SIGHUP to the supervisor stop the worker's
// group (SIGTERM, then SIGKILL after 2 s) and return 128 + that signal. Call it with no other
// threads running: the worker is a fork.
int run_supervised(const std::string& marker, const std::function<int()>& work);

// The processes of this user whose environment holds kJobMarkerVar=marker (read from
// /proc/<pid>/environ), except the caller.
std::vector<pid_t> marked_processes(const std::string& marker);

// Sends SIGKILL to every marked process and waits (up to 5 s) until they are gone; returns how
// many there were.
int reap_marked(const std::string& marker);

// An exclusive lock on `path` (created if absent) for this process and its forks, released when
// they exit. `owner` is written into the file. Waits up to `wait_s` seconds for another holder
// to let go; returns false if it did not (holder_pid then holds what the file names, or 0).
class JobLock {
 public:
  JobLock() = default;
  JobLock(const JobLock&) = delete;
  JobLock& operator=(const JobLock&) = delete;
  ~JobLock();
  bool acquire(const std::string& path, double wait_s, pid_t& holder_pid);

 private:
  int fd_ = -1;
};

}  // namespace fetta::flows
