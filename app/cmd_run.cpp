// fetta run: the main job. Compile the layers into a program (mapper/program.hpp: bad input fails
// here), generate the top of the configuration, Verilate it once per distinct RTL (cached by the
// hash of the generated files), and execute the program in the system simulation, which compares
// every result with the golden model and prints a table per phase. Exit code: the simulation's
// (0 all match, 1 mismatch, 2 error). fetta compile and fetta exec are its two halves.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <nlohmann/json.hpp>

#include "arch/config.hpp"
#include "commands.hpp"
#include "flows/run.hpp"
#include "hw/sys/system.hpp"
#include "hw/top.hpp"
#include "mapper/compile.hpp"
#include "mapper/compile_cli.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/program.hpp"
#include "mapper/report_json.hpp"
#include "mapper/verify.hpp"
#include "mapper/wall_model.hpp"
#include "rtl_gen/emit.hpp"
#include "run_toolchain.hpp"
#include "sim/cli/run_flags.hpp"
#include "verif/layer.hpp"
#include "yaml_input/file.hpp"

namespace fetta::app {

namespace fs = std::filesystem;

namespace {

// The run-time budget: the default top simulates some 10,000 to 16,000 cycles a second, so 2^24
// compute cycles (plus the data movement the run also simulates) are half an hour or more; larger
// runs must ask for it.
constexpr int64_t kDefaultMaxCycles = int64_t{1} << 24;

// What the compiler is asked (fetta run, fetta compile).
struct CompileOpts {
  std::string config = "configs/default.yaml";
  std::vector<std::string> layers{"configs/layers/tt_fetta_example.yaml"};
  mapper::CompileFlags flags;
};

// Verilator threads of a run's model: two where the machine has two cores (the default top
// simulates about twice as fast; docs/results.md, "Simulation speed"), else one.
int default_sim_threads() { return std::thread::hardware_concurrency() >= 2 ? 2 : 1; }

// What the simulation is asked (fetta run, fetta exec).
struct ExecOpts : sim::system::RunFlags {  // and what the simulator is passed
  int64_t max_cycles = kDefaultMaxCycles;
  std::string cache_dir;
  std::string view = "simulation";  // rtl::View of the Verilated top; a traced run takes synthesis
  int sim_threads = default_sim_threads();
};

std::string default_cache_dir() {
  if (const char* c = std::getenv("FETTA_CACHE_DIR")) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return std::string(x) + "/fetta";
  if (const char* h = std::getenv("HOME")) return std::string(h) + "/.cache/fetta";
  return "/tmp/fetta-cache";
}

// A file the simulator's cache key covers: the model's manifest, the libraries and sources it links.
std::string slurp(const fs::path& p) {
  std::optional<std::string> text = yaml_input::read_file(p.string());
  if (!text) throw std::runtime_error(fmt::format("fetta run: cannot read {} (a file the simulator is built from)", p.string()));
  return std::move(*text);
}

// An exclusive flock(2) on `path` (created if missing) for the object's lifetime. The kernel drops
// it when the process dies, so an interrupted build never leaves the cache locked.
class FileLock {
 public:
  FileLock(const fs::path& path, const std::string& waiting_message) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error(fmt::format("cannot open the lock file {}: {}", path.string(), std::strerror(errno)));
    if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
    if (!waiting_message.empty()) fmt::print(stderr, "{}\n", waiting_message);
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) {
        ::close(fd_);
        throw std::runtime_error(fmt::format("cannot lock {}: {}", path.string(), std::strerror(errno)));
      }
  }
  ~FileLock() { ::close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

void run_or_throw(const std::string& what, const std::string& cmd, const std::string& cwd) {
  const flows::CommandResult r = flows::run_command(cmd, cwd);
  if (r.exit_code != 0) {
    const std::string tail = r.output.size() > 4000 ? r.output.substr(r.output.size() - 4000) : r.output;
    throw std::runtime_error(fmt::format("{} failed (exit {}):\n{}\ncommand: {}", what, r.exit_code, tail, cmd));
  }
}

// Builds (or finds) the simulation executable of the configuration; returns its path.
fs::path build_simulator(const arch::ArchConfig& cfg, const ExecOpts& o, bool quiet) {
  for (const char* tool : {"verilator", "make"})
    if (!flows::tool_available(tool))
      throw std::runtime_error(fmt::format("fetta run needs `{}` (Debian package: {}); run ./scripts/setup", tool,
                                           std::string(tool) == "make" ? "make" : "verilator"));
  const fs::path cache = o.cache_dir.empty() ? default_cache_dir() : o.cache_dir;
  fs::create_directories(cache);
  // Generate into a staging directory; its manifest (the sha256 of every file) names the model.
  const fs::path staging = cache / fmt::format("staging-{}", ::getpid());
  fs::remove_all(staging);
  // The simulation view (behavioural arithmetic, proven equal: docs/rtl_gen.md "Views") unless the
  // run is traced: fetta power maps a trace's registers onto the synthesized structural netlist.
  rtl::Design design(o.trace.empty() ? rtl::parse_view(o.view) : rtl::View::synthesis);
  const std::string top = hw::elaborate_part(design, cfg, "top");
  rtl::write_design(design, top, staging);
  // Verilator's threads split each cycle's evaluation over cores (the results do not depend on them).
  const std::string verilate = fmt::format(
      "verilator --sc -Wall -O3 --x-assign fast --x-initial fast{}{} --Mdir ../obj --prefix Vsys -f filelist.f",
      o.trace.empty() ? "" : " --trace-fst", o.sim_threads > 1 ? fmt::format(" --threads {}", o.sim_threads) : "");
  const std::string make = fmt::format("make -s -j2 -C ../obj -f Vsys.mk Vsys__ALL.a VM_PARALLEL_BUILDS=1 OPT_FAST={} OPT_SLOW={} CXX={}",
                                       flows::shell_quote(toolchain::kOptFast), flows::shell_quote(toolchain::kOptSlow),
                                       flows::shell_quote(toolchain::kCxx));
  // The model's name: its RTL (the manifest holds every file's sha256) and how it is built.
  const std::string key = rtl::sha256_hex(slurp(staging / "manifest.json") + verilate + make).substr(0, 16);
  const fs::path dir = cache / fmt::format("{}-{}", top, key);
  const fs::path lib = dir / "obj" / "Vsys__ALL.a";
  // One process builds and links a model at a time: a second first run of the same RTL (two
  // sweeps, a sweep beside a bench) waits here and then finds the model built.
  const FileLock lock(cache / fmt::format("{}-{}.lock", top, key),
                      quiet ? std::string() : fmt::format("fetta run: waiting for another fetta run building {}", dir.string()));
  if (!fs::exists(lib)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::rename(staging, dir / "rtl");
    if (!quiet)
      fmt::print(stderr, "fetta run: Verilating {} ({} view) into {} (first run of this RTL: a few minutes on 2 cores)\n", top,
                 rtl::to_string(design.view()), dir.string());
    const auto t0 = std::chrono::steady_clock::now();
    run_or_throw("verilator", verilate, (dir / "rtl").string());
    run_or_throw("make (Verilated model)", make, (dir / "rtl").string());
    if (!quiet)
      fmt::print(stderr, "fetta run: model built in {:.0f} s\n",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  } else {
    fs::remove_all(staging);
    if (!quiet) fmt::print(stderr, "fetta run: using the cached model {}\n", dir.string());
  }
  // The executable: relinked whenever the testbench libraries or the bench's main differ from the
  // ones it was linked from, by content (a cache copied without its timestamps stays right).
  const fs::path exe = dir / "fetta_sim";
  std::string link_inputs = o.trace.empty() ? "untraced" : "traced";
  for (const std::string& l : toolchain::kLibs) link_inputs += rtl::sha256_hex(slurp(l));
  if (fs::exists(toolchain::kSimMain)) link_inputs += rtl::sha256_hex(slurp(toolchain::kSimMain));
  const std::string link_key = rtl::sha256_hex(link_inputs);
  const fs::path key_file = dir / "fetta_sim.sha256";
  const bool stale = !fs::exists(exe) || !fs::exists(key_file) || slurp(key_file) != link_key;
  if (stale) {
    const fs::path main_cpp = dir / "sim_main.cpp";
    std::ofstream(main_cpp) << "#define FETTA_TOP_HEADER \"Vsys.h\"\n#define FETTA_TOP_CLASS Vsys\n"
                            << (o.trace.empty() ? "" : "#define FETTA_TRACE 1\n") << "#include \"" << toolchain::kSimMain << "\"\n";
    std::string cmd = fmt::format("{} -std=c++20 -O2 -DSC_CPLUSPLUS=201703L -I obj", flows::shell_quote(toolchain::kCxx));
    for (const std::string& inc : toolchain::kIncludes) cmd += " -I " + flows::shell_quote(inc);
    cmd += " sim_main.cpp";
    if (!o.trace.empty())
      cmd += fmt::format(" {0}/verilated_fst_c.cpp {0}/verilated_fst_sc.cpp", flows::shell_quote(toolchain::kVerilatorInclude));
    cmd += " obj/Vsys__ALL.a";
    for (const std::string& l : toolchain::kLibs) cmd += " " + flows::shell_quote(l);
    // Linked under a name of its own, then renamed over fetta_sim: another `fetta run` of the same
    // model (a sweep beside a bench) may be executing the old file.
    const std::string tmp = fmt::format("fetta_sim.tmp-{}", ::getpid());
    cmd += std::string(" ") + toolchain::kSysLibs + (o.trace.empty() ? "" : " -lz") + " -o " + tmp;
    run_or_throw("linking the simulator", cmd, dir.string());
    fs::rename(dir / tmp, exe);
    std::ofstream(key_file, std::ios::binary) << link_key;
  }
  return exe;
}

std::string absolute(const std::string& p) { return fs::absolute(p).string(); }

void add_compile_options(CLI::App* cmd, CompileOpts& o) {
  cmd->add_option("--config", o.config, "Architecture configuration (YAML)")->capture_default_str();
  cmd->add_option("--layer", o.layers, "Layer description (YAML); repeatable")->capture_default_str();
  mapper::add_compile_flags(*cmd, o.flags);
}

void add_exec_options(CLI::App* cmd, ExecOpts& o) {
  sim::system::add_run_flags(*cmd, o);  // --seed, --inputs, --dump-dir, --trace, --trace-sample, --json
  cmd->add_option("--view", o.view,
                  "The RTL simulated: simulation (behavioural arithmetic, proven equal to the structural by fetta "
                  "equiv; the default) or synthesis (the structural RTL synthesis maps; always taken with --trace, "
                  "whose registers fetta power maps onto the netlist)")
      ->check(CLI::IsMember({"simulation", "synthesis"}))
      ->capture_default_str();
  cmd->add_option("--sim-threads", o.sim_threads,
                  "Verilator threads of the model (a model is built per thread count; results do not depend on it; "
                  "1 where several runs share the cores, as sweeps do; at most this machine's hardware threads)")
      ->check(CLI::Range(1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))))
      ->capture_default_str();
  cmd->add_option("--cache-dir", o.cache_dir, "Where Verilated models are cached (default $FETTA_CACHE_DIR or ~/.cache/fetta)");
  cmd->add_option("--max-cycles", o.max_cycles,
                  "Run budget: refuse programs that take more cycles end to end (the wall-cycle model's) than this")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
}

// " (N repeats in later networks reuse their results)" when the compiler dropped any (ProgramOptions::reuse).
std::string repeats_text(const mapper::ProgramCost& c) {
  return c.repeats > 0 ? fmt::format(" ({} repeats in later networks reuse their results)", c.repeats) : std::string();
}

// How the compiler ordered the networks (ProgramOptions::order).
std::string order_text(const mapper::Program& p) {
  if (p.interleaved)
    return p.options.order == mapper::NetworkOrder::fastest ? "networks interleaved (the wall-cycle model's choice)"
                                                            : "networks interleaved (--network-order interleaved)";
  return p.options.order == mapper::NetworkOrder::fastest ? "networks one after another (the wall-cycle model's choice)"
                                                         : "networks one after another (--network-order sequential)";
}

// The program of the layers, with the hw_id of the configuration's top.
mapper::Program compile(const arch::ArchConfig& cfg, const CompileOpts& o) {
  mapper::Program p = mapper::compile_program(cfg, o.layers, o.flags.phase_list(), o.flags.options());
  p.hw_id = hw::hardware_id_hex(cfg);
  return p;
}

// The run budget: RTL simulation runs some thousands of cycles a second.
void check_budget(const std::string& what, int64_t cycles, int64_t macs, const arch::ArchConfig& cfg, int64_t max_cycles) {
  if (cycles > max_cycles)
    throw std::invalid_argument(fmt::format(
        "--max-cycles: {} {} compute cycles ({} MACs) on {}, over the run budget of {} (RTL simulation runs some "
        "thousands of cycles a second); allowed: a smaller batch or fewer phases, or --max-cycles {} or more",
        what, cycles, macs, cfg.name, max_cycles, cycles));
}

// Runs the program in `dir` on the Verilated top of cfg; throws CLI::RuntimeError with the
// simulation's exit code when it is not 0.
void execute(const arch::ArchConfig& cfg, const mapper::Program& p, const std::string& dir, const ExecOpts& o,
             const std::string& config_file) {
  const mapper::ProgramCost cost = mapper::program_cost(p);
  // The budget counts what the run simulates: the wall-cycle model's end to end (within 2 % of the
  // RTL on every shipped layer), not only the compute cycles.
  const int64_t end_to_end = mapper::predict_wall(p, cfg).simulated;
  if (end_to_end > o.max_cycles)
    throw std::invalid_argument(fmt::format(
        "--max-cycles: the program takes {} cycles end to end by the wall-cycle model ({} of them compute, {} MACs) on "
        "{}, over the run budget of {} (RTL simulation runs some thousands of cycles a second); allowed: a smaller batch "
        "or fewer phases, or --max-cycles {} or more",
        end_to_end, cost.compute_cycles, cost.macs, cfg.name, o.max_cycles, end_to_end));
  if (!o.json)
    fmt::print(stderr, "fetta: {}, {} layer(s), {} contraction(s){}, {} compute cycles, {}, seed {}\n", cfg.name,
               p.layers.size(), cost.contractions, repeats_text(cost), cost.compute_cycles, order_text(p), o.seed);
  const fs::path exe = build_simulator(cfg, o, o.json);
  std::string run = flows::shell_quote(exe.string()) + " --program " + flows::shell_quote(absolute(dir)) + " --seed " +
                    std::to_string(o.seed);
  if (!config_file.empty()) run += " --config " + flows::shell_quote(absolute(config_file));
  if (!o.inputs.empty()) run += " --inputs " + flows::shell_quote(absolute(o.inputs));
  if (!o.dump_dir.empty()) run += " --dump-dir " + flows::shell_quote(absolute(o.dump_dir));
  if (!o.trace.empty()) run += " --trace " + flows::shell_quote(absolute(o.trace));
  if (!o.trace_sample.empty()) run += " --trace-sample " + flows::shell_quote(o.trace_sample);
  if (o.json) run += " --json";
  const int status = std::system(run.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
  if (code != 0) throw CLI::RuntimeError(code);
}

// A directory of its own, removed with the object (fetta run's program).
class TempDir {
 public:
  TempDir() {
    std::string templ = (fs::temp_directory_path() / "fetta-program-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr)
      throw std::runtime_error(fmt::format("cannot create a temporary directory: {}", std::strerror(errno)));
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

void add_run_command(CLI::App& app) {
  auto c = std::make_shared<CompileOpts>();
  auto e = std::make_shared<ExecOpts>();
  auto* cmd = app.add_subcommand("run", "The main job: compile, generate, Verilate and simulate tensorized layers against the golden model");
  add_compile_options(cmd, *c);
  add_exec_options(cmd, *e);
  cmd->callback([c, e] {
    const arch::ArchConfig cfg = arch::load_arch_config(c->config);  // validated as it is read
    // The budget first, from the fastest mappings (a program's cycles are at least theirs): a
    // layer far too large for RTL simulation is refused without compiling its image maps.
    const mapper::LayersPlan least = mapper::plan_layers(cfg, c->layers, c->flags.phase_list());
    check_budget("the layers' phases take at least", least.compute_cycles, least.macs, cfg, e->max_cycles);
    // Then the program: a bad layer or a contraction the hardware cannot run fails before
    // anything is built or simulated.
    const mapper::Program p = compile(cfg, *c);
    const TempDir dir;
    mapper::save_program(p, dir.path());
    execute(cfg, p, dir.path(), *e, "");
  });
}

void add_compile_command(CLI::App& app) {
  auto c = std::make_shared<CompileOpts>();
  auto out = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("compile", "Compile tensorized layers for a configuration into a program (docs/program.md)");
  add_compile_options(cmd, *c);
  cmd->add_option("--out", *out, "The program's directory (created)")->required();
  cmd->add_flag("--json", *json,
                "A JSON summary on stdout (the program's cost, the wall-cycle model's end to end and what the controller "
                "waited for, the bound, where the intermediates go) instead of the text");
  cmd->callback([c, out, json] {
    const arch::ArchConfig cfg = arch::load_arch_config(c->config);
    const mapper::Program p = compile(cfg, *c);
    mapper::save_program(p, *out);
    const mapper::ProgramCost cost = mapper::program_cost(p);
    const mapper::WallPrediction w = mapper::predict_wall(p, cfg);
    const mapper::IntermediateFates fates = mapper::intermediate_fates(p);
    if (*json) {
      const nlohmann::json j = {
          {"program", *out}, {"config", cfg.name}, {"hw_id", p.hw_id}, {"layers", p.layers.size()},
          {"contractions", cost.contractions}, {"repeats", cost.repeats}, {"compute_cycles", cost.compute_cycles},
          {"macs", cost.macs}, {"interleaved", p.interleaved},
          {"end_to_end", {{"model_cycles", w.total()}, {"model_simulated_cycles", w.simulated},
                          {"dram_accounted_cycles", w.dram_accounted}, {"probe_cycles", w.probe},
                          {"bound_cycles", mapper::end_to_end_bound(cost, cfg)}, {"least_dram_bytes", cost.least_dram_bytes},
                          {"model_controller", mapper::controller_json(w)}}},
          {"intermediates", mapper::to_json(fates)}};
      std::cout << j.dump(2) << "\n";
      return;
    }
    fmt::print("program {}: {} ({}, hw_id {}), {} layer(s), {} contraction(s){}, {} compute cycles, {} MACs; {} operations, "
               "{} instruction words; {}\n",
               *out, cfg.name, c->config, p.hw_id, p.layers.size(), cost.contractions, repeats_text(cost), cost.compute_cycles,
               cost.macs, p.ops.size(), p.words.size(), order_text(p));
    fmt::print("end to end (the wall-cycle model, docs/program.md): {} cycles = {} simulated ({} of them the scoreboard's "
               "probes) + {} of the host path's DRAM time; bound {}\n",
               w.total(), w.simulated, w.probe, w.dram_accounted, mapper::end_to_end_bound(cost, cfg));
    fmt::print("{}\n", mapper::stalls_text(w));
    fmt::print("{}\n", mapper::fates_text(fates));
  });
}

void add_exec_command(CLI::App& app) {
  auto e = std::make_shared<ExecOpts>();
  auto dir = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("exec", "Run a compiled program on the Verilated top and check it against the golden model");
  cmd->add_option("--program", *dir, "The program's directory (fetta compile --out)")->required();
  cmd->add_option("--config", *config,
                  "Run on this configuration's top (default: the one the program was compiled for); it must be that one");
  add_exec_options(cmd, *e);
  cmd->callback([e, dir, config] {
    const mapper::Program p = mapper::load_program(*dir);
    const arch::ArchConfig cfg = config->empty() ? arch::parse_arch_config(p.config_yaml, *dir + "/program.json")
                                                 : arch::load_arch_config(*config);
    mapper::check_program_target(p, cfg, hw::hardware_id_hex(cfg));
    execute(cfg, p, *dir, *e, *config);
  });
}

}  // namespace fetta::app
