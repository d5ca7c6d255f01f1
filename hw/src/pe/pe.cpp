#include "hw/pe/pe.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "hw/arith/arith.hpp"
#include "hw/arith/pipeline.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

bool known(arch::DataType t) {
  return t == arch::DataType::bf16 || t == arch::DataType::int8 || t == arch::DataType::int16;
}

}  // namespace

arch::DataType parse_data_type(const std::string& name) {
  if (name == "bf16") return arch::DataType::bf16;
  if (name == "int8") return arch::DataType::int8;
  if (name == "int16") return arch::DataType::int16;
  throw std::invalid_argument(fmt::format("dtype: unknown data type '{}'; allowed: bf16, int8, int16", name));
}

void validate(const PeParams& p) {
  if (!known(p.dtype))
    throw std::invalid_argument(fmt::format("pe.dtype: unknown data type {}; allowed: bf16, int8, int16",
                                            static_cast<int>(p.dtype)));
  if (!p.ws && !p.is && !p.os)
    throw std::invalid_argument("pe.dataflows: none built in; allowed: any non-empty subset of ws, is, os");
  check_mac_stages("pe", "mac_stages", p.mac_stages, p.product_stages);
  // In OS the Psum loops through the MAC every cycle: a pipelined MAC would need one cycle per
  // stage between consecutive products of a PE, so OS is built only around a combinational MAC.
  if (p.os && p.mac_stages != 0)
    throw std::invalid_argument(fmt::format(
        "pe.mac_stages: {} with dataflow os; allowed: 0 when os is built in (the in-place accumulation "
        "cannot wait for a pipelined MAC), or drop os from the dataflows",
        p.mac_stages));
}

PeParams pe_params_from(const arch::ArchConfig& cfg) {
  PeParams p;
  p.dtype = cfg.dtype;
  p.ws = cfg.has_dataflow(arch::Dataflow::ws);
  p.is = cfg.has_dataflow(arch::Dataflow::is);
  p.os = cfg.has_dataflow(arch::Dataflow::os);
  p.ib_double_buffer = cfg.ce.ib_double_buffer;
  p.psum_double_buffer = cfg.ce.psum_double_buffer;
  p.mac_stages = cfg.ce.mac_pipeline_stages;
  p.product_stages = cfg.ce.mac_product_stages;
  if (cfg.dtype == arch::DataType::bf16) p.adder = fp_adder_choice(cfg);
  return p;
}

int pe_operand_bits(const PeParams& p) { return arch::operand_bits(p.dtype); }
int pe_acc_bits(const PeParams& p) { return arch::accumulator_bits(p.dtype); }

std::string dataflow_tag(const PeParams& p) {
  return fmt::format("{}{}{}", p.ws ? "ws" : "", p.is ? "is" : "", p.os ? "os" : "");
}

namespace {

// Integer PEs have no binary32 adder: one name and one module whatever the choice.
PeParams normalized(PeParams p) {
  if (p.dtype != arch::DataType::bf16) p.adder = FpAdderChoice{};
  if (p.adder.arch == Fp32AddArch::basic) p.adder.prefix = FpAdderChoice{}.prefix;
  return p;
}

}  // namespace

Pe::Pe(PeParams params) : IdentifiedGenerator(normalized(params)) { validate(p); }

Identity Pe::identity() const {
  return Identity("pe")
      .param("dtype", arch::to_string(p.dtype), fmt::format("_{}", arch::to_string(p.dtype)))
      .param("dataflows", dataflow_tag(p), fmt::format("_{}", dataflow_tag(p)))
      .flag("ib_double_buffer", p.ib_double_buffer, p.ib_double_buffer ? "_ib2" : "_ib1")
      .flag("psum_double_buffer", p.psum_double_buffer, p.psum_double_buffer ? "_ps2" : "_ps1")
      .param("product_stages", p.product_stages, p.product_stages > 0 ? fmt::format("_p{}", p.product_stages) : "")
      .param("mac_stages", p.mac_stages, fmt::format("_s{}", p.mac_stages))
      .param("fp32_adder", fp32_add_arch_name(p.adder.arch), adder_name_tag(p.adder))
      .param("adder_prefix", prefix_name(p.adder.prefix));
}

PeRow::PeRow(const Data& d)
    : ia(d["ia"]), active(d.field_if_any("active")), first(d.field_if_any("first")), last(d.field_if_any("last")),
      swap(d.field_if_any("swap")), mul_active(d.field_if_any("mul_active")) {}
PeIn::PeIn(const Data& d) : ib_north(d["ib_north"]), ib_west(d.field_if_any("ib_west")), psum(d["psum"]) {}
PeCtrl::PeCtrl(const Data& d)
    : os(d.field_if_any("os")), ib_shift(d.field_if_any("ib_shift")), ib_from_left(d.field_if_any("ib_from_left")),
      drain(d.field_if_any("drain")) {}
PeOut::PeOut(const Data& d) : ib(d["ib"]), psum(d["psum"]) {}

