// What `fetta compile --json` and `fetta run --json` both report about a program, written once:
// the wall-cycle model's controller (busy, idle and what it waited for) and where the
// intermediates go.
#pragma once

#include <nlohmann/json.hpp>

#include "mapper/program.hpp"
#include "mapper/wall_model.hpp"

namespace fetta::mapper {

// {"busy_cycles", "idle_cycles", "waiting_for": {"dma", "host_writes", "host_reads", "host_reads_again",
// "accumulator_reads", "probes", "other"}}
nlohmann::json controller_json(const WallPrediction& w);
// {"count", "on_chip", "leave": {<fate>: n, ...}} (every fate that leaves, zeros included)
nlohmann::json to_json(const IntermediateFates& f);

}  // namespace fetta::mapper
