// Dma against its C++ model (arch::dma_beats applied in order): random descriptors (both
// directions, both halves, bounds of 1 and up, zero, negative and wrapping strides, random lane
// masks) run under random backpressure and in-order responses of random latency on the memory
// port, and random FLIPs of the compute half wherever the controller's rule allows one
// (host_half_busy low). Checked: the sequence of external requests (direction, address, write
// data), the final DRAM and both unified-memory halves, that the host port only ever touches the
// head descriptor's half while the TCU computes on the other, host_half_busy and busy against the
// queue, done_count, and the error flag. Directed: one beat per cycle in both directions with an
// always-ready port, the queue overflow (dropped, flagged, the others still run).
#include <catch2/catch.hpp>
#include <fmt/ranges.h>

#include <deque>
#include <functional>
#include <random>
#include <vector>

#include "Vdma_r3_g0_n2_w16_a10_q4.h"
#include "Vdma_r4_g1_n4_w8_a12_q2.h"
#include "arch/dma.hpp"
#include "mem_test_util.hpp"
#include "verilated.h"

namespace {

using fetta::arch::DmaBeat;
using fetta::arch::DmaDescriptor;
using fetta::arch::DmaGeometry;
using fetta::arch::DmaLayout;
using Beat = std::vector<uint64_t>;  // one value per lane

struct DmaPorts {
  mem_test::Ports req_wdata, rsp_rdata, um_wdata, um_rdata;
};

struct Request {
  bool write = false;
  uint64_t addr = 0;
  Beat data;  // a write's data
  bool operator==(const Request&) const = default;
};

// The memory images a run leaves: DRAM beats and both unified-memory halves' slots.
struct Image {
  std::vector<Beat> dram;
  std::vector<Beat> um[2];
  bool operator==(const Image&) const = default;
};

struct Traffic {
  int ready_pct = 100;     // mem_req_ready high with this probability
  int max_latency = 1;     // a response comes 1 .. max_latency cycles after its request (in order)
  int flip_pct = 0;        // a FLIP is tried with this probability in a cycle that allows one
};

template <typename V>
class DmaBench {
 public:
  DmaBench(const DmaGeometry& g, const std::function<DmaPorts(V&)>& ports)
      : layout_(g), dut_(&ctx_), p_(ports(dut_)) {
    img_.dram.assign(size_t{1} << g.dram_beat_bits(), Beat(static_cast<size_t>(g.lanes), 0));
    for (auto& h : img_.um) h.assign(size_t{1} << g.slot_bits(), Beat(static_cast<size_t>(g.lanes), 0));
    mem_test::reset(dut_);
  }

  const DmaLayout& layout() const { return layout_; }
  const Image& image() const { return img_; }
  Image& image() { return img_; }

  // The model: the descriptors applied in order to `img`, and the requests they make.
  Image model(Image img, const std::vector<DmaDescriptor>& descs, std::vector<Request>& reqs) const {
    const uint64_t lane_mask_all = mem_test::mask_bits(layout_.geometry().lanes);
    for (const DmaDescriptor& d : descs)
      for (const DmaBeat& b : fetta::arch::dma_beats(layout_, d)) {
        Beat& u = img.um[d.half ? 1 : 0][b.slot];
        Beat& m = img.dram[b.dram];
        const uint64_t addr = b.dram << layout_.geometry().beat_shift();
        if (d.to_dram) {
          m = u;
          reqs.push_back({true, addr, u});
        } else {
          for (size_t j = 0; j < u.size(); ++j) {
            const auto k = static_cast<size_t>(fetta::arch::dma_unified_lane(layout_, d, static_cast<int>(j)));
            if (((d.lane_mask & lane_mask_all) >> k) & 1U) u[k] = m[j];
          }
          reqs.push_back({false, addr, {}});
        }
      }
    return img;
  }

