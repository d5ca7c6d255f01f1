// The sweep engine: each point generated, linted, synthesized and its cycles and energy counted
// (the compiler's cycle model, which the system tests hold equal to the RTL, or the RTL itself
// through `fetta run`). Records are appended point by point to results.jsonl (whole, fsynced
// lines) and results.csv (derived from it, and rewritten from it on --resume), so a sweep killed
// at any instant resumes where it stopped with every point once in both files; a failing point is
// recorded with its reason and the sweep goes on. With the Slurm backend each point is one task of
// a job array that writes its record into <out>/slurm/records/; the submitter follows the tasks,
// records the ones that died without a record, and merges everything in grid order.
#include "sweep.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>

#include "arch/config.hpp"
#include "flows/lint.hpp"
#include "flows/run.hpp"
#include "flows/supervise.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"
#include "grid.hpp"
#include "hw/top.hpp"
#include "mapper/compile.hpp"
#include "mapper/program.hpp"
#include "mapper/wall_model.hpp"
#include "mapper/cost_model.hpp"
#include "mapper/layer_search.hpp"
#include "rtl_gen/emit.hpp"
#include "slurm.hpp"
#include "verif/layer.hpp"
#include "yaml_input/strict.hpp"

namespace fetta::app::sweep {

namespace fs = std::filesystem;
namespace sy = flows::synth;

namespace {

[[noreturn]] void io_error(const fs::path& p, const char* what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", p.string(), what, std::strerror(errno)));
}

void write_all(int fd, const std::string& text, const fs::path& p) {
  for (size_t off = 0; off < text.size();) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      io_error(p, "cannot write");
    }
    off += static_cast<size_t>(n);
  }
}

// Whole lines appended with one write() on an O_APPEND descriptor, then fsynced: a kill leaves the
// record whole or, in the middle of the write, a torn last line that the next --resume drops.
void append_durably(const fs::path& p, const std::string& text) {
  const int fd = ::open(p.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) io_error(p, "cannot open for appending");
  write_all(fd, text, p);
  ::fsync(fd);
  ::close(fd);
}

