#include "flows/run.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <sstream>

namespace fetta::flows {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

CommandResult run_command(const std::string& command, const std::string& cwd) {
  std::string full = (cwd.empty() ? "" : "cd " + shell_quote(cwd) + " && ") + "(" + command + ") 2>&1";
  CommandResult r;
  FILE* p = popen(full.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool tool_available(const std::string& tool) {
  return run_command("command -v " + shell_quote(tool) + " >/dev/null").exit_code == 0;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) out.push_back(line);
  return out;
}

}  // namespace fetta::flows
