#include "flat.hpp"

#include <bit>

namespace nettest {

using namespace fetta::rtl;
using namespace fetta::hw;

namespace {

int log2i(int n) { return std::countr_zero(static_cast<unsigned>(n)); }

// dst = flat bus `bus` cut into `count` fields of `w` bits, field i at [i*w +: w].
Expr field(const Sig& bus, int i, int w) { return bus.bits(i * w + w - 1, i * w); }

// {vals[count-1], ..., vals[0]}: field i at [i*w +: w].
Expr pack(const std::vector<Expr>& vals) {
  std::vector<Expr> parts(vals.rbegin(), vals.rend());
  return cat(parts);
}

}  // namespace

void FlatDist::build(Module& m) const {
  const int n = p.lanes, nl = log2i(n), w = p.elem_bits;
  Sig din = m.input("din", UInt(n * w));
  Sig dout = m.output("dout", UInt(n * w));
  InstanceRef net = m.instance(DistNet(p), "net");
  for (int i = 0; i < n; ++i) net.io("in")[i].sig() <<= field(din, i, w);
  if (p.control != DistControlPorts::cheap) {
    net.io("tr_sel").sig() <<= m.input("tr_sel", UInt(n)).sig();
    Sig lvl = m.input("lvl_sel", UInt(nl * n));
    for (int k = 0; k < nl; ++k) net.io("lvl_sel")[k].sig() <<= field(lvl, k, n);
  }
  if (p.control != DistControlPorts::full) {
    net.io("sel_vec").sig() <<= m.input("sel_vec", UInt(nl)).sig();
    net.io("idx_mask").sig() <<= m.input("idx_mask", UInt(nl)).sig();
    net.io("tr_en").sig() <<= m.input("tr_en", UInt(1)).sig();
  }
  if (p.control == DistControlPorts::both) net.io("ctrl_mode").sig() <<= m.input("ctrl_mode", UInt(1)).sig();
  std::vector<Expr> outs;
  for (int i = 0; i < n; ++i) outs.push_back(net.io("out")[i].sig());
  dout <<= pack(outs);
}

void FlatRed::build(Module& m) const {
  const int n = p.lanes, nl = log2i(n), w = elem_bits(p.elem);
  const bool is_signed = p.elem != RedElem::fp32;
  Sig din = m.input("din", UInt(n * w));
  Sig dout = m.output("dout", UInt(n * w));
  InstanceRef net = m.instance(RedNet(p), "net");
  for (int i = 0; i < n; ++i) {
    Expr v = field(din, i, w);
    net.io("in")[i].sig() <<= is_signed ? v.as_signed() : v;
  }
  Sig mode = m.input("sw_mode", UInt(nl * n));
  for (int k = 0; k < nl; ++k) net.io("sw_mode")[k].sig() <<= field(mode, k, n);
  net.io("tr_sel").sig() <<= m.input("tr_sel", UInt(n)).sig();
  if (p.gate_stages) net.io("valid").sig() <<= m.input("valid", UInt(1)).sig();
  std::vector<Expr> outs;
  for (int i = 0; i < n; ++i) outs.push_back(net.io("out")[i].sig().as_unsigned());
  dout <<= pack(outs);
}

std::vector<DistNetParams> dist_test_configs() {
  using C = DistControlPorts;
  return {
      {4, 16, 2, C::both, 0},   // exhaustive: every control word, every lane map
      {8, 8, 2, C::full, 1},    // every permutation; a register after every stage
      {16, 16, 4, C::both, 2},  // random, T = 4
      {16, 8, 2, C::cheap, 1},  // the cheap control ports alone
      {32, 16, 4, C::full, 3},  // random
      {64, 16, 4, C::both, 0, true},  // the default configuration: combinational, an output register
  };
}

std::vector<RedNetParams> red_test_configs() {
  return {
      {4, RedElem::int32, 2, 1, {}},   // exhaustive: every control word
      {4, RedElem::fp32, 2, 0, {}},    // exhaustive with binary32 corner values
      {4, RedElem::fp32, 2, 0, {Fp32AddArch::two_path, PrefixKind::sklansky}},  // the same, two-path adders
      {8, RedElem::int48, 2, 2, {}},   // every permutation
      {16, RedElem::fp32, 4, 1, {}, 0, false, 2},  // random; adders over three cycles, ungated
      {32, RedElem::int32, 4, 3, {}},              // random
      // the default configuration: basic adders over two cycles, none at levels 0 and 1 (a CE's
      // 4 columns), the stages clocked by valid inputs
      {64, RedElem::fp32, 4, 1, {}, 2, true, 1},
  };
}

}  // namespace nettest
