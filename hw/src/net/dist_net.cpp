#include "hw/net/dist_net.hpp"

#include <fmt/core.h>

#include "lanes.hpp"

namespace fetta::hw {

using namespace rtl;
using namespace net_detail;

std::string to_string(DistControlPorts c) {
  switch (c) {
    case DistControlPorts::full: return "full";
    case DistControlPorts::cheap: return "cheap";
    case DistControlPorts::both: return "both";
  }
  throw std::invalid_argument("DistNet: control: unknown value; allowed: full, cheap, both");
}

void validate(const DistNetParams& p) {
  check_lanes("DistNet", p.lanes, p.elems_per_bank, p.pipeline_every);
  if (p.elem_bits < 1 || p.elem_bits > 64)
    throw std::invalid_argument(fmt::format("DistNet: elem_bits = {}: allowed 1 .. 64", p.elem_bits));
  (void)to_string(p.control);  // rejects a value outside the enum
}

namespace {

// The output register is implied when the pipeline's last register already sits there.
DistNetParams normalized(DistNetParams p) {
  if (p.output_register && register_after(levels(p.lanes) + 1, p.pipeline_every)) p.output_register = false;
  return p;
}

}  // namespace

DistNet::DistNet(DistNetParams params) : Generator(normalized(params)) {}

int dist_net_latency(const DistNetParams& p) {
  validate(p);
  const DistNetParams n = normalized(p);
  return latency(n.lanes, n.pipeline_every) + (n.output_register ? 1 : 0);
}

std::string DistNet::module_name() const {
  return fmt::format("dist_net_n{}_w{}_t{}_{}_p{}{}", p.lanes, p.elem_bits, p.elems_per_bank, to_string(p.control),
                     p.pipeline_every, p.output_register ? "_o" : "");
}

ParamList DistNet::params() const {
  return {{"lanes", std::to_string(p.lanes)},
          {"elem_bits", std::to_string(p.elem_bits)},
          {"elems_per_bank", std::to_string(p.elems_per_bank)},
          {"control", to_string(p.control)},
          {"pipeline_every", std::to_string(p.pipeline_every)},
          {"output_register", p.output_register ? "true" : "false"},
          {"latency", std::to_string(dist_net_latency(p))}};
}

void DistNet::build(Module& m) const {
  validate(p);
  const int n = p.lanes, nl = levels(n);
  const bool has_full = p.control != DistControlPorts::cheap;
  const bool has_cheap = p.control != DistControlPorts::full;
  m.add_comment(fmt::format("{} lanes: transpose level ({}x{} blocks), then {} butterfly levels; latency {} cycles",
                            n, p.elems_per_bank, p.elems_per_bank, nl, dist_net_latency(p)));

  Data in = m.input("in", Vec(UInt(p.elem_bits), n));
  Data out = m.output("out", Vec(UInt(p.elem_bits), n));
  // The raw controls of each stage (0: transpose, k + 1: level k). When the pipeline registers
  // the data, it registers the controls of the stages still ahead, so both stay in step.
  struct StageCtl {
    Expr full;  // N mux bits
    Expr sel;   // cheap: tr_en, or sel_vec[k]
    Expr mask;  // cheap: idx_mask[k]
  };
  std::vector<StageCtl> ctl(nl + 1);
  Expr mode;
  if (has_full) {
    ctl[0].full = m.input("tr_sel", UInt(n));
    Data lvl = m.input("lvl_sel", Vec(UInt(n), nl));
    for (int k = 0; k < nl; ++k) ctl[k + 1].full = lvl[k].sig();
  }
  if (has_cheap) {
    Sig sel_vec = m.input("sel_vec", UInt(nl));
    Sig idx_mask = m.input("idx_mask", UInt(nl));
    ctl[0].sel = m.input("tr_en", UInt(1)).sig();
    for (int k = 0; k < nl; ++k) {
      ctl[k + 1].sel = sel_vec.bit(k);
      ctl[k + 1].mask = idx_mask.bit(k);
    }
  }
  if (has_full && has_cheap) mode = m.input("ctrl_mode", UInt(1)).sig();

  // The N mux bits of stage s.
  auto stage_bits = [&](int s) -> Expr {
    Expr cheap;
    if (has_cheap) {
      if (s == 0) {
        cheap = repl(ctl[0].sel, n);
      } else {
        BitVec lane_bit(n);  // bit i: bit k of lane i
        for (int i = 0; i < n; ++i) lane_bit.set_bit(i, (i >> (s - 1)) & 1);
        cheap = repl(ctl[s].sel, n) ^ (repl(ctl[s].mask, n) & lit(lane_bit));
      }
    }
    if (!has_cheap) return ctl[s].full;
    if (!has_full) return cheap;
    return mux(mode, ctl[s].full, cheap);
  };

  std::vector<Expr> cur;
  for (int i = 0; i < n; ++i) cur.push_back(in[i].sig());
  int regs = 0;
  for (int s = 0; s <= nl; ++s) {
    const std::string stage = s == 0 ? "tr" : fmt::format("lv{}", s - 1);
    Sig bits = m.node(stage + "_ctl", stage_bits(s));
    std::vector<Expr> next;
    for (int i = 0; i < n; ++i) {
      // Diagonal lanes of the transpose level are their own partner: the mux stays (uniform
      // structure, every control bit read) and synthesis removes it.
      const int other = s == 0 ? partner(i, p.elems_per_bank) : i ^ (1 << (s - 1));
      next.push_back(m.node(fmt::format("{}_{}", stage, i), mux(bits.bit(i), cur[other], cur[i])));
    }
    cur = std::move(next);
    if (!register_after(s + 1, p.pipeline_every)) continue;
    ++regs;
    for (int i = 0; i < n; ++i) {
      Sig r = m.reg(fmt::format("p{}_{}", regs, i), UInt(p.elem_bits));
      r <<= cur[i];
      cur[i] = r;
    }
    for (int s2 = s + 1; s2 <= nl; ++s2) {
      const std::string name = fmt::format("p{}_lv{}", regs, s2 - 1);
      if (has_full) {
        Sig r = m.reg(name + "_full", UInt(n));
        r <<= ctl[s2].full;
        ctl[s2].full = r;
      }
      if (has_cheap) {
        Sig rs = m.reg(name + "_sel_vec", UInt(1));
        Sig rm = m.reg(name + "_idx_mask", UInt(1));
        rs <<= ctl[s2].sel;
        rm <<= ctl[s2].mask;
        ctl[s2].sel = rs;
        ctl[s2].mask = rm;
      }
    }
    if (has_full && has_cheap && s < nl) {
      Sig r = m.reg(fmt::format("p{}_ctrl_mode", regs), UInt(1));
      r <<= mode;
      mode = r;
    }
  }
  if (p.output_register)
    for (int i = 0; i < n; ++i) {
      Sig r = m.reg(fmt::format("q_{}", i), UInt(p.elem_bits));
      r <<= cur[i];
      cur[i] = r;
    }
  for (int i = 0; i < n; ++i) out[i].sig() <<= cur[i];
}

}  // namespace fetta::hw
