#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "route/red.hpp"
#include "two_sat.hpp"

namespace fetta::route {

const char* to_string(SwitchMode m) {
  switch (m) {
    case SwitchMode::pass: return "pass";
    case SwitchMode::swap: return "swap";
    case SwitchMode::add_left: return "add_left";
    case SwitchMode::add_right: return "add_right";
  }
  return "?";
}

int switch_left_lane(int j, int k) { return ((j >> k) << (k + 1)) | (j & ((1 << k) - 1)); }

RedControl RedControl::zero(const NetGeometry& g) {
  return {std::vector<std::vector<SwitchMode>>(g.levels(), std::vector<SwitchMode>(g.lanes() / 2, SwitchMode::pass)),
          std::vector<uint8_t>(g.lanes(), 0)};
}

std::vector<uint64_t> simulate_red(const NetGeometry& g, const RedControl& c, const std::vector<uint64_t>& in,
                                   const AddFn& add) {
  if (static_cast<int>(in.size()) != g.lanes() || static_cast<int>(c.level.size()) != g.levels() ||
      static_cast<int>(c.transpose.size()) != g.lanes())
    throw std::invalid_argument(fmt::format("simulate_red: need {} inputs, level[{}][{}] and transpose[{}] for {}",
                                            g.lanes(), g.levels(), g.lanes() / 2, g.lanes(), g.str()));
  std::vector<uint64_t> v = in;
  for (int k = 0; k < g.levels(); ++k) {
    if (static_cast<int>(c.level[k].size()) != g.lanes() / 2)
      throw std::invalid_argument(fmt::format("simulate_red: level {} needs {} switch modes", k, g.lanes() / 2));
    std::vector<uint64_t> next(v.size());
    for (int j = 0; j < g.lanes() / 2; ++j) {
      const int l = switch_left_lane(j, k), r = l | (1 << k);
      SwitchMode mode = c.level[k][j];
      // A switch without an adder reads the low mode bit alone: add_left passes, add_right swaps.
      if (k < g.red_first_add_level()) mode = static_cast<SwitchMode>(static_cast<int>(mode) & 1);
      switch (mode) {
        case SwitchMode::pass: next[l] = v[l], next[r] = v[r]; break;
        case SwitchMode::swap: next[l] = v[r], next[r] = v[l]; break;
        case SwitchMode::add_left: next[l] = add(v[l], v[r]), next[r] = 0; break;
        case SwitchMode::add_right: next[l] = 0, next[r] = add(v[l], v[r]); break;
      }
    }
    v = std::move(next);
  }
  std::vector<uint64_t> out(v.size());
  for (int i = 0; i < g.lanes(); ++i) out[i] = v[c.transpose[i] ? g.partner(i) : i];
  return out;
}

uint64_t evaluate(const GroupTree& t, const std::vector<uint64_t>& in, const AddFn& add) {
  std::vector<uint64_t> node(t.adds.size());
  auto value = [&](const TreeRef& r) { return r.is_node ? node.at(r.index) : in.at(r.index); };
  for (size_t i = 0; i < t.adds.size(); ++i) node[i] = add(value(t.adds[i].left), value(t.adds[i].right));
  return value(t.result);
}

namespace {

void check_groups(const NetGeometry& g, const std::vector<ReduceGroup>& groups) {
  std::vector<int> owner(g.lanes(), -1), out_owner(g.lanes(), -1);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const ReduceGroup& grp = groups[gi];
    if (grp.lanes.empty()) throw std::invalid_argument(fmt::format("reduction group {}: has no lanes", gi));
    if (grp.out < 0 || grp.out >= g.lanes())
      throw std::invalid_argument(
          fmt::format("reduction group {}: output lane {} out of range; allowed: 0..{}", gi, grp.out, g.lanes() - 1));
    if (out_owner[grp.out] >= 0)
      throw std::invalid_argument(fmt::format("reduction groups {} and {}: both deliver to output lane {}",
                                              out_owner[grp.out], gi, grp.out));
    out_owner[grp.out] = static_cast<int>(gi);
    for (int lane : grp.lanes) {
      if (lane < 0 || lane >= g.lanes())
        throw std::invalid_argument(
            fmt::format("reduction group {}: input lane {} out of range; allowed: 0..{}", gi, lane, g.lanes() - 1));
      if (owner[lane] >= 0)
        throw std::invalid_argument(
            fmt::format("reduction groups {} and {}: both contain input lane {}", owner[lane], gi, lane));
      owner[lane] = static_cast<int>(gi);
    }
  }
}

unsigned low_mask(int k) { return (2u << k) - 1; }  // bits 0..k

// The partial sums of group a and b first share bits above level k at k = min msb(i ^ j) over
// members i of a and j of b; they collide after that level iff their targets agree on bits 0..k.
struct PairInfo {
  int level;  // min msb(i ^ j)
  int in_a, in_b;
};
PairInfo pair_info(const ReduceGroup& a, const ReduceGroup& b) {
  PairInfo p{99, 0, 0};
  for (int i : a.lanes)
    for (int j : b.lanes)
      if (int m = highest_set_bit(static_cast<unsigned>(i ^ j)); m < p.level) p = {m, i, j};
  return p;
}

bool collide(const NetGeometry& g, const PairInfo& p, int qa, int qb) {
  int agree = qa == qb ? g.levels() : lowest_set_bit(static_cast<unsigned>(qa ^ qb));
  return p.level < agree;
}

// The switch modes and the add tree of one group routed to butterfly output lane q.
GroupTree route_group(const NetGeometry& g, const ReduceGroup& grp, int q, RedControl& c) {
  GroupTree t;
  // Items keyed by the bits of their members at and above the current level.
  std::map<unsigned, TreeRef> items;
  for (int lane : grp.lanes) items[static_cast<unsigned>(lane)] = TreeRef{false, lane};
  const unsigned uq = static_cast<unsigned>(q);
  for (int k = 0; k < g.levels(); ++k) {
    std::map<unsigned, TreeRef> next;
    for (auto it = items.begin(); it != items.end();) {
      const unsigned key = it->first;
      const unsigned lower = k == 0 ? 0u : (uq & ((1u << k) - 1));
      const unsigned pos = ((key << k) | lower);
      const int left = static_cast<int>(pos & ~(1u << k));
      const int j = ((left >> (k + 1)) << k) | (left & ((1 << k) - 1));
      const int qk = (q >> k) & 1;
      auto pair = std::next(it);
      if ((key & 1u) == 0 && pair != items.end() && pair->first == (key | 1u)) {
        t.adds.push_back(AddNode{k, left, it->second, pair->second});
        c.level[k][j] = qk ? SwitchMode::add_right : SwitchMode::add_left;
        next[key >> 1] = TreeRef{true, static_cast<int>(t.adds.size()) - 1};
        it = std::next(pair);
      } else {
        c.level[k][j] = static_cast<int>(key & 1u) == qk ? SwitchMode::pass : SwitchMode::swap;
        next[key >> 1] = it->second;
        ++it;
      }
    }
    items = std::move(next);
  }
  t.result = items.begin()->second;
  return t;
}

}  // namespace

