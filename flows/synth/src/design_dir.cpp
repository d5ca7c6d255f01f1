#include "flows/design_dir.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fetta::flows::synth {

namespace fs = std::filesystem;

const DesignModule* DesignDir::find(const std::string& module) const {
  for (const DesignModule& m : modules)
    if (m.name == module) return &m;
  return nullptr;
}

DesignDir read_design_dir(const std::string& dir) {
  if (!fs::is_directory(dir))
    throw std::runtime_error(fmt::format("RTL directory '{}' does not exist (expected the output of `fetta gen`)", dir));
  DesignDir d;
  d.dir = fs::absolute(dir).lexically_normal().string();
  std::ifstream fl(fs::path(d.dir) / "filelist.f");
  if (!fl) throw std::runtime_error(fmt::format("{}/filelist.f not found: not a directory written by `fetta gen`", dir));
  for (std::string line; std::getline(fl, line);) {
    if (line.empty()) continue;
    fs::path p = fs::path(d.dir) / line;
    if (!fs::exists(p)) throw std::runtime_error(fmt::format("{}/filelist.f names {}, which does not exist", dir, line));
    d.files.push_back(p.lexically_normal().string());
  }
  if (d.files.empty()) throw std::runtime_error(fmt::format("{}/filelist.f lists no file", dir));

  std::ifstream mf(fs::path(d.dir) / "manifest.json");
  if (!mf) throw std::runtime_error(fmt::format("{}/manifest.json not found: not a directory written by `fetta gen`", dir));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(mf);
    d.top = j.at("top").get<std::string>();
    for (const auto& m : j.at("modules")) {
      DesignModule dm;
      dm.name = m.at("name").get<std::string>();
      dm.file = m.value("file", "");
      dm.generator = m.value("generator", "");
      if (m.contains("parameters"))
        for (const auto& [k, v] : m.at("parameters").items()) dm.parameters[k] = v.is_string() ? v.get<std::string>() : v.dump();
      d.modules.push_back(std::move(dm));
    }
    d.config = j.value("config", nlohmann::json::object());
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}/manifest.json is malformed: {}", dir, e.what()));
  }
  if (!d.find(d.top)) throw std::runtime_error(fmt::format("{}/manifest.json: top '{}' is not among its modules", dir, d.top));
  // Yosys scripts separate words by blanks: a path with one cannot be passed safely.
  for (const std::string& f : d.files)
    if (f.find_first_of(" \t\n\"';") != std::string::npos)
      throw std::runtime_error(fmt::format("RTL path '{}' contains a blank or quote; move the design elsewhere", f));
  return d;
}

std::vector<DesignModule> select_modules(const DesignDir& d, const std::string& spec) {
  if (spec == "all") return d.modules;
  if (spec == "top") return {*d.find(d.top)};
  std::vector<std::string> wanted;
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) wanted.push_back(item);
  if (wanted.empty()) throw std::invalid_argument("--modules: empty; allowed: all, top or a comma-separated list of modules");
  std::vector<std::string> names;
  for (const DesignModule& m : d.modules) names.push_back(m.name);
  for (const std::string& w : wanted)
    if (!d.find(w))
      throw std::invalid_argument(fmt::format("--modules: no module '{}' in {}; its modules: {}", w, d.dir,
                                              fmt::join(names, ", ")));
  std::vector<DesignModule> out;
  for (const DesignModule& m : d.modules)
    if (std::find(wanted.begin(), wanted.end(), m.name) != wanted.end()) out.push_back(m);
  return out;
}

}  // namespace fetta::flows::synth
