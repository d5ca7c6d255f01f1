// mapper/half_order.hpp
#include "mapper/half_order.hpp"

namespace fetta::mapper {

HalfOrder::HalfOrder(int queue_depth) : queue_depth_(queue_depth) {}

void HalfOrder::push_instruction(bool flip) {
  if (flip) {
    close();
    ++flips_;
  }
  flips_before_.push_back(flips_);
}

std::optional<HalfOrder::Stuck> HalfOrder::push_descriptor(bool half) {
  close();
  const int64_t need = static_cast<int64_t>(halves_.size()) - queue_depth_ + 1;
  if (auto stuck = wait_for([need](const State& s) { return s.done >= need; })) return stuck;
  halves_.push_back(half);
  return std::nullopt;
}

std::optional<HalfOrder::Stuck> HalfOrder::wait_dma_idle() {
  const auto n = static_cast<int64_t>(halves_.size());
  return wait_for([n](const State& s) { return s.done >= n; });
}

void HalfOrder::wait_retired(int64_t count) {
  const int64_t need = count <= 0 ? 0 : flips_before_[static_cast<size_t>(count - 1)];
  (void)wait_for([need](const State& s) { return s.applied >= need; });  // a FLIP is never stuck
}

void HalfOrder::wait_idle() { wait_retired(static_cast<int64_t>(flips_before_.size())); }

// What the state becomes next: the head descriptor runs, or else the next FLIP takes effect.
std::optional<HalfOrder::State> HalfOrder::next(const State& s) const {
  if (s.done < static_cast<int64_t>(halves_.size()) && halves_[static_cast<size_t>(s.done)] != s.compute)
    return State{s.compute, s.applied, s.done + 1};
  if (s.applied < flips_) return State{!s.compute, s.applied + 1, s.done};
  return std::nullopt;
}

// Every state the run can reach before the host's next op arrives.
void HalfOrder::close() {
  std::vector<State> todo(states_.begin(), states_.end());
  while (!todo.empty()) {
    const State s = todo.back();
    todo.pop_back();
    if (const auto n = next(s); n && states_.insert(*n).second) todo.push_back(*n);
  }
}

// Every state runs on until `met`; the first that cannot is stuck.
template <class Met>
std::optional<HalfOrder::Stuck> HalfOrder::wait_for(Met met) {
  std::set<State> after;
  for (State s : states_) {
    while (!met(s)) {
      const auto n = next(s);
      if (!n) return Stuck{static_cast<size_t>(s.done), halves_[static_cast<size_t>(s.done)]};
      s = *n;
    }
    after.insert(s);
  }
  states_ = std::move(after);
  return std::nullopt;
}

}  // namespace fetta::mapper
