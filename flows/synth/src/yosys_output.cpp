#include "flows/yosys_output.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "flows/run.hpp"

namespace fetta::flows::synth {

namespace {

// A Yosys constant: plain decimal ("32") or sized binary ("32'00000000000000000000000000100000").
long long parse_yosys_int(const std::string& v) {
  size_t q = v.find('\'');
  if (q == std::string::npos) return std::stoll(v);
  long long x = 0;
  for (size_t i = q + 1; i < v.size(); ++i) {
    if (v[i] != '0' && v[i] != '1') break;
    x = x * 2 + (v[i] - '0');
  }
  return x;
}

}  // namespace

std::vector<bool> yosys_const_bits(const std::string& v) {
  std::vector<bool> out;
  size_t q = v.find('\'');
  if (q == std::string::npos) {  // a plain integer
    unsigned long long x = v.empty() || v[0] == '-' ? 0 : std::stoull(v);
    for (; x != 0; x >>= 1) out.push_back((x & 1) != 0);
    return out;
  }
  for (size_t i = v.size(); i > q + 1; --i) {  // the last digit is bit 0
    char c = v[i - 1];
    if (c != '0' && c != '1' && c != 'x' && c != 'z') break;
    out.push_back(c == '1');
  }
  return out;
}

StatResult parse_stat(const std::string& text) {
  StatResult r;
  static const std::regex cells_re(R"(^\s*Number of cells:\s+(\d+))");
  static const std::regex cell_re(R"(^\s+(\S+)\s+(\d+)\s*$)");
  static const std::regex area_re(R"(^\s*Chip area for (?:module|top module) '[^']*':\s+([0-9.eE+-]+))");
  static const std::regex unknown_re(R"(^\s*Area for cell type (\S+) is unknown!)");
  bool in_cells = false;
  int sections = 0;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (line.rfind("===", 0) == 0) {
      // Only the first module section: the flows flatten, so there is one.
      if (++sections > 1) break;
      continue;
    }
    if (std::regex_search(line, m, cells_re)) {
      r.total_cells = std::stoll(m[1]);
      in_cells = true;
      continue;
    }
    if (in_cells) {
      if (std::regex_match(line, m, cell_re)) {
        std::string type = m[1];
        if (!type.empty() && type[0] == '\\') type = type.substr(1);  // a user cell (an SRAM macro)
        r.cells[type] += std::stoll(m[2]);
        continue;
      }
      in_cells = false;
    }
    if (std::regex_search(line, m, area_re)) r.chip_area = std::stod(m[1]);
    if (std::regex_search(line, m, unknown_re)) {
      std::string type = m[1];
      r.unknown_area.push_back(!type.empty() && type[0] == '\\' ? type.substr(1) : type);
    }
  }
  return r;
}

std::optional<double> parse_abc_delay_ps(const std::string& log) {
  static const std::regex delay_re(R"(Delay\s*=\s*([0-9.]+)\s*ps)");
  std::optional<double> worst;
  for (const std::string& line : lines_of(log)) {
    std::smatch m;
    if (line.find("WireLoad") != std::string::npos && std::regex_search(line, m, delay_re)) {
      double d = std::stod(m[1]);
      if (!worst || d > *worst) worst = d;
    }
  }
  return worst;
}

std::string parse_dfflibmap_cell(const std::string& log, const std::string& yosys_type) {
  // "  cell DFFHQNx1_ASAP7_75t_R (inv, pins=3, area=0.29) is a direct match for cell type $_DFF_P_."
  const std::string tail = "is a direct match for cell type " + yosys_type + ".";
  for (const std::string& line : lines_of(log)) {
    size_t t = line.find(tail);
    if (t == std::string::npos) continue;
    size_t c = line.find("cell ");
    if (c == std::string::npos) continue;
    size_t s = c + 5, e = line.find(' ', s);
    return line.substr(s, e - s);
  }
  return {};
}

