#include "hw/ce/ce.hpp"

#include <fmt/core.h>

#include <stdexcept>
#include <vector>

#include "hw/ce/delay_line.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

constexpr int kMaxDim = 256;

// The per-row control that travels with the IA column (delayed r * skew for row r). With product
// stages, `active`, `first` and `last` are the accumulate stage's (delayed once more by the
// product stages) and `swap` is the multiply stage's `first`.
struct RowCtrl {
  Expr active, first, last, load_left, swap;
};

}  // namespace

void validate(const CeParams& p) {
  if (p.rows < 1 || p.rows > kMaxDim)
    throw std::invalid_argument(fmt::format("ce.rows: {} is out of range; allowed: 1..{}", p.rows, kMaxDim));
  if (p.cols < 1 || p.cols > kMaxDim)
    throw std::invalid_argument(fmt::format("ce.cols: {} is out of range; allowed: 1..{}", p.cols, kMaxDim));
  validate(p.pe);
}

CeParams ce_params_from(const arch::ArchConfig& cfg) {
  CeParams p;
  p.rows = cfg.ce.rows;
  p.cols = cfg.ce.cols;
  p.pe = pe_params_from(cfg);
  return p;
}

Ce::Ce(CeParams params) : Generator(params) { validate(p); }

std::string Ce::module_name() const {
  // The PE's name carries the PE parameters after its "pe_" prefix.
  const std::string pe = Pe(p.pe).module_name().substr(3);
  return fmt::format("ce_{}x{}_{}", p.rows, p.cols, pe);
}

ParamList Ce::params() const {
  ParamList l{{"rows", std::to_string(p.rows)}, {"cols", std::to_string(p.cols)}};
  for (const auto& kv : Pe(p.pe).params()) l.push_back(kv);
  return l;
}

Type Ce::ctrl_type(const CeParams& p) {
  const PeParams& pe = p.pe;
  std::vector<Field> f;
  if (pe.both_modes()) f.push_back(field("os", UInt(1)));
  f.push_back(field("active", UInt(1)));
  if (p.has_first_ctrl()) f.push_back(field("first", UInt(1)));
  if (pe.has_last()) f.push_back(field("last", UInt(1)));
  if (pe.stationary()) {
    f.push_back(field("ib_load", UInt(1)));
    f.push_back(field("ib_from_left", UInt(1)));
  }
  return Bundle(f);
}

Type Ce::out_type(const CeParams& p) {
  std::vector<Field> f{field("valid", UInt(1))};
  if (p.pe.os) f.push_back(field("row", UInt(clog2(p.rows))));
  f.push_back(field("psum", Vec(UInt(pe_acc_bits(p.pe)), p.cols)));
  return Bundle(f);
}

