// DramMap (mapper/dram_map.hpp).
#include "mapper/dram_map.hpp"

#include <fmt/format.h>

#include "mapper/compile.hpp"

namespace fetta::mapper {

void DramMap::reset() {
  next_ = 0;
  inputs_.clear();
}

uint64_t DramMap::allocate(int64_t elements, int bytes) {
  const uint64_t addr = next_;
  next_ += dram_extent(elements, bytes);
  return addr;
}

DramMap::Input DramMap::input(const std::string& name, int64_t elements, int bytes) {
  if (const auto it = inputs_.find(name); it != inputs_.end()) return {it->second, false};
  const uint64_t addr = allocate(elements, bytes);
  inputs_[name] = addr;
  return {addr, true};
}

void DramMap::check_capacity(const arch::ArchConfig& cfg, const std::string& file, bool dma) const {
  const uint64_t capacity = static_cast<uint64_t>(cfg.dram.capacity_mb) << 20;
  if (next_ <= capacity) return;
  throw CompileError(fmt::format("dram.capacity_mb: {} needs {:.2f} MiB of DRAM (its inputs, {}every result the "
                                 "host stores there); the configuration has {} MiB; allowed: >= {}",
                                 file, static_cast<double>(next_) / (1 << 20),
                                 dma ? "their operand images for the DMA (--no-dma: none), " : "", cfg.dram.capacity_mb,
                                 (next_ + (1 << 20) - 1) >> 20));
}

}  // namespace fetta::mapper