std::vector<MemoryMacro> parse_memory_dump(const std::string& text) {
  std::vector<MemoryMacro> out;
  static const std::regex cell_re(R"(^\s*cell \$mem(?:_v2)? (\S+))");
  static const std::regex param_re(R"(^\s*parameter \\(\w+) (\S+))");
  static const std::regex connect_re(R"(^\s*connect \\(\w+) (.*\S)\s*$)");
  // The bits of a Yosys constant ("2'10", "16'x"); a plain integer ("1") has no bits listed.
  auto bits = [](const std::string& v) {
    size_t q = v.find('\'');
    return q == std::string::npos ? std::string() : v.substr(q + 1);
  };
  auto all_of = [&](const std::string& v, char c) {
    std::string b = bits(v);
    if (b.empty()) return (c == '0' && v == "0") || (c == '1' && v == "1");
    return std::all_of(b.begin(), b.end(), [c](char x) { return x == c; });
  };
  bool in_mem = false;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_search(line, m, cell_re)) {
      MemoryMacro mm;
      std::string name = m[1];
      mm.name = !name.empty() && name[0] == '\\' ? name.substr(1) : name;
      out.push_back(mm);
      in_mem = true;
      continue;
    }
    if (line.find("cell ") != std::string::npos || line.rfind("module", 0) == 0) in_mem = false;
    if (!in_mem) continue;
    MemoryMacro& mm = out.back();
    if (std::regex_search(line, m, param_re)) {
      const std::string key = m[1], value = m[2];
      if (key == "WIDTH") mm.width = static_cast<int>(parse_yosys_int(value));
      else if (key == "SIZE") mm.depth = static_cast<int>(parse_yosys_int(value));
      else if (key == "ABITS") mm.abits = static_cast<int>(parse_yosys_int(value));
      else if (key == "RD_PORTS") mm.rd_ports = static_cast<int>(parse_yosys_int(value));
      else if (key == "WR_PORTS") mm.wr_ports = static_cast<int>(parse_yosys_int(value));
      else if (key == "RD_CLK_ENABLE" || key == "RD_CLK_POLARITY") mm.sync_read = mm.sync_read && all_of(value, '1');
      else if (key == "RD_TRANSPARENCY_MASK") mm.read_first = all_of(value, '0');
      else if (key == "RD_COLLISION_X_MASK") mm.never_together = yosys_const_bits(value);
      else if (key == "RD_WIDE_CONTINUATION") mm.plain_read = mm.plain_read && all_of(value, '0');
      else if (key == "WR_CLK_ENABLE" || key == "WR_CLK_POLARITY") mm.plain_write = mm.plain_write && all_of(value, '1');
      else if (key == "WR_WIDE_CONTINUATION") mm.plain_write = mm.plain_write && all_of(value, '0');
      else if (key == "INIT") mm.initialized = !all_of(value, 'x');
      else if (key == "OFFSET") mm.plain_read = mm.plain_read && parse_yosys_int(value) == 0;
    } else if (std::regex_search(line, m, connect_re)) {
      const std::string key = m[1], value = m[2];
      if (key == "RD_ARST" || key == "RD_SRST") mm.plain_read = mm.plain_read && all_of(value, '0');
    }
  }
  return out;
}

Warnings split_warnings(const std::string& log) {
  Warnings w;
  std::set<std::string> seen;
  for (const std::string& line : lines_of(log)) {
    if (line.rfind("Warning:", 0) != 0) continue;
    if (line.find("Found unsupported expression") != std::string::npos &&
        line.find("in pin attribute of cell") != std::string::npos) {
      ++w.scan_flop_skipped;
      continue;
    }
    if (seen.insert(line).second) w.kept.push_back(line);
  }
  return w;
}

NextpnrReport parse_nextpnr_report(const std::string& json_text) {
  NextpnrReport r;
  nlohmann::json j = nlohmann::json::parse(json_text);
  if (j.contains("fmax"))
    for (const auto& [clock, v] : j.at("fmax").items()) {
      double achieved = v.value("achieved", 0.0);
      if (!r.fmax_mhz || achieved < *r.fmax_mhz) {  // several clocks: the slowest bounds the design
        r.fmax_mhz = achieved;
        r.constraint_mhz = v.value("constraint", 0.0);
        r.clock = clock;
      }
    }
  if (j.contains("utilization"))
    for (const auto& [bel, v] : j.at("utilization").items())
      r.utilisation[bel] = {v.value("used", 0LL), v.value("available", 0LL)};
  return r;
}

std::map<std::string, std::pair<long long, long long>> parse_nextpnr_utilisation(const std::string& log) {
  std::map<std::string, std::pair<long long, long long>> out;
  static const std::regex re(R"(^Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%)");
  for (const std::string& line : lines_of(log)) {
    std::smatch m;
    if (std::regex_search(line, m, re)) out[m[1]] = {std::stoll(m[2]), std::stoll(m[3])};
  }
  return out;
}

}  // namespace fetta::flows::synth
