#include "hw/arith/fp_convert.hpp"

namespace fetta::hw {

using namespace rtl;

void Fp32ToBf16::build(Module& m) const {
  m.add_comment("binary32 -> bf16, round to nearest even, FTZ, canonical NaN (docs/arith.md).");
  Sig in = m.input("in", UInt(32));
  Sig out = m.output("out", UInt(16));
  Sig exp = m.node("exp", in.bits(30, 23));
  Sig exp_max = m.node("exp_max", exp.and_reduce());
  Sig is_nan = m.node("is_nan", exp_max & (in.bits(22, 0) != 0));
  Sig is_zero = m.node("is_zero", exp == 0);  // zero or subnormal
  // Nearest even on the 16 dropped bits: up when above half, or exactly half and the kept LSB
  // is odd. The increment may carry into the exponent (to the next binade or to Inf); it cannot
  // carry into the sign because the exponent is below all ones here.
  Sig round_up = m.node("round_up", in.bit(15) & ((in.bits(14, 0) != 0) | in.bit(16)));
  Sig rounded = m.node("rounded", in.bits(31, 16) + round_up.zext(16));
  out <<= mux(is_nan, m.constant("QUIET_NAN", 0x7FC0, 16),
              mux(exp_max, in.bits(31, 16),  // Inf: mantissa bits are already zero
                  mux(is_zero, cat({in.bit(31), lit(0, 15)}), rounded)));
}

}  // namespace fetta::hw
