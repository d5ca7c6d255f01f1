// DMA gathers (mapper/gather.hpp).
#include "mapper/gather.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "mapper/dma_transfers.hpp"
#include "mapper/movement.hpp"
#include "mapper/store.hpp"

namespace fetta::mapper {

namespace {

// One DMA beat of the gather: DRAM beat -> slot, turned by rot, writing mask.
struct GatherBeat {
  int rot = 0;
  uint64_t mask = 0;
  int64_t slot = 0;
  uint64_t dram = 0;
  auto key() const { return std::tie(rot, mask, slot, dram); }
};

arch::DmaDescriptor single(const GatherBeat& b, bool half) {
  arch::DmaDescriptor d;
  d.half = half;
  d.dram_base = b.dram;
  d.slot_base = static_cast<uint64_t>(b.slot);
  d.lane_mask = b.mask;
  d.lane_rot = b.rot;
  return d;
}

// Same shape below level `l` (bounds and strides), turn and mask: d and e may become level l of one nest.
bool same_below(const arch::DmaDescriptor& d, const arch::DmaDescriptor& e, size_t l) {
  if (d.lane_rot != e.lane_rot || d.lane_mask != e.lane_mask || d.half != e.half) return false;
  for (size_t i = 0; i < l; ++i)
    if (d.bound[i] != e.bound[i] || d.dram_stride[i] != e.dram_stride[i] || d.slot_stride[i] != e.slot_stride[i])
      return false;
  return true;
}

// Folds runs of descriptors that differ only by a constant base step into level `l` of one.
std::vector<arch::DmaDescriptor> fold(const std::vector<arch::DmaDescriptor>& in, size_t l, uint64_t max_bound) {
  std::vector<arch::DmaDescriptor> out;
  for (const arch::DmaDescriptor& e : in) {
    if (!out.empty()) {
      arch::DmaDescriptor& d = out.back();
      const auto dd = static_cast<int64_t>(e.dram_base - d.dram_base), ds = static_cast<int64_t>(e.slot_base - d.slot_base);
      const bool higher_unused = std::all_of(d.bound.begin() + static_cast<std::ptrdiff_t>(l) + 1, d.bound.end(),
                                             [](uint64_t b) { return b == 1; });
      if (higher_unused && same_below(d, e, l) && d.bound[l] < max_bound &&
          (d.bound[l] == 1 || (dd == d.dram_stride[l] * static_cast<int64_t>(d.bound[l]) &&
                               ds == d.slot_stride[l] * static_cast<int64_t>(d.bound[l])))) {
        if (d.bound[l] == 1) {
          d.dram_stride[l] = dd;
          d.slot_stride[l] = ds;
        }
        ++d.bound[l];
        continue;
      }
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace

GatherPlan plan_gather(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                       const SavedRows& saved, uint64_t pad_beat, bool half) {
  GatherPlan plan;
  const arch::DmaGeometry g = arch::dma_geometry(cfg);
  const int64_t H = g.lanes, groups = int64_t{1} << g.group_bits;
  if (c.replicate != 1 && (as_a || !c.map.ib_top)) {
    plan.why_not = "the consumer's operand is replicated per CE (fixed network)";
    return plan;
  }
  std::vector<ImageElement> el;
  if (std::string why = result_image_elements(p, c, as_a, job, el); !why.empty()) {
    plan.why_not = why;
    return plan;
  }
  if (saved.chunk_beat.size() != output_chunks(p).size())
    throw std::invalid_argument(fmt::format("plan_gather: {} saved chunks for a producer of {} output chunks",
                                            saved.chunk_beat.size(), output_chunks(p).size()));
  const ImageShape img = image_shape(c, as_a, job);
  const int64_t first_row = as_a ? c.jobs[job].a_base : c.jobs[job].b_base;
  const int64_t per_row = image_beats_per_row(g, img.lanes);
  // (slot, dram beat, turn) -> the lanes it writes; and per slot the lanes the elements cover.
  std::map<std::tuple<int64_t, uint64_t, int>, uint64_t> beats;
  std::map<int64_t, uint64_t> covered;
  for (const ImageElement& e : el) {
    const int64_t slot = e.dst_row * groups + e.dst_lane / H, k = e.dst_lane % H;
    const int64_t src_beat = e.src_lane / H - saved.first_beat;
    if (src_beat < 0 || src_beat >= saved.beats)
      throw std::logic_error("internal: a result lane outside the saved beats");
    const uint64_t dram = saved.chunk_beat[e.chunk] + static_cast<uint64_t>(e.src_row * saved.beats + src_beat);
    const int rot = static_cast<int>(((k - e.src_lane % H) % H + H) % H);
    beats[{slot, dram, rot}] |= uint64_t{1} << k;
    covered[slot] |= uint64_t{1} << k;
  }
  std::vector<GatherBeat> list;
  for (const auto& [key, mask] : beats) list.push_back({std::get<2>(key), mask, std::get<0>(key), std::get<1>(key)});
  for (int64_t r = 0; r < img.rows; ++r)
    for (int64_t b = 0; b < per_row; ++b) {
      const int64_t slot = (first_row + r) * groups + b;
      const int64_t lanes = std::min<int64_t>(H, img.lanes - b * H);
      const uint64_t want = lanes >= 64 ? ~uint64_t{0} : (uint64_t{1} << lanes) - 1;
      const uint64_t pad = want & ~covered[slot];
      if (pad == 0) continue;
      list.push_back({0, pad, slot, pad_beat});
      ++plan.pad_beats;
    }
  // Beats of one turn and mask in slot order, or in DRAM order: whichever folds into fewer nests
  // (each descriptor costs a DRAM latency, since the DMA runs one at a time).
  const uint64_t max_bound = uint64_t{1} << arch::DmaLayout(g).count_bits();
  auto nests = [&](auto order) {
    std::sort(list.begin(), list.end(), order);
    std::vector<arch::DmaDescriptor> descs;
    for (const GatherBeat& b : list) descs.push_back(single(b, half));
    for (size_t l = 0; l < arch::DmaDescriptor::kLevels; ++l) descs = fold(descs, l, max_bound);
    return descs;
  };
  std::vector<arch::DmaDescriptor> by_slot =
      nests([](const GatherBeat& a, const GatherBeat& b) { return a.key() < b.key(); });
  std::vector<arch::DmaDescriptor> by_dram = nests([](const GatherBeat& a, const GatherBeat& b) {
    return std::tie(a.rot, a.mask, a.dram, a.slot) < std::tie(b.rot, b.mask, b.dram, b.slot);
  });
  plan.descriptors = by_dram.size() < by_slot.size() ? std::move(by_dram) : std::move(by_slot);
  plan.beats = static_cast<int64_t>(list.size());
  plan.image_beats = img.rows * per_row;
  plan.elements = static_cast<int64_t>(el.size());
  return plan;
}

SavedRows consecutive_saves(const CompiledGemm& p, int host_lanes, uint64_t first) {
  const std::array<int64_t, 2> sb = saved_beats(p, host_lanes);
  SavedRows saved{{}, sb[0], sb[1]};
  for (size_t job : output_chunks(p)) {
    saved.chunk_beat.push_back(first);
    first += static_cast<uint64_t>(acc_rows(p, p.jobs[job]) * sb[1]);
  }
  return saved;
}

int64_t gather_cycles(const arch::ArchConfig& cfg, const GatherPlan& plan) {
  if (plan.descriptors.empty()) return 0;
  const arch::DmaTiming& t = arch::kDmaTiming;
  const double cycles_per_ns = cfg.clock_mhz / 1000.0;
  const double beat_cycles =
      static_cast<double>(arch::dma_geometry(cfg).beat_bytes()) / cfg.dram.bandwidth_gbps * cycles_per_ns;
  // Each load makes its requests beside the one before's responses: the DRAM's bursts, or the
  // request side's beat a cycle and gap between descriptors, whichever is slower; the latency once.
  const auto n = static_cast<double>(plan.descriptors.size());
  const double bursts = static_cast<double>(plan.beats) * beat_cycles;
  const double requests = static_cast<double>(plan.beats) + (n - 1) * t.overlap_request_gap;
  const double cyc = t.first_request + std::max(bursts, requests) + cfg.dram.latency_ns * cycles_per_ns + t.done_after_last;
  return static_cast<int64_t>(std::ceil(cyc - 1e-9));
}

}  // namespace fetta::mapper
