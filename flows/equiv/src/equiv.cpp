#include "flows/equiv.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "flows/lint.hpp"
#include "flows/run.hpp"

namespace fetta::flows {

namespace {

// One side, flattened into a single module named `as` (so both sides may share submodule names).
std::string flatten_script(const EquivSide& s, const std::string& as, const std::string& out) {
  const std::vector<std::string> files = read_filelist(s.dir);
  if (files.empty()) throw std::runtime_error(fmt::format("equiv: no filelist.f (or an empty one) in {}", s.dir));
  std::string quoted;  // a Yosys script: paths as they are (the build's and the user's --out)
  for (const std::string& f : files) {
    quoted += ' ';
    quoted += std::filesystem::absolute(std::filesystem::path(s.dir) / f).string();
  }
  return fmt::format("read_verilog -sv{}; hierarchy -check -top {}; proc; flatten; opt_clean; rename {} {}; write_rtlil {}",
                     quoted, s.top, s.top, as, out);
}

// The lines of Yosys' SAT model table (signal, time step, value) after "model found".
std::string model_lines(const std::string& output) {
  const size_t at = output.find("model found");
  if (at == std::string::npos) return {};
  std::istringstream in(output.substr(at));
  std::string line, out;
  for (int n = 0; std::getline(in, line) && n < 200; ++n)
    if (line.find("\\in_") != std::string::npos || line.find("\\gold_") != std::string::npos ||
        line.find("\\gate_") != std::string::npos)
      out += line + "\n";
  return out;
}

}  // namespace

EquivResult prove_equivalent(const EquivSide& gold, const EquivSide& gate, int latency, const std::string& work_dir) {
  EquivResult r;
  r.available = tool_available("yosys");
  if (!r.available) {
    r.output = "yosys is not installed (apt-get install yosys)";
    return r;
  }
  std::filesystem::create_directories(work_dir);
  const std::string gold_il = std::filesystem::absolute(std::filesystem::path(work_dir) / "gold.il").string();
  const std::string gate_il = std::filesystem::absolute(std::filesystem::path(work_dir) / "gate.il").string();
  // -seq N unrolls N cycles from a free state; outputs are asserted equal only in the last one.
  const std::string seq = latency > 0 ? fmt::format(" -seq {} -prove-skip {}", latency + 1, latency) : "";
  const std::string script = fmt::format(
      "{}; design -reset; {}; design -reset; read_rtlil {}; read_rtlil {}; "
      "miter -equiv -flatten -make_assert equiv_gold equiv_gate equiv_miter; hierarchy -top equiv_miter; "
      "sat -prove-asserts -show-inputs -show-outputs{} equiv_miter",
      flatten_script(gold, "equiv_gold", gold_il), flatten_script(gate, "equiv_gate", gate_il), gold_il, gate_il, seq);
  std::ofstream(std::filesystem::path(work_dir) / "equiv.ys") << script << "\n";
  const std::string yosys = "yosys -l equiv.log -s equiv.ys";
  r.command = fmt::format("{} (in {})", yosys, work_dir);
  const auto t0 = std::chrono::steady_clock::now();
  const CommandResult c = run_command(yosys, work_dir);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.output = c.output;
  r.proven = c.exit_code == 0 && c.output.find("SUCCESS!") != std::string::npos && c.output.find("FAIL") == std::string::npos;
  if (!r.proven) r.counterexample = model_lines(c.output);
  return r;
}

std::vector<ViewProof> prove_views(const std::string& synthesis_dir, const std::string& simulation_dir,
                                   const std::string& work_dir, const std::set<std::string>& skip) {
  const std::filesystem::path manifest = std::filesystem::path(simulation_dir) / "manifest.json";
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error(fmt::format("equiv: {} not found", manifest.string()));
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<ViewProof> proofs;
  for (const nlohmann::json& m : j.at("modules")) {
    ViewProof p;
    p.module = m.at("name").get<std::string>();
    if (!m.contains("view") || skip.count(p.module)) continue;
    p.latency = m.value("view_latency", 0);
    p.result = prove_equivalent({synthesis_dir, p.module}, {simulation_dir, p.module}, p.latency,
                                (std::filesystem::path(work_dir) / p.module).string());
    proofs.push_back(std::move(p));
  }
  return proofs;
}

}  // namespace fetta::flows