  // Runs the descriptors; returns the requests seen. Every check failure goes to `bad`.
  std::vector<Request> run(const std::vector<DmaDescriptor>& descs, const Traffic& t, std::mt19937_64& rng,
                           int64_t max_cycles = 200000) {
    std::vector<Request> seen;
    std::deque<uint32_t> words;
    std::vector<size_t> last_word_of;  // index into the words stream of each descriptor's last word
    for (const DmaDescriptor& d : descs) {
      for (uint32_t w : fetta::arch::encode_dma(layout_, d)) words.push_back(w);
      last_word_of.push_back(words.size() - 1);
    }
    const size_t total_words = words.size();
    size_t sent = 0;        // words sent
    size_t queued = 0;      // descriptors accepted (last word sent while ready)
    const uint64_t done0 = dut_.done_count;
    queued_before_ = 0;
    last_due_ = 0;  // cycles count from 0 in every run (no response is pending between runs)
    const int H = layout_.geometry().lanes;
    for (int64_t cyc = 0;; ++cyc) {
      if (cyc > max_cycles) {
        bad.note(fmt::format("timeout after {} cycles: {} of {} descriptors done, busy = {}", cyc,
                             dut_.done_count - done0, descs.size(), static_cast<int>(dut_.busy)));
        return seen;
      }
      const uint64_t done = dut_.done_count - done0;
      if (sent == total_words && done == descs.size() && rsp_.empty()) break;
      // Inputs that depend on nothing the DUT shows this cycle.
      dut_.mem_req_ready = static_cast<int>(rng() % 100) < t.ready_pct;
      const bool rsp_now = !rsp_.empty() && rsp_.front().due <= cyc;
      dut_.mem_rsp_valid = rsp_now;
      for (int j = 0; j < H; ++j) p_.rsp_rdata[j].set(rsp_now ? rsp_.front().data[static_cast<size_t>(j)] : 0xA5);
      for (int j = 0; j < H; ++j) p_.um_rdata[j].set(um_read_[static_cast<size_t>(j)]);
      dut_.compute_half = compute_half_;
      dut_.desc_we = 0;
      mem_test::settle(dut_);
      // The host: the next word, the last one of a descriptor only while the queue has room.
      if (sent < total_words && rng() % 4 != 0) {
        const bool last = std::find(last_word_of.begin(), last_word_of.end(), sent) != last_word_of.end();
        if (!last || dut_.desc_ready) {
          dut_.desc_we = 1;
          dut_.desc_word = words[sent];
          queued += last;
          ++sent;
        }
      }
      mem_test::settle(dut_);
      // The queue as the host knows it: descriptors [done, queued) are in it, the head at `done`.
      const bool has_head = queued_before_ > done;
      const bool head_half = has_head && descs[done].half;
      const bool want_hhb = has_head && head_half != compute_half_;
      if (static_cast<bool>(dut_.host_half_busy) != want_hhb || static_cast<bool>(dut_.busy) != has_head)
        bad.note(fmt::format("cycle {}: host_half_busy = {} busy = {}, expected {} {} (head {} of {}, compute half {})", cyc,
                             static_cast<int>(dut_.host_half_busy), static_cast<int>(dut_.busy), want_hhb, has_head,
                             done, queued_before_, compute_half_));
      // The memory port.
      if (dut_.mem_req_valid && dut_.mem_req_ready) {
        Request r{static_cast<bool>(dut_.mem_req_write), dut_.mem_req_addr, {}};
        const uint64_t beat = r.addr >> layout_.geometry().beat_shift();
        if ((beat << layout_.geometry().beat_shift()) != r.addr)
          bad.note(fmt::format("cycle {}: request address 0x{:x} is not beat-aligned", cyc, r.addr));
        Pending resp;
        resp.due = std::max(last_due_, cyc + 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(t.max_latency)));
        last_due_ = resp.due;
        Beat& m = img_.dram[beat & (img_.dram.size() - 1)];
        if (r.write) {
          for (int j = 0; j < H; ++j) r.data.push_back(p_.req_wdata[j].get());
          m = r.data;
        } else {
          resp.data = m;
        }
        if (resp.data.empty()) resp.data.assign(static_cast<size_t>(H), 0x5A);
        rsp_.push_back(resp);
        seen.push_back(r);
      }
      if (rsp_now) rsp_.pop_front();
      // The unified memory's host port: always the half the TCU is not using.
      const int host_half = compute_half_ ? 0 : 1;
      const uint64_t slot = (static_cast<uint64_t>(dut_.um_row) << layout_.geometry().group_bits) |
                            (layout_.geometry().group_bits ? static_cast<uint64_t>(dut_.um_group) : 0);
      if (dut_.um_we || dut_.um_re) {
        if (!has_head || head_half != (host_half == 1))
          bad.note(fmt::format("cycle {}: host port used on half {} while the head descriptor moves half {}", cyc,
                               host_half, has_head ? static_cast<int>(head_half) : -1));
        if (dut_.um_we && dut_.um_re) bad.note(fmt::format("cycle {}: um_we and um_re together", cyc));
      }
      Beat& u = img_.um[host_half][slot];
      if (dut_.um_we)
        for (int j = 0; j < H; ++j)
          if ((dut_.um_wmask >> j) & 1U) u[static_cast<size_t>(j)] = p_.um_wdata[j].get();
      if (dut_.um_re) um_read_ = u;
      // The controller: a FLIP only where the DMA's head does not hold the host half.
      const bool flip = !want_hhb && static_cast<int>(rng() % 100) < t.flip_pct;
      queued_before_ = queued;
      mem_test::edge(dut_);
      if (flip) compute_half_ = !compute_half_, ++flips;
    }
    if (dut_.busy) bad.note("busy after every descriptor finished");
    return seen;
  }

