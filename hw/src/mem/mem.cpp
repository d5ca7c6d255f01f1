#include "hw/mem/mem.hpp"

#include <algorithm>

#include "hw/arith/arith.hpp"

namespace fetta::hw {

UnifiedMemoryParams unified_memory_params(const arch::ArchConfig& cfg) {
  return {cfg.memory.banks, cfg.memory.elems_per_bank, cfg.memory.unified_depth, arch::operand_bits(cfg.dtype),
          arch::host_port_banks(cfg)};
}

AccumulationUnitParams accumulator_params(const arch::ArchConfig& cfg) {
  const FpAdderChoice adder = fp_adder_choice(cfg);
  return {cfg.memory.banks, cfg.memory.elems_per_bank, cfg.memory.accum_depth, cfg.dtype,
          cfg.memory.accum_pipeline, adder.arch, adder.prefix};
}

AddressGeneratorParams address_generator_params(const arch::ArchConfig& cfg) {
  const long long rows = std::max<long long>(cfg.memory.unified_depth / 2, cfg.memory.accum_depth);
  return {kAddressLoopLevels, kAddressStreams, rtl::clog2(static_cast<long long>(cfg.memory.banks) * rows),
          kAddressCountBits};
}

std::string elaborate_unified_memory(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(UnifiedMemory(unified_memory_params(cfg)))->name();
}

std::string elaborate_accumulator(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(AccumulationUnit(accumulator_params(cfg)))->name();
}

std::string elaborate_address_generator(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(AddressGenerator(address_generator_params(cfg)))->name();
}

}  // namespace fetta::hw
