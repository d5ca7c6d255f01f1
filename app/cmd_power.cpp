// fetta power: power per block of an emitted design from the switching activity of a run
// (docs/power.md): read the FST a traced run wrote, synthesize the design for ASAP7 with its
// hierarchy kept, annotate the activity on the netlist and let OpenSTA report the power.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>

#include "commands.hpp"
#include "flows/activity.hpp"
#include "flows/power.hpp"
#include "flows/sta.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"
#include "hw/sys/system.hpp"

namespace fetta::app {

namespace {

namespace fs = std::filesystem;
namespace pw = flows::power;
namespace sy = flows::synth;

struct PowerOpts {
  std::string rtl, fst, activity, scope, clock = "clk", out = "out/power", run_report, window;
  double clock_mhz = 1000;
  int block_depth = 1;
  bool json = false;
  bool gate_level = false;
  std::string cache_dir;
};

// The JSON file an option names; `missing` and `give` say how to produce the right one.
nlohmann::json read_json_option(const std::string& option, const std::string& path, const std::string& missing,
                                const std::string& give) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(fmt::format("{} {}: no such file; {}", option, path, missing));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded()) throw std::invalid_argument(fmt::format("{} {}: not JSON; {}", option, path, give));
  return j;
}

void run(const PowerOpts& o) {
  if (!fs::exists(fs::path(o.rtl) / "manifest.json"))
    throw std::invalid_argument(fmt::format("--rtl {}: no manifest.json; give a directory written by fetta gen", o.rtl));
  if (!o.fst.empty() && !fs::exists(o.fst))
    throw std::invalid_argument(fmt::format("--fst {}: no such file; record one with fetta run --trace FILE (or a sampled "
                                            "one: --trace DIR --trace-sample W/N)",
                                            o.fst));
  std::optional<pw::Activity> from_json;
  if (!o.activity.empty())
    from_json = pw::activity_from_json(read_json_option("--activity", o.activity,
                                                        "give the activity.json an earlier fetta power --fst wrote",
                                                        "give an activity.json of fetta power"),
                                       o.activity);
  // The design: its top and, for an accelerator top, the hw_id its `hw_id` port drives.
  const std::string manifest_text = sy::read_text((fs::path(o.rtl) / "manifest.json").string());
  const nlohmann::json manifest = nlohmann::json::parse(manifest_text);
  const std::string top_name = manifest.at("top").get<std::string>();
  const std::string design_id = hw::hardware_id_hex_of(top_name);
  std::optional<pw::RunWork> work;
  if (!o.run_report.empty()) {
    const nlohmann::json report = read_json_option("--run", o.run_report, "write it with fetta run --trace FILE --json",
                                                   "give the report of fetta run --json");
    work = pw::run_work_from_json(report, o.run_report);
    // A report of a run on another top is refused before anything is synthesized.
    if (report.contains("program") && report["program"].is_object() && report["program"].contains("hw_id") &&
        report["program"]["hw_id"].is_string() && !report["program"]["hw_id"].get<std::string>().empty() &&
        report["program"]["hw_id"].get<std::string>() != design_id)
      throw std::invalid_argument(fmt::format("--run {}: a run on the top with hw_id {} (configuration {}); the design (--rtl "
                                              "{}) is {} with hw_id {}; give the report of a run on this design",
                                              o.run_report, report["program"]["hw_id"].get<std::string>(),
                                              report.value("config", std::string("?")), o.rtl, top_name, design_id));
  }
  flows::sta::require_sta();
  // A trace whose names do not fit fails before synthesis; its values are read after it, only
  // those of the signals the netlist's annotation can use. An activity read before (--activity,
  // read above) is taken as it is.
  if (!o.fst.empty()) {
    pw::check_fst(o.fst, o.scope, o.clock, o.window);
    // A trace of an accelerator top records the hw_id its port drove: another design's is refused
    // here, before synthesis (a design without the port has nothing to compare).
    if (!o.gate_level) {
      // (The top's ports are always read; no other signal is.)
      const pw::Activity id = pw::read_fst_activity(o.fst, o.scope, o.clock, "", [](const std::string&) { return false; });
      uint32_t traced = 0;
      int bits = 0;
      for (const pw::BitActivity& b : id.bits) {
        int bit = -1;
        if (!b.port || b.name.rfind("hw_id[", 0) != 0 ||
            std::from_chars(b.name.data() + 6, b.name.data() + b.name.size(), bit).ec != std::errc() || bit < 0 || bit > 31)
          continue;
        ++bits;
        if (b.duty > 0.5) traced |= uint32_t{1} << bit;
      }
      if (bits == 32 && fmt::format("{:08x}", traced) != design_id)
        throw std::invalid_argument(fmt::format("--fst {}: a trace of the top with hw_id {:08x}; the design (--rtl {}) is {} "
                                                "with hw_id {}; give the trace of a run on this design",
                                                o.fst, traced, o.rtl, top_name, design_id));
    }
  }
  fs::create_directories(o.out);
  sy::Options so;
  so.target = sy::Target::asap7;
  so.modules = "top";
  so.keep_hierarchy = true;
  so.clock_mhz = o.clock_mhz;
  so.cache_dir = o.cache_dir;
  // The netlist of an earlier run into the same --out is reused when it was synthesized from
  // this very RTL (its manifest, with every file's sha256) at this clock.
  const fs::path synth_dir = fs::path(o.out) / "asap7";
  const fs::path stamp = synth_dir / "synthesized_from.json";
  const std::string want = manifest_text + fmt::format("\nclock_mhz {}\n", o.clock_mhz);
  const fs::path module_dir = synth_dir / top_name;
  if (fs::exists(stamp) && sy::read_text(stamp.string()) == want && fs::exists(module_dir / "hierarchical.v")) {
    if (!o.json) fmt::print(stderr, "fetta power: reusing the netlist in {} (same RTL and clock)\n", module_dir.string());
  } else {
    if (!o.json) fmt::print(stderr, "fetta power: synthesizing {} for ASAP7 (hierarchy kept) into {}\n", o.rtl, o.out);
    fs::remove(stamp);
    const sy::SynthReport rep = sy::run_synth(o.rtl, synth_dir.string(), so);
    if (rep.modules.at(0).name != top_name)
      throw std::runtime_error(fmt::format("{}: synthesized {}, the manifest names {}", o.rtl, rep.modules.at(0).name, top_name));
    std::ofstream(stamp) << want;
  }
  pw::PowerReport r;
  r.run = pw::run_for_synthesized(module_dir.string(), top_name, o.out);
  if (o.gate_level) {
    r.run.gate_level = true;
    r.run.netlist = r.run.flat_netlist;  // the netlist the gate-level simulation ran
  }
  const pw::Activity act =
      from_json     ? *from_json
      : o.gate_level ? pw::gate_level_activity(pw::read_fst_activity(o.fst, o.scope, o.clock, o.window))
                     : pw::read_fst_activity(o.fst, o.scope, o.clock, o.window, pw::power_signals(r.run));
  if (!from_json) std::ofstream(fs::path(o.out) / "activity.json") << pw::to_json(act).dump(1) << "\n";
  r.run.clock_port = o.clock;
  r.run.block_depth = o.block_depth;
  r.sta_version = flows::sta::sta_version();
  r.activity_source = act.source;
  r.activity_scope = act.scope;
  r.activity_cycles = act.cycles;
  r.activity_window = act.window;
  r.sample = act.sample;
  for (const pw::BitActivity& b : act.bits)
    if (b.port && b.name == "busy") r.traced_busy = b.duty;
  r.work = work;
  if (r.work) pw::require_same_run(r);  // a report of another run fails before the power analysis
  r.result = pw::run_power(r.run, act);
  pw::require_traced_flops(r.result, o.fst, top_name, act.scope);
  const nlohmann::json j = pw::to_json(r);
  std::ofstream(fs::path(o.out) / "power.json") << j.dump(1) << "\n";
  if (o.json) {
    fmt::print("{}\n", j.dump(1));
  } else {
    fmt::print("{}", pw::format_table(r));
    fmt::print("report: {}/power.json (script {}/power.tcl)\n", o.out, o.out);
  }
}

}  // namespace

