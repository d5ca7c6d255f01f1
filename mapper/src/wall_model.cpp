// The wall-cycle model (docs/program.md, "The wall-cycle model"). Times are the bench's cycles
// counted at falling clock edges, where the host writes and reads the top's ports: an operation
// on the host bus that starts at cycle h and takes n cycles ends at h + n, and an instruction
// whose last word the host wrote in the cycle ending at h is in the queue from h on.
#include "mapper/wall_model.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "arch/dma.hpp"
#include "arch/isa.hpp"

namespace fetta::mapper {

namespace {

constexpr auto kInstrQueueDepth = static_cast<size_t>(arch::kTopInstrQueueDepth);
constexpr auto kDmaQueueDepth = static_cast<size_t>(arch::kTopDmaQueueDepth);
constexpr int64_t kResetCycles = arch::kBenchResetCycles + 1;  // the bench's reset, then one cycle before the program

// The bench's DRAM port (arch::DramPortTiming, which the bench runs too): a request presented at
// cycle t is taken while fewer than its depth wait; answers come in order, one a cycle at most.
// A descriptor that runs beside the one before continues the port's state (`run`); one that starts
// after the one before is done finds it idle (`restart`).
class DramPort {
 public:
  explicit DramPort(const arch::ArchConfig& cfg) : cfg_(cfg), timing_(cfg) {}

  struct Run {
    int64_t last_request = 0, last_answer = 0;
  };

  void restart() {
    timing_ = arch::DramPortTiming(cfg_);
    due_.clear();
    t_ = 0;
  }

  // `beats` requests, the first presented at `first` (not before the last run's last request).
  Run run(int64_t first, int64_t beats) {
    answer_until(first);
    Run r;
    int64_t t = std::max(first, t_);
    for (int64_t i = 0; i < beats; ++t) {
      answer(t);
      if (due_.size() >= timing_.depth()) continue;  // not ready: the request waits
      due_.push_back(timing_.take_at_cycle(t));
      r.last_request = t;
      ++i;
    }
    t_ = t;
    // The rest are answered one a cycle at most, each at its due cycle.
    r.last_answer = last_;
    for (int64_t d : due_) r.last_answer = std::max(r.last_answer + 1, d);
    return r;
  }

 private:
  // The answer in cycle t, if one is due.
  void answer(int64_t t) {
    if (!due_.empty() && due_.front() <= t) {
      last_ = due_.front();
      due_.pop_front();
    }
  }
  // Answers in the cycles from the last run's end to `first`.
  void answer_until(int64_t first) {
    while (t_ < first && !due_.empty()) {
      t_ = std::max(t_, std::min(first, due_.front()));
      if (t_ < first) answer(t_++);
    }
  }

  const arch::ArchConfig& cfg_;
  arch::DramPortTiming timing_;
  std::deque<int64_t> due_;  // the answer cycles of the requests taken and not answered, oldest first
  int64_t t_ = 0, last_ = 0;  // the cycle after the last run's last request; the last answer taken
};

class Replay {
 public:
  Replay(const Program& p, const arch::ArchConfig& cfg)
      : p_(p), cfg_(cfg), isa_(cfg), flip_(arch::encode_flip(isa_)), other_half_(isa_.field("st_other_half")),
        dma_layout_(arch::dma_geometry(cfg)), port_(cfg), host_lanes_(arch::host_port_lanes(cfg)) {}

  WallPrediction run() {
    WallPrediction w;
    std::vector<int64_t> dram_ps(p_.steps.size(), 0);
    h_ = kResetCycles;
    for (const Op& o : p_.ops) {
      const int64_t before = h_;
      const int64_t free_before = ctrl_free_, hold_before = hold_;
      perform(o, dram_ps);
      if (o.is_probe()) w.probe += h_ - before;
      if (o.code == OpCode::push) {
        w.busy += o.c;
        attribute(pops_.back() - free_before, hold_ - hold_before, w.stalls);
      } else {
        host_work(o, h_ - before);
      }
    }
    attribute(h_ - ctrl_free_, 0, w.stalls);  // after the last instruction: the run ends with the host
    w.simulated = h_;
    for (int64_t ps : dram_ps)
      w.dram_accounted += static_cast<int64_t>(std::ceil(static_cast<double>(ps) * 1e-12 * cfg_.clock_mhz * 1e6 - 1e-6));
    w.dma_hold = hold_;
    return w;
  }