void Ce::build(Module& m) const {
  const PeParams& pp = p.pe;
  const int R = p.rows, C = p.cols, s = p.row_skew();
  const int w = pe_operand_bits(pp), a = pe_acc_bits(pp);
  const bool st = pp.stationary();
  m.add_comment(fmt::format("{}x{} PEs; row skew {} cycle(s); control and timing: docs/ce.md.", R, C, s));

  Data ia = m.input("ia", Vec(UInt(w), R));
  Data ib_top = m.input("ib_top", Vec(UInt(w), C));
  Data ib_left;
  if (st) ib_left = m.input("ib_left", Vec(UInt(w), R));
  Data ctrl = m.input("ctrl", ctrl_type(p));
  Data out = m.output("out", out_type(p));
  Sig os_mode;
  if (pp.both_modes()) os_mode = ctrl["os"];

  // ---- row skew: control as a tapped chain (one value for all rows), data as a triangle (row r
  // has its own values, delayed r * s).
  std::vector<Expr> ctl_bits{ctrl["active"].sig()};
  const bool chain_first = p.has_first_ctrl();
  if (chain_first) ctl_bits.push_back(ctrl["first"].sig());
  if (pp.has_last()) ctl_bits.push_back(ctrl["last"].sig());
  if (st) ctl_bits.push_back(m.node("ib_load_left", ctrl["ib_load"].sig() & ctrl["ib_from_left"].sig()));
  const int nctl = static_cast<int>(ctl_bits.size());
  auto unpack_ctl = [&](const Expr& packed, int r) {
    RowCtrl rc;
    int bit = nctl - 1;
    auto next = [&](const char* name) {
      return Expr(m.node(fmt::format("row{}_{}", r, name), packed.bit(bit--)));
    };
    // Stationary-only PEs do not read `active`; only the bottom row's copy (output valid) is used.
    if (pp.has_active() || r == R - 1)
      rc.active = next("active");
    else
      rc.active = packed.bit(bit--);
    if (chain_first) rc.first = next("first");
    if (pp.has_last()) rc.last = next("last");
    if (st) rc.load_left = next("ib_load_left");
    return rc;
  };
  std::vector<RowCtrl> row_ctrl;
  Expr packed = cat(ctl_bits);
  const int P = pp.product_stages;
  for (int r = 0; r < R; ++r) {
    if (r > 0) {
      InstanceRef d = m.instance(DelayLine({nctl, s, true}), fmt::format("ctl_skew_r{}", r));
      d.io("in").sig() <<= packed;
      packed = d.io("out").sig();
    }
    RowCtrl rc = unpack_ctl(packed, r);
    if (P > 0) {
      // The accumulate stage sees the row's control P cycles after the multiply stage.
      if (pp.has_swap()) rc.swap = rc.first;
      std::vector<Expr> late{rc.active};
      if (pp.has_first()) late.push_back(rc.first);
      if (pp.has_last()) late.push_back(rc.last);
      InstanceRef d = m.instance(DelayLine({static_cast<int>(late.size()), P, true}), fmt::format("ctl_acc_r{}", r));
      d.io("in").sig() <<= late.size() == 1 ? late[0] : cat(late);
      Sig q = d.io("out").sig();
      int bit = static_cast<int>(late.size()) - 1;
      rc.active = m.node(fmt::format("row{}_acc_active", r), q.bit(bit--));
      if (pp.has_first()) rc.first = m.node(fmt::format("row{}_acc_first", r), q.bit(bit--));
      if (pp.has_last()) rc.last = m.node(fmt::format("row{}_acc_last", r), q.bit(bit--));
    }
    row_ctrl.push_back(rc);
  }
  std::vector<Expr> row_ia, row_ib_left;
  row_ia.push_back(ia[0].sig());
  if (st) row_ib_left.push_back(ib_left[0].sig());
  for (int r = 1; r < R; ++r) {
    Expr data = st ? cat({ia[r].sig(), ib_left[r].sig()}) : Expr(ia[r].sig());
    InstanceRef d = m.instance(DelayLine({data.width(), r * s, false}), fmt::format("row_skew_r{}", r));
    d.io("in").sig() <<= data;
    Sig delayed = d.io("out").sig();
    row_ia.push_back(st ? m.node(fmt::format("row{}_ia", r), delayed.bits(2 * w - 1, w)) : Expr(delayed));
    if (st) row_ib_left.push_back(m.node(fmt::format("row{}_ib_left", r), delayed.bits(w - 1, 0)));
  }

  // ---- stationary IB load enables. From the left every row is its own shift chain: row r
  // shifts during its skewed copy of ib_load. From the top the values pass through the rows
  // above, so all rows stop together and row r starts r*s cycles late (after its swap): a
  // triangle over a top load of exactly 1 + (R-1)*s cycles, counted by ib_top_count.
  std::vector<Expr> row_shift, row_from_left;
  if (st) {
    const int top_len = 1 + (R - 1) * s;
    Sig top_load = m.node("ib_top_load", ctrl["ib_load"].sig() & !ctrl["ib_from_left"].sig());
    Sig top_count;
    if (top_len > 1) {
      top_count = m.reg("ib_top_count", UInt(clog2(top_len)), reset_to(0));
      m.when(top_load & (top_count != top_len - 1), [&] { top_count <<= top_count + 1; }).otherwise([&] {
        top_count <<= 0;
      });
    }
    for (int r = 0; r < R; ++r) {
      Expr top_en = r == 0 ? Expr(top_load) : Expr(top_load & (top_count >= r * s));
      Expr left_en = row_ctrl[r].load_left;
      row_shift.push_back(m.node(fmt::format("row{}_ib_shift", r), top_en | left_en));
      row_from_left.push_back(left_en);
    }
  }

  // ---- OS drain: starts the cycle after the bottom row's last MAC of a tile; the finished
  // Psums leave bottom row first, one row per cycle. Row r shifts from above while
  // drain_count < r (it must pass on the r rows above it).
  Sig draining, drain_count;
  if (pp.os) {
    const RowCtrl& bottom = row_ctrl[R - 1];
    Expr start = bottom.active & bottom.last;
    if (pp.both_modes()) start = start & os_mode;
    Sig drain_start = m.node("drain_start", start);
    draining = m.reg("draining", UInt(1), reset_to(0));
    drain_count = m.reg("drain_count", UInt(clog2(R)), reset_to(0));
    m.when(drain_start, [&] {
       draining <<= 1;
       drain_count <<= 0;
     }).elsewhen(draining, [&] {
      drain_count <<= drain_count + 1;
      m.when(drain_count == R - 1, [&] { draining <<= 0; });
    });
  }

  // ---- the PE array
  std::vector<std::vector<InstanceRef>> pe(R);
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      InstanceRef u = m.instance(Pe(pp), fmt::format("pe_r{}_c{}", r, c));
      Data row = u.io("row");
      row["ia"].sig() <<= row_ia[r];
      if (pp.has_active()) row["active"].sig() <<= row_ctrl[r].active;
      if (pp.has_first()) row["first"].sig() <<= row_ctrl[r].first;
      if (pp.has_swap()) row["swap"].sig() <<= row_ctrl[r].swap;
      if (pp.has_last()) row["last"].sig() <<= row_ctrl[r].last;

      Data in = u.io("in");
      in["ib_north"].sig() <<= r == 0 ? Expr(ib_top[c].sig()) : Expr(pe[r - 1][c].io("out")["ib"].sig());
      if (st) in["ib_west"].sig() <<= c == 0 ? row_ib_left[r] : Expr(pe[r][c - 1].io("out")["ib"].sig());
      in["psum"].sig() <<= r == 0 ? lit(0, a) : Expr(pe[r - 1][c].io("out")["psum"].sig());

      Data pc = u.io("ctrl");
      if (pp.both_modes()) pc["os"].sig() <<= os_mode;
      if (st) {
        pc["ib_shift"].sig() <<= row_shift[r];
        pc["ib_from_left"].sig() <<= row_from_left[r];
      }
      if (pp.os) pc["drain"].sig() <<= r == 0 ? lit(0, 1) : Expr(draining & (drain_count < r));
      pe[r].push_back(u);
    }
  }

  // ---- outputs: the bottom row's Psum registers
  for (int c = 0; c < C; ++c) out["psum"][c].sig() <<= pe[R - 1][c].io("out")["psum"].sig();
  Expr st_valid;
  if (st) {
    // The bottom row's result is registered one row skew after its IA.
    InstanceRef d = m.instance(DelayLine({1, s, true}), "valid_delay");
    d.io("in").sig() <<= row_ctrl[R - 1].active;
    st_valid = d.io("out").sig();
  }
  if (pp.os) {
    const int rw = clog2(R);
    Expr drained_row = lit(static_cast<uint64_t>(R - 1), rw) - drain_count;
    if (pp.both_modes()) {
      out["valid"].sig() <<= mux(os_mode, draining, st_valid);
      out["row"].sig() <<= mux(os_mode, drained_row, lit(0, rw));
    } else {
      out["valid"].sig() <<= draining;
      out["row"].sig() <<= drained_row;
    }
  } else {
    out["valid"].sig() <<= st_valid;
  }
}

std::string elaborate_pe(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Pe(pe_params_from(cfg)))->name();
}

std::string elaborate_ce(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Ce(ce_params_from(cfg)))->name();
}

}  // namespace fetta::hw
