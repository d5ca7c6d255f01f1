#include "hw/arith/prefix.hpp"

#include <fmt/core.h>

#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

namespace fetta::hw {

using namespace rtl;

namespace {

// The (position, partner) pairs each level of the carry network combines:
// G'[i] = G[i] | P[i] & G[j], P'[i] = P[i] & P[j], where j's span ends just below i's.
using Level = std::vector<std::pair<int, int>>;

std::vector<Level> prefix_levels(int n, PrefixKind kind) {
  std::vector<Level> levels;
  switch (kind) {
    case PrefixKind::kogge_stone:
      for (int d = 1; d < n; d *= 2) {
        Level l;
        for (int i = d; i < n; ++i) l.emplace_back(i, i - d);
        levels.push_back(l);
      }
      break;
    case PrefixKind::sklansky:
      for (int k = 0; (1 << k) < n; ++k) {
        Level l;
        for (int i = 0; i < n; ++i)
          if ((i >> k) & 1) l.emplace_back(i, ((i >> k) << k) - 1);
        levels.push_back(l);
      }
      break;
    case PrefixKind::brent_kung: {
      int top = 1;
      for (int d = 1; d < n; d *= 2) {  // up the tree: spans of 2d ending at 2d-1, 4d-1, ...
        Level l;
        for (int i = 2 * d - 1; i < n; i += 2 * d) l.emplace_back(i, i - d);
        if (!l.empty()) levels.push_back(l);
        top = d;
      }
      for (int d = top / 2; d >= 1; d /= 2) {  // down the tree: fill in the positions between
        Level l;
        for (int i = 3 * d - 1; i < n; i += 2 * d) l.emplace_back(i, i - d);
        if (!l.empty()) levels.push_back(l);
      }
      break;
    }
  }
  // Every position must end up spanning down to bit 0 through adjacent spans: a wrong network
  // is a generator bug, caught here rather than in simulation.
  std::vector<int> lo(n);
  for (int i = 0; i < n; ++i) lo[i] = i;
  for (const Level& l : levels) {
    std::vector<int> next = lo;
    for (auto [i, j] : l) {
      if (lo[i] != j + 1) throw std::logic_error(fmt::format("prefix network: {} and {} are not adjacent", i, j));
      next[i] = lo[j];
    }
    lo = next;
  }
  for (int i = 0; i < n; ++i)
    if (lo[i] != 0) throw std::logic_error(fmt::format("prefix network: bit {} does not reach bit 0", i));
  return levels;
}

struct GroupSignals {
  Sig g, p;  // after the last level: G[i:0] and P[i:0] (p only when asked for)
};

// A constant of `n` bits with the bits of `positions` set.
Expr mask_of(int n, const std::vector<int>& positions) {
  std::vector<Expr> bits(n, lit(0, 1));
  for (int i : positions) bits[n - 1 - i] = lit(1, 1);  // cat: MSB first
  return n == 1 ? bits[0] : cat(bits);
}

// For every (i, j) pair of a level, v[j] moved to position i, other positions 0: one masked
// shift per distinct distance i - j. Written a word at a time rather than a bit at a time, so
// that simulators see a few vector operations per level (the gates are the same).
Expr partner_bits(const Sig& v, const Level& level) {
  const int n = v.width();
  std::map<int, std::vector<int>> by_distance;
  for (auto [i, j] : level) by_distance[i - j].push_back(i);
  Expr out;
  for (const auto& [d, positions] : by_distance) {
    Expr term = (v << d) & mask_of(n, positions);
    out = out.valid() ? Expr(out | term) : term;
  }
  return out;
}

// Runs the carry network on the bit generate/propagate vectors (g0 with any carry in folded
// into bit 0): at every level G'[i] = G[i] | P[i] & G[j] and P'[i] = P[i] & P[j] for the level's
// pairs, the other positions unchanged. P of a span that reaches bit 0 is only kept when
// `need_p` (a compound adder); otherwise such positions read as 0 (nothing uses them).
GroupSignals carry_network(Module& m, const std::string& name, Sig g, Sig p, PrefixKind kind, bool need_p) {
  const int n = g.width();
  std::vector<int> lo(n);
  for (int i = 0; i < n; ++i) lo[i] = i;
  const auto levels = prefix_levels(n, kind);
  for (size_t k = 0; k < levels.size(); ++k) {
    std::vector<int> paired, keep_p;  // positions combined at this level; P positions still needed
    std::vector<int> next = lo;
    for (auto [i, j] : levels[k]) {
      paired.push_back(i);
      next[i] = lo[j];
    }
    for (int i = 0; i < n; ++i)
      if (need_p || next[i] != 0) keep_p.push_back(i);
    lo = next;
    Expr gp = partner_bits(g, levels[k]), pp = partner_bits(p, levels[k]);
    Expr unpaired = ~mask_of(n, paired);
    Sig g_next = m.node(fmt::format("{}_g{}", name, k + 1), g | (p & gp));
    // The last level's P is read only by a compound adder.
    if (need_p || k + 1 < levels.size())
      p = m.node(fmt::format("{}_p{}", name, k + 1), p & (pp | unpaired) & mask_of(n, keep_p));
    g = g_next;
  }
  return {g, p};
}

void check_operands(const std::string& name, const Expr& a, const Expr& b) {
  if (a.width() != b.width() || a.width() < 1 || a.is_signed() || b.is_signed())
    throw std::invalid_argument(fmt::format("prefix adder {}: operands must be UInt of one width >= 1, are {} and {} bits",
                                            name, a.width(), b.width()));
}

PrefixSum add_impl(Module& m, const std::string& name, const Expr& a, const Expr& b, const Expr* cin,
                   PrefixKind kind) {
  check_operands(name, a, b);
  prefix_tag(kind);  // refuses a kind outside the enum
  const int n = a.width();
  Sig gen = m.node(name + "_gen", a & b);
  Sig prop = m.node(name + "_prop", a ^ b);
  Sig g0 = gen;
  if (cin) {  // fold the carry in into bit 0's generate
    Expr bit0 = gen.bit(0) | (prop.bit(0) & *cin);
    g0 = m.node(name + "_g0", n == 1 ? bit0 : cat({gen.bits(n - 1, 1), bit0}));
  }
  GroupSignals gs = carry_network(m, name, g0, prop, kind, false);
  const Expr c0 = cin ? *cin : lit(0, 1);
  Sig carries = m.node(name + "_carries", n == 1 ? c0 : cat({gs.g.bits(n - 2, 0), c0}));
  return {m.node(name + "_sum", prop ^ carries), m.node(name + "_cout", gs.g.bit(n - 1))};
}

}  // namespace

std::string prefix_tag(PrefixKind kind, const std::string& what) {
  switch (kind) {
    case PrefixKind::kogge_stone: return "ks";
    case PrefixKind::sklansky: return "sk";
    case PrefixKind::brent_kung: return "bk";
  }
  throw std::invalid_argument(fmt::format("{} = {} is not a prefix adder; allowed: kogge_stone, sklansky, brent_kung",
                                          what, static_cast<int>(kind)));
}

std::string prefix_name(PrefixKind kind, const std::string& what) {
  const std::string tag = prefix_tag(kind, what);  // validates
  return tag == "ks" ? "kogge_stone" : tag == "sk" ? "sklansky" : "brent_kung";
}

PrefixSum prefix_add(Module& m, const std::string& name, const Expr& a, const Expr& b, const Expr& cin,
                     PrefixKind kind) {
  if (cin.width() != 1 || cin.is_signed())
    throw std::invalid_argument(fmt::format("prefix adder {}: the carry in must be UInt<1>", name));
  return add_impl(m, name, a, b, &cin, kind);
}

PrefixSum prefix_add(Module& m, const std::string& name, const Expr& a, const Expr& b, PrefixKind kind) {
  return add_impl(m, name, a, b, nullptr, kind);
}

CompoundSum compound_add(Module& m, const std::string& name, const Expr& a, const Expr& b, PrefixKind kind) {
  check_operands(name, a, b);
  prefix_tag(kind);  // refuses a kind outside the enum
  const int n = a.width();
  Sig gen = m.node(name + "_gen", a & b);
  Sig prop = m.node(name + "_prop", a ^ b);
  GroupSignals gs = carry_network(m, name, gen, prop, kind, true);
  CompoundSum s;
  Sig carries = m.node(name + "_carries", n == 1 ? lit(0, 1) : cat({gs.g.bits(n - 2, 0), lit(0, 1)}));
  s.sum = m.node(name + "_sum", prop ^ carries);
  s.carry = m.node(name + "_cout", gs.g.bit(n - 1));
  // With a carry in of one, the carry into bit i is G[i-1:0] | P[i-1:0].
  Sig carries1 = m.node(name + "_carries1",
                        n == 1 ? lit(1, 1) : cat({gs.g.bits(n - 2, 0) | gs.p.bits(n - 2, 0), lit(1, 1)}));
  s.sum1 = m.node(name + "_sum1", prop ^ carries1);
  s.carry1 = m.node(name + "_cout1", gs.g.bit(n - 1) | gs.p.bit(n - 1));
  return s;
}

Sig leading_zeros(Module& m, const std::string& name, const Expr& x) {
  if (x.width() < 1 || x.is_signed())
    throw std::invalid_argument(fmt::format("leading_zeros {}: the input must be UInt of width >= 1", name));
  const int n = x.width();
  int levels = 0;
  while ((1 << levels) < n + 1) ++levels;  // padded width 2^levels > n: a zero input counts n
  const int padded = 1 << levels;
  // Ones below the input stop the count at n; a constant the synthesis folds away.
  Sig v = m.node(name + "_in", cat({x, repl(lit(1, 1), padded - n)}));
  Sig c;
  for (int k = 1; k <= levels; ++k) {
    const int groups = padded >> k;
    std::vector<Expr> vb, cb;  // LSB group first
    for (int gi = 0; gi < groups; ++gi) {
      Expr vh = v.bit(2 * gi + 1), vl = v.bit(2 * gi);
      vb.push_back(vh | vl);
      if (k == 1) {
        cb.push_back(!vh);  // the upper bit of the pair is zero
      } else {
        Expr ch = c.bits((2 * gi + 2) * (k - 1) - 1, (2 * gi + 1) * (k - 1));
        Expr cl = c.bits((2 * gi + 1) * (k - 1) - 1, 2 * gi * (k - 1));
        cb.push_back(cat({!vh, mux(vh, ch, cl)}));
      }
    }
    std::vector<Expr> cm(cb.rbegin(), cb.rend()), vm(vb.rbegin(), vb.rend());
    c = m.node(fmt::format("{}_c{}", name, k), cat(cm));
    if (k < levels) v = m.node(fmt::format("{}_v{}", name, k), cat(vm));  // the top group always has a one
  }
  return c;
}

}  // namespace fetta::hw
