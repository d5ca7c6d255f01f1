// run_schedule (mapper/network_schedule.hpp).
#include "mapper/network_schedule.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace fetta::mapper {

void run_schedule(size_t units, bool interleave, const ScheduleHooks& h) {
  constexpr size_t kWindow = 2;  // a window of three moves the six shipped layers by under 0.5 %
  size_t last = units;
  for (size_t oldest = 0; oldest < units;) {
    size_t pick = oldest;
    if (last < units && !h.done(last) && (!interleave || h.keep_turn())) {
      pick = last;
    } else if (interleave) {
      for (size_t i = oldest, seen = 0; i < units && seen < kWindow; ++i) {
        if (h.done(i)) continue;
        ++seen;
        if (i != last && h.ready(i)) {
          pick = i;
          break;
        }
      }
    }
    if (!h.ready(pick))
      throw std::logic_error(fmt::format("internal: network unit {} reads a result no earlier network keeps", pick));
    h.advance(pick);
    last = pick;
    while (oldest < units && h.done(oldest)) ++oldest;
  }
}

}  // namespace fetta::mapper
