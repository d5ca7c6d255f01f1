// fetta sweep: a grid of configurations (CE rows x cols, CE count, network lanes, data type,
// baseline kind) derived from one base configuration. Per point: generate the top, lint it,
// synthesize the chosen parts for the chosen targets, and count the cycles of the chosen layers
// (the compiler's cycle model, which the system tests hold equal to the RTL, or the RTL itself
// through `fetta run`). Results are appended point by point to results.jsonl (whole, fsynced
// lines) and results.csv (derived from it, and rewritten from it on --resume), so a sweep killed
// at any instant resumes where it stopped with every point once in both files; a failing point is
// recorded with its reason and the sweep goes on.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "commands.hpp"
#include "flows/lint.hpp"
#include "flows/run.hpp"
#include "flows/supervise.hpp"
#include "flows/synth.hpp"
#include "flows/synth_tools.hpp"
#include "hw/top.hpp"
#include "mapper/compile.hpp"
#include "mapper/cost_model.hpp"
#include "mapper/layer_search.hpp"
#include "rtl_gen/emit.hpp"
#include "verif/layer.hpp"
#include "yaml_input/strict.hpp"

namespace fetta::app {

namespace fs = std::filesystem;
namespace sy = flows::synth;

namespace {

const std::vector<std::string> kGridKeys{"ce.rows", "ce.cols", "ce.count", "network.lanes", "memory.elems_per_bank",
                                         "dtype", "baseline"};

struct Grid {
  std::string file;
  std::string base = "configs/default.yaml";
  std::vector<std::string> layers;
  std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  bool lint = true;
  std::string cycles = "model";  // model | rtl
  std::string map_for = "compute";  // with cycles: rtl, fetta run --map-for
  std::vector<std::string> targets;
  std::vector<std::string> parts{"ce"};
  std::vector<std::pair<std::string, std::vector<std::string>>> axes;  // in file order
};

[[noreturn]] void grid_error(const Grid& g, const YAML::Mark& m, const std::string& msg) {
  throw std::invalid_argument(fmt::format("{}:{}: {}", g.file, m.line + 1, msg));
}

std::vector<std::string> strings(const Grid& g, const YAML::Node& n, const std::string& field) {
  if (!n.IsSequence() || n.size() == 0) grid_error(g, n.Mark(), field + ": expected a non-empty list");
  std::vector<std::string> v;
  for (const auto& x : n) {
    if (!x.IsScalar()) grid_error(g, x.Mark(), field + ": expected scalars");
    v.push_back(x.Scalar());
  }
  return v;
}

Grid load_grid(const std::string& file) {
  Grid g;
  g.file = file;
  std::ifstream in(file);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot open the grid file", file));
  std::stringstream text;
  text << in.rdbuf();
  const yaml_input::Document doc = yaml_input::load_one_document(text.str());
  const auto problem = doc.problem ? doc.problem : yaml_input::find_duplicate_key(doc.root);
  if (problem) throw std::invalid_argument(yaml_input::format(*problem, file));
  const YAML::Node& root = doc.root;
  if (!root.IsMap()) throw std::invalid_argument(file + ": expected a mapping (base, layers, phases, grid, ...)");
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "base") {
      g.base = v.Scalar();
    } else if (key == "layers") {
      g.layers = strings(g, v, "layers");
    } else if (key == "phases") {
      g.phases.clear();
      for (const std::string& p : strings(g, v, "phases")) {
        const auto ph = mapper::parse_phases(p);
        g.phases.insert(g.phases.end(), ph.begin(), ph.end());
      }
    } else if (key == "lint") {
      g.lint = v.as<bool>();
    } else if (key == "cycles") {
      g.cycles = v.Scalar();
      if (g.cycles != "model" && g.cycles != "rtl")
        grid_error(g, v.Mark(), fmt::format("cycles: unknown value '{}'; allowed: model, rtl", g.cycles));
    } else if (key == "map_for") {
      g.map_for = v.Scalar();
      try {
        (void)mapper::parse_map_for(g.map_for);
      } catch (const std::invalid_argument&) {
        grid_error(g, v.Mark(), fmt::format("map_for: unknown value '{}'; allowed: compute, end-to-end", g.map_for));
      }
    } else if (key == "synth") {
      for (const auto& s : v) {
        const std::string k = s.first.Scalar();
        if (k == "targets") {
          g.targets = strings(g, s.second, "synth.targets");
          for (const std::string& t : g.targets) (void)sy::parse_target(t);
        } else if (k == "parts") {
          g.parts = strings(g, s.second, "synth.parts");
          const auto known = hw::part_list();
          for (const std::string& p : g.parts)
            if (std::find(known.begin(), known.end(), p) == known.end())
              grid_error(g, s.second.Mark(), fmt::format("synth.parts: unknown part '{}'; allowed: {}", p, hw::part_names()));
        } else {
          grid_error(g, s.first.Mark(), fmt::format("synth.{}: unknown key; allowed: targets, parts", k));
        }
      }
    } else if (key == "grid") {
      for (const auto& a : v) {
        const std::string k = a.first.Scalar();
        if (std::find(kGridKeys.begin(), kGridKeys.end(), k) == kGridKeys.end())
          grid_error(g, a.first.Mark(), fmt::format("grid: unknown parameter '{}'; allowed: {}", k, fmt::join(kGridKeys, ", ")));
        g.axes.emplace_back(k, strings(g, a.second, "grid." + k));
      }
    } else {
      grid_error(g, kv.first.Mark(),
                 fmt::format("unknown key '{}'; allowed: base, layers, phases, lint, cycles, map_for, synth, grid", key));
    }
  }
  if (g.axes.empty()) throw std::invalid_argument(file + ": grid: no parameter to sweep");
  // The data movement a mapping implies is the simulator's estimate: the model-cycle count has none.
  if (g.map_for != "compute" && g.cycles != "rtl")
    throw std::invalid_argument(fmt::format("{}: map_for: {} needs cycles: rtl (the data movement is counted by the "
                                            "simulation); allowed with cycles: model: compute",
                                            file, g.map_for));
  return g;
}

