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
// Storage (`storage`, docs/memory.md §1):
//   shared_port (default): one RAM per element lane with read port A (rd_a_addr) and a read/write
//     port B whose address is `wr_en ? wr_addr : rd_b_addr` (one signal feeding the RAM's read
//     and write port: a standard two-port macro with one read and one read/write port, 1R1RW).
//     THE RULE: a write (wr_en) and a port-B read (rd_b_en) never in the same cycle. Broken, the
//     write wins: it is done, the port-B read is not, and rd_b_data holds its last value.
//     Port A is independent of both (it may read any row, the written one included, read-first).
//   two_copies: every element lane is two 1W1R RAMs, copy a serving port a and copy b serving
//     port b, written together: no rule, twice the bits. Module name suffix "_2copy".
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

enum class BankStorage : int { shared_port = 0, two_copies = 1 };

// "shared_port", "two_copies"; throws std::invalid_argument "<what> = <n> is not a bank storage;
// allowed: shared_port, two_copies" for a value outside the enum.
std::string bank_storage_name(BankStorage s, const std::string& what = "storage");

struct MemBankParams {
  int depth = 4096;  // rows: a power of two, 2 .. 2^24
  int elems = 4;     // elements per row: a power of two, 1 .. 64
  int width = 16;    // bits per element: 1 .. 64
  BankStorage storage = BankStorage::shared_port;
};

class MemBank : public rtl::IdentifiedGenerator<MemBankParams> {
 public:
  explicit MemBank(MemBankParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::MemBank"; }
  // "mem_bank_d4096_t4_w16"; two_copies appends "_2copy": "mem_bank_d4096_t4_w16_2copy"
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
  int addr_bits() const;
};

}  // namespace fetta::hw
