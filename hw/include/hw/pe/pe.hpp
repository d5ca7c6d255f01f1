// The processing element (PE) of a contraction engine (ARCHITECTURE.md 4.1, docs/ce.md).
//
// One MAC (hw/arith: FpMac for bf16, IntMac for int8/int16) and the registers around it. Operands
// are named by role: IA (broadcast along the PE's row), IB (held, or streamed down), Psum.
//   stationary modes (ws/is): IB is shifted in from the north or the west neighbour (the
//     transposable load path) and held; the MAC adds IA*IB to the Psum arriving from the PE
//     above and registers it for the PE below. With a double-buffered IB the shift register
//     loads the next IB while `ib_held` serves the current tile; `row.first` swaps them.
//   output-stationary (os): IB streams down (the north value is used and registered for the PE
//     below), the Psum accumulates in place from +0 at `row.first`; at `row.last` the result
//     goes to the drain register (`psum`, double-buffered) and leaves through the PEs below
//     while the next tile accumulates in `acc`.
//
// Ports (bundles, so the CE wires neighbours by name):
//   row  in : ia, [active], [first], [last], [swap], [mul_active]   the row's broadcast, skewed by the CE
//   in   in : ib_north, [ib_west], psum          from the PE above / on the left
//   ctrl in : [os], [ib_shift], [ib_from_left], [drain]
//   out  out: ib, psum                           to the PE below (ib also to the right)
// Fields in [] exist only when the dataflows that use them are built in.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/arith/arith.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct PeParams {
  arch::DataType dtype = arch::DataType::bf16;
  bool ws = true;  // dataflows built in; ws and is share the stationary datapath
  bool is = true;
  bool os = true;
  bool ib_double_buffer = true;    // stationary: load the next IB while computing
  bool psum_double_buffer = true;  // os: drain the finished tile while the next accumulates
  int mac_stages = 0;              // register stages inside the MAC (stationary modes only)
  // Registers on the MAC's product alone (FpMac/IntMac product_stages): the accumulation stays
  // one add per cycle, the PE's results leave this many cycles later. The row's `active`, `first`
  // and `last` then mean the accumulate stage (the CE delays them), and the stationary IB swap,
  // which belongs to the multiply stage, comes as `swap`.
  int product_stages = 0;
  FpAdderChoice adder;             // bf16: the binary32 adder's datapath

  bool stationary() const { return ws || is; }
  bool both_modes() const { return stationary() && os; }
  // Which of the optional bundle fields exist.
  bool has_swap() const { return stationary() && ib_double_buffer && product_stages > 0; }
  bool has_first() const { return os || (stationary() && ib_double_buffer && product_stages == 0); }
  bool has_last() const { return os; }
  bool has_active() const { return os; }
  // The multiply stage's `active` (the row's, product_stages cycles before the accumulate
  // stage's): the product registers and OS's IB stream load only then.
  bool has_mul_active() const { return product_stages > 0; }
};

// Throws std::invalid_argument naming the field and the allowed values.
void validate(const PeParams& p);
// The PE parameters of an architecture configuration (not validated here).
PeParams pe_params_from(const arch::ArchConfig& cfg);
// "bf16", "int8", "int16"; throws std::invalid_argument naming `dtype` for anything else.
arch::DataType parse_data_type(const std::string& name);

int pe_operand_bits(const PeParams& p);  // 16, 8, 16
int pe_acc_bits(const PeParams& p);      // 32, 32, 48

// Typed views of the PE's bundle ports (Pe::row_type, in_type, ctrl_type, out_type); a field
// the parameters leave out is an empty handle (rtl::Data::valid() false).
struct PeRow {  // the row's IA operand and controls, shared along a CE row
  explicit PeRow(const rtl::Data& d);
  rtl::Data ia, active, first, last, swap, mul_active;
};
struct PeIn {  // from the PE above (ib_north, psum) and to the left (ib_west)
  explicit PeIn(const rtl::Data& d);
  rtl::Data ib_north, ib_west, psum;
};
struct PeCtrl {
  explicit PeCtrl(const rtl::Data& d);
  rtl::Data os, ib_shift, ib_from_left, drain;
};
struct PeOut {  // to the PE below and to the right
  explicit PeOut(const rtl::Data& d);
  rtl::Data ib, psum;
};

class Pe : public rtl::IdentifiedGenerator<PeParams> {
 public:
  static constexpr rtl::Port<PeRow> kRow{"row"};
  static constexpr rtl::Port<PeIn> kIn{"in"};
  static constexpr rtl::Port<PeCtrl> kCtrl{"ctrl"};
  static constexpr rtl::Port<PeOut> kOut{"out"};

  explicit Pe(PeParams params);  // validates
  std::string generator_name() const override { return "hw::Pe"; }
  // e.g. "pe_bf16_wsisos_ib2_ps2_s0" (ib2/ib1: IB double/single buffered; ps2/ps1: Psum), with
  // product stages and a two-path adder "pe_bf16_wsisos_ib2_ps2_p1_s0_twopath_sk"
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

  // The port types, for the CE's wiring.
  static rtl::Type row_type(const PeParams& p);
  static rtl::Type in_type(const PeParams& p);
  static rtl::Type ctrl_type(const PeParams& p);
  static rtl::Type out_type(const PeParams& p);
};

// "ws", "wsis", "wsisos", ... (the dataflows built in, fixed order ws, is, os).
std::string dataflow_tag(const PeParams& p);

}  // namespace fetta::hw
