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
  Expr active, first, last, load_left, swap, mul_active;
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

Ce::Ce(CeParams params) : IdentifiedGenerator(params) { validate(p); }

Identity Ce::identity() const {
  // The PE's name, after its "pe" prefix, and its parameters follow the CE's own.
  return Identity("ce")
      .param("rows", p.rows, fmt::format("_{}", p.rows))
      .param("cols", p.cols, fmt::format("x{}", p.cols))
      .nest(Pe(p.pe).identity());
}

CeCtrl::CeCtrl(const Data& d)
    : os(d.field_if_any("os")), active(d["active"]), first(d.field_if_any("first")), last(d.field_if_any("last")),
      ib_load(d.field_if_any("ib_load")), ib_from_left(d.field_if_any("ib_from_left")) {}
CeOut::CeOut(const Data& d) : valid(d["valid"]), row(d.field_if_any("row")), psum(d["psum"]) {}

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

namespace {

// The CE's generator, one member per part: the row skew of control and data, the stationary IB
// load enables, the OS drain, the PE array and the outputs.
class CeBuilder {
 public:
  CeBuilder(Module& m, const CeParams& p)
      : m_(m), p_(p), pp_(p.pe), R_(p.rows), C_(p.cols), s_(p.row_skew()), w_(pe_operand_bits(pp_)),
        a_(pe_acc_bits(pp_)), st_(pp_.stationary()) {}
  void build();

 private:
  void ports();
  void row_control();
  RowCtrl unpack_row_control(const Expr& packed, int r, int nctl) const;
  void row_data();
  void ib_load_enables();
  void os_drain();
  void pe_array();
  void outputs();

  Module& m_;
  const CeParams& p_;
  const PeParams& pp_;
  const int R_, C_, s_, w_, a_;
  const bool st_;  // stationary PEs: IB is loaded, from the left or the top

