#include "hw/arith/arith.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace fetta::hw {

namespace {

[[noreturn]] void unknown_dtype(arch::DataType dtype) {
  throw std::invalid_argument(
      fmt::format("dtype: unknown data type {}; allowed: bf16, int8, int16", static_cast<int>(dtype)));
}

}  // namespace

int mac_accumulator_bits(arch::DataType dtype) {
  switch (dtype) {
    case arch::DataType::bf16: return 32;
    case arch::DataType::int8: return 32;
    case arch::DataType::int16: return 48;
  }
  unknown_dtype(dtype);
}

namespace {
FpAdderChoice adder_choice(const arch::ArchConfig& cfg, arch::Fp32Adder adder) {
  FpAdderChoice c;
  c.arch = adder == arch::Fp32Adder::two_path ? Fp32AddArch::two_path : Fp32AddArch::basic;
  switch (cfg.arith.prefix) {
    case arch::PrefixAdder::kogge_stone: c.prefix = PrefixKind::kogge_stone; break;
    case arch::PrefixAdder::sklansky: c.prefix = PrefixKind::sklansky; break;
    case arch::PrefixAdder::brent_kung: c.prefix = PrefixKind::brent_kung; break;
  }
  return c;
}
}  // namespace

FpAdderChoice fp_adder_choice(const arch::ArchConfig& cfg) { return adder_choice(cfg, cfg.arith.fp32_adder); }

FpAdderChoice reduction_adder_choice(const arch::ArchConfig& cfg) {
  return adder_choice(cfg, cfg.arith.reduction_adder);
}

std::string adder_name_tag(const FpAdderChoice& adder) {
  return adder.arch == Fp32AddArch::two_path ? "_twopath_" + prefix_tag(adder.prefix) : "";
}

MacChoice make_mac(arch::DataType dtype, int stages, int product_stages, FpAdderChoice adder, bool product_valid) {
  if (stages < 0)
    throw std::invalid_argument(fmt::format("make_mac: stages = {} is negative; allowed: 0 or more", stages));
  MacChoice c;
  c.acc_bits = mac_accumulator_bits(dtype);
  switch (dtype) {
    case arch::DataType::bf16:
      c.generator = std::make_unique<FpMac>(FpMacParams{stages, adder.arch, adder.prefix, product_stages, product_valid});
      c.operand_bits = 16;
      c.is_signed = false;
      return c;
    case arch::DataType::int8:
    case arch::DataType::int16:
      c.operand_bits = dtype == arch::DataType::int8 ? 8 : 16;
      c.generator = std::make_unique<IntMac>(IntMacParams{c.operand_bits, c.acc_bits, stages, product_stages, product_valid});
      c.is_signed = true;
      return c;
  }
  unknown_dtype(dtype);
}

std::unique_ptr<rtl::GeneratorBase> make_adder(arch::DataType dtype, int stages, FpAdderChoice adder) {
  switch (dtype) {
    case arch::DataType::bf16: return std::make_unique<Fp32Add>(Fp32AddParams{stages, 0, adder.arch, adder.prefix});
    case arch::DataType::int8:
    case arch::DataType::int16:
      if (stages != 0)
        throw std::invalid_argument(
            fmt::format("make_adder: stages = {} for {}; integer adders are combinational, allowed: 0", stages,
                        arch::to_string(dtype)));
      return std::make_unique<IntAdd>(IntAddParams{mac_accumulator_bits(dtype)});
  }
  unknown_dtype(dtype);
}

}  // namespace fetta::hw
