#include <fmt/core.h>

#include <algorithm>
#include <tuple>

#include "route/dist.hpp"
#include "two_sat.hpp"

namespace fetta::route {

DistControl DistControl::zero(const NetGeometry& g) {
  return {std::vector<uint8_t>(g.lanes(), 0),
          std::vector<std::vector<uint8_t>>(g.levels(), std::vector<uint8_t>(g.lanes(), 0))};
}

DistControl expand(const NetGeometry& g, const DistCheapControl& c) {
  DistControl d = DistControl::zero(g);
  std::fill(d.transpose.begin(), d.transpose.end(), c.transpose ? 1 : 0);
  for (int k = 0; k < g.levels(); ++k)
    for (int i = 0; i < g.lanes(); ++i)
      d.level[k][i] = ((c.sel_vec >> k) & 1u) ^ (((c.idx_mask >> k) & 1u) & ((static_cast<unsigned>(i) >> k) & 1u));
  return d;
}

namespace {

void check_control(const NetGeometry& g, const DistControl& c) {
  if (static_cast<int>(c.transpose.size()) != g.lanes() || static_cast<int>(c.level.size()) != g.levels())
    throw std::invalid_argument(fmt::format("DistControl: need transpose[{}] and level[{}][{}] for {}", g.lanes(),
                                            g.levels(), g.lanes(), g.str()));
  for (const auto& l : c.level)
    if (static_cast<int>(l.size()) != g.lanes())
      throw std::invalid_argument(fmt::format("DistControl: every level needs {} bits", g.lanes()));
}

void check_map(const NetGeometry& g, const LaneMap& map) {
  if (static_cast<int>(map.size()) != g.lanes())
    throw std::invalid_argument(
        fmt::format("lane map: has {} entries, the network has {} output lanes", map.size(), g.lanes()));
  for (size_t o = 0; o < map.size(); ++o)
    if (map[o] < -1 || map[o] >= g.lanes())
      throw std::invalid_argument(fmt::format("lane map: output {} asks for input {}; allowed: -1 (don't care) or 0..{}",
                                              o, map[o], g.lanes() - 1));
}

// One request: output `out` takes input `src`, entering the butterfly at lane `q` (src itself,
// or partner(src) when the transpose mux at q takes its partner).
struct Path {
  int out, src, q;
};

unsigned low_mask(int k) { return (2u << k) - 1; }  // bits 0..k

// The first stage where the paths of a and b need one node to carry different inputs, or none.
std::optional<DistConflict> conflict(const Path& a, const Path& b) {
  if (a.src == b.src) return std::nullopt;  // the same value may share nodes
  if (a.q == b.q) return DistConflict{-1, a.q, a.out, a.src, b.out, b.src};
  // After level k a path sits at (out & bits 0..k) | (q & bits above k): the two coincide from
  // level msb(q_a ^ q_b) on, as long as their outputs agree below lsb(out_a ^ out_b).
  int k = highest_set_bit(static_cast<unsigned>(a.q ^ b.q));
  if (k >= lowest_set_bit(static_cast<unsigned>(a.out ^ b.out))) return std::nullopt;
  int node = static_cast<int>((static_cast<unsigned>(a.out) & low_mask(k)) | (static_cast<unsigned>(a.q) & ~low_mask(k)));
  return DistConflict{k, node, a.out, a.src, b.out, b.src};
}

bool earlier(const DistConflict& x, const DistConflict& y) {
  return std::tie(x.stage, x.node, x.out_a, x.out_b) < std::tie(y.stage, y.node, y.out_a, y.out_b);
}

std::optional<DistConflict> first_conflict(const std::vector<Path>& paths) {
  std::optional<DistConflict> best;
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = i + 1; j < paths.size(); ++j)
      if (auto c = conflict(paths[i], paths[j]); c && (!best || earlier(*c, *best))) best = c;
  return best;
}

DistControl control_for(const NetGeometry& g, const std::vector<Path>& paths) {
  DistControl c = DistControl::zero(g);
  for (const Path& p : paths) {
    if (p.q != p.src) c.transpose[p.q] = 1;
    for (int k = 0; k < g.levels(); ++k) {
      unsigned node = (static_cast<unsigned>(p.out) & low_mask(k)) | (static_cast<unsigned>(p.q) & ~low_mask(k));
      c.level[k][node] = ((p.out ^ p.q) >> k) & 1;
    }
  }
  return c;
}

std::string stage_name(int stage) {
  return stage < 0 ? std::string("the transpose level") : fmt::format("butterfly level {} (lane XOR {})", stage, 1 << stage);
}

}  // namespace

