// The DRAM map of a layer's program: every tensor and operand image the program keeps in DRAM
// gets an address, in order from 0, each extent as dram_extent rounds it (mapper/compile.hpp); a
// layer input is placed once, at its first use, and every network reading it shares that copy.
// Nothing is freed within a layer; the next layer starts from 0 again (its programs run after).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "arch/config.hpp"

namespace fetta::mapper {

class DramMap {
 public:
  // A new layer: addresses from 0, no input placed.
  void reset();
  // `elements` of `bytes` each: the first byte address of their extent.
  uint64_t allocate(int64_t elements, int bytes);
  // Layer input `name` (`elements` of `bytes`): its address, and whether this call placed it.
  struct Input {
    uint64_t addr = 0;
    bool placed = false;
  };
  Input input(const std::string& name, int64_t elements, int bytes);
  // Bytes the layer's map takes.
  uint64_t used() const { return next_; }
  // Throws CompileError naming dram.capacity_mb, the layer `file`, what the map holds (`dma`: the
  // inputs' operand images too) and the least capacity allowed when used() exceeds it.
  void check_capacity(const arch::ArchConfig& cfg, const std::string& file, bool dma) const;

 private:
  uint64_t next_ = 0;
  std::map<std::string, uint64_t> inputs_;
};

}  // namespace fetta::mapper