  Data ia_, ib_top_, ib_left_;
  std::optional<CeCtrl> ctrl_;
  std::optional<CeOut> out_;
  Sig os_mode_;
  std::vector<RowCtrl> row_ctrl_;
  std::vector<Expr> row_ia_, row_ib_left_, row_shift_, row_from_left_;
  Sig draining_, drain_count_;
  std::vector<std::vector<InstanceRef>> pe_;
};

void CeBuilder::build() {
  m_.add_comment(fmt::format("{}x{} PEs; row skew {} cycle(s); control and timing: docs/ce.md.", R_, C_, s_));
  ports();
  row_control();
  row_data();
  ib_load_enables();
  os_drain();
  pe_array();
  outputs();
}

void CeBuilder::ports() {
  ia_ = m_.input("ia", Vec(UInt(w_), R_));
  ib_top_ = m_.input("ib_top", Vec(UInt(w_), C_));
  if (st_) ib_left_ = m_.input("ib_left", Vec(UInt(w_), R_));
  ctrl_ = m_.input(Ce::kCtrl, Ce::ctrl_type(p_));
  out_ = m_.output(Ce::kOut, Ce::out_type(p_));
  if (pp_.both_modes()) os_mode_ = ctrl_->os;
}

// ---- row skew: control as a tapped chain (one value for all rows), data as a triangle (row r
// has its own values, delayed r * s).
void CeBuilder::row_control() {
  Module& m = m_;
  std::vector<Expr> ctl_bits{ctrl_->active.sig()};
  if (p_.has_first_ctrl()) ctl_bits.push_back(ctrl_->first.sig());
  if (pp_.has_last()) ctl_bits.push_back(ctrl_->last.sig());
  if (st_) ctl_bits.push_back(m.node("ib_load_left", ctrl_->ib_load.sig() & ctrl_->ib_from_left.sig()));
  const int nctl = static_cast<int>(ctl_bits.size());
  Expr packed = cat(ctl_bits);
  const int P = pp_.product_stages;
  for (int r = 0; r < R_; ++r) {
    if (r > 0) {
      InstanceRef d = m.instance(DelayLine({nctl, s_, true}), fmt::format("ctl_skew_r{}", r));
      d.io("in").sig() <<= packed;
      packed = d.io("out").sig();
    }
    RowCtrl rc = unpack_row_control(packed, r, nctl);
    if (P > 0) {
      // The accumulate stage sees the row's control P cycles after the multiply stage.
      if (pp_.has_swap()) rc.swap = rc.first;
      rc.mul_active = rc.active;
      std::vector<Expr> late{rc.active};
      if (pp_.has_first()) late.push_back(rc.first);
      if (pp_.has_last()) late.push_back(rc.last);
      InstanceRef d = m.instance(DelayLine({static_cast<int>(late.size()), P, true}), fmt::format("ctl_acc_r{}", r));
      d.io("in").sig() <<= late.size() == 1 ? late[0] : cat(late);
      Sig q = d.io("out").sig();
      int bit = static_cast<int>(late.size()) - 1;
      rc.active = m.node(fmt::format("row{}_acc_active", r), q.bit(bit--));
      if (pp_.has_first()) rc.first = m.node(fmt::format("row{}_acc_first", r), q.bit(bit--));
      if (pp_.has_last()) rc.last = m.node(fmt::format("row{}_acc_last", r), q.bit(bit--));
    }
    row_ctrl_.push_back(rc);
  }
}

// Row r's control bits out of the packed chain (active first, in the MSB).
RowCtrl CeBuilder::unpack_row_control(const Expr& packed, int r, int nctl) const {
  RowCtrl rc;
  int bit = nctl - 1;
  auto next = [&](const char* name) { return Expr(m_.node(fmt::format("row{}_{}", r, name), packed.bit(bit--))); };
  // Stationary-only PEs without product registers do not read `active`; only the bottom row's
  // copy (output valid) is used.
  if (pp_.has_active() || pp_.has_mul_active() || r == R_ - 1)
    rc.active = next("active");
  else
    rc.active = packed.bit(bit--);
  if (p_.has_first_ctrl()) rc.first = next("first");
  if (pp_.has_last()) rc.last = next("last");
  if (st_) rc.load_left = next("ib_load_left");
  return rc;
}

void CeBuilder::row_data() {
  row_ia_.push_back(ia_[0].sig());
  if (st_) row_ib_left_.push_back(ib_left_[0].sig());
  for (int r = 1; r < R_; ++r) {
    Expr data = st_ ? cat({ia_[r].sig(), ib_left_[r].sig()}) : Expr(ia_[r].sig());
    InstanceRef d = m_.instance(DelayLine({data.width(), r * s_, false}), fmt::format("row_skew_r{}", r));
    d.io("in").sig() <<= data;
    Sig delayed = d.io("out").sig();
    row_ia_.push_back(st_ ? m_.node(fmt::format("row{}_ia", r), delayed.bits(2 * w_ - 1, w_)) : Expr(delayed));
    if (st_) row_ib_left_.push_back(m_.node(fmt::format("row{}_ib_left", r), delayed.bits(w_ - 1, 0)));
  }
}

// ---- stationary IB load enables. From the left every row is its own shift chain: row r
// shifts during its skewed copy of ib_load. From the top the values pass through the rows
// above, so all rows stop together and row r starts r*s cycles late (after its swap): a
// triangle over a top load of exactly 1 + (R-1)*s cycles, counted by ib_top_count.
void CeBuilder::ib_load_enables() {
  if (!st_) return;
  Module& m = m_;
  const int top_len = 1 + (R_ - 1) * s_;
  Sig top_load = m.node("ib_top_load", ctrl_->ib_load.sig() & !ctrl_->ib_from_left.sig());
  Sig top_count;
  if (top_len > 1) {
    top_count = m.reg("ib_top_count", UInt(clog2(top_len)), reset_to(0));
    m.when(top_load & (top_count != top_len - 1), [&] { top_count <<= top_count + 1; }).otherwise([&] {
      top_count <<= 0;
    });
  }
  for (int r = 0; r < R_; ++r) {
    Expr top_en = r == 0 ? Expr(top_load) : Expr(top_load & (top_count >= r * s_));
    Expr left_en = row_ctrl_[r].load_left;
    row_shift_.push_back(m.node(fmt::format("row{}_ib_shift", r), top_en | left_en));
    row_from_left_.push_back(left_en);
  }
}

// ---- OS drain: starts the cycle after the bottom row's last MAC of a tile; the finished
// Psums leave bottom row first, one row per cycle. Row r shifts from above while
// drain_count < r (it must pass on the r rows above it).
void CeBuilder::os_drain() {
  if (!pp_.os) return;
  Module& m = m_;
  const RowCtrl& bottom = row_ctrl_[R_ - 1];
  Expr start = bottom.active & bottom.last;
  if (pp_.both_modes()) start = start & os_mode_;
  Sig drain_start = m.node("drain_start", start);
  draining_ = m.reg("draining", UInt(1), reset_to(0));
  drain_count_ = m.reg("drain_count", UInt(clog2(R_)), reset_to(0));
  m.when(drain_start, [&] {
     draining_ <<= 1;
     drain_count_ <<= 0;
   }).elsewhen(draining_, [&] {
    drain_count_ <<= drain_count_ + 1;
    m.when(drain_count_ == R_ - 1, [&] { draining_ <<= 0; });
  });
}

void CeBuilder::pe_array() {
  pe_.resize(static_cast<size_t>(R_));
  for (int r = 0; r < R_; ++r) {
    for (int c = 0; c < C_; ++c) {
      InstanceRef u = m_.instance(Pe(pp_), fmt::format("pe_r{}_c{}", r, c));
      const PeRow row = u.io(Pe::kRow);
      row.ia.sig() <<= row_ia_[r];
      if (pp_.has_active()) row.active.sig() <<= row_ctrl_[r].active;
      if (pp_.has_first()) row.first.sig() <<= row_ctrl_[r].first;
      if (pp_.has_swap()) row.swap.sig() <<= row_ctrl_[r].swap;
      if (pp_.has_last()) row.last.sig() <<= row_ctrl_[r].last;
      if (pp_.has_mul_active()) row.mul_active.sig() <<= row_ctrl_[r].mul_active;

      const PeIn in = u.io(Pe::kIn);
      in.ib_north.sig() <<= r == 0 ? Expr(ib_top_[c].sig()) : Expr(pe_[r - 1][c].io(Pe::kOut).ib.sig());
      if (st_) in.ib_west.sig() <<= c == 0 ? row_ib_left_[r] : Expr(pe_[r][c - 1].io(Pe::kOut).ib.sig());
      in.psum.sig() <<= r == 0 ? lit(0, a_) : Expr(pe_[r - 1][c].io(Pe::kOut).psum.sig());

      const PeCtrl pc = u.io(Pe::kCtrl);
      if (pp_.both_modes()) pc.os.sig() <<= os_mode_;
      if (st_) {
        pc.ib_shift.sig() <<= row_shift_[r];
        pc.ib_from_left.sig() <<= row_from_left_[r];
      }
      if (pp_.os) pc.drain.sig() <<= r == 0 ? lit(0, 1) : Expr(draining_ & (drain_count_ < r));
      pe_[r].push_back(u);
    }
  }
}

// ---- outputs: the bottom row's Psum registers
void CeBuilder::outputs() {
  for (int c = 0; c < C_; ++c) out_->psum[c].sig() <<= pe_[R_ - 1][c].io(Pe::kOut).psum.sig();
  Expr st_valid;
  if (st_) {
    // The bottom row's result is registered one row skew after its IA.
    InstanceRef d = m_.instance(DelayLine({1, s_, true}), "valid_delay");
    d.io("in").sig() <<= row_ctrl_[R_ - 1].active;
    st_valid = d.io("out").sig();
  }
  if (pp_.os) {
    const int rw = clog2(R_);
    Expr drained_row = lit(static_cast<uint64_t>(R_ - 1), rw) - drain_count_;
    if (pp_.both_modes()) {
      out_->valid.sig() <<= mux(os_mode_, draining_, st_valid);
      out_->row.sig() <<= mux(os_mode_, drained_row, lit(0, rw));
    } else {
      out_->valid.sig() <<= draining_;
      out_->row.sig() <<= drained_row;
    }
  } else {
    out_->valid.sig() <<= st_valid;
  }
}

}  // namespace

void Ce::build(Module& m) const { CeBuilder(m, p).build(); }

std::string elaborate_pe(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Pe(pe_params_from(cfg)))->name();
}

std::string elaborate_ce(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Ce(ce_params_from(cfg)))->name();
}

}  // namespace fetta::hw