  // Runs `descs` from the current image and checks everything against the model.
  void check(const std::vector<DmaDescriptor>& descs, const Traffic& t, std::mt19937_64& rng) {
    std::vector<Request> want_reqs;
    const Image want = model(img_, descs, want_reqs);
    const std::vector<Request> got = run(descs, t, rng);
    if (got.size() != want_reqs.size())
      bad.note(fmt::format("{} requests, expected {}", got.size(), want_reqs.size()));
    for (size_t i = 0; i < std::min(got.size(), want_reqs.size()); ++i)
      if (!(got[i] == want_reqs[i])) {
        bad.note(fmt::format("request {}: {} 0x{:x}, expected {} 0x{:x}{}", i, got[i].write ? "write" : "read", got[i].addr,
                             want_reqs[i].write ? "write" : "read", want_reqs[i].addr,
                             got[i].data != want_reqs[i].data ? " (data differs)" : ""));
        break;
      }
    if (!(img_ == want)) bad.note("the memories differ from the model after the run");
    beats += static_cast<long>(want_reqs.size());
    descriptors += static_cast<long>(descs.size());
  }

  DmaDescriptor random_descriptor(std::mt19937_64& rng) const {
    const DmaGeometry& g = layout_.geometry();
    DmaDescriptor d;
    d.to_dram = rng() % 2;
    d.half = rng() % 2;
    d.dram_base = rng() & mem_test::mask_bits(g.dram_beat_bits());
    d.slot_base = rng() & mem_test::mask_bits(g.slot_bits());
    for (size_t l = 0; l < 3; ++l) {
      const unsigned k = static_cast<unsigned>(rng() % 4);
      d.bound[l] = k == 0 ? 1 : 1 + rng() % (l == 0 ? 24 : 5);
      auto stride = [&](int bits) -> int64_t {
        switch (rng() % 5) {
          case 0: return 0;
          case 1: return 1;
          case 2: return -1 - static_cast<int64_t>(rng() % 4);
          default: return static_cast<int64_t>(rng() & mem_test::mask_bits(bits));
        }
      };
      d.dram_stride[l] = stride(g.dram_beat_bits());
      d.slot_stride[l] = stride(g.slot_bits());
    }
    d.lane_mask = rng() % 3 == 0 ? ~uint64_t{0} : rng();
    if (!d.to_dram && rng() % 2 == 0) d.lane_rot = static_cast<int>(rng() % static_cast<uint64_t>(g.lanes));
    return d;
  }

