// UnifiedMemory: `banks` banks of `elems` elements per row, split into two ping-pong halves of
// depth/2 rows each. The TCU ports address the half `compute_half` names; the host/DMA port
// addresses the other half. Each half of each bank is its own MemBank, so the two sides never
// share a port and never conflict (docs/memory.md).
//
// Ports (B = banks, T = elems, N = B*T lanes, lane b*T + e = bank b element e,
//        hw = log2(depth/2) row bits within a half):
//   compute_half UInt<1>                        which half the TCU ports address
//   ia_en UInt<B>, ia_addr Vec<B, UInt<hw>>     -> ia_data Vec<N, UInt<W>> one cycle later
//   ib_en UInt<B>, ib_addr Vec<B, UInt<hw>>     -> ib_data Vec<N, UInt<W>> one cycle later
//   wr_en UInt<B>, wr_addr Vec<B, UInt<hw>>, wr_mask UInt<N>, wr_data Vec<N, UInt<W>>   (results)
//   wr_other UInt<1>   the TCU write port writes the host's half instead (STORE into the next
//                      job's operands); the host port's writes are ignored meanwhile
//   host port `host` (hw::HostPort, its answering side), P = host_banks bank rows per cycle (banks g*P .. g*P+P-1 of group g, H = P*T lanes):
//   host_group UInt<max(1, log2(B/P))>, host_row UInt<hw>   the rows of the other half addressed
//   host_we, host_wmask UInt<H>, host_wdata Vec<H, UInt<W>>   (lane k*T + e = bank g*P+k, element e)
//   host_re -> host_rvalid, host_rdata Vec<H, UInt<W>> one cycle later
// Read data is valid in the cycle after its enable (and only then). Same-cycle read and write of
// one row: the read returns the old row.
//
// Storage (`storage`, passed to every MemBank): with shared_port (the default) the IB read and
// the TCU write share a port of the compute half's banks (1R1RW), so THE RULE: ib_en[b] and a TCU
// write to the compute half of bank b (wr_en[b] with wr_other = 0) never in the same cycle; broken,
// the write is done and ib_data of that bank holds its last value. IA reads, host traffic and
// TCU writes into the host's half (wr_other = 1) are unaffected; the host half's port B is idle.
// two_copies (module name suffix "_2copy") has no such rule and twice the bits (docs/memory.md §2).
#pragma once

#include <string>

#include "hw/mem/mem_bank.hpp"
#include "hw/ports.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct UnifiedMemoryParams {
  int banks = 16;     // a power of two, 2 .. 256
  int elems = 4;      // elements per bank row: a power of two, 1 .. 64
  int depth = 4096;   // rows per bank, both halves together: a power of two, 4 .. 2^24
  int width = 16;     // bits per element: 1 .. 64
  int host_banks = 1; // bank rows the host port moves per cycle: a power of two, 1 .. banks
  BankStorage storage = BankStorage::shared_port;  // of every MemBank
};

class UnifiedMemory : public rtl::IdentifiedGenerator<UnifiedMemoryParams> {
 public:
  static constexpr rtl::Port<HostPort> kHost{"host"};
  explicit UnifiedMemory(UnifiedMemoryParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::UnifiedMemory"; }
  // "unified_mem_b16_t4_d4096_w16_h4"; two_copies appends "_2copy"
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
  int lanes() const { return p.banks * p.elems; }
  int row_bits() const;   // address bits of a row within one half
  int host_groups() const { return p.banks / p.host_banks; }
  int host_lanes() const { return p.host_banks * p.elems; }
};

}  // namespace fetta::hw
