// Dma: moves affine nests of beats between an external memory port and the unified memory's host
// port (docs/dma.md). The host writes descriptors (arch/dma.hpp) as 32-bit words into a queue;
// the DMA runs them in order, each only while the TCU computes on the other half, every queued one in
// flight at once: the newest making its requests beside the earlier ones' responses (a save only
// while no load is in flight).
//
// Ports (H = lanes per beat, W = element bits, A = external byte address bits, hw = row bits,
// gw = max(1, group bits)):
//   desc_we, desc_word UInt<32> -> desc_ready   (hw::WordPort `desc`) descriptor words, word 0 first; ready: a whole
//                                               descriptor fits in the queue
//   compute_half UInt<1>                        the half the TCU computes on (the controller's)
//   busy                                        a descriptor is queued or running
//   host_half_busy                              the head descriptor (queued or running) moves the
//                                               host's half: a FLIP or a STORE into that half must wait
//   done_count UInt<32>                         descriptors finished since reset
//   error                                       sticky: a descriptor arrived while the queue was full (dropped)
// External memory (hw::DramPort `mem`: requests in order, one response per request, in order; responses are always
// accepted):
//   mem_req_valid, mem_req_ready (in), mem_req_write, mem_req_addr UInt<A>, mem_req_wdata Vec<H, UInt<W>>
//   mem_rsp_valid (in), mem_rsp_rdata Vec<H, UInt<W>> (in)   a write's response carries no data
// Unified memory host port (hw::HostPort `um`, driving UnifiedMemory's `host`; reads return one cycle later):
//   um_group UInt<gw>, um_row UInt<hw>, um_we, um_wmask UInt<H>, um_wdata Vec<H, UInt<W>>, um_re,
//   um_rdata Vec<H, UInt<W>> (in)
#pragma once

#include <string>

#include "arch/dma.hpp"
#include "arch/config.hpp"
#include "hw/ports.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct DmaParams {
  arch::DmaGeometry geometry;
  int queue_depth = arch::kTopDmaQueueDepth;  // descriptors: a power of two, 2 .. 16
};
DmaParams dma_params(const arch::ArchConfig& cfg);
std::string elaborate_dma(rtl::Design& design, const arch::ArchConfig& cfg);

class Dma : public rtl::IdentifiedGenerator<DmaParams> {
 public:
  static constexpr rtl::Port<WordPort> kDesc{"desc"};
  static constexpr rtl::Port<DramPort> kMem{"mem"};
  static constexpr rtl::Port<HostPort> kUm{"um"};
  explicit Dma(DmaParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::Dma"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