// A file replaced whole: written beside it, fsynced, renamed over it (rename is atomic).
void replace_file(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + fmt::format(".tmp-{}", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_error(tmp, "cannot create");
  write_all(fd, text, tmp);
  ::fsync(fd);
  ::close(fd);
  fs::rename(tmp, p);
}

std::string fmt_eta(double s) {
  if (s < 0 || !std::isfinite(s)) return "?";
  const int t = static_cast<int>(s);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}

struct Sweep {
  Grid grid;
  fs::path out;
  arch::ArchConfig base;
  std::mutex mu;
  fs::path jsonl_path, csv_path;
  size_t total = 0;
  std::atomic<size_t> done{0};
  std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();

  static std::string csv_header() {
    return "point,status,baseline,dtype,ce_rows,ce_cols,ce_count,pes,lanes,layer,phase,macs,cycles,utilization,"
           "cycles_source,area_um2,logic_area_um2,sram_area_um2,min_period_ps,luts,ffs,dsps,brams,fmax_mhz,part_areas,reason,"
           "host_cycles,dram_cycles,store_cycles,energy_uj,static_uj,mac_uj,sram_uj,network_uj,dram_uj,pj_per_mac,tops_per_w,edp_js,"
           "e2e_cycles,bound_cycles\n";
  }

  // Runs one point; returns its JSON record (status ok / failed with the reason).
  // `run` says where and how long the point ran: the one section that differs between runs and
  // backends (the rest is the same for the same point).
  nlohmann::json run_point(const Point& p, nlohmann::json run = {{"backend", "local"}}) {
    const auto start = std::chrono::steady_clock::now();
    nlohmann::json rec{{"point", point_key(p)}, {"params", nlohmann::json::object()}};
    for (const auto& [k, v] : p) rec["params"][k] = v;
    std::string stage = "config";
    try {
      arch::ArchConfig cfg = point_config(base, p);
      const std::string energy_from = price_point(grid, p, cfg);
      rec["config"] = {{"dtype", arch::to_string(cfg.dtype)}, {"ce_rows", cfg.ce.rows}, {"ce_cols", cfg.ce.cols},
                       {"ce_count", cfg.ce.count}, {"pes", cfg.total_pes()}, {"lanes", cfg.network.lanes},
                       {"topology", arch::to_string(cfg.network.topology)}, {"banks", cfg.memory.banks},
                       {"unified_depth", cfg.memory.unified_depth}, {"accum_depth", cfg.memory.accum_depth},
                       {"energy_from", energy_from}};
      const fs::path dir = out / "points" / safe_name(point_key(p));
      fs::create_directories(dir);
      // generate + lint the top
      stage = "generate";
      rtl::Design design;
      const std::string top = hw::elaborate_part(design, cfg, "top");
      rtl::write_design(design, top, dir / "rtl");
      write_config_yaml(cfg, dir / "config.yaml");
      if (grid.lint) {
        stage = "lint";
        const std::vector<flows::LintResult> lr = flows::lint_design((dir / "rtl").string(), top);
        if (!flows::all_clean(lr)) {
          std::string bad;
          for (const auto& r : lr)
            if (!r.clean) bad += (bad.empty() ? "" : ", ") + r.tool;
          throw std::runtime_error("the generated top is not lint-clean (" + bad + ")");
        }
      }
      // synthesis of the chosen parts
      nlohmann::json synth = nlohmann::json::object();
      for (const std::string& target : grid.targets) {
        stage = "synth " + target;
        for (const std::string& part : grid.parts) {
          sy::Options so;
          so.target = sy::parse_target(target);
          // FPGA fabrics take no derived clocks: gated registers become load enables there.
          const bool asic = so.target == sy::Target::asap7;
          rtl::Design pd(rtl::View::synthesis, asic ? rtl::ClockGating::cells : rtl::ClockGating::enables);
          const std::string ptop = hw::elaborate_part(pd, cfg, part);
          const fs::path prtl = dir / "synth" / part / (asic ? "rtl" : "rtl_enables");
          rtl::write_design(pd, ptop, prtl);
          so.modules = "top";
          if (so.target == sy::Target::asap7) so.clock_mhz = cfg.clock_mhz;
          const sy::SynthReport rep = sy::run_synth(prtl.string(), (dir / "synth" / part / target).string(), so);
          const nlohmann::json j = sy::to_json(rep);
          for (const auto& m : j.at("modules"))
            if (m.value("top", false)) synth[target][part] = m;
        }
      }
      rec["synth"] = synth;
      // cycles of every layer and phase
      stage = "cycles";
      nlohmann::json layers = nlohmann::json::array();
      std::vector<std::vector<mapper::StepShape>> shapes;  // per entry of layers
      // The program `fetta run` would execute (the same mappings, on-chip policy, sums and reuse
      // across the layer's networks): its model cycles are the RTL's. A phase's contractions are
      // the program's steps of that phase; its end to end and bound are its share of the layer's:
      // those of the phases up to it (a program of their own) less those before it, so
      // a layer's phases add up to the whole run.
      mapper::ProgramOptions po;
      po.map_for = mapper::parse_map_for(grid.map_for);
      for (const std::string& lf : grid.layers) {
        const verif::LayerSpec spec = verif::load_layer(lf);
        const mapper::Program prog = mapper::compile_program(cfg, {lf}, grid.phases, po);
        const std::vector<mapper::StepTraffic> traffic = mapper::program_traffic(prog, cfg);
        int64_t e2e_before = 0, bound_before = 0;
        for (size_t pi = 0; pi < grid.phases.size(); ++pi) {
          const verif::Phase ph = grid.phases[pi];
          int64_t macs = 0, cycles = 0, dram_r = 0, dram_w = 0;
          std::vector<mapper::StepShape>& sh = shapes.emplace_back();
          for (size_t si = 0; si < prog.steps.size(); ++si) {
            const mapper::ProgramStep& st = prog.steps[si];
            if (st.phase != ph) continue;
            macs += st.macs;
            cycles += st.predicted;
            dram_r += traffic[si].read;
            dram_w += traffic[si].written;
            sh.push_back(mapper::matmul_shape(static_cast<uint64_t>(st.m), static_cast<uint64_t>(st.k),
                                              static_cast<uint64_t>(st.n)));
          }
          // End to end by the wall-cycle model (both cycle sources: the RTL run reports it for
          // the whole layer, not per phase; --check-model holds the model within 2 % of the RTL),
          // without the scoreboard's probes, which only a verifying run makes.
          const std::vector<verif::Phase> upto(grid.phases.begin(), grid.phases.begin() + static_cast<std::ptrdiff_t>(pi) + 1);
          const mapper::Program prefix = pi + 1 == grid.phases.size() ? prog : mapper::compile_program(cfg, {lf}, upto, po);
          const mapper::WallPrediction wall = mapper::predict_wall(prefix, cfg);
          const int64_t e2e = wall.total() - wall.probe, bound = mapper::end_to_end_bound(mapper::program_cost(prefix), cfg);
          layers.push_back({{"layer", spec.name}, {"phase", verif::to_string(ph)}, {"macs", macs}, {"cycles", cycles},
                            {"source", "model"}, {"e2e_cycles", e2e - e2e_before}, {"bound_cycles", bound - bound_before},
                            {"dram_bytes_read", dram_r}, {"dram_bytes_written", dram_w}, {"dram_source", "program"}});
          e2e_before = e2e;
          bound_before = bound;
        }
        if (grid.cycles == "rtl") {
          stage = "rtl " + spec.name;
          rtl_cycles(dir, lf, layers);
        }
      }
      stage = "energy";
      for (size_t i = 0; i < layers.size(); ++i) layer_energy(cfg, shapes[i], layers[i]);
      rec["layers"] = layers;
      rec["status"] = "ok";
    } catch (const std::exception& e) {
      rec["status"] = "failed";
      rec["reason"] = fmt::format("{}: {}", stage, e.what());
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    run["host"] = host;
    run["seconds"] = std::round(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() * 1000) / 1000;
    rec["run"] = run;
    return rec;
  }

  // A layer-phase's energy by the analytical model's constants of the point's configuration
  // (`energy:`; docs/power.md, "Energy model"): the static power over its compute cycles (the
  // RTL's or the model's), the steps' MAC and SRAM terms, and DRAM from the row's bytes: the
  // program's (mapper::program_traffic) or the RTL run's count, the same. The traffic is kept beside the terms, so
  // other constants (another top's measured ones: bench/power/efficiency.py) can be applied later.
  static void layer_energy(const arch::ArchConfig& cfg, const std::vector<mapper::StepShape>& shapes, nlohmann::json& l) {
    const mapper::AnalyticalModel model(cfg);
    double sram_r = 0, sram_w = 0;
    for (const mapper::StepShape& s : shapes) {
      const mapper::StepCost c = model.step(s);
      sram_r += c.sram_read_bytes, sram_w += c.sram_write_bytes;
    }
    const double dram_r = l.at("dram_bytes_read").get<double>(), dram_w = l.at("dram_bytes_written").get<double>();
    const double cycles = l["cycles"].get<double>(), macs = l["macs"].get<double>();
    const mapper::EnergyTerms t = mapper::run_energy(model, shapes, cycles, dram_r, dram_w);
    const double joules = t.total() * 1e-12;
    l["traffic"] = {{"sram_read_bytes", sram_r}, {"sram_write_bytes", sram_w}, {"dram_read_bytes", dram_r},
                    {"dram_write_bytes", dram_w}, {"dram_source", l.at("dram_source")}};
    l["energy"] = {{"static_pj", t.static_power}, {"mac_pj", t.mac}, {"sram_pj", t.sram}, {"network_pj", t.network},
                   {"dram_pj", t.dram}, {"total_pj", t.total()},
                   {"pj_per_mac", macs > 0 ? t.total() / macs : 0.0},
                   {"tops_per_w", joules > 0 ? 2.0 * macs / joules * 1e-12 : 0.0},
                   {"edp_js", joules * cycles / (cfg.clock_mhz * 1e6)}};
  }

  // Replaces the model's cycles of the layer with the RTL's (fetta run --json on the point, one
  // run_<layer>.json and .log each) and adds the host-transfer and DRAM cycles the run counted.
  void rtl_cycles(const fs::path& dir, const std::string& layer_file, nlohmann::json& layers) {
    std::string phases;
    for (verif::Phase ph : grid.phases) phases += (phases.empty() ? "" : ",") + verif::to_string(ph);
    const std::string name = verif::load_layer(layer_file).name;
    const fs::path json = dir / ("run_" + safe_name(name) + ".json"), log = dir / ("run_" + safe_name(name) + ".log");
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    // One Verilator thread: the sweep runs its points side by side on the cores.
    const std::string cmd = fmt::format("{} run --config {} --layer {} --phases {} --map-for {} --sim-threads 1 --json > {} 2> {}",
                                        flows::shell_quote(exe.string()), flows::shell_quote((dir / "config.yaml").string()),
                                        flows::shell_quote(fs::absolute(layer_file).string()), phases, grid.map_for,
                                        flows::shell_quote(json.string()), flows::shell_quote(log.string()));
    const int status = std::system(cmd.c_str());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error(fmt::format("fetta run failed (see {})", log.string()));
    std::ifstream in(json);
    const nlohmann::json r = nlohmann::json::parse(in);
    for (auto& l : layers) {
      if (l["layer"] != name) continue;
      int64_t cyc = 0, host = 0, dram = 0, store = 0, dram_r = 0, dram_w = 0;
      for (const auto& s : r.at("steps"))
        if (s.at("phase") == l["phase"]) {
          cyc += s.at("cycles").get<int64_t>();
          host += s.at("host_cycles").get<int64_t>();
          dram += s.at("dram_cycles").get<int64_t>();
          store += s.at("store_cycles").get<int64_t>();
          dram_r += s.at("dram_bytes_read").get<int64_t>();
          dram_w += s.at("dram_bytes_written").get<int64_t>();
        }
      l["dram_bytes_read"] = dram_r;
      l["dram_bytes_written"] = dram_w;
      l["dram_source"] = "rtl run";
      l["cycles"] = cyc;
      l["host_cycles"] = host;
      l["dram_cycles"] = dram;
      l["store_cycles"] = store;
      l["source"] = "rtl";
    }
  }

  static void write_config_yaml(const arch::ArchConfig& c, const fs::path& path) {
    std::ofstream(path) << "# written by fetta sweep: the point's whole configuration\n" << arch::to_yaml(c);
  }

  void record(const nlohmann::json& rec) {
    std::lock_guard<std::mutex> lock(mu);
    // The record first: results.csv is derived from results.jsonl, so a kill between the two
    // appends costs nothing (--resume rewrites the CSV from the records).
    append_durably(jsonl_path, rec.dump() + "\n");
    std::string rows;
    for (const std::string& line : csv_rows(rec)) rows += line;
    append_durably(csv_path, rows);
    const size_t n = ++done;
    const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double eta = el / static_cast<double>(n) * static_cast<double>(total - n);
    const int width = 30, fill = static_cast<int>(width * n / std::max<size_t>(1, total));
    fmt::print(stderr, "[{}{}] {}/{} {:3.0f}% eta {}  {} {}{}\n", std::string(static_cast<size_t>(fill), '#'),
               std::string(static_cast<size_t>(width - fill), '.'), n, total, 100.0 * n / total, fmt_eta(eta),
               rec["point"].get<std::string>(), rec["status"].get<std::string>(),
               rec.contains("reason") ? " (" + rec["reason"].get<std::string>() + ")" : "");
  }

  static std::string csv_field(std::string s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  }

  std::vector<std::string> csv_rows(const nlohmann::json& rec) const {
    auto param = [&](const char* k, const std::string& dflt) {
      return rec["params"].contains(k) ? rec["params"][k].get<std::string>() : dflt;
    };
    const nlohmann::json cfgj = rec.value("config", nlohmann::json::object());
    auto c = [&](const char* k) { return cfgj.contains(k) ? cfgj[k].dump() : std::string(); };
    // Synthesis: the first target's figures, summed over the parts; part areas as part=area;...
    std::string area, logic, sram, delay, luts, ffs, dsps, brams, fmax, parts;
    if (rec.contains("synth"))
      for (auto it = rec["synth"].begin(); it != rec["synth"].end(); ++it) {
        double a = 0, la = 0, sa = 0, d = 0;
        long long lu = 0, ff = 0, ds = 0;
        double br = 0, fm = 0;
        // Module records of sy::to_json carry the target's metrics at their top level.
        for (auto p = it.value().begin(); p != it.value().end(); ++p) {
          const nlohmann::json& m = p.value();
          if (it.key() == "asap7") {
            a += m.value("area_um2", 0.0);
            la += m.value("logic_area_um2", 0.0);
            sa += m.value("sram_area_um2", 0.0);
            // OpenSTA's shortest period for the part's netlist: the slowest part bounds the clock.
            if (m.contains("sta") && m["sta"].value("min_period_ps", nlohmann::json()).is_number())
              d = std::max(d, m["sta"]["min_period_ps"].get<double>());
            parts += fmt::format("{}{}={:.1f}", parts.empty() ? "" : ";", p.key(), m.value("area_um2", 0.0));
          } else {
            lu += m.value("luts", 0LL);
            ff += m.value("ffs", 0LL);
            ds += m.value("dsps", 0LL);
            br += m.value("brams", 0.0);
            if (m.contains("fmax_mhz") && m["fmax_mhz"].is_number()) fm = m["fmax_mhz"].get<double>();
          }
        }
        if (it.key() == "asap7") {
          area = fmt::format("{:.1f}", a);
          logic = fmt::format("{:.1f}", la);
          sram = fmt::format("{:.1f}", sa);
          delay = fmt::format("{:.1f}", d);
        } else {
          luts = std::to_string(lu);
          ffs = std::to_string(ff);
          dsps = std::to_string(ds);
          brams = fmt::format("{}", br);
          if (fm > 0) fmax = fmt::format("{:.1f}", fm);
        }
      }
    const std::string head = fmt::format("{},{},{},{},{},{},{},{},{}", csv_field(rec["point"].get<std::string>()),
                                         rec["status"].get<std::string>(), param("baseline", "fetta"),
                                         cfgj.contains("dtype") ? cfgj["dtype"].get<std::string>() : param("dtype", ""),
                                         c("ce_rows"), c("ce_cols"), c("ce_count"), c("pes"), c("lanes"));
    const std::string tail = fmt::format("{},{},{},{},{},{},{},{},{},{},{}", area, logic, sram, delay, luts, ffs, dsps, brams,
                                         fmax, csv_field(parts), csv_field(rec.value("reason", "")));
    std::vector<std::string> rows;
    if (!rec.contains("layers") || rec["layers"].empty()) {
      rows.push_back(head + ",,,,,,," + tail + ",,,,,,,,,,,,,,\n");
      return rows;
    }
    for (const auto& l : rec["layers"]) {
      const double pes = cfgj.value("pes", 1);
      const double util = l["macs"].get<double>() / (l["cycles"].get<double>() * pes);
      auto count = [&](const char* key) { return l.contains(key) ? std::to_string(l[key].get<int64_t>()) : std::string(); };
      // Energy columns: uJ per term, then the efficiency figures (empty for records without energy).
      std::string energy = ",,,,,,,,";
      if (l.contains("energy")) {
        const nlohmann::json& e = l["energy"];
        auto uj = [&](const char* k) { return fmt::format("{:.6g}", e[k].get<double>() * 1e-6); };
        energy = fmt::format("{},{},{},{},{},{},{:.6g},{:.6g},{:.6g}", uj("total_pj"), uj("static_pj"), uj("mac_pj"),
                             uj("sram_pj"), uj("network_pj"), uj("dram_pj"), e["pj_per_mac"].get<double>(), e["tops_per_w"].get<double>(),
                             e["edp_js"].get<double>());
      }
      rows.push_back(fmt::format("{},{},{},{},{},{:.4f},{},{},{},{},{},{},{},{}\n", head, l["layer"].get<std::string>(),
                                 l["phase"].get<std::string>(), l["macs"].get<int64_t>(), l["cycles"].get<int64_t>(), util,
                                 l["source"].get<std::string>(), tail, count("host_cycles"), count("dram_cycles"),
                                 count("store_cycles"), energy, count("e2e_cycles"), count("bound_cycles")));
    }
    return rows;
  }
};


// A record of this tool (anything else is a line cut by a kill, or a foreign file).
bool whole_record(const nlohmann::json& rec) {
  return rec.is_object() && rec.contains("point") && rec["point"].is_string() && rec.contains("status") &&
         rec["status"].is_string() && rec.contains("params") && rec["params"].is_object();
}

// The records a resumed sweep keeps, by point: results.jsonl's whole lines, then the Slurm tasks'
// records not merged yet (a submitter killed before merging them). A point recorded twice counts
// once; with retry_failed the failed ones are dropped so they run again.
std::map<std::string, nlohmann::json> kept_records(const Sweep& sw, const fs::path& out, bool retry_failed) {
  std::map<std::string, nlohmann::json> have;
  auto keep = [&](nlohmann::json rec) {
    try {
      if (!whole_record(rec)) return;
      (void)sw.csv_rows(rec);
    } catch (const std::exception&) {
      return;
    }
    if (retry_failed && rec["status"] != "ok") return;
    have.emplace(rec["point"].get<std::string>(), std::move(rec));
  };
  std::ifstream in(out / "results.jsonl");
  for (std::string line; std::getline(in, line);) keep(nlohmann::json::parse(line, nullptr, false));
  const fs::path task_records = out / "slurm" / "records";
  if (fs::is_directory(task_records)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(task_records))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) keep(nlohmann::json::parse(sy::read_text(f), nullptr, false));
  }
  return have;
}

