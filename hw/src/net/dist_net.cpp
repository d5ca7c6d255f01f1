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

DistNet::DistNet(DistNetParams params) : IdentifiedGenerator(normalized(params)) {}

int dist_net_latency(const DistNetParams& p) {
  validate(p);
  const DistNetParams n = normalized(p);
  return latency(n.lanes, n.pipeline_every) + (n.output_register ? 1 : 0);
}

Identity DistNet::identity() const {
  return Identity("dist_net")
      .param("lanes", p.lanes, fmt::format("_n{}", p.lanes))
      .param("elem_bits", p.elem_bits, fmt::format("_w{}", p.elem_bits))
      .param("elems_per_bank", p.elems_per_bank, fmt::format("_t{}", p.elems_per_bank))
      .param("control", to_string(p.control), fmt::format("_{}", to_string(p.control)))
      .param("pipeline_every", p.pipeline_every, fmt::format("_p{}", p.pipeline_every))
      .flag("output_register", p.output_register, p.output_register ? "_o" : "")
      .param("latency", dist_net_latency(p));
}

namespace {

// DistNet::build in its parts: the control inputs, each stage's mux bits, the stages, and the
// pipeline registers after a stage (the data and the controls of the stages still ahead).
class DistNetBuilder {
 public:
  DistNetBuilder(Module& m, const DistNetParams& p)
      : m_(m),
        p_(p),
        n_(p.lanes),
        nl_(levels(p.lanes)),
        has_full_(p.control != DistControlPorts::cheap),
        has_cheap_(p.control != DistControlPorts::full),
        ctl_(nl_ + 1) {}

  void build() {
    Data in = m_.input("in", Vec(UInt(p_.elem_bits), n_));
    Data out = m_.output("out", Vec(UInt(p_.elem_bits), n_));
    control_inputs();
    std::vector<Expr> cur;
    for (int i = 0; i < n_; ++i) cur.push_back(in[i].sig());
    int regs = 0;
    for (int s = 0; s <= nl_; ++s) {
      cur = stage(s, cur);
      if (register_after(s + 1, p_.pipeline_every)) register_stage(++regs, s, cur);
    }
    if (p_.output_register)
      for (int i = 0; i < n_; ++i) {
        Sig r = m_.reg(fmt::format("q_{}", i), UInt(p_.elem_bits));
        r <<= cur[i];
        cur[i] = r;
      }
    for (int i = 0; i < n_; ++i) out[i].sig() <<= cur[i];
  }

 private:
  // The raw controls of each stage (0: transpose, k + 1: level k). When the pipeline registers
  // the data, it registers the controls of the stages still ahead, so both stay in step.
  struct StageCtl {
    Expr full;  // N mux bits
    Expr sel;   // cheap: tr_en, or sel_vec[k]
    Expr mask;  // cheap: idx_mask[k]
  };

  void control_inputs() {
    if (has_full_) {
      ctl_[0].full = m_.input("tr_sel", UInt(n_));
      Data lvl = m_.input("lvl_sel", Vec(UInt(n_), nl_));
      for (int k = 0; k < nl_; ++k) ctl_[k + 1].full = lvl[k].sig();
    }
    if (has_cheap_) {
      Sig sel_vec = m_.input("sel_vec", UInt(nl_));
      Sig idx_mask = m_.input("idx_mask", UInt(nl_));
      ctl_[0].sel = m_.input("tr_en", UInt(1)).sig();
      for (int k = 0; k < nl_; ++k) {
        ctl_[k + 1].sel = sel_vec.bit(k);
        ctl_[k + 1].mask = idx_mask.bit(k);
      }
    }
    if (has_full_ && has_cheap_) mode_ = m_.input("ctrl_mode", UInt(1)).sig();
  }

  // The N mux bits of stage s.
  Expr stage_bits(int s) const {
    Expr cheap;
    if (has_cheap_) {
      if (s == 0) {
        cheap = repl(ctl_[0].sel, n_);
      } else {
        BitVec lane_bit(n_);  // bit i: bit k of lane i
        for (int i = 0; i < n_; ++i) lane_bit.set_bit(i, (i >> (s - 1)) & 1);
        cheap = repl(ctl_[s].sel, n_) ^ (repl(ctl_[s].mask, n_) & lit(lane_bit));
      }
    }
    if (!has_cheap_) return ctl_[s].full;
    if (!has_full_) return cheap;
    return mux(mode_, ctl_[s].full, cheap);
  }

  // Stage s on the lanes `cur`: each lane keeps its value or takes its partner's.
  std::vector<Expr> stage(int s, const std::vector<Expr>& cur) {
    const std::string name = s == 0 ? "tr" : fmt::format("lv{}", s - 1);
    Sig bits = m_.node(name + "_ctl", stage_bits(s));
    std::vector<Expr> next;
    for (int i = 0; i < n_; ++i) {
      // Diagonal lanes of the transpose level are their own partner: the mux stays (uniform
      // structure, every control bit read) and synthesis removes it.
      const int other = s == 0 ? partner(i, p_.elems_per_bank) : i ^ (1 << (s - 1));
      next.push_back(m_.node(fmt::format("{}_{}", name, i), mux(bits.bit(i), cur[other], cur[i])));
    }
    return next;
  }

  // Pipeline register `regs` after stage s: the lanes, and the controls of the stages after s.
  void register_stage(int regs, int s, std::vector<Expr>& cur) {
    for (int i = 0; i < n_; ++i) {
      Sig r = m_.reg(fmt::format("p{}_{}", regs, i), UInt(p_.elem_bits));
      r <<= cur[i];
      cur[i] = r;
    }
    for (int s2 = s + 1; s2 <= nl_; ++s2) {
      const std::string name = fmt::format("p{}_lv{}", regs, s2 - 1);
      if (has_full_) {
        Sig r = m_.reg(name + "_full", UInt(n_));
        r <<= ctl_[s2].full;
        ctl_[s2].full = r;
      }
      if (has_cheap_) {
        Sig rs = m_.reg(name + "_sel_vec", UInt(1));
        Sig rm = m_.reg(name + "_idx_mask", UInt(1));
        rs <<= ctl_[s2].sel;
        rm <<= ctl_[s2].mask;
        ctl_[s2].sel = rs;
        ctl_[s2].mask = rm;
      }
    }
    if (has_full_ && has_cheap_ && s < nl_) {
      Sig r = m_.reg(fmt::format("p{}_ctrl_mode", regs), UInt(1));
      r <<= mode_;
      mode_ = r;
    }
  }

  Module& m_;
  const DistNetParams& p_;
  const int n_, nl_;
  const bool has_full_, has_cheap_;
  std::vector<StageCtl> ctl_;
  Expr mode_;
};

}  // namespace

void DistNet::build(Module& m) const {
  validate(p);
  m.add_comment(fmt::format("{} lanes: transpose level ({}x{} blocks), then {} butterfly levels; latency {} cycles",
                            p.lanes, p.elems_per_bank, p.elems_per_bank, levels(p.lanes), dist_net_latency(p)));
  DistNetBuilder(m, p).build();
}

}  // namespace fetta::hw