  void randomize_memories(std::mt19937_64& rng) {
    const uint64_t m = mem_test::mask_bits(layout_.geometry().width);
    for (Beat& b : img_.dram)
      for (uint64_t& v : b) v = rng() & m;
    for (auto& h : img_.um)
      for (Beat& b : h)
        for (uint64_t& v : b) v = rng() & m;
  }

  V& dut() { return dut_; }
  mem_test::Mismatches bad;
  long beats = 0, descriptors = 0, flips = 0;

 private:
  struct Pending {
    int64_t due = 0;
    Beat data;
  };
  DmaLayout layout_;
  VerilatedContext ctx_;
  V dut_;
  DmaPorts p_;
  Image img_;
  std::deque<Pending> rsp_;
  int64_t last_due_ = 0;
  Beat um_read_ = Beat(64, 0);
  bool compute_half_ = false;
  size_t queued_before_ = 0;
};

DmaGeometry geometry(int row_bits, int group_bits, int lanes, int width, int addr_bits) {
  DmaGeometry g;
  g.row_bits = row_bits;
  g.group_bits = group_bits;
  g.lanes = lanes;
  g.width = width;
  g.addr_bits = addr_bits;
  return g;
}

using DmaA = DmaBench<Vdma_r4_g1_n4_w8_a12_q2>;
using DmaB = DmaBench<Vdma_r3_g0_n2_w16_a10_q4>;

DmaPorts ports_a(Vdma_r4_g1_n4_w8_a12_q2& d) {
  return {MEM_PORTS4(d, mem_req_wdata), MEM_PORTS4(d, mem_rsp_rdata), MEM_PORTS4(d, um_wdata), MEM_PORTS4(d, um_rdata)};
}
DmaPorts ports_b(Vdma_r3_g0_n2_w16_a10_q4& d) {
  return {MEM_PORTS2(d, mem_req_wdata), MEM_PORTS2(d, mem_rsp_rdata), MEM_PORTS2(d, um_wdata), MEM_PORTS2(d, um_rdata)};
}

template <typename B>
void random_runs(B& b, uint64_t seed, int runs) {
  std::mt19937_64 rng(seed);
  b.randomize_memories(rng);
  for (int r = 0; r < runs && !b.bad.count; ++r) {
    std::vector<DmaDescriptor> descs(1 + rng() % 6);
    for (DmaDescriptor& d : descs) d = b.random_descriptor(rng);
    Traffic t;
    t.ready_pct = r % 3 == 0 ? 100 : 30 + static_cast<int>(rng() % 70);
    t.max_latency = r % 4 == 0 ? 1 : 1 + static_cast<int>(rng() % 12);
    t.flip_pct = 1 + static_cast<int>(rng() % 30);  // a head on the compute half waits for one
    b.check(descs, t, rng);
  }
}

}  // namespace

TEST_CASE("Dma: random descriptors under backpressure, latency and FLIPs match the model", "[dma]") {
  const int runs = 60 * mem_test::scale();
  {
    DmaA a(geometry(4, 1, 4, 8, 12), ports_a);
    random_runs(a, mem_test::seed("dma_r4_g1_n4_w8_a12_q2", 0xD3A1), runs);
    INFO(a.bad.first);
    CHECK(a.bad.count == 0);
    CHECK(a.flips > 0);
    CHECK(a.dut().error == 0);
    std::cout << fmt::format("[mem] dma_r4_g1_n4_w8_a12_q2: {} descriptors, {} beats, {} flips\n", a.descriptors,
                             a.beats, a.flips);
  }
  {
    DmaB b(geometry(3, 0, 2, 16, 10), ports_b);
    random_runs(b, mem_test::seed("dma_r3_g0_n2_w16_a10_q4", 0xD3A2), runs);
    INFO(b.bad.first);
    CHECK(b.bad.count == 0);
    CHECK(b.dut().error == 0);
    std::cout << fmt::format("[mem] dma_r3_g0_n2_w16_a10_q4: {} descriptors, {} beats, {} flips\n", b.descriptors,
                             b.beats, b.flips);
  }
}