RedRoute route_red(const NetGeometry& g, const std::vector<ReduceGroup>& groups) {
  check_groups(g, groups);
  const int n = static_cast<int>(groups.size());
  // Two members that agree on every bit from the first level with adders up meet below it.
  if (const int f = g.red_first_add_level(); f > 0)
    for (int a = 0; a < n; ++a) {
      std::map<int, int> seen;  // lane >> f -> member
      for (int lane : groups[a].lanes) {
        auto [it, fresh] = seen.emplace(lane >> f, lane);
        if (fresh) continue;
        RedRoute r;
        r.message = fmt::format(
            "reduction request unroutable ({}): group {} (to output lane {}) adds input lanes {} and {} at butterfly "
            "level {}, below level {}, the first with adders (levels 0 .. {} only pass or swap)",
            g.str(), a, groups[a].out, it->second, lane, highest_set_bit(static_cast<unsigned>(it->second ^ lane)), f,
            f - 1);
        return r;
      }
    }
  std::vector<std::vector<PairInfo>> info(n, std::vector<PairInfo>(n));
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) info[a][b] = pair_info(groups[a], groups[b]);
  // Each group leaves the butterfly at its output lane, or at the partner of it (then the
  // transpose mux of the output takes its partner).
  auto target = [&](int a, bool t) { return t ? g.partner(groups[a].out) : groups[a].out; };

  RedRoute r;
  std::optional<RedConflict> first;
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b)
      if (collide(g, info[a][b], target(a, false), target(b, false))) {
        const PairInfo& p = info[a][b];
        int lane = static_cast<int>((static_cast<unsigned>(target(a, false)) & low_mask(p.level)) |
                                    (static_cast<unsigned>(p.in_a) & ~low_mask(p.level)));
        RedConflict c{p.level, lane, a, b, p.in_a, p.in_b};
        if (!first || std::tie(c.level, c.lane, c.group_a, c.group_b) <
                          std::tie(first->level, first->lane, first->group_a, first->group_b))
          first = c;
      }
  std::vector<bool> choice(n, false);
  if (first) {
    detail::TwoSat sat(n);
    for (int a = 0; a < n; ++a) {
      if (target(a, true) == target(a, false)) sat.forbid(a, true, a, true);
      for (int b = a + 1; b < n; ++b)
        for (int ta = 0; ta < 2; ++ta)
          for (int tb = 0; tb < 2; ++tb)
            if (collide(g, info[a][b], target(a, ta), target(b, tb))) sat.forbid(a, ta, b, tb);
    }
    auto x = sat.solve();
    if (!x) {
      const RedConflict& c = *first;
      r.conflict = c;
      r.message = fmt::format(
          "reduction request unroutable ({}): after butterfly level {}, the partial sum of group {} (input lanes "
          "including {}, to output lane {}) and that of group {} (including {}, to output lane {}) both need lane {}; "
          "no setting of the transpose level avoids every such conflict",
          g.str(), c.level, c.group_a, c.in_a, groups[c.group_a].out, c.group_b, c.in_b, groups[c.group_b].out, c.lane);
      return r;
    }
    choice = *x;
  }
  r.routable = true;
  r.control = RedControl::zero(g);
  for (int a = 0; a < n; ++a) {
    const int q = target(a, choice[a]);
    r.trees.push_back(route_group(g, groups[a], q, r.control));
    if (q != groups[a].out) r.control.transpose[groups[a].out] = 1;
  }
  return r;
}

RedRoute route_red_or_throw(const NetGeometry& g, const std::vector<ReduceGroup>& groups) {
  RedRoute r = route_red(g, groups);
  if (!r.routable) throw RouteError(r.message);
  return r;
}

}  // namespace fetta::route