Type Pe::row_type(const PeParams& p) {
  std::vector<Field> f{field("ia", UInt(pe_operand_bits(p)))};
  if (p.has_active()) f.push_back(field("active", UInt(1)));
  if (p.has_first()) f.push_back(field("first", UInt(1)));
  if (p.has_last()) f.push_back(field("last", UInt(1)));
  if (p.has_swap()) f.push_back(field("swap", UInt(1)));
  if (p.has_mul_active()) f.push_back(field("mul_active", UInt(1)));
  return Bundle(f);
}

Type Pe::in_type(const PeParams& p) {
  std::vector<Field> f{field("ib_north", UInt(pe_operand_bits(p)))};
  if (p.stationary()) f.push_back(field("ib_west", UInt(pe_operand_bits(p))));
  f.push_back(field("psum", UInt(pe_acc_bits(p))));
  return Bundle(f);
}

Type Pe::ctrl_type(const PeParams& p) {
  std::vector<Field> f;
  if (p.both_modes()) f.push_back(field("os", UInt(1)));
  if (p.stationary()) {
    f.push_back(field("ib_shift", UInt(1)));
    f.push_back(field("ib_from_left", UInt(1)));
  }
  if (p.os) f.push_back(field("drain", UInt(1)));
  return Bundle(f);
}

Type Pe::out_type(const PeParams& p) {
  return Bundle({field("ib", UInt(pe_operand_bits(p))), field("psum", UInt(pe_acc_bits(p)))});
}

namespace {

// Pe::build in its parts, each emitted in turn: the mode register, the IB path, the Psum
// registers, the MAC and the Psum update.
class PeBuilder {
 public:
  PeBuilder(Module& m, const PeParams& p)
      : m_(m),
        p_(p),
        w_(pe_operand_bits(p)),
        a_(pe_acc_bits(p)),
        row_(m.input(Pe::kRow, Pe::row_type(p))),
        in_(m.input(Pe::kIn, Pe::in_type(p))),
        ctrl_(m.input(Pe::kCtrl, Pe::ctrl_type(p))),
        out_(m.output(Pe::kOut, Pe::out_type(p))) {}

  void build() {
    mode_register();
    // The multiply stage's `active`: the MAC reads ia and its b operand only then.
    if (p_.has_mul_active())
      mul_active_ = row_.mul_active;
    else if (p_.has_active())
      mul_active_ = row_.active;
    const Sig mac_b = ib_path();
    const Sig mac_acc = psum_registers();
    psum_update(mac(mac_b, mac_acc));
    out_.ib.sig() <<= ib_shift_;
    out_.psum.sig() <<= psum_;
  }

 private:
  // `os_mode` is the run-time mode when both are built; otherwise the choice is made here. It is
  // registered in every PE: the controller's one mode flop would otherwise fan out to every acc
  // and B multiplexer of the array in front of the adder (45 ps over 1 GHz in the default top).
  // The mode then takes effect a cycle after ctrl.os, which is free: it changes only while the CE
  // is idle (at a gemm's pop, after the drain), cycles before the first operand arrives.
  void mode_register() {
    if (!p_.both_modes()) return;
    os_mode_ = m_.reg("os_mode", UInt(1));
    os_mode_ <<= ctrl_.os;
  }
  Expr pick(const Expr& os_value, const Expr& stationary_value) const {
    if (p_.both_modes()) return mux(os_mode_, os_value, stationary_value);
    return p_.os ? os_value : stationary_value;
  }

  // The IB shift register and the stationary operand; returns the MAC's b operand.
  Sig ib_path() {
    const Sig ib_north = in_.ib_north;
    // IB shift register: the load path in stationary modes (from the north or the west), the
    // stream register in OS (from the north). It clocks only in the cycles it loads (docs/ce.md,
    // "Clock gating"): a stationary load, or in OS the multiply stage's active cycles, the ones in
    // which this PE reads the stream and the PE below (a cycle later in the row skew) reads it next.
    Expr shift_en = p_.os ? mul_active_ : Expr{};
    Expr ib_next = ib_north;
    if (p_.stationary()) {
      const Sig from_left = ctrl_.ib_from_left;
      const Sig west = in_.ib_west;
      shift_en = p_.both_modes() ? Expr((os_mode_ & mul_active_) | ctrl_.ib_shift.sig()) : Expr(ctrl_.ib_shift.sig());
      ib_next = pick(ib_north, mux(from_left, west, ib_north));
    }
    ib_shift_ = m_.reg("ib_shift", UInt(w_), clocked_by(m_.clock_gate("ib_shift", shift_en)));
    ib_shift_ <<= ib_next;

    // Stationary operand: with double buffering the tile's first IA (row.first) swaps the loaded
    // IB into ib_held and uses it in the same cycle, so each row swaps exactly when it starts.
    Expr ib_stationary = ib_shift_;
    if (p_.stationary() && p_.ib_double_buffer) {
      // The swap belongs to the multiply stage: `swap` when the product is registered (then `first`
      // is the accumulate stage's), else `first`.
      const Sig first = p_.has_swap() ? row_.swap : row_.first;
      Sig swap = m_.node("ib_swap", p_.both_modes() ? Expr(first & !os_mode_) : Expr(first));
      Sig ib_held = m_.reg("ib_held", UInt(w_), clocked_by(m_.clock_gate("ib_swap", swap)));
      ib_held <<= ib_shift_;
      ib_stationary = mux(swap, ib_shift_, ib_held);
    }
    return m_.node("operand_b", pick(ib_north, ib_stationary));
  }

