// MemBank: one bank of the unified memory: `depth` rows of `elems` elements of `width` bits,
// two registered read ports (a, b) and one write port with a per-element write mask.
//
// Ports (aw = log2(depth)):
//   rd_a_en, rd_a_addr UInt<aw>  -> rd_a_data Vec<elems, UInt<width>> one cycle later
//   rd_b_en, rd_b_addr UInt<aw>  -> rd_b_data Vec<elems, UInt<width>> one cycle later
//   wr_en, wr_addr UInt<aw>, wr_mask UInt<elems> (bit e writes element e), wr_data Vec<elems, UInt<width>>
// Read data holds its value while the read enable is low. A read of the row written in the same
// cycle returns the old row (read-first).
//
// Storage: every element lane is two simple dual-port RAMs (one write, one registered read),
// copy a serving port a and copy b serving port b, written together. Each `memory()` is the
// 1W1R template every FPGA tool infers and every SRAM compiler offers; the module boundary is
// where an ASIC flow swaps in macros (docs/memory.md: the cost is twice the bits).
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct MemBankParams {
  int depth = 4096;  // rows: a power of two, 2 .. 2^24
  int elems = 4;     // elements per row: a power of two, 1 .. 64
  int width = 16;    // bits per element: 1 .. 64
};

class MemBank : public rtl::Generator<MemBankParams> {
 public:
  explicit MemBank(MemBankParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::MemBank"; }
  std::string module_name() const override;  // "mem_bank_d4096_t4_w16"
  rtl::ParamList params() const override;
  void build(rtl::Module& m) const override;
  int addr_bits() const;
};

}  // namespace fetta::hw