 private:
  struct Descriptor {
    bool half = false, save = false;
    int64_t beats = 0, queued = 0, done = -1;  // done: -1 until it could be timed
    int64_t last_request = 0;
  };

  // The host's work since the last instruction push, in order: the WallStalls field each op's
  // cycles go to if compute did not cover them.
  using Cause = int64_t WallStalls::*;
  std::vector<std::pair<Cause, int64_t>> since_push_;
  int64_t dma_wait_ = 0;  // of the op being performed, cycles it waited for the DMA (dma_idle, queue room)

  void host_work(const Op& o, int64_t cycles) {
    // A probe's cycles are all the checking's, its wait for the DMA to free the host port included.
    const int64_t waited = o.is_probe() ? 0 : std::min(cycles, dma_wait_);
    dma_wait_ = 0;
    if (waited > 0) since_push_.push_back({&WallStalls::dma, waited});
    Cause c = &WallStalls::other;
    switch (o.code) {
      case OpCode::write_rows: c = &WallStalls::host_writes; break;
      case OpCode::read_saved: c = o.source >= 0 ? &WallStalls::host_reads_again : &WallStalls::host_reads; break;
      case OpCode::read_acc: c = &WallStalls::accumulator_reads; break;
      case OpCode::wait_dma_idle:
      case OpCode::wait_retired: c = &WallStalls::dma; break;  // a FLIP retires late only when the DMA held it
      default: break;
    }
    if (o.is_probe()) c = &WallStalls::probes;  // check_rows always; read_acc, FLIPs and waits around checks
    if (cycles > waited) since_push_.push_back({c, cycles - waited});
  }

  // A gap of the controller before an instruction (or the run's end): first what it was held for
  // the DMA, then the host's work since the last push, the latest first; the rest the push itself.
  void attribute(int64_t gap, int64_t held, WallStalls& s) {
    if (gap > 0) {
      const int64_t h = std::min(gap, held);
      s.dma += h;
      gap -= h;
      for (auto it = since_push_.rbegin(); it != since_push_.rend() && gap > 0; ++it) {
        const int64_t n = std::min(gap, it->second);
        s.*(it->first) += n;
        gap -= n;
      }
      s.other += gap;
    }
    since_push_.clear();
  }

  // The host waits until the DMA is idle (its port and the DRAM are the DMA's until then).
  void wait_for_dma() {
    const int64_t idle = dma_idle();
    dma_wait_ = std::max<int64_t>(0, idle - h_);
    h_ = std::max(h_, idle);
  }

  int64_t groups_of(int64_t lanes) const { return (lanes + host_lanes_ - 1) / host_lanes_; }
  const ProgramTensor& tensor(int32_t t) const { return p_.tensors.at(static_cast<size_t>(t)); }
  arch::Words words_of(const Op& o) const {
    return arch::Words(p_.words.begin() + o.a, p_.words.begin() + o.a + o.b);
  }

  // The compute half at cycle t: the controller's register, toggled by every FLIP popped so far.
  bool compute_half_at(int64_t t) const {
    const auto n = std::upper_bound(flip_pops_.begin(), flip_pops_.end(), t) - flip_pops_.begin();
    return (n % 2) != 0;
  }

