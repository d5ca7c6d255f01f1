// The memory system generators (docs/memory.md) and their entry points for a configuration.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/address_generator.hpp"
#include "hw/mem/mem_bank.hpp"
#include "hw/mem/unified_memory.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// Loop levels and streams of the controller's address generators.
inline constexpr int kAddressLoopLevels = 6;
inline constexpr int kAddressStreams = 3;  // 0: IA, 1: IB, 2: output (results / accumulator rows)
inline constexpr int kAddressCountBits = 16;

// Parameters for a configuration. Element width: operand_bits(dtype). The address generator's
// addresses index a row of the compute half across all banks (log2(banks * unified_depth / 2)
// bits), wide enough for the accumulator rows too.
UnifiedMemoryParams unified_memory_params(const arch::ArchConfig& cfg);
AccumulationUnitParams accumulator_params(const arch::ArchConfig& cfg);
AddressGeneratorParams address_generator_params(const arch::ArchConfig& cfg);

// Elaborate into `design`; return the top module name.
std::string elaborate_unified_memory(rtl::Design& design, const arch::ArchConfig& cfg);
std::string elaborate_accumulator(rtl::Design& design, const arch::ArchConfig& cfg);
std::string elaborate_address_generator(rtl::Design& design, const arch::ArchConfig& cfg);

}  // namespace fetta::hw
