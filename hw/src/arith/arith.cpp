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

MacChoice make_mac(arch::DataType dtype, int stages) {
  if (stages < 0)
    throw std::invalid_argument(fmt::format("make_mac: stages = {} is negative; allowed: 0 or more", stages));
  MacChoice c;
  c.acc_bits = mac_accumulator_bits(dtype);
  switch (dtype) {
    case arch::DataType::bf16:
      c.generator = std::make_unique<FpMac>(FpMacParams{stages});
      c.operand_bits = 16;
      c.is_signed = false;
      return c;
    case arch::DataType::int8:
    case arch::DataType::int16:
      c.operand_bits = dtype == arch::DataType::int8 ? 8 : 16;
      c.generator = std::make_unique<IntMac>(IntMacParams{c.operand_bits, c.acc_bits, stages});
      c.is_signed = true;
      return c;
  }
  unknown_dtype(dtype);
}

std::unique_ptr<rtl::GeneratorBase> make_adder(arch::DataType dtype, int stages) {
  switch (dtype) {
    case arch::DataType::bf16: return std::make_unique<Fp32Add>(Fp32AddParams{stages, 0});
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