  // Times every descriptor that can be timed now: in order, as many in flight as the queue holds,
  // each once its half is not the compute half (a FLIP yet to be pushed may be what frees it), the
  // one before has made its requests, and, for a save, every load before it is done.
  void time_descriptors() {
    const arch::DmaTiming& dt = arch::kDmaTiming;
    for (; next_desc_ < descs_.size(); ++next_desc_) {
      Descriptor& d = descs_[next_desc_];
      int64_t start = d.queued;
      const Descriptor* before = next_desc_ > 0 ? &descs_[next_desc_ - 1] : nullptr;
      if (before) start = std::max(start, before->last_request + dt.overlap_request_gap - dt.first_request);
      if (d.save) start = std::max(start, last_load_done_);
      if (next_desc_ >= kDmaQueueDepth) start = std::max(start, descs_[next_desc_ - kDmaQueueDepth].done);
      if (compute_half_at(start) == d.half) {
        // Waits for the next FLIP after `start`; unknown until that FLIP is timed.
        auto it = std::upper_bound(flip_pops_.begin(), flip_pops_.end(), start);
        if (it == flip_pops_.end()) return;
        start = *it;
      }
      if (!before || start >= before->done) port_.restart();
      const DramPort::Run r = port_.run(start + dt.first_request + (d.save ? dt.save_first_write : 0), d.beats);
      d.last_request = r.last_request;
      d.done = r.last_answer + dt.done_after_last;
      if (!d.save) last_load_done_ = d.done;
    }
  }

  // When the DMA's head descriptors stop moving the host's half, seen from cycle t: the FLIP or
  // STORE into that half waiting at t may go then.
  int64_t dma_release(int64_t t) {
    time_descriptors();
    const bool host_half = !compute_half_at(t);
    int64_t release = t;
    while (head_ < next_desc_ && descs_[head_].done <= t) ++head_;  // t only grows
    for (size_t i = head_; i < next_desc_; ++i) {
      const Descriptor& d = descs_[i];
      if (d.done <= release || d.queued > release) continue;
      if (d.half != host_half) break;  // the head moves the compute half: no hold
      release = d.done;
    }
    return release;
  }

  // Until the DMA is idle (dma_busy low): every descriptor pushed done.
  int64_t dma_idle() {
    time_descriptors();
    return descs_.empty() ? 0 : (next_desc_ == descs_.size() ? descs_.back().done : h_);
  }

  // The host pushes `n` words into a queue whose last word waits while the queue is full, until
  // cycle `room` (0: there is room).
  void push_words(int64_t n, int64_t room) { h_ = std::max(h_ + n - 1, room) + 1; }

  void push_instruction(const Op& o) {
    const arch::Words w = words_of(o);
    // A full queue has room from the cycle after its oldest entry's pop.
    const size_t n = pops_.size();
    push_words(o.b, n >= kInstrQueueDepth ? pops_[n - kInstrQueueDepth] + 1 : 0);
    int64_t pop = std::max(h_, ctrl_free_);
    const bool flip = w == flip_;
    const bool store_other = !flip && o.account == Account::store && arch::field_value(w, other_half_) != 0;
    if (flip || store_other) {
      const int64_t release = dma_release(pop);
      hold_ += release - pop;
      pop = release;
    }
    ctrl_free_ = pop + o.c;
    pops_.push_back(pop);
    if (flip) {
      flip_pops_.push_back(pop);
      time_descriptors();
    }
  }

  void push_descriptor(const Op& o) {
    time_descriptors();
    // A descriptor leaves the queue when it is done.
    const size_t n = descs_.size();
    const int64_t before = h_;
    push_words(o.b, n >= kDmaQueueDepth ? std::max<int64_t>(0, descs_[n - kDmaQueueDepth].done) : 0);
    dma_wait_ = std::max<int64_t>(0, h_ - before - o.b);  // beyond its words: waiting for room in the queue
    const arch::DmaDescriptor d = arch::decode_dma(dma_layout_, words_of(o));
    descs_.push_back({.half = d.half, .save = d.to_dram, .beats = d.beats(), .queued = h_});
    time_descriptors();
  }

