// The order the DMA's descriptors and the controller's FLIPs run in (docs/dma.md, "Order and the
// halves"), replayed from a program's pushes and waits to find the waits that can never end
// (mapper::verify_program). The head descriptor starts only while the TCU computes on the other
// half, and a FLIP waits while the head descriptor moves the host's half. From any state the two
// therefore run in one order; the host's timing decides only how far that order has come when its
// next op arrives. The replay keeps every state the run can be in between two ops; a wait that one
// of them cannot get past is a hang: a descriptor for the half the TCU is on, no FLIP left to free it.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace fetta::mapper {

class HalfOrder {
 public:
  // A descriptor that may never start: its index among those pushed, and the half it moves.
  struct Stuck {
    size_t descriptor = 0;
    bool half = false;
  };
  explicit HalfOrder(int queue_depth);  // the DMA's queue, the running head counted (hw::Dma)

  // An instruction pushed to the controller (a FLIP or another).
  void push_instruction(bool flip);
  // A descriptor pushed: into a full queue only once its head is done; the head that may never be.
  std::optional<Stuck> push_descriptor(bool half);
  // The host waits until the DMA has done every descriptor pushed.
  std::optional<Stuck> wait_dma_idle();
  // The host waits until the controller has retired the first `count` instructions (FLIPs retire
  // once they take effect), or all of them.
  void wait_retired(int64_t count);
  void wait_idle();

 private:
  struct State {
    bool compute = false;  // the half the TCU computes on
    int64_t applied = 0;   // FLIPs that took effect
    int64_t done = 0;      // descriptors done
    auto operator<=>(const State&) const = default;
  };
  std::optional<State> next(const State& s) const;
  void close();
  template <class Met>
  std::optional<Stuck> wait_for(Met met);

  int queue_depth_;
  std::vector<bool> halves_;           // the descriptors' halves, in push order
  int64_t flips_ = 0;                  // FLIPs pushed
  std::vector<int64_t> flips_before_;  // per pushed instruction: the FLIPs up to and including it
  std::set<State> states_{State{}};
};

}  // namespace fetta::mapper
