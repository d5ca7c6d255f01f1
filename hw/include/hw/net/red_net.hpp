// The reduction network (ARCHITECTURE 4.4, docs/networks.md): CE outputs -> accumulation unit.
//
// N lanes. Stages from input to output:
//   stage k + 1  butterfly level k (k = 0 .. log2(N)-1): N/2 adder switches; switch j joins
//                left lane l = (j with a 0 inserted at bit k) and right lane l | 2^k;
//   stage log2(N) + 1  transpose level at the output: lane i takes lane i or its partner.
// Switch mode (2 bits, sw_mode_k[2j+1:2j] for switch j of level k):
//   0 pass  (lo = l, ro = r)      1 swap     (lo = r, ro = l)
//   2 add_left (lo = l + r, ro = 0)   3 add_right (lo = 0, ro = l + r)
// The sum is the element adder's add(a = l, b = r); 0 is the all-zero pattern (+0.0 for fp32).
// tr_sel bit i: output lane i takes lane partner(i).
// Pipelining as in DistNet: a register after stage s when s % pipeline_every == 0 (controls
// travel with the data); latency red_net_latency().
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/arith/arith.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// Element (partial sum) type: two's-complement int32 / int48 (wrapping adds), IEEE binary32
// (adds per docs/numerics.md).
enum class RedElem { int32, int48, fp32 };
std::string to_string(RedElem e);
int elem_bits(RedElem e);

struct RedNetParams {
  int lanes = 64;
  RedElem elem = RedElem::fp32;
  int elems_per_bank = 4;
  int pipeline_every = 1;  // 0: combinational; k: register after every k stages (0 .. log2(N)+1)
  FpAdderChoice adder;     // fp32: the binary32 adder's datapath (ignored for the integer types)
  // Levels 0 .. first_add_level-1 have switches without adders (pass or swap; an add mode reads
  // as its low bit), for networks whose requests never add there (arch::red_first_add_level).
  int first_add_level = 0;
  // An input `valid` (UInt<1>) carried along the stages: a stage's registers, data and controls,
  // load only for valid inputs, on gated clocks (rtl::Module::clock_gate). An invalid input's
  // output is not defined. Only for a network with stages (pipeline_every > 0).
  bool gate_stages = false;
  // fp32: register stages inside each adder switch (0 .. kMaxRedAdderStages; ignored for the
  // integer types): its adder's own, and as many on its pass path and mode, so that a level with
  // adders takes 1 + adder_stages cycles and a slower, smaller adder closes the clock. With
  // gate_stages they load only for valid inputs. Needs stages (pipeline_every > 0).
  int adder_stages = 0;
};
inline constexpr int kMaxRedAdderStages = arch::limits::kReductionAdderStages.hi;

void validate(const RedNetParams& p);
// floor((log2(N) + 1) / pipeline_every) + adder_stages per level with adders, 0 when combinational.
int red_net_latency(const RedNetParams& p);

// One two-input two-output adder switch: combinational, or with `stages` registers when it has
// an adder (its adder's, and the pass path's and mode's beside them).
struct RedSwitchParams {
  RedElem elem = RedElem::fp32;
  FpAdderChoice adder;  // fp32 only
  bool has_adder = true;  // false: pass and swap only (mode bit 1 ignored)
  int stages = 0;         // fp32 with an adder only (else 0): the sum of cycle t's inputs at t + stages
  bool gate_stages = false;  // with stages: an input `valid`, the registers loading only for valid inputs
};
class RedSwitch : public rtl::IdentifiedGenerator<RedSwitchParams> {
 public:
  explicit RedSwitch(RedSwitchParams params);
  std::string generator_name() const override { return "hw::RedSwitch"; }
  // red_switch_fp32, red_switch_fp32_twopath_sk, red_switch_fp32_s1_gated; without adder red_switch_route_fp32
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

class RedNet : public rtl::IdentifiedGenerator<RedNetParams> {
 public:
  explicit RedNet(RedNetParams params);
  std::string generator_name() const override { return "hw::RedNet"; }
  // red_net_n64_fp32_t4_p1, red_net_n64_fp32_t4_p1_twopath_sk, red_net_n64_fp32_t4_p1_a2_twopath_sk,
  // red_net_n64_fp32_t4_p1_a2_s1_gated (adder stages)
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
