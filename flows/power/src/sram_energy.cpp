#include "flows/sram_energy.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace fetta::flows::power {

MacroShape macro_shape(const std::string& cell) {
  static const std::regex name_re(R"(fetta_sram_w(\d+)_d(\d+)_((?:\d+(?:rw|r|w))+))");
  std::smatch m;
  if (!std::regex_match(cell, m, name_re))
    throw std::invalid_argument(fmt::format("{}: not an SRAM macro of the flow (fetta_sram_w<width>_d<depth>_<ports>)", cell));
  MacroShape s;
  s.width = std::stoi(m[1]);
  s.depth = std::stoi(m[2]);
  s.ports = m[3];
  static const std::regex port_re(R"((\d+)(rw|r|w))");
  for (auto it = std::sregex_iterator(s.ports.begin(), s.ports.end(), port_re); it != std::sregex_iterator(); ++it) {
    const int n = std::stoi((*it)[1]);
    const std::string kind = (*it)[2];
    (kind == "rw" ? s.rw : kind == "r" ? s.rd : s.wr) += n;
  }
  if (s.width < 1 || s.depth < 1 || s.rd + s.rw < 1)
    throw std::invalid_argument(fmt::format("{}: an SRAM macro needs a width, a depth and a read port", cell));
  return s;
}

namespace {

// The table's column for a macro's ports: its own, else the one with as many physical ports.
std::string column_for(const MacroShape& s, bool& exact) {
  for (const CactiPoint& p : cacti_sram_table())
    if (s.ports == p.ports) {
      exact = true;
      return s.ports;
    }
  exact = false;
  const int physical = s.rd + s.wr + s.rw;
  if (physical <= 1) return "1rw";
  if (physical == 2) return s.rw > 0 ? "1r1rw" : "1r1w";
  return "2r1w";
}

}  // namespace

AccessEnergy access_energy(const MacroShape& s, const SramEnergyModel& m) {
  bool exact_column = false;
  const std::string column = column_for(s, exact_column);
  std::map<std::pair<int, int>, const CactiPoint*> grid;  // (log2 width, log2 depth)
  int lw_min = std::numeric_limits<int>::max(), lw_max = 0, ld_min = std::numeric_limits<int>::max(), ld_max = 0;
  for (const CactiPoint& p : cacti_sram_table()) {
    if (column != p.ports) continue;
    const int lw = static_cast<int>(std::lround(std::log2(p.width))), ld = static_cast<int>(std::lround(std::log2(p.depth)));
    grid[{lw, ld}] = &p;
    lw_min = std::min(lw_min, lw), lw_max = std::max(lw_max, lw);
    ld_min = std::min(ld_min, ld), ld_max = std::max(ld_max, ld);
  }
  if (grid.empty()) throw std::logic_error("the CACTI SRAM table has no column " + column);
  const double x = std::log2(s.width), y = std::log2(s.depth);
  const double cx = std::clamp(x, double(lw_min), double(lw_max)), cy = std::clamp(y, double(ld_min), double(ld_max));
  const int x0 = std::min(static_cast<int>(std::floor(cx)), lw_max - 1), y0 = std::min(static_cast<int>(std::floor(cy)), ld_max - 1);
  const auto c00 = grid.find({x0, y0}), c10 = grid.find({x0 + 1, y0}), c01 = grid.find({x0, y0 + 1}),
             c11 = grid.find({x0 + 1, y0 + 1});
  AccessEnergy e;
  e.outside = !exact_column || cx != x || cy != y;
  const auto end = grid.end();
  if (c00 != end && c10 != end && c01 != end && c11 != end) {
    const double fx = cx - x0, fy = cy - y0;
    auto bilinear = [&](double CactiPoint::*field) {
      auto l = [&](const auto& it) { return std::log(it->second->*field); };
      return std::exp((1 - fx) * (1 - fy) * l(c00) + fx * (1 - fy) * l(c10) + (1 - fx) * fy * l(c01) + fx * fy * l(c11));
    };
    e.read_pj = bilinear(&CactiPoint::read_pj);
    e.write_pj = bilinear(&CactiPoint::write_pj);
    const bool on_point = fx == 0 && fy == 0;
    e.basis = on_point ? fmt::format("CACTI {} w{} d{}", column, c00->second->width, c00->second->depth)
                       : fmt::format("CACTI {} between w{}..{} d{}..{}", column, c00->second->width, c11->second->width,
                                     c00->second->depth, c11->second->depth);
  } else {  // a corner CACTI found no organization for (the smallest arrays): the nearest point
    const CactiPoint* best = nullptr;
    double best_d = std::numeric_limits<double>::max();
    for (const auto& [k, p] : grid) {
      const double d = std::hypot(k.first - x, k.second - y);
      if (d < best_d) best_d = d, best = p;
    }
    e.read_pj = best->read_pj;
    e.write_pj = best->write_pj;
    e.basis = fmt::format("CACTI {} w{} d{} (nearest)", column, best->width, best->depth);
    e.outside = e.outside || best->width != s.width || best->depth != s.depth;
  }
  if (!exact_column) e.basis += fmt::format(" for ports {}", s.ports);
  e.read_pj *= m.scale();
  e.write_pj *= m.scale();
  return e;
}

