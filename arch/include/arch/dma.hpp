// The DMA engine's descriptor (docs/dma.md): its bit layout for one geometry, the encoder, and
// the reference expansion into beats. Shared by the RTL (hw::Dma), its tests and the compiler,
// so none of them can disagree on a field.
//
// A beat is what the unified memory's host port moves in one cycle: P bank rows of T elements
// (the host port's lanes) at one (group, row) of the half the TCU is not using, and the same
// number of bytes at one beat-aligned DRAM address. A descriptor moves an affine nest of beats:
// for (i_0 .. i_2), level 0 innermost,
//   dram beat = dram_base + sum_l i_l * dram_stride[l]   (modulo 2^dram_beat_bits)
//   slot      = slot_base + sum_l i_l * slot_stride[l]   (modulo 2^slot_bits), slot = row * groups + group
// from DRAM into the unified memory or back. A load turns each beat by lane_rot lanes on the way
// (DRAM lane j lands in unified lane (j + lane_rot) mod lanes) and writes the lanes of lane_mask,
// counted after the turn; the others keep their value. A run of a DRAM beat's lanes can so land
// at any lane offset of a slot: a gather of a saved tensor into another layout is descriptors of
// such runs, each beat priced at the DRAM's burst however few of its lanes it writes.
// Like instructions, a descriptor travels as 32-bit words, word w holding bits [32w+31 : 32w].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"

namespace fetta::arch {

// What the DMA is built for: the unified memory's host port and the external address width.
struct DmaGeometry {
  int row_bits = 11;    // rows of one unified-memory half: log2(depth / 2)
  int group_bits = 2;   // log2(banks / host port banks): beats per unified row
  int lanes = 16;       // host port lanes (P banks x T elements): elements per beat
  int width = 16;       // bits per element
  int addr_bits = 32;   // external byte address width
  int beat_bytes() const { return lanes * width / 8; }
  int beat_shift() const;                                 // log2(beat_bytes())
  int slot_bits() const { return row_bits + group_bits; }
  int dram_beat_bits() const { return addr_bits - beat_shift(); }
  bool operator==(const DmaGeometry&) const = default;
};
// The default geometry of a configuration's top (32-bit external addresses).
DmaGeometry dma_geometry(const ArchConfig& cfg);
// Descriptors the top's DMA queues (hw::dma_params; the wall-cycle model's too).
inline constexpr int kTopDmaQueueDepth = 4;
// Requests the external memory port keeps waiting: as many as one DRAM latency at the bandwidth
// covers, and a few more, so a stream of beats gets the whole bandwidth (the system bench's
// port and the wall-cycle model).
size_t dram_port_depth(const ArchConfig& cfg);

// The external memory port's timing, one description for the system bench's DRAM port and the
// wall-cycle model. A request is one beat; the port serves the requests it takes one after
// another at the DRAM's bandwidth and answers each one DRAM latency after its transfer ends.
// Times are integer picoseconds of the bench's clock, whose 1 ns period stands for one cycle at
// clock_mhz: SystemC's default resolution, so the bench's sc_time sums are these integers.
class DramPortTiming {
 public:
  static constexpr int64_t kCyclePs = 1000;
  explicit DramPortTiming(const ArchConfig& cfg);
  // A request the port takes at the rising edge `taken_ps`: when its answer is due.
  int64_t take(int64_t taken_ps);
  // The same in the bench's cycles, counted at falling edges, where the bench and the wall-cycle
  // model look at the port: a request presented in cycle t is taken at the rising edge after it,
  // and its answer is presented in the returned cycle (the first falling edge at or after it is due).
  int64_t take_at_cycle(int64_t t);
  size_t depth() const { return depth_; }  // dram_port_depth

