#include "arch/dma.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>

namespace fetta::arch {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw IsaError("DMA geometry: " + what);
}

uint64_t mask_of(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

}  // namespace

int DmaGeometry::beat_shift() const { return std::countr_zero(static_cast<unsigned>(beat_bytes())); }

size_t dram_port_depth(const ArchConfig& cfg) {
  const double beat_ns = static_cast<double>(dma_geometry(cfg).beat_bytes()) / cfg.dram.bandwidth_gbps;
  return static_cast<size_t>(std::ceil(cfg.dram.latency_ns / beat_ns)) + 4;
}

DramPortTiming::DramPortTiming(const ArchConfig& cfg) : depth_(dram_port_depth(cfg)) {
  const double cycles_per_ns = cfg.clock_mhz / 1000.0;
  const double beat_ns = static_cast<double>(dma_geometry(cfg).beat_bytes()) / cfg.dram.bandwidth_gbps;
  per_beat_ps_ = std::llround(beat_ns * cycles_per_ns * static_cast<double>(kCyclePs));
  latency_ps_ = std::llround(cfg.dram.latency_ns * cycles_per_ns * static_cast<double>(kCyclePs));
}

int64_t DramPortTiming::take(int64_t taken_ps) {
  free_at_ps_ = std::max(free_at_ps_, taken_ps) + per_beat_ps_;
  return free_at_ps_ + latency_ps_;
}

int64_t DramPortTiming::take_at_cycle(int64_t t) {
  const int64_t due = take((t + 1) * kCyclePs);
  // Falling edges at c * kCyclePs + kCyclePs / 2: the first at or after `due`.
  const int64_t after_edge = due - kCyclePs / 2;
  return after_edge <= 0 ? 0 : (after_edge + kCyclePs - 1) / kCyclePs;
}

DmaGeometry dma_geometry(const ArchConfig& cfg) {
  DmaGeometry g;
  g.row_bits = std::countr_zero(static_cast<unsigned>(cfg.memory.unified_depth / 2));
  g.group_bits = std::countr_zero(static_cast<unsigned>(cfg.memory.banks / host_port_banks(cfg)));
  g.lanes = host_port_lanes(cfg);
  g.width = operand_bits(cfg.dtype);
  g.addr_bits = 32;
  return g;
}

DmaLayout::DmaLayout(const DmaGeometry& g) : g_(g) {
  require(g.row_bits >= 1 && g.row_bits <= 24, fmt::format("row_bits = {}; allowed: 1 .. 24", g.row_bits));
  require(g.group_bits >= 0 && g.group_bits <= 10, fmt::format("group_bits = {}; allowed: 0 .. 10", g.group_bits));
  require(std::has_single_bit(static_cast<unsigned>(g.lanes)) && g.lanes <= 64,
          fmt::format("lanes = {}; allowed: a power of two, 1 .. 64", g.lanes));
  require(g.width >= 1 && g.width <= 64, fmt::format("width = {}; allowed: 1 .. 64", g.width));
  require(g.lanes * g.width % 8 == 0 && std::has_single_bit(static_cast<unsigned>(g.beat_bytes())),
          fmt::format("a beat of {} x {} bits is not a power-of-two number of bytes", g.lanes, g.width));
  require(g.addr_bits > g.beat_shift() && g.addr_bits <= 48,
          fmt::format("addr_bits = {}; allowed: {} .. 48 (more than the {}-byte beat's offset)", g.addr_bits,
                      g.beat_shift() + 1, g.beat_bytes()));
  const int D = g.dram_beat_bits(), S = g.slot_bits(), C = count_bits();
  auto add = [&](const std::string& name, int width) {
    fields_.push_back({name, bits_, width});
    bits_ += width;
  };
  add("to_dram", 1);
  add("half", 1);
  add("dram_base", D);
  add("slot_base", S);
  for (int l = 0; l < DmaDescriptor::kLevels; ++l) add(fmt::format("bound_m1_l{}", l), C);
  for (int l = 0; l < DmaDescriptor::kLevels; ++l) add(fmt::format("dram_stride_l{}", l), D);
  for (int l = 0; l < DmaDescriptor::kLevels; ++l) add(fmt::format("slot_stride_l{}", l), S);
  add("lane_mask", g.lanes);
  // Last, so that a descriptor that does not turn its beats encodes as it did before the field.
  if (has_lane_rot()) add("lane_rot", std::countr_zero(static_cast<unsigned>(g.lanes)));
}

const IsaField& DmaLayout::field(const std::string& name) const {
  for (const IsaField& f : fields_)
    if (f.name == name) return f;
  throw IsaError("DMA descriptor: no field '" + name + "'");
}

