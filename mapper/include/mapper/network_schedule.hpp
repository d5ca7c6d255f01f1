// The order in which a layer's networks take their steps (docs/program.md, "Interleaved
// networks"). The compiler emits units (a network, or a sum of terms once its terms are done) a
// step at a time. Sequential: each unit to its end, then the next. Interleaved: the two oldest
// units not done take turns, a step each, when ready, so that the host prepares one network's
// contraction while another's computes; a unit may keep the turn (its result waits on chip in
// images planned against its own jobs only). The oldest unit reads only from earlier ones, so it
// is always ready.
#pragma once

#include <cstddef>
#include <functional>

namespace fetta::mapper {

struct ScheduleHooks {
  std::function<bool(size_t)> done;     // unit i has taken its last step
  std::function<bool(size_t)> ready;    // unit i can take its next step now
  std::function<bool()> keep_turn;      // the unit that took the last step keeps the turn (interleaving)
  std::function<void(size_t)> advance;  // unit i takes its next step
};

// Runs `units` units to their ends in the order above. Throws std::logic_error when the unit
// picked is not ready (an earlier unit's result it needs was never kept: a compiler bug).
void run_schedule(size_t units, bool interleave, const ScheduleHooks& h);

}  // namespace fetta::mapper
