// The arithmetic generators (docs/arith.md) and the choice of MAC and adder for a data type.
#pragma once

#include <memory>

#include "arch/config.hpp"
#include "hw/arith/fp_add.hpp"
#include "hw/arith/fp_convert.hpp"
#include "hw/arith/fp_mac.hpp"
#include "hw/arith/fp_mul.hpp"
#include "hw/arith/int_arith.hpp"
#include "hw/arith/pipeline.hpp"

namespace fetta::hw {

// The PE's MAC for a data type and what its ports carry.
//   bf16  -> FpMac:  a, b UInt<16>; acc, out UInt<32>
//   int8  -> IntMac: a, b SInt<8>;  acc, out SInt<32>
//   int16 -> IntMac: a, b SInt<16>; acc, out SInt<48>
struct MacChoice {
  std::unique_ptr<rtl::GeneratorBase> generator;
  int operand_bits = 0;
  int acc_bits = 0;
  bool is_signed = false;  // ports are SInt (integer MACs) rather than UInt bit patterns
};

// The binary32 adder a configuration chose (arch::ArithConfig in the generators' terms); the
// integer data types ignore it.
struct FpAdderChoice {
  Fp32AddArch arch = Fp32AddArch::basic;
  PrefixKind prefix = PrefixKind::sklansky;
};
FpAdderChoice fp_adder_choice(const arch::ArchConfig& cfg);            // the PEs' and the accumulator's
FpAdderChoice reduction_adder_choice(const arch::ArchConfig& cfg);      // the reduction switches'
// The module-name tag of an adder choice, shared by every generator that instantiates one:
// "" for basic, "_twopath_<ks|sk|bk>" for two_path.
std::string adder_name_tag(const FpAdderChoice& adder);

// Throws std::invalid_argument naming `dtype` and the allowed values for an unknown data type,
// or naming `stages` for a negative one. `product_stages`: registers on the product alone
// (FpMacParams::product_stages, IntMacParams::product_stages); `product_valid`: a `valid` input
// gating them (FpMacParams::product_valid).
MacChoice make_mac(arch::DataType dtype, int stages = 0, int product_stages = 0, FpAdderChoice adder = {},
                   bool product_valid = false);
// The accumulator width for a data type (32, 32, 48).
int mac_accumulator_bits(arch::DataType dtype);
// The adder of the reduction network / accumulator for a data type (ports a, b -> sum):
// bf16 -> Fp32Add{stages, arch, prefix}, int8 -> IntAdd{32}, int16 -> IntAdd{48} (integer adders
// are combinational; `stages` must then be 0).
std::unique_ptr<rtl::GeneratorBase> make_adder(arch::DataType dtype, int stages = 0, FpAdderChoice adder = {});

}  // namespace fetta::hw