std::vector<uint64_t> simulate_dist(const NetGeometry& g, const DistControl& c, const std::vector<uint64_t>& in) {
  check_control(g, c);
  if (static_cast<int>(in.size()) != g.lanes())
    throw std::invalid_argument(fmt::format("simulate_dist: {} inputs for {} lanes", in.size(), g.lanes()));
  std::vector<uint64_t> v(g.lanes());
  for (int i = 0; i < g.lanes(); ++i) v[i] = in[c.transpose[i] ? g.partner(i) : i];
  for (int k = 0; k < g.levels(); ++k) {
    std::vector<uint64_t> next(g.lanes());
    for (int i = 0; i < g.lanes(); ++i) next[i] = v[c.level[k][i] ? (i ^ (1 << k)) : i];
    v = std::move(next);
  }
  return v;
}

std::vector<int> dist_sources(const NetGeometry& g, const DistControl& c) {
  std::vector<uint64_t> id(g.lanes());
  for (int i = 0; i < g.lanes(); ++i) id[i] = static_cast<uint64_t>(i);
  std::vector<uint64_t> out = simulate_dist(g, c, id);
  return std::vector<int>(out.begin(), out.end());
}

bool satisfies(const LaneMap& map, const std::vector<int>& sources) {
  if (map.size() != sources.size()) return false;
  for (size_t o = 0; o < map.size(); ++o)
    if (map[o] >= 0 && map[o] != sources[o]) return false;
  return true;
}

DistRoute route_dist(const NetGeometry& g, const LaneMap& map) {
  check_map(g, map);
  // Requests, and for each the two ways in: untransposed (q = src) or through the transpose
  // partner (q = partner(src)); diagonal lanes have only the first.
  std::vector<Path> plain, transposed;
  for (int o = 0; o < g.lanes(); ++o)
    if (map[o] >= 0) {
      plain.push_back({o, map[o], map[o]});
      transposed.push_back({o, map[o], g.partner(map[o])});
    }
  DistRoute r;
  auto plain_conflict = first_conflict(plain);
  if (!plain_conflict) {
    r.routable = true;
    r.control = control_for(g, plain);
    return r;
  }
  const int n = static_cast<int>(plain.size());
  auto option = [&](int i, bool t) -> const Path& { return t ? transposed[i] : plain[i]; };
  detail::TwoSat sat(n);
  for (int i = 0; i < n; ++i) {
    if (transposed[i].q == plain[i].q) sat.forbid(i, true, i, true);  // no second way in
    for (int j = i + 1; j < n; ++j)
      for (int ti = 0; ti < 2; ++ti)
        for (int tj = 0; tj < 2; ++tj)
          if (conflict(option(i, ti), option(j, tj))) sat.forbid(i, ti, j, tj);
  }
  if (auto x = sat.solve()) {
    std::vector<Path> chosen;
    for (int i = 0; i < n; ++i) chosen.push_back(option(i, (*x)[i]));
    r.routable = true;
    r.control = control_for(g, chosen);
    return r;
  }
  const DistConflict& c = *plain_conflict;
  r.conflict = c;
  r.message = fmt::format(
      "distribution pattern blocked ({}): at {}, output lane {} (wants input {}) and output lane {} (wants input {}) "
      "both need the mux output of lane {}; no setting of the transpose level avoids every such conflict",
      g.str(), stage_name(c.stage), c.out_a, c.in_a, c.out_b, c.in_b, c.node);
  return r;
}

DistControl route_dist_or_throw(const NetGeometry& g, const LaneMap& map) {
  DistRoute r = route_dist(g, map);
  if (!r.routable) throw RouteError(r.message);
  return r.control;
}

std::optional<DistCheapControl> route_dist_cheap(const NetGeometry& g, const LaneMap& map) {
  check_map(g, map);
  // Bit k of the lane entering the butterfly is either a constant (idx_mask[k] = 1) or the
  // output's bit k flipped by a constant (idx_mask[k] = 0): check each bit on its own.
  for (int t = 0; t < 2; ++t) {
    DistCheapControl c;
    c.transpose = t == 1;
    bool ok = true;
    for (int k = 0; k < g.levels() && ok; ++k) {
      bool can_flip = true, can_const = true;
      int flip = -1, konst = -1;
      for (int o = 0; o < g.lanes(); ++o) {
        if (map[o] < 0) continue;
        // Entering lane q with transpose: the mux at q takes partner(q) == src, so q = partner(src).
        int q = c.transpose ? g.partner(map[o]) : map[o];
        int qk = (q >> k) & 1, ok_ = (o >> k) & 1;
        if (flip < 0) flip = qk ^ ok_;
        if (konst < 0) konst = qk;
        can_flip = can_flip && flip == (qk ^ ok_);
        can_const = can_const && konst == qk;
      }
      if (flip < 0) continue;  // nothing cared: leave the level at 0
      if (can_flip) {
        c.sel_vec |= static_cast<uint32_t>(flip) << k;
      } else if (can_const) {
        c.idx_mask |= 1u << k;
        c.sel_vec |= static_cast<uint32_t>(konst) << k;
      } else {
        ok = false;
      }
    }
    if (ok) return c;
  }
  return std::nullopt;
}

}  // namespace fetta::route
