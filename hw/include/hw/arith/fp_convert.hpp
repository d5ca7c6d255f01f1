// Fp32ToBf16: binary32 -> bf16 rounded to nearest even, exactly verif::fp32_to_bf16: NaN ->
// 0x7FC0, Inf kept, zero/subnormal -> signed zero, a carry out of the mantissa may round up to
// the next binade or to +-Inf. Ports: in UInt<32> -> out UInt<16>. Combinational.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct Fp32ToBf16Params {};

class Fp32ToBf16 : public rtl::IdentifiedGenerator<Fp32ToBf16Params> {
 public:
  explicit Fp32ToBf16(Fp32ToBf16Params params) : IdentifiedGenerator(params) {}
  std::string generator_name() const override { return "hw::Fp32ToBf16"; }
  rtl::Identity identity() const override { return rtl::Identity("fp32_to_bf16"); }
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
