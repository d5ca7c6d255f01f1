// The grid of a sweep (docs/results.md, "Sweeps"): its YAML file, the points it expands to, and
// each point's configuration derived from the base one.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "arch/config.hpp"
#include "verif/layer.hpp"

namespace fetta::app::sweep {

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
  // Baseline kind (fetta, tpu, tpu_offchip, hier) -> the configuration whose `energy:` constants price its
  // points; a kind not named keeps the base's constants (each record says which it used).
  struct EnergySource {
    std::string file;
    arch::EnergyConfig energy;
  };
  std::map<std::string, EnergySource> energy_from;
};

// A point: the grid's parameters with one value each, in the grid's order.
using Point = std::vector<std::pair<std::string, std::string>>;

// The most points a grid may expand to: far more than a cluster runs in a day, far fewer than
// exhaust the submitter's memory.
inline constexpr uint64_t kMaxGridPoints = 100'000;

// Reads and checks a grid file; errors name the file, line, field and the allowed values.
Grid load_grid(const std::string& file);
std::string point_key(const Point& p);   // "k=v,k=v": the point's name in records
std::vector<Point> expand(const Grid& g);  // every point, in grid order
// The configuration of a point: the base with the point's values; `baseline` rewrites it into
// the TPU-like array or the hierarchical one (docs/results.md, "Speedup over the baselines").
arch::ArchConfig point_config(const arch::ArchConfig& base, const Point& p);
// The point's energy constants: the `energy_from` configuration of its baseline kind, or the
// base's; returns where they came from (the file, or "base").
std::string price_point(const Grid& g, const Point& p, arch::ArchConfig& cfg);
// A point or layer name as a file name: every character but [A-Za-z0-9._-] becomes '_'.
std::string safe_name(std::string s);

}  // namespace fetta::app::sweep