  void perform(const Op& o, std::vector<int64_t>& dram_ps) {
    auto dram = [&](int32_t t) {
      const ProgramTensor& pt = tensor(t);
      const auto bytes = static_cast<uint64_t>(pt.numel() * pt.dram_bytes);
      dram_ps[static_cast<size_t>(o.report)] += std::llround(arch::dram_transfer_ns(cfg_.dram, bytes) * 1000.0);
    };
    switch (o.code) {
      case OpCode::fetch: dram(o.tensor); break;
      case OpCode::store: dram(o.tensor); break;
      case OpCode::write_rows:
      case OpCode::check_rows:
        wait_for_dma();
        h_ += o.b * groups_of(o.c);
        break;
      case OpCode::read_acc: {
        std::set<int64_t> groups;
        for (uint64_t i = 0; i < o.lanes_len; ++i) groups.insert(p_.maps[o.lanes + i] / host_lanes_);
        h_ += o.a * static_cast<int64_t>(groups.size());
        break;
      }
      case OpCode::push: push_instruction(o); break;
      case OpCode::dma: push_descriptor(o); break;
      case OpCode::wait_idle: h_ = std::max(h_ + 1, ctrl_free_); break;
      case OpCode::wait_retired: {
        // Retired at its pop (a FLIP), seen on the port a cycle later.
        const auto k = static_cast<size_t>(o.a);
        if (k > 0 && k <= pops_.size()) h_ = std::max(h_, pops_[k - 1] + 1);
        break;
      }
      case OpCode::wait_dma_idle: wait_for_dma(); break;
      case OpCode::read_saved:  // the host's read of a saved intermediate: the DRAM's once the DMA is idle
        if (o.host_counted) {
          const auto bytes = static_cast<uint64_t>(o.b * o.c * arch::operand_bits(cfg_.dtype) / 8);
          wait_for_dma();
          h_ += arch::dram_transfer_cycles(cfg_, bytes);
        }
        break;
      case OpCode::preload:
      case OpCode::preload_image:
      case OpCode::check:
      case OpCode::finish: break;
    }
  }

  const Program& p_;
  const arch::ArchConfig& cfg_;
  const arch::IsaLayout isa_;
  const arch::Words flip_;           // a FLIP's words
  const arch::IsaField& other_half_;  // a STORE's st_other_half
  const arch::DmaLayout dma_layout_;
  DramPort port_;
  const int host_lanes_;
  int64_t h_ = 0, ctrl_free_ = 0, hold_ = 0;
  std::vector<int64_t> pops_;  // every instruction pushed: when it left the queue
  std::vector<int64_t> flip_pops_;
  std::vector<Descriptor> descs_;
  size_t next_desc_ = 0;  // descs_ before it are timed
  int64_t last_load_done_ = 0;  // when the last load timed is done
  size_t head_ = 0;       // descs_ before it were done before the last release asked for
};

}  // namespace

WallPrediction predict_wall(const Program& p, const arch::ArchConfig& cfg) { return Replay(p, cfg).run(); }

std::string stalls_text(const WallPrediction& w) {
  const WallStalls& s = w.stalls;
  std::vector<std::pair<int64_t, std::string>> parts = {
      {s.dma, "the DMA"},
      {s.host_writes, "the host writing operand rows"},
      {s.host_reads, "the host reading saved results from DRAM"},
      {s.host_reads_again, "reading them again for later networks"},
      {s.accumulator_reads, "the host reading the accumulator"},
      {s.probes, "the scoreboard's probes"},
      {s.other, "instruction pushes and the rest"}};
  std::stable_sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string text = fmt::format("controller (the wall-cycle model): busy {} cycles, idle {}", w.busy, s.total());
  const char* sep = ", waiting for ";
  for (const auto& [n, what] : parts) {
    if (n == 0) continue;
    text += fmt::format("{}{} {}", sep, what, n);
    sep = ", ";
  }
  return text;
}

}  // namespace fetta::mapper
