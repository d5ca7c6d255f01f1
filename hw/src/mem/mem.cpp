#include "hw/mem/mem.hpp"

#include <algorithm>

#include "hw/arith/arith.hpp"

namespace fetta::hw {

int host_banks_for(const arch::ArchConfig& cfg) {
  // Bytes the DRAM delivers per TCU clock, and bytes one bank row holds.
  const double dram_bytes_per_cycle = cfg.dram.bandwidth_gbps * 1e3 / cfg.clock_mhz;
  const double row_bytes = cfg.memory.elems_per_bank * arch::operand_bits(cfg.dtype) / 8.0;
  int p = 1;
  while (p < cfg.memory.banks && p * row_bytes < dram_bytes_per_cycle) p *= 2;
  return p;
}

UnifiedMemoryParams unified_memory_params(const arch::ArchConfig& cfg) {
  return {cfg.memory.banks, cfg.memory.elems_per_bank, cfg.memory.unified_depth, arch::operand_bits(cfg.dtype),
          host_banks_for(cfg)};
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
