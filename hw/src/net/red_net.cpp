#include "hw/net/red_net.hpp"

#include <fmt/core.h>

#include "hw/arith/fp_add.hpp"
#include "hw/arith/int_arith.hpp"
#include "hw/arith/pipeline.hpp"
#include "lanes.hpp"

namespace fetta::hw {

using namespace rtl;
using namespace net_detail;

std::string to_string(RedElem e) {
  switch (e) {
    case RedElem::int32: return "int32";
    case RedElem::int48: return "int48";
    case RedElem::fp32: return "fp32";
  }
  throw std::invalid_argument("RedNet: elem: unknown element type; allowed: int32, int48, fp32");
}

int elem_bits(RedElem e) {
  switch (e) {
    case RedElem::int32: return 32;
    case RedElem::int48: return 48;
    case RedElem::fp32: return 32;
  }
  throw std::invalid_argument("RedNet: elem: unknown element type; allowed: int32, int48, fp32");
}

namespace {

// Integers travel as SInt (the IntAdd ports), binary32 as a UInt bit pattern (the Fp32Add ports).
Type elem_type(RedElem e) { return e == RedElem::fp32 ? UInt(32) : SInt(elem_bits(e)); }

}  // namespace

void validate(const RedNetParams& p) {
  check_lanes("RedNet", p.lanes, p.elems_per_bank, p.pipeline_every);
  (void)to_string(p.elem);
  if (p.first_add_level < 0 || p.first_add_level > levels(p.lanes))
    throw std::invalid_argument(fmt::format("RedNet: first_add_level = {}: allowed 0 .. {} (log2 of the lanes)",
                                            p.first_add_level, levels(p.lanes)));
  if (p.gate_stages && p.pipeline_every == 0)
    throw std::invalid_argument("RedNet: gate_stages needs stages (pipeline_every > 0): a combinational network has no "
                                "registers to gate");
  if (p.adder_stages < 0 || p.adder_stages > kMaxRedAdderStages)
    throw std::invalid_argument(fmt::format("RedNet: adder_stages = {}: allowed 0 .. {}", p.adder_stages,
                                            kMaxRedAdderStages));
  if (p.adder_stages > 0 && p.elem == RedElem::fp32 && p.pipeline_every == 0)
    throw std::invalid_argument("RedNet: adder_stages needs stages (pipeline_every > 0): a combinational network "
                                "cannot hold registers inside its switches");
}

namespace {
// Adder stages per level with adders: only a binary32 adder has them.
int switch_stages(const RedNetParams& p) { return p.elem == RedElem::fp32 ? p.adder_stages : 0; }
}  // namespace

int red_net_latency(const RedNetParams& p) {
  validate(p);
  return latency(p.lanes, p.pipeline_every) + switch_stages(p) * (levels(p.lanes) - p.first_add_level);
}

namespace {

// Only a binary32 element has a choice of adder: one name and one module otherwise.
FpAdderChoice normalized(RedElem e, FpAdderChoice a) {
  if (e != RedElem::fp32 || a.arch == Fp32AddArch::basic) return FpAdderChoice{};
  return a;
}

}  // namespace

namespace {
RedSwitchParams normalized(RedSwitchParams p) {
  p.adder = p.has_adder ? normalized(p.elem, p.adder) : FpAdderChoice{};
  if (!p.has_adder || p.elem != RedElem::fp32) p.stages = 0;
  if (p.stages < 0 || p.stages > kMaxRedAdderStages)
    throw std::invalid_argument(fmt::format("RedSwitch: stages = {}: allowed 0 .. {}", p.stages, kMaxRedAdderStages));
  if (p.stages == 0) p.gate_stages = false;
  return p;
}
}  // namespace

RedSwitch::RedSwitch(RedSwitchParams params) : IdentifiedGenerator(normalized(params)) {}

Identity RedSwitch::identity() const {
  // A routing switch is named by its element alone.
  const bool a = p.has_adder;
  Identity id("red_switch");
  id.flag("has_adder", a, a ? "" : "_route")
      .param("elem", to_string(p.elem), fmt::format("_{}", to_string(p.elem)))
      .param("fp32_adder", fp32_add_arch_name(p.adder.arch), a ? adder_name_tag(p.adder) : "")
      .param("adder_prefix", prefix_name(p.adder.prefix));
  if (p.stages > 0)
    id.param("stages", p.stages, a ? fmt::format("_s{}", p.stages) : "")
        .flag("gate_stages", p.gate_stages, a && p.gate_stages ? "_gated" : "");
  return id;
}

RedNet::RedNet(RedNetParams params) : IdentifiedGenerator([&] {
      params.adder = normalized(params.elem, params.adder);
      return params;
    }()) {}

void RedSwitch::build(Module& m) const {
  const Type et = elem_type(p.elem);
  const int w = elem_bits(p.elem);
  Sig l = m.input("l", et);
  Sig r = m.input("r", et);
  Sig mode = m.input("mode", UInt(2));
  Sig lo = m.output("lo", et);
  Sig ro = m.output("ro", et);
  if (!p.has_adder) {
    // A level no request adds at: pass or swap, by the mode's low bit.
    lo <<= mux(mode.bit(0), r, l);
    ro <<= mux(mode.bit(0), l, r);
    return;
  }
  // The adder is the arithmetic library's; the switch only steers. With stages, the pass path and
  // the mode wait beside the adder, on one gated clock per stage with the adder's valid.
  Expr valid = p.gate_stages ? Expr(m.input("valid", UInt(1))) : Expr{};
  InstanceRef add =
      p.elem == RedElem::fp32
          ? m.instance(Fp32Add(Fp32AddParams{p.stages, 0, p.adder.arch, p.adder.prefix, p.gate_stages}), "add")
          : m.instance(IntAdd(IntAddParams{w}), "add");
  add.io("a").sig() <<= l;
  add.io("b").sig() <<= r;
  if (p.gate_stages) add.io("valid").sig() <<= valid;
  Sig sum = add.io("sum").sig();
  Expr l_at_sum = l, r_at_sum = r, mode_at_sum = mode;
  GatedStages gates(m, valid);
  for (int k = 1; k <= p.stages; ++k) {
    const RegOptions opt = gates.stage(fmt::format("s{}", k), fmt::format("valid_s{}", k));
    Sig lq = m.reg(fmt::format("l_s{}", k), et, opt), rq = m.reg(fmt::format("r_s{}", k), et, opt);
    Sig mq = m.reg(fmt::format("mode_s{}", k), UInt(2), opt);
    lq <<= l_at_sum;
    rq <<= r_at_sum;
    mq <<= mode_at_sum;
    l_at_sum = lq;
    r_at_sum = rq;
    mode_at_sum = mq;
  }
  Expr zero = et.is_signed() ? slit(0, w) : lit(0, w);
  // mode: 0 pass, 1 swap, 2 add_left, 3 add_right (docs/networks.md).
  lo <<= select({l_at_sum, r_at_sum, sum, zero}, mode_at_sum);
  ro <<= select({r_at_sum, l_at_sum, zero, sum}, mode_at_sum);
}

Identity RedNet::identity() const {
  const int stages = switch_stages(p);
  return Identity("red_net")
      .param("lanes", p.lanes, fmt::format("_n{}", p.lanes))
      .param("elem", to_string(p.elem), fmt::format("_{}", to_string(p.elem)))
      .param("elems_per_bank", p.elems_per_bank, fmt::format("_t{}", p.elems_per_bank))
      .param("pipeline_every", p.pipeline_every, fmt::format("_p{}", p.pipeline_every))
      .param("first_add_level", p.first_add_level, p.first_add_level > 0 ? fmt::format("_a{}", p.first_add_level) : "")
      .param("fp32_adder", fp32_add_arch_name(p.adder.arch), adder_name_tag(p.adder))
      .param("adder_prefix", prefix_name(p.adder.prefix))
      .param("adder_stages", stages, stages > 0 ? fmt::format("_s{}", stages) : "")
      .flag("gate_stages", p.gate_stages, p.gate_stages ? "_gated" : "")
      .param("latency", red_net_latency(p));
}

void RedNet::build(Module& m) const {
  validate(p);
  const int n = p.lanes, nl = levels(n);
  const Type et = elem_type(p.elem);
  m.add_comment(fmt::format("{} lanes: {} levels of {} adder switches, then the transpose level ({}x{} blocks); "
                            "latency {} cycles",
                            n, nl, n / 2, p.elems_per_bank, p.elems_per_bank, red_net_latency(p)));
  Data in = m.input("in", Vec(et, n));
  Data out = m.output("out", Vec(et, n));
  Data sw_mode = m.input("sw_mode", Vec(UInt(n), nl));
  // Controls of each stage (k: level k, nl: transpose), registered along with the data.
  std::vector<Expr> ctl;
  for (int k = 0; k < nl; ++k) ctl.push_back(sw_mode[k].sig());
  ctl.push_back(m.input("tr_sel", UInt(n)).sig());
  // Stage registers clock only for valid inputs (gate_stages); the valid bit goes along, its delay
  // registers made when a later stage reads them (GatedStages), so none dangles at the output.
  GatedStages gates(m, p.gate_stages ? Expr(m.input("valid", UInt(1))) : Expr{});

  const int S = switch_stages(p);
  const RedSwitch sw(RedSwitchParams{p.elem, p.adder, true, S, p.gate_stages});
  const RedSwitch route_sw(RedSwitchParams{p.elem, p.adder, false});
  std::vector<Expr> cur;
  for (int i = 0; i < n; ++i) cur.push_back(in[i].sig());
  int regs = 0;
  for (int s = 0; s <= nl; ++s) {
    std::vector<Expr> next(n);
    if (s < nl) {
      const bool adds = s >= p.first_add_level;
      const Expr sw_valid = adds && S > 0 && gates.gated() ? gates.valid() : Expr{};
      for (int j = 0; j < n / 2; ++j) {
        const int l = ((j >> s) << (s + 1)) | (j & ((1 << s) - 1)), r = l | (1 << s);
        InstanceRef x = m.instance(adds ? sw : route_sw, fmt::format("sw_l{}_{}", s, j));
        x.io("l").sig() <<= cur[l];
        x.io("r").sig() <<= cur[r];
        x.io("mode").sig() <<= ctl[s].bits(2 * j + 1, 2 * j);
        if (sw_valid.valid()) x.io("valid").sig() <<= sw_valid;
        next[l] = x.io("lo").sig();
        next[r] = x.io("ro").sig();
      }
      // A level with adder stages holds the later levels' controls (and the valid bit) as long.
      for (int k = 1; adds && k <= S; ++k) {
        const RegOptions opt = gates.stage(fmt::format("l{}_s{}", s, k), fmt::format("l{}_valid_s{}", s, k));
        for (int s2 = s + 1; s2 <= nl; ++s2) {
          Sig r = m.reg(s2 < nl ? fmt::format("l{}_s{}_sw_mode_{}", s, k, s2) : fmt::format("l{}_s{}_tr_sel", s, k),
                        UInt(n), opt);
          r <<= ctl[s2];
          ctl[s2] = r;
        }
      }
    } else {
      for (int i = 0; i < n; ++i)
        next[i] = m.node(fmt::format("tr_{}", i), mux(ctl[nl].bit(i), cur[partner(i, p.elems_per_bank)], cur[i]));
    }
    cur = std::move(next);
    if (!register_after(s + 1, p.pipeline_every)) continue;
    const RegOptions opt = gates.stage(fmt::format("p{}", regs + 1), fmt::format("p{}_valid", regs + 1));
    ++regs;
    for (int i = 0; i < n; ++i) {
      Sig r = m.reg(fmt::format("p{}_{}", regs, i), et, opt);
      r <<= cur[i];
      cur[i] = r;
    }
    for (int s2 = s + 1; s2 <= nl; ++s2) {
      Sig r = m.reg(s2 < nl ? fmt::format("p{}_sw_mode_{}", regs, s2) : fmt::format("p{}_tr_sel", regs), UInt(n), opt);
      r <<= ctl[s2];
      ctl[s2] = r;
    }
  }
  for (int i = 0; i < n; ++i) out[i].sig() <<= cur[i];
}

}  // namespace fetta::hw