// results.jsonl and results.csv written whole from the records, in grid order (then any record
// of a point the grid no longer has).
void write_results(const Sweep& sw, const std::map<std::string, nlohmann::json>& recs) {
  std::string records, rows = Sweep::csv_header();
  std::set<std::string> done;
  auto put = [&](const nlohmann::json& rec) {
    records += rec.dump() + "\n";
    for (const std::string& r : sw.csv_rows(rec)) rows += r;
  };
  for (const Point& p : expand(sw.grid))
    if (auto it = recs.find(point_key(p)); it != recs.end()) {
      put(it->second);
      done.insert(it->first);
    }
  for (const auto& [k, rec] : recs)
    if (!done.count(k)) put(rec);
  replace_file(sw.jsonl_path, records);
  replace_file(sw.csv_path, rows);
}

void run_local(Sweep& sw, const std::vector<Point>& todo, int jobs) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) sw.record(sw.run_point(todo[i]));
  };
  std::vector<std::thread> pool;
  for (int j = 0; j < std::min<int>(jobs, static_cast<int>(todo.size())); ++j) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

// ---- The Slurm backend ---------------------------------------------------------------------

// What the submitter keeps of its job array (<out>/slurm/submission.json): enough for a later
// --resume to follow the same tasks.
struct SlurmJob {
  std::string id;
  fs::path dir;                     // task<i>.json, task<i>.log
  std::vector<std::string> points;  // by task index
};