 private:
  int64_t per_beat_ps_ = 0, latency_ps_ = 0, free_at_ps_ = 0;
  size_t depth_ = 0;
};

// The DMA's own timing (hw::Dma's state machine), read by the wall-cycle model and checked on
// the RTL by the Dma block test: a descriptor's first request comes `first_request` cycles after
// it can start (the cycle its last word is written, its half frees or the one before is done), a
// save's first write `save_first_write` cycles later still (it reads the unified memory first),
// and a descriptor is done `done_after_last` cycles after its last response. A descriptor that
// may run beside the one before (any but a save after a load) makes its first request
// `overlap_request_gap` cycles after that one's last, without waiting for its responses.
struct DmaTiming {
  int first_request = 2;
  int save_first_write = 2;
  int done_after_last = 1;
  int overlap_request_gap = 3;
};
inline constexpr DmaTiming kDmaTiming{};

struct DmaDescriptor {
  static constexpr int kLevels = 3;
  bool to_dram = false;  // 0: DRAM -> unified memory (load); 1: unified memory -> DRAM (save)
  bool half = false;     // the physical half moved: the DMA starts it only while the TCU computes on the other
  uint64_t dram_base = 0;                          // in beats (byte address / beat bytes)
  uint64_t slot_base = 0;                          // row * groups + group
  std::array<uint64_t, kLevels> bound{1, 1, 1};    // iterations of each level, level 0 innermost
  std::array<int64_t, kLevels> dram_stride{}, slot_stride{};  // in beats / slots; negative steps back
  uint64_t lane_mask = ~uint64_t{0};               // load: unified lanes written (bit j = lane j); ignored by a save
  int lane_rot = 0;                                // load: DRAM lane j -> unified lane (j + lane_rot) mod lanes; a save's is 0
  int64_t beats() const { return static_cast<int64_t>(bound[0] * bound[1] * bound[2]); }
};

class DmaLayout {
 public:
  explicit DmaLayout(const DmaGeometry& g);
  const DmaGeometry& geometry() const { return g_; }
  int count_bits() const { return 16; }
  int bits() const { return bits_; }        // the fields' total
  int words() const { return (bits_ + 31) / 32; }
  const std::vector<IsaField>& fields() const { return fields_; }
  const IsaField& field(const std::string& name) const;  // "to_dram", "half", "dram_base", "slot_base",
                                                          // "bound_m1_l<l>", "dram_stride_l<l>", "slot_stride_l<l>", "lane_mask",
                                                          // "lane_rot" (log2(lanes) bits; absent for one lane)
  bool has_lane_rot() const { return g_.lanes > 1; }
 private:
  DmaGeometry g_;
  int bits_ = 0;
  std::vector<IsaField> fields_;
};

// Throws IsaError naming the field when a value does not fit (a base past its range, a bound of
// 0 or above 2^16, a lane_rot outside 0 .. lanes - 1 or not 0 on a save). Strides are taken modulo their field, as the hardware adds them.
Words encode_dma(const DmaLayout& layout, const DmaDescriptor& d);
// The inverse of encode_dma (strides come back as their two's-complement field values).
DmaDescriptor decode_dma(const DmaLayout& layout, const Words& words);
// The external bytes a descriptor moves: a whole beat per beat, however few lanes a load writes.
inline int64_t dma_bytes(const DmaLayout& layout, const Words& words) {
  return decode_dma(layout, words).beats() * layout.geometry().beat_bytes();
}
// "dma load half=1 dram=0x40 slot=12 bounds=4x2x1 dram_strides=1,8,0 slot_strides=4,1,0 mask=ffff"
// (and " rot=3" when a load turns its beats)
std::string describe_dma(const DmaLayout& layout, const DmaDescriptor& d);

// The reference: the descriptor's beats in the order the DMA moves them.
struct DmaBeat {
  uint64_t dram = 0;  // beat address
  uint64_t slot = 0;
  bool operator==(const DmaBeat&) const = default;
};
std::vector<DmaBeat> dma_beats(const DmaLayout& layout, const DmaDescriptor& d);
// The unified lane a load writes DRAM lane j of each beat into (before lane_mask selects it).
inline int dma_unified_lane(const DmaLayout& layout, const DmaDescriptor& d, int j) {
  return (j + d.lane_rot) % layout.geometry().lanes;
}

}  // namespace fetta::arch