TEST_CASE("Dma: every unified-memory slot and lane pattern of a small half", "[dma]") {
  // Every (row, group) slot of half 1 loaded with its own DRAM beat under each single-lane mask
  // and the full mask, then saved back elsewhere in reverse slot order.
  DmaA a(geometry(4, 1, 4, 8, 12), ports_a);
  std::mt19937_64 rng(mem_test::seed("dma patterns", 7));
  a.randomize_memories(rng);
  const int slots = 1 << a.layout().geometry().slot_bits();
  std::vector<DmaDescriptor> descs;
  for (uint64_t mask : {0x1ULL, 0x2ULL, 0x4ULL, 0x8ULL, 0xFULL}) {
    DmaDescriptor d;
    d.half = true;
    d.dram_base = mask * 64;
    d.bound = {static_cast<uint64_t>(slots), 1, 1};
    d.dram_stride = {1, 0, 0};
    d.slot_stride = {1, 0, 0};
    d.lane_mask = mask;
    descs.push_back(d);
  }
  DmaDescriptor save;
  save.to_dram = true;
  save.half = true;
  save.dram_base = 900;
  save.slot_base = static_cast<uint64_t>(slots - 1);
  save.bound = {2, static_cast<uint64_t>(slots / 2), 1};  // two groups of a row, rows downwards
  save.dram_stride = {1, 2, 0};
  save.slot_stride = {1, -2, 0};
  save.slot_base = static_cast<uint64_t>(slots - 2);
  descs.push_back(save);
  a.check(descs, Traffic{60, 5, 10}, rng);
  INFO(a.bad.first);
  CHECK(a.bad.count == 0);
  // The save read every slot once: DRAM beats 900 .. 900 + slots - 1 hold half 1's rows, last row first.
  for (int i = 0; i < slots; ++i) {
    const int row = slots / 2 - 1 - i / 2, group = i % 2;
    CHECK(a.image().dram[static_cast<size_t>(900 + i)] == a.image().um[1][static_cast<size_t>(row * 2 + group)]);
  }
}

TEST_CASE("Dma: every lane turn lands each DRAM lane in its unified lane", "[dma]") {
  // Each turn of a 4-lane beat, under the full mask and under each one-lane mask (the gather's
  // run of one element), into its own slots of half 1.
  DmaA a(geometry(4, 1, 4, 8, 12), ports_a);
  std::mt19937_64 rng(mem_test::seed("dma lane turns", 11));
  a.randomize_memories(rng);
  std::vector<DmaDescriptor> descs;
  uint64_t slot = 0;
  for (int rot = 0; rot < 4; ++rot)
    for (uint64_t mask : {0x1ULL, 0x2ULL, 0x4ULL, 0x8ULL, 0xFULL}) {
      DmaDescriptor d;
      d.half = true;
      d.dram_base = 3 + slot * 5;
      d.slot_base = slot;
      d.bound = {1, 1, 1};
      d.lane_mask = mask;
      d.lane_rot = rot;
      descs.push_back(d);
      ++slot;
    }
  const Image before = a.image();
  a.check(descs, Traffic{70, 6, 10}, rng);
  INFO(a.bad.first);
  CHECK(a.bad.count == 0);
  // Independently of the bench's model: lane k of the slot holds DRAM lane (k - rot) mod 4 where the mask has k.
  for (size_t i = 0; i < descs.size(); ++i) {
    const DmaDescriptor& d = descs[i];
    for (size_t k = 0; k < 4; ++k) {
      const uint64_t want = ((d.lane_mask >> k) & 1U) ? before.dram[d.dram_base][(k + 4 - static_cast<size_t>(d.lane_rot)) % 4]
                                                      : before.um[1][d.slot_base][k];
      CHECK(a.image().um[1][d.slot_base][k] == want);
    }
  }
}

