#include "flows/supervise.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace fetta::flows {
namespace {

namespace fs = std::filesystem;

volatile sig_atomic_t g_stop_signal = 0;

void note_stop(int sig) { g_stop_signal = sig; }

// In the worker: its parent is gone or asked it to stop; take every child tool down with it.
void kill_own_group(int) { ::kill(0, SIGKILL); }

void install(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR so the supervisor can act
  sigaction(sig, &sa, nullptr);
}

// Waits for `pid` up to `timeout_s` (negative: for ever); true once it has been reaped.
bool wait_child(pid_t pid, int& status, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const pid_t r = ::waitpid(pid, &status, timeout_s < 0 ? 0 : WNOHANG);
    if (r == pid) return true;
    if (r < 0 && errno != EINTR) return true;  // not our child any more
    if (timeout_s < 0) {
      if (g_stop_signal != 0) return false;
      continue;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int run_supervised(const std::string& marker, const std::function<int()>& work) {
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return work();  // no supervision possible; still do the job
  if (pid == 0) {
    ::setpgid(0, 0);
    install(SIGTERM, kill_own_group);
    install(SIGHUP, kill_own_group);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) kill_own_group(0);  // the supervisor died before prctl
    ::setenv(kJobMarkerVar, marker.c_str(), 1);
    int code = 1;
    try {
      code = work();
    } catch (...) {
      code = 1;
    }
    std::fflush(nullptr);
    std::_Exit(code);
  }
  ::setpgid(pid, pid);  // either side may run first; both set it
  install(SIGINT, note_stop);
  install(SIGTERM, note_stop);
  install(SIGHUP, note_stop);
  int status = 0;
  if (wait_child(pid, status, -1)) {
    ::kill(-pid, SIGKILL);  // anything the worker left behind in its group
    return exit_code(status);
  }
  const int sig = g_stop_signal;
  ::kill(-pid, SIGTERM);
  if (!wait_child(pid, status, 2.0)) {
    ::kill(-pid, SIGKILL);
    wait_child(pid, status, 5.0);
  }
  ::kill(-pid, SIGKILL);
  return 128 + sig;
}

std::vector<pid_t> marked_processes(const std::string& marker) {
  const std::string want = std::string(kJobMarkerVar) + "=" + marker;
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == self) continue;
    std::ifstream in(e.path() / "environ", std::ios::binary);  // unreadable for other users: skipped
    if (!in) continue;
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (size_t p = 0; p < env.size();) {
      const size_t end = env.find('\0', p);
      const size_t len = (end == std::string::npos ? env.size() : end) - p;
      if (len == want.size() && env.compare(p, len, want) == 0) {
        out.push_back(pid);
        break;
      }
      if (end == std::string::npos) break;
      p = end + 1;
    }
  }
  return out;
}

int reap_marked(const std::string& marker) {
  const std::vector<pid_t> pids = marked_processes(marker);
  for (pid_t p : pids) ::kill(p, SIGKILL);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!marked_processes(marker).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // zombies keep their environ until reaped
  return static_cast<int>(pids.size());
}

JobLock::~JobLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool JobLock::acquire(const std::string& path, double wait_s, pid_t& holder_pid) {
  holder_pid = 0;
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) return false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    if (std::chrono::steady_clock::now() >= until) {
      std::ifstream in(path);
      long p = 0;
      if (in >> p) holder_pid = static_cast<pid_t>(p);
      ::close(fd_);
      fd_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string owner = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, owner.data(), owner.size(), 0) < 0) {
    // the pid is informative only
  }
  return true;
}

}  // namespace fetta::flows
