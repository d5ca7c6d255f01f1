// Grid files of `fetta sweep`: parsing with field-naming errors, expansion into points, and the
// configuration of each point.
#include "grid.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "flows/synth.hpp"
#include "hw/top.hpp"
#include "mapper/compile.hpp"
#include "mapper/layer_search.hpp"
#include "yaml_input/file.hpp"
#include "yaml_input/strict.hpp"

namespace fetta::app::sweep {

namespace sy = flows::synth;

namespace {

const std::vector<std::string> kBaselines{"fetta", "tpu", "tpu_offchip", "hier"};  // the values of `baseline`
const std::vector<std::string> kGridKeys{"ce.rows", "ce.cols", "ce.count", "network.lanes", "memory.elems_per_bank",
                                         "dtype", "baseline"};

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

}  // namespace




Grid load_grid(const std::string& file) {
  Grid g;
  g.file = file;
  const std::optional<std::string> text = yaml_input::read_file(file);
  if (!text) throw std::invalid_argument(fmt::format("{}: cannot open the grid file", file));
  const yaml_input::Document doc = yaml_input::load_one_document(*text);
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
        grid_error(g, v.Mark(), fmt::format("map_for: unknown value '{}'; allowed: compute, end-to-end, fastest", g.map_for));
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
    } else if (key == "energy_from") {
      if (!v.IsMap()) grid_error(g, v.Mark(), "energy_from: expected a mapping of baseline kind (fetta, tpu, tpu_offchip, hier) to a configuration file");
      for (const auto& e : v) {
        const std::string kind = e.first.Scalar();
        if (std::find(kBaselines.begin(), kBaselines.end(), kind) == kBaselines.end())
          grid_error(g, e.first.Mark(),
                     fmt::format("energy_from: unknown baseline '{}'; allowed: {}", kind, fmt::join(kBaselines, ", ")));
        if (!e.second.IsScalar()) grid_error(g, e.second.Mark(), fmt::format("energy_from.{}: expected a configuration file", kind));
        try {
          g.energy_from[kind] = {e.second.Scalar(), arch::load_arch_config(e.second.Scalar()).energy};
        } catch (const std::exception& ex) {
          grid_error(g, e.second.Mark(), fmt::format("energy_from.{}: {}", kind, ex.what()));
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
                 fmt::format("unknown key '{}'; allowed: base, layers, phases, lint, cycles, map_for, synth, energy_from, grid",
                             key));
    }
  }
  if (g.axes.empty()) throw std::invalid_argument(file + ": grid: no parameter to sweep");
  uint64_t points = 1;
  for (const auto& [k, vals] : g.axes) {
    if (vals.empty() || points > kMaxGridPoints / vals.size())
      throw std::invalid_argument(fmt::format("{}: grid: more than {} points (at '{}'; allowed: at most {} points); split "
                                              "the sweep into several grids",
                                              file, kMaxGridPoints, k, kMaxGridPoints));
    points *= vals.size();
  }
  // The data movement a mapping implies is the simulator's estimate: the model-cycle count has none.
  if (g.map_for != "compute" && g.cycles != "rtl")
    throw std::invalid_argument(fmt::format("{}: map_for: {} needs cycles: rtl (the data movement is counted by the "
                                            "simulation); allowed with cycles: model: compute",
                                            file, g.map_for));
  return g;
}

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



// The configuration of a point: the base with the point's values; `baseline` rewrites it into
// the TPU-like array (one square CE with the same PEs, fixed wiring, same memory capacity), the
// same without on-chip reordering (tpu_offchip: memory.store_reorder false), or the hierarchical
// one (same CEs, fixed wiring).
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
      if (std::find(kBaselines.begin(), kBaselines.end(), v) == kBaselines.end())
        throw std::invalid_argument(fmt::format("baseline = '{}'; allowed: {}", v, fmt::join(kBaselines, ", ")));
      baseline = v;
    }
  }
  const int T = c.memory.elems_per_bank;
  const int64_t capacity_rows = static_cast<int64_t>(c.memory.unified_depth) * base.network.lanes;
  const int64_t acc_rows = static_cast<int64_t>(c.memory.accum_depth) * base.network.lanes;
  if (baseline == "tpu" || baseline == "tpu_offchip") {
    const int pes = c.total_pes();
    const int side = static_cast<int>(std::lround(std::sqrt(pes)));
    if (side * side != pes || ilog2_exact(side) < 0)
      throw std::invalid_argument(fmt::format("baseline tpu: {} PEs is not a square of a power of two", pes));
    c.ce.rows = c.ce.cols = side;
    c.ce.count = 1;
    c.network.lanes = std::max(side, T * T);
  }
  if (baseline != "fetta") c.network.topology = arch::NetworkTopology::fixed;
  if (baseline == "tpu_offchip") c.memory.store_reorder = false;
  c.memory.banks = c.network.lanes / std::max(1, T);
  // Keep the memory capacities of the base when the lane count changes.
  c.memory.unified_depth = static_cast<int>(std::max<int64_t>(2, capacity_rows / c.network.lanes));
  c.memory.accum_depth = static_cast<int>(std::max<int64_t>(2, acc_rows / c.network.lanes));
  c.name = base.name + "[" + point_key(p) + "]";
  arch::validate(c);
  return c;
}

std::string price_point(const Grid& g, const Point& p, arch::ArchConfig& cfg) {
  std::string kind = "fetta";
  for (const auto& [k, v] : p)
    if (k == "baseline") kind = v;
  const auto it = g.energy_from.find(kind);
  if (it == g.energy_from.end()) return "base";
  cfg.energy = it->second.energy;
  return it->second.file;
}

std::string safe_name(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  return s;
}

}  // namespace fetta::app::sweep