std::string block_of(const std::string& instance, int depth) {
  const size_t last = instance.rfind('.');
  if (last == std::string::npos) return "(top)";
  const std::string parent = instance.substr(0, last);
  size_t at = 0;
  for (int i = 0; i < depth; ++i) {
    at = parent.find('.', at);
    if (at == std::string::npos) return parent;
    if (i + 1 < depth) ++at;
  }
  return parent.substr(0, at);
}

std::vector<std::string> dump_connection_bits(const std::string& value) {
  std::vector<std::string> bits;
  std::istringstream in(value);
  std::vector<std::string> tokens;
  for (std::string t; in >> t;)
    if (t != "{" && t != "}") tokens.push_back(t);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t[0] == '\\' || t[0] == '$') {
      std::string name = t[0] == '\\' ? t.substr(1) : t;
      if (i + 1 < tokens.size() && tokens[i + 1][0] == '[') name += tokens[++i];  // `\net [3]`
      bits.push_back(name);
    } else if (const size_t q = t.find('\''); q != std::string::npos) {
      for (size_t k = q + 1; k < t.size(); ++k) bits.push_back(std::string("'") + t[k]);
    }
  }
  return bits;
}

SramAccesses sram_accesses(const std::string& dump_text, const Activity& a, const SramEnergyModel& m) {
  std::unordered_map<std::string, double> duty;
  duty.reserve(a.bits.size());
  for (const BitActivity& b : a.bits) duty.emplace(b.name, b.duty);
  const auto cycles = static_cast<double>(a.cycles);
  SramAccesses out;
  static const std::regex cell_re(R"(^\s*cell \\?(fetta_sram_\S+) \\?(\S+))");
  static const std::regex conn_re(R"(^\s*connect \\(\S+) (.*)$)");
  static const std::regex enable_re(R"((rd|rw)\d+_en)"), mask_re(R"((wr|rw)\d+_mask)");
  MacroAccesses* cur = nullptr;
  std::stringstream ss(dump_text);
  for (std::string line; std::getline(ss, line);) {
    std::smatch mm;
    if (std::regex_search(line, mm, cell_re)) {
      out.macros.emplace_back();
      cur = &out.macros.back();
      cur->cell = mm[1];
      cur->instance = mm[2];
      const MacroShape shape = macro_shape(cur->cell);
      cur->width = shape.width;
      cur->energy = access_energy(shape, m);
      continue;
    }
    if (!cur || !std::regex_search(line, mm, conn_re)) continue;
    const std::string port = mm[1];
    const bool enable = std::regex_match(port, enable_re), mask = std::regex_match(port, mask_re);
    if (!enable && !mask) continue;
    for (const std::string& bit : dump_connection_bits(mm[2])) {
      std::vector<double> duties;
      if (bit[0] == '\'') {
        duties.push_back(bit == "'1" ? 1 : 0);
      } else if (const auto it = duty.find(bit); it != duty.end()) {
        duties.push_back(it->second);
      } else {  // a whole bus ("\\mask"): its bits as the trace names them
        for (int i = 0;; ++i) {
          const auto b = duty.find(fmt::format("{}[{}]", bit, i));
          if (b == duty.end()) break;
          duties.push_back(b->second);
        }
      }
      cur->nets += std::max<int>(1, static_cast<int>(duties.size()));
      cur->nets_found += static_cast<int>(duties.size());
      for (double d : duties) (enable ? cur->reads : cur->bits_written) += d * cycles;
    }
  }
  for (MacroAccesses& x : out.macros) {
    x.joules = (x.reads * x.energy.read_pj + x.bits_written / x.width * x.energy.write_pj) * 1e-12;
    out.joules += x.joules;
    out.nets += x.nets;
    out.nets_found += x.nets_found;
    out.outside += x.energy.outside ? 1 : 0;
  }
  return out;
}

}  // namespace fetta::flows::power
