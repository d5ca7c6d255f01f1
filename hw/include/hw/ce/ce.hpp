// The contraction engine (CE): an R x C array of PEs, reconfigurable between the stationary
// modes (ws/is: IB preloaded from the top or from the left, Psums flow down) and output-stationary
// (os: IB streams down from the top, Psums accumulate in place and drain through the bottom).
// ARCHITECTURE.md 4.2; the control interface, timing and mapping strategies are in docs/ce.md.
//
// Ports (W = operand bits, A = accumulator bits, s = mac_stages + 1 = the row skew):
//   ia[R]       in   IA column: ia[r] is broadcast along row r. Supplied aligned; the CE delays
//                    row r by r*s cycles (rows skewed in time).
//   ib_top[C]   in   IB entering row 0 from the top (stationary load, os stream). Not skewed.
//   ib_left[R]  in   IB entering column 0 from the left (stationary load); skewed like ia.
//   ctrl        in   os (both modes built), active, first, last (os), ib_load, ib_from_left
//                    (stationary); active/first/last travel with the IA column (skewed).
//   out         out  valid, row (os), psum[C]: one output row per cycle out of the bottom.
// Optional ports exist only when the dataflows that use them are built in.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/pe/pe.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct CeParams {
  int rows = 4;  // R
  int cols = 4;  // C
  PeParams pe;

  int row_skew() const { return pe.mac_stages + 1; }  // cycles between rows r-1 and r
  // Whether ctrl carries `first` (the fold start): for the OS accumulate and the IB swap.
  bool has_first_ctrl() const { return pe.has_first() || pe.has_swap(); }
};

// Throws std::invalid_argument naming the field (ce.rows, ce.cols, pe.*) and the allowed values.
void validate(const CeParams& p);
CeParams ce_params_from(const arch::ArchConfig& cfg);  // not validated here

// Typed views of the CE's bundle ports (Ce::ctrl_type, out_type); a field the parameters leave
// out is an empty handle.
struct CeCtrl {
  explicit CeCtrl(const rtl::Data& d);
  rtl::Data os, active, first, last, ib_load, ib_from_left;
};
struct CeOut {
  explicit CeOut(const rtl::Data& d);
  rtl::Data valid, row, psum;
};

class Ce : public rtl::IdentifiedGenerator<CeParams> {
 public:
  static constexpr rtl::Port<CeCtrl> kCtrl{"ctrl"};
  static constexpr rtl::Port<CeOut> kOut{"out"};

  explicit Ce(CeParams params);  // validates
  std::string generator_name() const override { return "hw::Ce"; }
  // e.g. "ce_4x4_bf16_wsisos_ib2_ps2_s0"
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

  static rtl::Type ctrl_type(const CeParams& p);
  static rtl::Type out_type(const CeParams& p);
};

// Entry points for `fetta gen`: elaborate one PE / one CE of `cfg` into `design`; return the
// module name. Throw std::invalid_argument for parameters the generators reject.
std::string elaborate_pe(rtl::Design& design, const arch::ArchConfig& cfg);
std::string elaborate_ce(rtl::Design& design, const arch::ArchConfig& cfg);

}  // namespace fetta::hw