void add_power_command(CLI::App& app) {
  auto o = std::make_shared<PowerOpts>();
  auto* cmd = app.add_subcommand("power", "Power per block of an emitted design from a run's switching activity (ASAP7, OpenSTA)");
  cmd->add_option("--rtl", o->rtl, "A directory written by `fetta gen` (its top is synthesized)")->required();
  auto* fst = cmd->add_option("--fst", o->fst, "FST waveform of a run of that design (fetta run --trace FILE), or the directory of a sampled one "
                              "(fetta run --trace DIR --trace-sample W/N)");
  auto* activity = cmd->add_option("--activity", o->activity,
                                   "Instead of --fst: the activity.json an earlier fetta power wrote from that trace");
  fst->excludes(activity);
  activity->excludes(fst);
  cmd->add_option("--run", o->run_report, "The traced run's report (fetta run --json): energy per MAC, TOPS/W and EDP");
  cmd->add_option("--while", o->window,
                  "Count activity only while this 1-bit signal of the top is 1 ('!name': 0), e.g. busy: the power "
                  "and energy of the computation without the host transfers");
  cmd->add_option("--scope", o->scope, "The design's top in the trace, dot-separated (default: found from the clock)");
  cmd->add_option("--clock", o->clock, "Clock port; its rising edges are the cycles")->capture_default_str();
  cmd->add_option("--clock-mhz", o->clock_mhz, "Clock of the synthesis and of the power analysis")
      ->check(CLI::Range(1.0, 10000.0))
      ->capture_default_str();
  cmd->add_option("--block-depth", o->block_depth, "Instance-path components that name a block")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory: activity.json, power.json, power.tcl, asap7/")->capture_default_str();
  cmd->add_option("--cache-dir", o->cache_dir, "Where the merged Liberty files are kept (default: $FETTA_CACHE_DIR or ~/.cache/fetta)");
  cmd->add_flag("--json", o->json, "JSON report on stdout instead of the table");
  cmd->add_flag("--gate-level", o->gate_level,
                "The trace is a simulation of the synthesized netlist itself (bench/power/gate_level.sh): every "
                "gate's output is annotated, nothing propagated");
  cmd->callback([o] {
    if (o->fst.empty() == o->activity.empty())
      throw std::invalid_argument("fetta power: give the run's activity as --fst TRACE.fst or as --activity activity.json");
    if (!o->activity.empty() && (!o->window.empty() || !o->scope.empty()))
      throw std::invalid_argument("--activity: --while and --scope apply when a trace is read (--fst); the activity was counted already");
    run(*o);
  });
}

}  // namespace fetta::app