  // Psum registers. `psum` is what leaves towards the PE below: the MAC result in stationary
  // modes, the drain register in OS. `acc` is OS's accumulator when the Psum is double-buffered
  // (single-buffered, `psum` accumulates and drains itself).
  // Where `active` is built (os), `psum` clocks only in the cycles it loads: stationary, while the
  // row's accumulate stage is active (its value is read below only then, and out of the CE only
  // in the cycle after: the CE's `valid`); os, at a drain or a finished Psum. Returns the MAC's
  // accumulator operand.
  Sig psum_registers() {
    const Sig psum_in = in_.psum;
    if (p_.has_active()) {
      const Sig active = row_.active;
      const Expr os_load = ctrl_.drain.sig() | (p_.psum_double_buffer ? Expr(active & row_.last.sig()) : Expr(active));
      const Expr load = p_.both_modes() ? mux(os_mode_, os_load, active) : os_load;
      psum_ = m_.reg("psum", UInt(a_), clocked_by(m_.clock_gate("psum", load)));
    } else {
      psum_ = m_.reg("psum", UInt(a_));
    }
    // OS's accumulator clocks only while its row is active.
    if (p_.os && p_.psum_double_buffer)
      acc_ = m_.reg("acc", UInt(a_), clocked_by(m_.clock_gate("acc", p_.both_modes() ? Expr(os_mode_ & row_.active.sig())
                                                                                     : Expr(row_.active.sig()))));
    Expr mac_acc = psum_in;
    if (p_.os) {
      const Sig first = row_.first;
      const Expr acc_src = p_.psum_double_buffer ? Expr(acc_) : Expr(psum_);
      mac_acc = pick(mux(first, lit(0, a_), acc_src), psum_in);
    }
    return m_.node("operand_acc", mac_acc);
  }

  // The MAC; its product registers load only for the multiply stage's active cycles.
  Sig mac(const Sig& mac_b, const Sig& mac_acc) {
    const Sig ia = row_.ia;
    MacChoice mc = make_mac(p_.dtype, p_.mac_stages, p_.product_stages, p_.adder, p_.has_mul_active());
    InstanceRef mac = m_.instance(*mc.generator, "mac");
    if (p_.has_mul_active()) mac.io("valid").sig() <<= mul_active_;
    if (mc.is_signed) {
      mac.io("a").sig() <<= ia.as_signed();
      mac.io("b").sig() <<= mac_b.as_signed();
      mac.io("acc").sig() <<= mac_acc.as_signed();
    } else {
      mac.io("a").sig() <<= ia;
      mac.io("b").sig() <<= mac_b;
      mac.io("acc").sig() <<= mac_acc;
    }
    return m_.node("mac_result", mc.is_signed ? mac.io("out").sig().as_unsigned() : Expr(mac.io("out").sig()));
  }

  // What the Psum registers load: the MAC result, or in OS the drain's Psum from above first.
  void psum_update(const Sig& mac_out) {
    if (!p_.os) {
      psum_ <<= mac_out;
      return;
    }
    const Sig psum_in = in_.psum;
    const Sig active = row_.active;
    const Sig last = row_.last;
    const Sig drain = ctrl_.drain;
    auto os_psum = [&] {
      // Drain has priority: the CE never schedules a capture into a row that is still draining.
      m_.when(drain, [&] { psum_ <<= psum_in; })
          .elsewhen(p_.psum_double_buffer ? Expr(active & last) : Expr(active), [&] { psum_ <<= mac_out; });
    };
    if (p_.both_modes())
      m_.when(os_mode_, os_psum).otherwise([&] { psum_ <<= mac_out; });
    else
      os_psum();
    if (acc_.signal()) acc_ <<= mac_out;
  }

  Module& m_;
  const PeParams& p_;
  const int w_, a_;  // operand and accumulator bits
  const PeRow row_;
  const PeIn in_;
  const PeCtrl ctrl_;
  const PeOut out_;
  Sig os_mode_;
  Expr mul_active_;
  Sig ib_shift_, psum_, acc_;
};

}  // namespace

void Pe::build(Module& m) const {
  m.add_comment(fmt::format("dataflows {}, IB {}-buffered, Psum {}-buffered (os), MAC stages {}, product stages {} "
                            "(docs/ce.md).",
                            dataflow_tag(p), p.ib_double_buffer ? "double" : "single",
                            p.psum_double_buffer ? "double" : "single", p.mac_stages, p.product_stages));
  PeBuilder(m, p).build();
}

}  // namespace fetta::hw