TEST_CASE("Dma: one beat per cycle each way with an always-ready port", "[dma]") {
  DmaA a(geometry(4, 1, 4, 8, 12), ports_a);
  std::mt19937_64 rng(mem_test::seed("dma throughput", 3));
  for (const bool to_dram : {false, true}) {
    DmaDescriptor d;
    d.to_dram = to_dram;
    d.half = true;  // the TCU computes on half 0: the DMA may start at once
    d.bound = {32, 1, 1};
    d.dram_stride = {1, 0, 0};
    d.slot_stride = {1, 0, 0};
    // Count the cycles from the first accepted request to the last.
    int64_t first = -1, last = -1, cyc = 0;
    auto& dut = a.dut();
    for (uint32_t w : fetta::arch::encode_dma(a.layout(), d)) {
      dut.desc_we = 1;
      dut.desc_word = w;
      mem_test::tick(dut);
    }
    dut.desc_we = 0;
    dut.mem_req_ready = 1;
    dut.compute_half = 0;
    std::deque<int64_t> acks;
    for (; cyc < 400 && dut.done_count < (to_dram ? 2U : 1U); ++cyc) {
      dut.mem_rsp_valid = !acks.empty() && acks.front() <= cyc;
      if (dut.mem_rsp_valid) acks.pop_front();
      mem_test::settle(dut);
      if (dut.mem_req_valid) {
        if (first < 0) first = cyc;
        last = cyc;
        acks.push_back(cyc + 3);
      }
      mem_test::edge(dut);
    }
    INFO((to_dram ? "save" : "load"));
    CHECK(first >= 0);
    CHECK(last - first == 31);
    CHECK(dut.done_count == (to_dram ? 2U : 1U));
  }
}

// The wall-cycle model times the DMA by arch::kDmaTiming; this holds the RTL to it: two loads, the
// second beside the first's responses, then a save, which waits for the second's last response.
TEST_CASE("Dma: first request, overlap and idle time after the last response are arch::kDmaTiming's", "[dma]") {
  DmaA a(geometry(4, 1, 4, 8, 12), ports_a);
  auto& dut = a.dut();
  constexpr int64_t kBeats = 8, kLatency = 6;
  constexpr int kDescs = 3;
  std::vector<uint32_t> words;
  for (int k = 0; k < kDescs; ++k) {
    DmaDescriptor d;
    d.to_dram = k == 2;
    d.half = true;  // the TCU computes on half 0: the DMA may start at once
    d.bound = {static_cast<uint64_t>(kBeats), 1, 1};
    d.dram_stride = {1, 0, 0};
    d.slot_stride = {1, 0, 0};
    d.dram_base = static_cast<uint64_t>(k) * 64;
    for (uint32_t w : fetta::arch::encode_dma(a.layout(), d)) words.push_back(w);
  }
  const auto per_desc = static_cast<int64_t>(words.size() / kDescs);
  dut.mem_req_ready = 1;
  dut.compute_half = 0;
  std::deque<int64_t> acks;
  std::vector<int64_t> requests, responses;
  size_t sent = 0;
  for (int64_t cyc = 0; cyc < 400 && dut.done_count < kDescs; ++cyc) {
    dut.desc_we = 0;
    mem_test::settle(dut);
    dut.desc_we = sent < words.size() && dut.desc_ready ? 1 : 0;  // the third waits for room
    if (dut.desc_we) dut.desc_word = words[sent++];
    dut.mem_rsp_valid = !acks.empty() && acks.front() <= cyc;
    if (dut.mem_rsp_valid) {
      acks.pop_front();
      responses.push_back(cyc);
    }
    mem_test::settle(dut);
    if (dut.mem_req_valid) {
      requests.push_back(cyc);
      acks.push_back(cyc + kLatency);
    }
    mem_test::edge(dut);
  }
  REQUIRE(requests.size() == kDescs * kBeats);
  REQUIRE(responses.size() == kDescs * kBeats);
  const fetta::arch::DmaTiming t = fetta::arch::kDmaTiming;
  INFO(fmt::format("requests {}; responses {}", fmt::join(requests, ","), fmt::join(responses, ",")));
  // The first descriptor's first request comes first_request cycles after its last word's.
  CHECK(requests[0] == (per_desc - 1) + t.first_request);
  // The second, queued long before, makes its requests beside the first's responses.
  CHECK(requests[kBeats] == requests[kBeats - 1] + t.overlap_request_gap);
  CHECK(requests[kBeats] < responses[kBeats - 1]);
  // The save starts once the second load is done (and a save's first write leaves a cycle later).
  CHECK(requests[2 * kBeats] == responses[2 * kBeats - 1] + t.done_after_last + t.first_request + t.save_first_write);
}

