// An emitted design as the flows see it: the directory rtl::write_design writes (one .sv per
// module, filelist.f in dependency order, manifest.json with the top and every module).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace fetta::flows::synth {

struct DesignModule {
  std::string name;
  std::string file;
  std::string generator;
  std::map<std::string, std::string> parameters;
};

struct DesignDir {
  std::string dir;                    // absolute
  std::string top;
  std::vector<std::string> files;     // absolute, filelist order
  std::vector<DesignModule> modules;  // manifest order (children before parents)
  nlohmann::json config;              // manifest "config"

  const DesignModule* find(const std::string& module) const;
  // Whether the design gates clocks with clock-gate cells (rtl::ClockGating::cells), which an
  // ASIC flow maps to the library's integrated clock gate and an FPGA flow cannot take.
  bool gates_clocks_with_cells() const { return find("fetta_clock_gate") != nullptr; }
};

// Throws std::runtime_error naming the missing or malformed file.
DesignDir read_design_dir(const std::string& dir);

// "all" -> every module, "top" -> the top only, "a,b" -> those (each must exist: the error names
// the unknown one and lists the design's modules). Result keeps manifest order.
std::vector<DesignModule> select_modules(const DesignDir& d, const std::string& spec);

}  // namespace fetta::flows::synth