using Point = std::vector<std::pair<std::string, std::string>>;

std::string point_key(const Point& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

std::vector<Point> expand(const Grid& g) {
  std::vector<Point> pts{{}};
  for (const auto& [k, vals] : g.axes) {
    std::vector<Point> next;
    for (const Point& p : pts)
      for (const std::string& v : vals) {
        Point q = p;
        q.emplace_back(k, v);
        next.push_back(q);
      }
    pts = std::move(next);
  }
  return pts;
}

int to_int(const std::string& key, const std::string& v) {
  try {
    size_t used = 0;
    const int x = std::stoi(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw std::invalid_argument(fmt::format("{} = '{}': expected an integer", key, v));
}

int ilog2_exact(int v) {
  int b = 0;
  while ((1 << b) < v) ++b;
  return (1 << b) == v ? b : -1;
}

// The configuration of a point: the base with the point's values; `baseline` rewrites it into
// the TPU-like array (one square CE with the same PEs, fixed wiring, same memory capacity) or
// the hierarchical one (same CEs, fixed wiring).
arch::ArchConfig point_config(const arch::ArchConfig& base, const Point& p) {
  arch::ArchConfig c = base;
  std::string baseline = "fetta";
  for (const auto& [k, v] : p) {
    if (k == "ce.rows") c.ce.rows = to_int(k, v);
    else if (k == "ce.cols") c.ce.cols = to_int(k, v);
    else if (k == "ce.count") c.ce.count = to_int(k, v);
    else if (k == "network.lanes") c.network.lanes = to_int(k, v);
    else if (k == "memory.elems_per_bank") c.memory.elems_per_bank = to_int(k, v);
    else if (k == "dtype") {
      if (v == "bf16") c.dtype = arch::DataType::bf16;
      else if (v == "int8") c.dtype = arch::DataType::int8;
      else if (v == "int16") c.dtype = arch::DataType::int16;
      else throw std::invalid_argument(fmt::format("dtype = '{}'; allowed: bf16, int8, int16", v));
    } else if (k == "baseline") {
      if (v != "fetta" && v != "tpu" && v != "hier")
        throw std::invalid_argument(fmt::format("baseline = '{}'; allowed: fetta, tpu, hier", v));
      baseline = v;
    }
  }
  const int T = c.memory.elems_per_bank;
  const int64_t capacity_rows = static_cast<int64_t>(c.memory.unified_depth) * base.network.lanes;
  const int64_t acc_rows = static_cast<int64_t>(c.memory.accum_depth) * base.network.lanes;
  if (baseline == "tpu") {
    const int pes = c.total_pes();
    const int side = static_cast<int>(std::lround(std::sqrt(pes)));
    if (side * side != pes || ilog2_exact(side) < 0)
      throw std::invalid_argument(fmt::format("baseline tpu: {} PEs is not a square of a power of two", pes));
    c.ce.rows = c.ce.cols = side;
    c.ce.count = 1;
    c.network.lanes = std::max(side, T * T);
  }
  if (baseline != "fetta") c.network.topology = arch::NetworkTopology::fixed;
  c.memory.banks = c.network.lanes / std::max(1, T);
  // Keep the memory capacities of the base when the lane count changes.
  c.memory.unified_depth = static_cast<int>(std::max<int64_t>(2, capacity_rows / c.network.lanes));
  c.memory.accum_depth = static_cast<int>(std::max<int64_t>(2, acc_rows / c.network.lanes));
  c.name = base.name + "[" + point_key(p) + "]";
  arch::validate(c);
  return c;
}

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
           "host_cycles,dram_cycles,store_cycles,energy_uj,static_uj,mac_uj,sram_uj,network_uj,dram_uj,pj_per_mac,tops_per_w,edp_js\n";
  }

  // Runs one point; returns its JSON record (status ok / failed with the reason).
  nlohmann::json run_point(const Point& p) {
    nlohmann::json rec{{"point", point_key(p)}, {"params", nlohmann::json::object()}};
    for (const auto& [k, v] : p) rec["params"][k] = v;
    std::string stage = "config";
    try {
      const arch::ArchConfig cfg = point_config(base, p);
      rec["config"] = {{"dtype", arch::to_string(cfg.dtype)}, {"ce_rows", cfg.ce.rows}, {"ce_cols", cfg.ce.cols},
                       {"ce_count", cfg.ce.count}, {"pes", cfg.total_pes()}, {"lanes", cfg.network.lanes},
                       {"topology", arch::to_string(cfg.network.topology)}, {"banks", cfg.memory.banks},
                       {"unified_depth", cfg.memory.unified_depth}, {"accum_depth", cfg.memory.accum_depth}};
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
          rtl::Design pd;
          const std::string ptop = hw::elaborate_part(pd, cfg, part);
          const fs::path prtl = dir / "synth" / part / "rtl";
          rtl::write_design(pd, ptop, prtl);
          sy::Options so;
          so.target = sy::parse_target(target);
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
      for (const std::string& lf : grid.layers) {
        const verif::LayerSpec spec = verif::load_layer(lf);
        for (verif::Phase ph : grid.phases) {
          int64_t macs = 0, cycles = 0;
          std::vector<mapper::StepShape>& sh = shapes.emplace_back();
          for (const auto& prob : verif::phase_problems(spec, ph))
            for (size_t t = 0; t < prob.terms.size(); ++t)
              for (const auto& st : mapper::plan_network(cfg, prob, t).steps) {
                const mapper::GemmShape& g = st.compiled.gemm.shape;
                macs += g.macs();
                cycles += st.compiled.gemm.predicted_cycles;
                sh.push_back(mapper::matmul_shape(static_cast<uint64_t>(g.m.size()), static_cast<uint64_t>(g.k.size()),
                                                  static_cast<uint64_t>(g.n.size())));
              }
          layers.push_back({{"layer", spec.name}, {"phase", verif::to_string(ph)}, {"macs", macs}, {"cycles", cycles},
                            {"source", "model"}});
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
    return rec;
  }

  // A layer-phase's energy by the analytical model's constants of the point's configuration
  // (`energy:`; docs/power.md, "Energy model"): the static power over its compute cycles (the
  // RTL's or the model's), the steps' MAC and SRAM terms, and DRAM from the bytes the RTL run moved
  // or, with model cycles, the model's own DRAM estimate. The traffic is kept beside the terms, so
  // other constants (another top's measured ones: bench/power/efficiency.py) can be applied later.
  static void layer_energy(const arch::ArchConfig& cfg, const std::vector<mapper::StepShape>& shapes, nlohmann::json& l) {
    const mapper::AnalyticalModel model(cfg);
    double sram_r = 0, sram_w = 0, dram_r = 0, dram_w = 0;
    for (const mapper::StepShape& s : shapes) {
      const mapper::StepCost c = model.step(s);
      sram_r += c.sram_read_bytes, sram_w += c.sram_write_bytes;
      dram_r += c.dram_read_bytes, dram_w += c.dram_write_bytes;
    }
    const bool from_run = l.contains("dram_bytes_read");
    if (from_run) {
      dram_r = l["dram_bytes_read"].get<double>();
      dram_w = l["dram_bytes_written"].get<double>();
    }
    const double cycles = l["cycles"].get<double>(), macs = l["macs"].get<double>();
    const mapper::EnergyTerms t = mapper::run_energy(model, shapes, cycles, dram_r, dram_w);
    const double joules = t.total() * 1e-12;
    l["traffic"] = {{"sram_read_bytes", sram_r}, {"sram_write_bytes", sram_w}, {"dram_read_bytes", dram_r},
                    {"dram_write_bytes", dram_w}, {"dram_source", from_run ? "rtl run" : "model"}};
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
    const std::string cmd = fmt::format("{} run --config {} --layer {} --phases {} --map-for {} --json > {} 2> {}",
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
      l["cycles"] = cyc;
      l["host_cycles"] = host;
      l["dram_cycles"] = dram;
      l["store_cycles"] = store;
      l["source"] = "rtl";
    }
  }

  static std::string safe_name(std::string s) {
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return s;
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
      rows.push_back(head + ",,,,,,," + tail + ",,,,,,,,,,,\n");
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
      rows.push_back(fmt::format("{},{},{},{},{},{:.4f},{},{},{},{},{},{}\n", head, l["layer"].get<std::string>(),
                                 l["phase"].get<std::string>(), l["macs"].get<int64_t>(), l["cycles"].get<int64_t>(), util,
                                 l["source"].get<std::string>(), tail, count("host_cycles"), count("dram_cycles"),
                                 count("store_cycles"), energy));
    }
    return rows;
  }
};

struct SweepOpts {
  std::string grid, out = "out/sweep";
  int jobs = 1;
  bool resume = false, retry_failed = false;
};

// The sweep proper, once its inputs are read and its output directory is locked: resume what is
// recorded, run the remaining points on `jobs` threads, record each as it ends.
void run_sweep(Sweep& sw, const SweepOpts& o) {
  const fs::path jl = sw.out / "results.jsonl", cv = sw.out / "results.csv";
  // Resuming keeps the whole records of results.jsonl (a line torn by a kill is dropped, a point
  // recorded twice counts once) and writes both files again from them, each replaced whole.
  std::set<std::string> have;
  std::string records, rows = Sweep::csv_header();
  if (o.resume && fs::exists(jl)) {
    std::ifstream in(jl);
    for (std::string line; std::getline(in, line);) {
      nlohmann::json rec;
      std::string rec_rows;
      try {  // anything but a whole record of this tool is a line cut by a kill
        rec = nlohmann::json::parse(line);
        if (!rec.is_object() || !rec.contains("point") || !rec["point"].is_string() || !rec.contains("status") ||
            !rec["status"].is_string() || !rec.contains("params") || !rec["params"].is_object())
          continue;
        for (const std::string& row : sw.csv_rows(rec)) rec_rows += row;
      } catch (const std::exception&) {
        continue;
      }
      if (o.retry_failed && rec.value("status", "") != "ok") continue;
      if (!have.insert(rec["point"].get<std::string>()).second) continue;
      records += rec.dump() + "\n";
      rows += rec_rows;
    }
  }
  replace_file(jl, records);
  replace_file(cv, rows);
  sw.jsonl_path = jl;
  sw.csv_path = cv;
  std::vector<Point> todo;
  for (const Point& p : expand(sw.grid))
    if (!have.count(point_key(p))) todo.push_back(p);
  sw.total = todo.size();
  fmt::print(stderr, "fetta sweep: {} point(s) to run ({} already recorded), {} job(s), results in {}\n", todo.size(),
             have.size(), o.jobs, sw.out.string());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < todo.size(); i = next++) sw.record(sw.run_point(todo[i]));
  };
  std::vector<std::thread> pool;
  for (int j = 0; j < std::min<int>(o.jobs, static_cast<int>(todo.size())); ++j) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  fmt::print(stderr, "fetta sweep: done; plot with: /usr/bin/python3 scripts/plot_sweep.py {}\n", sw.out.string());
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOpts>();
  auto* cmd = app.add_subcommand("sweep", "Sweep a grid of configurations: generate, lint, synthesize, count cycles; CSV/JSON results");
  cmd->add_option("--grid", o->grid, "Grid description (YAML; see docs/results.md and scripts/grids/)")->required();
  cmd->add_option("--out", o->out, "Output directory: results.csv, results.jsonl, points/<point>/")->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "Points run in parallel")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_flag("--resume", o->resume, "Skip the points already recorded in <out>/results.jsonl");
  cmd->add_flag("--retry-failed", o->retry_failed,
                "With --resume: run the points recorded as failed again (their records are dropped first)");
  cmd->callback([o] {
    Sweep sw;
    sw.grid = load_grid(o->grid);
    for (const std::string& l : sw.grid.layers) (void)verif::load_layer(l);  // bad layers fail before any point
    sw.base = arch::load_arch_config(sw.grid.base);
    for (const std::string& t : sw.grid.targets) sy::require_tools(sy::parse_target(t));
    sw.out = o->out;
    if (o->retry_failed && !o->resume) throw std::invalid_argument("--retry-failed: only with --resume");
    fs::create_directories(sw.out);
    // One sweep per output directory; its child tools carry a marker naming that directory, so
    // tools a killed sweep left running are found and stopped before this one starts.
    flows::JobLock lock;
    pid_t holder = 0;
    if (!lock.acquire((sw.out / ".sweep.lock").string(), 5.0, holder))
      throw std::runtime_error(fmt::format("--out {}: another fetta sweep{} is writing there; wait for it or stop it",
                                           sw.out.string(), holder > 0 ? fmt::format(" (pid {})", holder) : ""));
    const std::string marker = "sweep:" + fs::weakly_canonical(sw.out).string();
    if (const int n = flows::reap_marked(marker); n > 0)
      fmt::print(stderr, "fetta sweep: stopped {} process(es) left running by an earlier sweep of {}\n", n, sw.out.string());
    const int code = flows::run_supervised(marker, [&] {
      try {
        run_sweep(sw, *o);
        return 0;
      } catch (const std::exception& e) {
        fmt::print(stderr, "fetta: error: {}\n", e.what());
        return 1;
      }
    });
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace fetta::app