// A queue of four runs four short loads at once: each makes its requests while the ones before
// wait out a long latency, and the unified memory gets every beat where its own descriptor says.
TEST_CASE("Dma: every queued load is in flight at once under a long latency", "[dma]") {
  DmaB b(geometry(3, 0, 2, 16, 10), ports_b);
  std::mt19937_64 rng(mem_test::seed("dma four in flight", 13));
  b.randomize_memories(rng);
  auto& dut = b.dut();
  constexpr int kDescs = 4;
  constexpr int64_t kBeats = 2, kLatency = 40;  // 8 slots a half: two beats each
  std::vector<DmaDescriptor> descs;
  for (int k = 0; k < kDescs; ++k) {
    DmaDescriptor d;
    d.half = true;  // the TCU computes on half 0
    d.bound = {static_cast<uint64_t>(kBeats), 1, 1};
    d.dram_stride = {1, 0, 0};
    d.slot_stride = {1, 0, 0};
    d.dram_base = static_cast<uint64_t>(k) * 16;
    d.slot_base = static_cast<uint64_t>(k) * kBeats;
    d.lane_rot = k % 2;
    descs.push_back(d);
  }
  std::vector<Request> want;
  const Image expect = b.model(b.image(), descs, want);
  std::vector<uint32_t> words;
  for (const DmaDescriptor& d : descs)
    for (uint32_t w : fetta::arch::encode_dma(b.layout(), d)) words.push_back(w);
  dut.compute_half = 0;
  Image got = b.image();
  std::deque<std::pair<int64_t, Beat>> rsp;
  std::vector<int64_t> requests, responses;
  size_t sent = 0;
  for (int64_t cyc = 0; dut.done_count < kDescs && cyc < 2000; ++cyc) {
    dut.desc_we = sent < words.size() ? 1 : 0;
    if (dut.desc_we) dut.desc_word = words[sent++];
    dut.mem_req_ready = 1;
    dut.mem_rsp_valid = !rsp.empty() && rsp.front().first <= cyc;
    dut.mem_rsp_rdata_0 = static_cast<uint16_t>(dut.mem_rsp_valid ? rsp.front().second[0] : 0);
    dut.mem_rsp_rdata_1 = static_cast<uint16_t>(dut.mem_rsp_valid ? rsp.front().second[1] : 0);
    if (dut.mem_rsp_valid) {
      rsp.pop_front();
      responses.push_back(cyc);
    }
    mem_test::settle(dut);
    if (dut.mem_req_valid) {
      requests.push_back(cyc);
      rsp.emplace_back(cyc + kLatency, got.dram[dut.mem_req_addr >> 2]);
    }
    Beat& u = got.um[1][dut.um_row];
    if (dut.um_we)
      for (int j = 0; j < 2; ++j)
        if ((dut.um_wmask >> j) & 1U) u[static_cast<size_t>(j)] = j == 0 ? dut.um_wdata_0 : dut.um_wdata_1;
    mem_test::edge(dut);
  }
  REQUIRE(requests.size() == kDescs * kBeats);
  REQUIRE(responses.size() == kDescs * kBeats);
  CHECK(dut.done_count == kDescs);
  CHECK(requests.back() < responses.front());  // the fourth's requests before the first's first response
  CHECK(got == expect);
}