fs::path slurm_dir(const fs::path& out) { return out / "slurm"; }
fs::path task_record(const fs::path& out, const std::string& point) {
  return slurm_dir(out) / "records" / (safe_name(point) + ".json");
}

std::optional<SlurmJob> read_job(const fs::path& out) {
  const fs::path f = slurm_dir(out) / "submission.json";
  if (!fs::exists(f)) return std::nullopt;
  const nlohmann::json j = nlohmann::json::parse(sy::read_text(f), nullptr, false);
  if (!j.is_object() || !j.contains("job") || !j.contains("dir") || !j.contains("points"))
    throw std::runtime_error(fmt::format("{}: not a submission record of fetta sweep; remove it to start over", f.string()));
  return SlurmJob{j["job"].get<std::string>(), j["dir"].get<std::string>(), j["points"].get<std::vector<std::string>>()};
}

// The last lines of a task's log, for the failure record.
std::string log_tail(const fs::path& log, size_t lines = 8) {
  if (!fs::exists(log)) return "no log (" + log.string() + "): can the compute nodes see --out?";
  std::vector<std::string> all;
  std::ifstream in(log);
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string t;
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) t += (t.empty() ? "" : " | ") + all[i];
  return t.empty() ? "empty log " + log.string() : t;
}

// Follows a job array until every task has a record: a task's own record when it wrote one,
// else (the task died: killed, out of memory, past its time, node lost) a failure record made
// here from Slurm's state, the exit code or signal and the tail of its log. Progress on stderr.
void follow(Sweep& sw, const SlurmJob& job) {
  const fs::path out = sw.out;
  const size_t n = job.points.size();
  std::vector<bool> recorded(n, false);
  std::map<size_t, std::chrono::steady_clock::time_point> ended_at;
  auto last_status = std::chrono::steady_clock::now() - std::chrono::hours(1);
  size_t left = n, failed = 0;
  while (left > 0) {
    std::vector<size_t> open;
    for (size_t i = 0; i < n; ++i)
      if (!recorded[i]) open.push_back(i);
    // No answer from squeue (slurmctld busy or restarting): judge nothing this round, least of all
    // that a task died.
    const std::optional<std::map<size_t, slurm::TaskState>> answer = slurm::array_states(job.id, open);
    if (!answer) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
      continue;
    }
    const std::map<size_t, slurm::TaskState>& states = *answer;
    const bool job_active = std::any_of(states.begin(), states.end(),
                                        [](const auto& s) { return s.second.phase != slurm::Phase::ended; });
    size_t running = 0, pending = 0;
    for (size_t i : open) {
      const fs::path rec_file = task_record(out, job.points[i]);
      if (fs::exists(rec_file)) {
        const nlohmann::json rec = nlohmann::json::parse(sy::read_text(rec_file), nullptr, false);
        if (whole_record(rec) && rec["point"] == job.points[i]) {
          recorded[i] = true, --left;
          if (rec["status"] != "ok") ++failed;
          sw.record(rec);
          continue;
        }
      }
      const auto st = states.find(i);
      const bool ended = st != states.end() ? st->second.phase == slurm::Phase::ended : !job_active;
      if (!ended) {
        (st != states.end() && st->second.phase == slurm::Phase::running ? running : pending)++;
        continue;
      }
      // Ended without a record: allow a shared filesystem a moment to show a finished task's file.
      const auto now = std::chrono::steady_clock::now();
      const auto first = ended_at.emplace(i, now).first->second;
      const bool completed = st != states.end() && st->second.state == "COMPLETED";
      if (completed && now - first < std::chrono::seconds(30)) continue;
      std::string how = st == states.end() ? "unknown to Slurm by now" : st->second.state;
      if (st != states.end()) {
        if (st->second.signal) how += fmt::format(", signal {}", st->second.signal);
        else how += fmt::format(", exit code {}", st->second.exit_code);
      }
      const fs::path log = job.dir / fmt::format("task{}.log", i);
      nlohmann::json rec{{"point", job.points[i]}, {"params", nlohmann::json::object()}, {"status", "failed"}};
      for (const Point& p : expand(sw.grid))
        if (point_key(p) == job.points[i])
          for (const auto& [k, v] : p) rec["params"][k] = v;
      rec["reason"] = fmt::format("slurm task {}_{}: {}, no record; log: {}", job.id, i, how, log_tail(log));
      rec["slurm"] = {{"job", job.id}, {"task", i}, {"state", st == states.end() ? "" : st->second.state}};
      replace_file(task_record(out, job.points[i]), rec.dump() + "\n");
      recorded[i] = true, --left, ++failed;
      sw.record(rec);
    }
    const auto now = std::chrono::steady_clock::now();
    if (left > 0 && now - last_status >= std::chrono::seconds(15)) {
      last_status = now;
      fmt::print(stderr, "fetta sweep: slurm job {}: {} of {} recorded ({} failed), {} running, {} pending\n", job.id,
                 n - left, n, failed, running, pending);
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

// Writes one task spec per point and the tasks' script, submits the array, and remembers it.
SlurmJob submit(const Sweep& sw, const Options& o, const std::vector<Point>& todo) {
  const fs::path sd = slurm_dir(sw.out);
  int sub = 1;
  while (fs::exists(sd / fmt::format("sub{}", sub))) ++sub;
  SlurmJob job;
  job.dir = sd / fmt::format("sub{}", sub);
  fs::create_directories(job.dir);
  fs::create_directories(sd / "records");
  // A token the tasks check: a node that reads another --out (or none) fails with a clear reason.
  const std::string token = fmt::format("{:016x}", std::random_device{}() * 0x9E3779B97F4A7C15ULL ^ ::getpid());
  replace_file(job.dir / "visible", token + "\n");
  const fs::path cwd = fs::current_path();
  for (size_t i = 0; i < todo.size(); ++i) {
    const std::string key = point_key(todo[i]);
    job.points.push_back(key);
    const nlohmann::json spec{{"grid", fs::absolute(sw.grid.file).string()}, {"out", sw.out.string()}, {"point", key},
                              {"cwd", cwd.string()}, {"cache_dir", o.cache_dir}, {"visible", (job.dir / "visible").string()},
                              {"token", token}};
    replace_file(job.dir / fmt::format("task{}.json", i), spec.dump(1) + "\n");
  }
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  replace_file(job.dir / "task.sh",
               fmt::format("#!/bin/sh\n# written by fetta sweep: task i of the job array runs point i (task<i>.json)\n"
                           "# The tasks belong to Slurm, not to the submitter: without its marker, a later sweep of\n"
                           "# the same --out does not take them for tools a killed sweep left behind.\n"
                           "unset {}\n"
                           "exec {} sweep-point --spec {}/task\"$SLURM_ARRAY_TASK_ID\".json\n",
                           flows::kJobMarkerVar, flows::shell_quote(exe.string()), flows::shell_quote(job.dir.string())));
  fs::permissions(job.dir / "task.sh", fs::perms::owner_exec, fs::perm_options::add);
  slurm::Submission s;
  s.script = (job.dir / "task.sh").string();
  s.tasks = todo.size();
  s.max_running = o.max_running;
  s.chdir = cwd.string();
  s.log_pattern = (job.dir / "task%a.log").string();
  for (const std::string& v : o.slurm_opts)
    for (const std::string& w : slurm::split_options(v)) s.options.push_back(w);
  job.id = slurm::submit(s);
  const nlohmann::json rec{{"job", job.id}, {"dir", job.dir.string()}, {"points", job.points}};
  replace_file(sd / "submission.json", rec.dump(1) + "\n");
  return job;
}

// The grid a sweep's directory holds results of (<out>/grid.yaml, the grid file's text): --resume
// with another grid would keep the old grid's records as the new one's, so it is refused, naming
// the first line that differs. A directory without one (a sweep from before) takes this grid.
void check_resumed_grid(const Sweep& sw, bool resume) {
  const fs::path kept = sw.out / "grid.yaml";
  const std::string now = sy::read_text(sw.grid.file);
  if (resume && fs::exists(kept))
    if (const auto d = yaml_input::first_difference(sy::read_text(kept), now))
      throw std::runtime_error(fmt::format("--resume: {} holds the results of another grid: line {} is '{}' there and '{}' "
                                           "in {}; resume with the grid it ran, or give another --out",
                                           sw.out.string(), d->line, d->a, d->b, sw.grid.file));
  replace_file(kept, now);
}

// The sweep proper, once its inputs are read and its output directory is locked. Returns the
// exit code: 1 when every point failed.
int run_sweep(Sweep& sw, const Options& o) {
  sw.jsonl_path = sw.out / "results.jsonl";
  sw.csv_path = sw.out / "results.csv";
  check_resumed_grid(sw, o.resume);
  // A job array of an earlier sweep still running here: --resume follows it to its end first.
  if (fs::exists(slurm_dir(sw.out) / "submission.json")) {
    const std::optional<SlurmJob> prev = read_job(sw.out);
    if (prev && slurm::active(prev->id)) {
      if (!o.resume)
        throw std::runtime_error(fmt::format("--out {}: Slurm job {} of an earlier sweep is still running there; "
                                             "--resume collects it, or scancel {} to drop it",
                                             sw.out.string(), prev->id, prev->id));
      fmt::print(stderr, "fetta sweep: following Slurm job {} of the earlier submission\n", prev->id);
      sw.total = prev->points.size();
      follow(sw, *prev);
    }
  }
  std::map<std::string, nlohmann::json> have;
  if (o.resume) have = kept_records(sw, sw.out, o.retry_failed);
  else fs::remove_all(slurm_dir(sw.out) / "records");  // a fresh sweep: no task record of an old one counts
  write_results(sw, have);
  std::vector<Point> todo;
  for (const Point& p : expand(sw.grid))
    if (!have.count(point_key(p))) todo.push_back(p);
  sw.total = todo.size();
  sw.done = 0;
  sw.t0 = std::chrono::steady_clock::now();
  fmt::print(stderr, "fetta sweep: {} point(s) to run ({} already recorded), {}, results in {}\n", todo.size(), have.size(),
             o.backend == "slurm" ? std::string("Slurm job array") : fmt::format("{} job(s)", o.jobs), sw.out.string());
  for (const Point& p : todo) fs::remove(task_record(sw.out, point_key(p)));  // a retried point's old task record
  if (o.backend == "local") {
    run_local(sw, todo, o.jobs);
  } else if (!todo.empty()) {
    const SlurmJob job = submit(sw, o, todo);
    fmt::print(stderr, "fetta sweep: submitted Slurm job {} ({} task(s){}), logs in {}\n", job.id, todo.size(),
               o.max_running > 0 ? fmt::format(", at most {} at once", o.max_running) : "", job.dir.string());
    if (o.no_wait) {
      fmt::print(stderr, "fetta sweep: not waiting; collect with: fetta sweep --grid {} --out {} --backend slurm --resume\n",
                 sw.grid.file, sw.out.string());
      return 0;
    }
    follow(sw, job);
  }
  // Everything recorded, merged in grid order.
  const std::map<std::string, nlohmann::json> recs = kept_records(sw, sw.out, false);
  write_results(sw, recs);
  size_t points = 0, failed = 0;
  for (const Point& p : expand(sw.grid))
    if (const auto it = recs.find(point_key(p)); it != recs.end()) {
      ++points;
      failed += it->second["status"] != "ok";
    }
  if (failed > 0)
    fmt::print(stderr, "fetta sweep: {} of {} point(s) failed; results.jsonl has each one's reason{}\n", failed, points,
               failed == points ? "" : " (--resume --retry-failed runs them again)");
  fmt::print(stderr, "fetta sweep: done; plot with: /usr/bin/python3 scripts/plot_sweep.py {}\n", sw.out.string());
  return points > 0 && failed == points ? 1 : 0;
}

}  // namespace

int run(const Options& o) {
  if (o.backend != "local" && o.backend != "slurm")
    throw std::invalid_argument(fmt::format("--backend {}: allowed: local, slurm", o.backend));
  if (o.retry_failed && !o.resume) throw std::invalid_argument("--retry-failed: only with --resume");
  if (o.backend == "local" && (o.no_wait || o.max_running > 0 || !o.slurm_opts.empty()))
    throw std::invalid_argument("--no-wait, --max-running and --slurm-opt: only with --backend slurm");
  if (o.backend == "slurm" && o.jobs != 1)
    throw std::invalid_argument("--jobs: only with --backend local; Slurm runs as many tasks as it has CPUs "
                                "(--max-running limits them)");
  Sweep sw;
  sw.grid = load_grid(o.grid);
  for (const std::string& l : sw.grid.layers) (void)verif::load_layer(l);  // bad layers fail before any point
  sw.base = arch::load_arch_config(sw.grid.base);
  for (const std::string& t : sw.grid.targets) sy::require_tools(sy::parse_target(t));
  if (o.backend == "slurm") slurm::require_client();
  fs::create_directories(o.out);
  sw.out = fs::absolute(o.out);
  if (!o.cache_dir.empty()) ::setenv("FETTA_CACHE_DIR", fs::absolute(o.cache_dir).c_str(), 1);
  // One sweep per output directory; its child tools carry a marker naming that directory, so
  // tools a killed sweep left running are found and stopped before this one starts.
  flows::JobLock lock;
  pid_t holder = 0;
  if (!lock.acquire((sw.out / ".sweep.lock").string(), 5.0, holder))
    throw std::runtime_error(fmt::format("--out {}: another fetta sweep{} is writing there; wait for it or stop it",
                                         o.out, holder > 0 ? fmt::format(" (pid {})", holder) : ""));
  const std::string marker = "sweep:" + fs::weakly_canonical(sw.out).string();
  if (const int n = flows::reap_marked(marker); n > 0)
    fmt::print(stderr, "fetta sweep: stopped {} process(es) left running by an earlier sweep of {}\n", n, o.out);
  const int code = flows::run_supervised(marker, [&] {
    try {
      return run_sweep(sw, o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "fetta: error: {}\n", e.what());
      return 1;
    }
  });
  return code;
}

int run_task(const std::string& spec_file) {
  std::ifstream in(spec_file);
  if (!in)
    throw std::runtime_error(fmt::format("{}: cannot read the task's spec on this node; --out must be on a filesystem "
                                         "the compute nodes share with the submitter",
                                         spec_file));
  const nlohmann::json spec = nlohmann::json::parse(sy::read_text(spec_file), nullptr, false);
  for (const char* k : {"grid", "out", "point", "cwd", "cache_dir", "visible", "token"})
    if (!spec.is_object() || !spec.contains(k))
      throw std::runtime_error(fmt::format("{}: not a task spec of fetta sweep (no '{}')", spec_file, k));
  const std::string visible = sy::read_text(spec["visible"].get<std::string>());
  if (visible.rfind(spec["token"].get<std::string>(), 0) != 0)
    throw std::runtime_error(fmt::format("{} is not the file the submitter wrote: --out is not shared with this node",
                                         spec["visible"].get<std::string>()));
  fs::current_path(spec["cwd"].get<std::string>());
  if (const std::string c = spec["cache_dir"]; !c.empty()) ::setenv("FETTA_CACHE_DIR", c.c_str(), 1);
  Sweep sw;
  sw.grid = load_grid(spec["grid"].get<std::string>());
  sw.base = arch::load_arch_config(sw.grid.base);
  sw.out = spec["out"].get<std::string>();
  const std::string key = spec["point"];
  for (const Point& p : expand(sw.grid)) {
    if (point_key(p) != key) continue;
    nlohmann::json run{{"backend", "slurm"}};
    for (const auto& [k, var] : {std::pair{"job", "SLURM_ARRAY_JOB_ID"}, std::pair{"task", "SLURM_ARRAY_TASK_ID"}})
      if (const char* v = std::getenv(var)) run[k] = v;
    const nlohmann::json rec = sw.run_point(p, run);
    replace_file(task_record(sw.out, key), rec.dump() + "\n");
    fmt::print("fetta sweep-point: {} {}{}\n", key, rec["status"].get<std::string>(),
               rec.contains("reason") ? " (" + rec["reason"].get<std::string>() + ")" : "");
    return 0;
  }
  throw std::runtime_error(fmt::format("{}: point '{}' is not in the grid {} (was the grid edited after submission?)",
                                       spec_file, key, sw.grid.file));
}

}  // namespace fetta::app::sweep