Words encode_dma(const DmaLayout& layout, const DmaDescriptor& d) {
  Words w(static_cast<size_t>(layout.words()), 0);
  auto put = [&](const std::string& name, uint64_t v, bool wrap) {
    const IsaField& f = layout.field(name);
    if (wrap) v &= mask_of(f.width);
    if (v > mask_of(f.width))
      throw IsaError(fmt::format("dma: {} = {} does not fit its {} bits; allowed: 0 .. {}", name, v, f.width,
                                 mask_of(f.width)));
    for (int i = 0; i < f.width; ++i)
      if ((v >> i) & 1U) w[static_cast<size_t>((f.lsb + i) / 32)] |= uint32_t{1} << ((f.lsb + i) % 32);
  };
  put("to_dram", d.to_dram, false);
  put("half", d.half, false);
  put("dram_base", d.dram_base, false);
  put("slot_base", d.slot_base, false);
  for (int l = 0; l < DmaDescriptor::kLevels; ++l) {
    const uint64_t b = d.bound[static_cast<size_t>(l)];
    if (b == 0 || b > (uint64_t{1} << layout.count_bits()))
      throw IsaError(fmt::format("dma: bound of level {} = {}; allowed: 1 .. {}", l, b,
                                 uint64_t{1} << layout.count_bits()));
    put(fmt::format("bound_m1_l{}", l), b - 1, false);
    put(fmt::format("dram_stride_l{}", l), static_cast<uint64_t>(d.dram_stride[static_cast<size_t>(l)]), true);
    put(fmt::format("slot_stride_l{}", l), static_cast<uint64_t>(d.slot_stride[static_cast<size_t>(l)]), true);
  }
  put("lane_mask", d.lane_mask & mask_of(layout.geometry().lanes), false);
  const int lanes = layout.geometry().lanes;
  if (d.lane_rot < 0 || d.lane_rot >= lanes)
    throw IsaError(fmt::format("dma: lane_rot = {}; allowed: 0 .. {} (the beat's lanes)", d.lane_rot, lanes - 1));
  if (d.to_dram && d.lane_rot != 0)
    throw IsaError(fmt::format("dma: lane_rot = {} on a save; allowed: 0 (only a load turns its beats)", d.lane_rot));
  if (layout.has_lane_rot()) put("lane_rot", static_cast<uint64_t>(d.lane_rot), false);
  return w;
}

DmaDescriptor decode_dma(const DmaLayout& layout, const Words& words) {
  if (words.size() != static_cast<size_t>(layout.words()))
    throw IsaError(fmt::format("dma: a descriptor is {} words, not {}", layout.words(), words.size()));
  auto get = [&](const std::string& name) { return field_value(words, layout.field(name)); };
  DmaDescriptor d;
  d.to_dram = get("to_dram") != 0;
  d.half = get("half") != 0;
  d.dram_base = get("dram_base");
  d.slot_base = get("slot_base");
  for (int l = 0; l < DmaDescriptor::kLevels; ++l) {
    const auto i = static_cast<size_t>(l);
    d.bound[i] = get(fmt::format("bound_m1_l{}", l)) + 1;
    d.dram_stride[i] = static_cast<int64_t>(get(fmt::format("dram_stride_l{}", l)));
    d.slot_stride[i] = static_cast<int64_t>(get(fmt::format("slot_stride_l{}", l)));
  }
  d.lane_mask = get("lane_mask");
  if (layout.has_lane_rot()) d.lane_rot = static_cast<int>(get("lane_rot"));
  return d;
}

std::string describe_dma(const DmaLayout& layout, const DmaDescriptor& d) {
  const std::string rot = d.lane_rot != 0 ? fmt::format(" rot={}", d.lane_rot) : std::string();
  return fmt::format("dma {} half={} dram=0x{:x} slot={} bounds={}x{}x{} dram_strides={},{},{} slot_strides={},{},{} mask={:x}",
                     d.to_dram ? "save" : "load", d.half ? 1 : 0, d.dram_base, d.slot_base, d.bound[0], d.bound[1],
                     d.bound[2], d.dram_stride[0], d.dram_stride[1], d.dram_stride[2], d.slot_stride[0],
                     d.slot_stride[1], d.slot_stride[2], d.lane_mask & mask_of(layout.geometry().lanes)) +
         rot;
}

std::vector<DmaBeat> dma_beats(const DmaLayout& layout, const DmaDescriptor& d) {
  const uint64_t dm = mask_of(layout.geometry().dram_beat_bits()), sm = mask_of(layout.geometry().slot_bits());
  std::vector<DmaBeat> out;
  out.reserve(static_cast<size_t>(d.beats()));
  for (uint64_t i2 = 0; i2 < d.bound[2]; ++i2)
    for (uint64_t i1 = 0; i1 < d.bound[1]; ++i1)
      for (uint64_t i0 = 0; i0 < d.bound[0]; ++i0) {
        const uint64_t i[3] = {i0, i1, i2};
        uint64_t dram = d.dram_base, slot = d.slot_base;
        for (size_t l = 0; l < 3; ++l) {
          dram += i[l] * static_cast<uint64_t>(d.dram_stride[l]);
          slot += i[l] * static_cast<uint64_t>(d.slot_stride[l]);
        }
        out.push_back({dram & dm, slot & sm});
      }
  return out;
}

}  // namespace fetta::arch