TEST_CASE("Dma: a descriptor pushed into a full queue is dropped and flagged; the others run", "[dma]") {
  DmaB b(geometry(3, 0, 2, 16, 10), ports_b);
  std::mt19937_64 rng(mem_test::seed("dma overflow", 11));
  b.randomize_memories(rng);
  auto& dut = b.dut();
  // The TCU computes on half 1 and every descriptor moves half 1: none may start.
  dut.compute_half = 1;
  std::vector<DmaDescriptor> descs;
  for (int i = 0; i < 5; ++i) {
    DmaDescriptor d = b.random_descriptor(rng);
    d.half = true;
    descs.push_back(d);
  }
  for (size_t i = 0; i < descs.size(); ++i) {
    if (i == 4) CHECK(dut.desc_ready == 0);
    for (uint32_t w : fetta::arch::encode_dma(b.layout(), descs[i])) {
      dut.desc_we = 1;
      dut.desc_word = w;
      mem_test::tick(dut);
    }
    dut.desc_we = 0;
    mem_test::settle(dut);
    CHECK(dut.um_we == 0);
    CHECK(dut.um_re == 0);
    CHECK(dut.mem_req_valid == 0);
    CHECK(dut.host_half_busy == 0);  // the head holds the compute half, not the host's
  }
  CHECK(dut.error == 1);
  CHECK(dut.busy == 1);
  // After the FLIP the four queued descriptors run (the fifth never does).
  std::vector<Request> want;
  descs.pop_back();
  const Image expect = b.model(b.image(), descs, want);
  // The FLIP, then a plain loop with an always-ready port (the queue is already full).
  dut.compute_half = 0;
  int64_t guard = 0;
  std::deque<std::pair<int64_t, Beat>> rsp;
  Image got = b.image();
  Beat um_read(2, 0);
  for (int64_t cyc = 0; dut.done_count < 4 && guard < 20000; ++cyc, ++guard) {
    dut.mem_req_ready = 1;
    dut.mem_rsp_valid = !rsp.empty() && rsp.front().first <= cyc;
    for (int j = 0; j < 2; ++j) {
      (j == 0 ? dut.mem_rsp_rdata_0 : dut.mem_rsp_rdata_1) =
          static_cast<uint16_t>(dut.mem_rsp_valid ? rsp.front().second[static_cast<size_t>(j)] : 0);
      (j == 0 ? dut.um_rdata_0 : dut.um_rdata_1) = static_cast<uint16_t>(um_read[static_cast<size_t>(j)]);
    }
    if (dut.mem_rsp_valid) rsp.pop_front();
    mem_test::settle(dut);
    if (dut.mem_req_valid) {
      Beat& m = got.dram[dut.mem_req_addr >> 2];
      if (dut.mem_req_write) m = {dut.mem_req_wdata_0, dut.mem_req_wdata_1};
      rsp.emplace_back(cyc + 2, m);
    }
    Beat& u = got.um[1][dut.um_row];
    if (dut.um_we)
      for (int j = 0; j < 2; ++j)
        if ((dut.um_wmask >> j) & 1U) u[static_cast<size_t>(j)] = j == 0 ? dut.um_wdata_0 : dut.um_wdata_1;
    if (dut.um_re) um_read = u;
    mem_test::edge(dut);
  }
  CHECK(dut.done_count == 4);
  CHECK(got == expect);
}
