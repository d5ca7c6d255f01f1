// A test-only module that puts the hw/arith/prefix.hpp building blocks of one carry-network kind
// side by side at several widths, so that one Verilated model checks them all against `+`:
// for each width W, `sum_wW`/`cout_wW` = a + b + cin, `nsum_wW`/`ncout_wW` = a + b (no carry
// in), `csum_wW`/`ccout_wW` and `csum1_wW`/`ccout1_wW` = the compound a + b and a + b + 1,
// `lz_wW` = leading zeros of a (all on the low W bits of the 64-bit inputs a, b).
#pragma once

#include <fmt/core.h>

#include <vector>

#include "hw/arith/prefix.hpp"
#include "rtl_gen/rtl.hpp"

namespace arith_test {

// Widths that exercise every shape of the networks: 1 (no levels), odd sizes, powers of two and
// their neighbours, and the datapath widths of the adders (8, 24, 25).
inline const std::vector<int>& prefix_unit_widths() {
  static const std::vector<int> w{1, 2, 3, 5, 8, 13, 16, 24, 25, 32, 33, 64};
  return w;
}

struct PrefixUnitsParams {
  fetta::hw::PrefixKind kind = fetta::hw::PrefixKind::sklansky;
};

class PrefixUnits : public fetta::rtl::Generator<PrefixUnitsParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "arith_test::PrefixUnits"; }
  std::string module_name() const override { return "prefix_units_" + fetta::hw::prefix_tag(p.kind); }
  fetta::rtl::ParamList params() const override { return {{"kind", fetta::hw::prefix_name(p.kind)}}; }
  void build(fetta::rtl::Module& m) const override {
    using namespace fetta::rtl;
    using namespace fetta::hw;
    Sig a = m.input("a", UInt(64));
    Sig b = m.input("b", UInt(64));
    Sig cin = m.input("cin", UInt(1));
    for (int w : prefix_unit_widths()) {
      Sig aw = m.node(fmt::format("a_w{}", w), a.bits(w - 1, 0));
      Sig bw = m.node(fmt::format("b_w{}", w), b.bits(w - 1, 0));
      auto out = [&](const std::string& n, const Expr& v) { m.output(fmt::format("{}_w{}", n, w), UInt(v.width())).sig() <<= v; };
      PrefixSum s = prefix_add(m, fmt::format("add_w{}", w), aw, bw, cin, p.kind);
      out("sum", s.sum);
      out("cout", s.carry);
      PrefixSum n = prefix_add(m, fmt::format("nadd_w{}", w), aw, bw, p.kind);
      out("nsum", n.sum);
      out("ncout", n.carry);
      CompoundSum c = compound_add(m, fmt::format("cadd_w{}", w), aw, bw, p.kind);
      out("csum", c.sum);
      out("ccout", c.carry);
      out("csum1", c.sum1);
      out("ccout1", c.carry1);
      out("lz", leading_zeros(m, fmt::format("lzc_w{}", w), aw));
    }
  }
};

}  // namespace arith_test
