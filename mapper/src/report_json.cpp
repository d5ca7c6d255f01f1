// The program's figures as JSON (mapper/report_json.hpp).
#include "mapper/report_json.hpp"

namespace fetta::mapper {

nlohmann::json controller_json(const WallPrediction& w) {
  return {{"busy_cycles", w.busy},
          {"idle_cycles", w.stalls.total()},
          {"waiting_for", {{"dma", w.stalls.dma},
                           {"host_writes", w.stalls.host_writes},
                           {"host_reads", w.stalls.host_reads},
                           {"host_reads_again", w.stalls.host_reads_again},
                           {"accumulator_reads", w.stalls.accumulator_reads},
                           {"probes", w.stalls.probes},
                           {"other", w.stalls.other}}}};
}

nlohmann::json to_json(const IntermediateFates& f) {
  nlohmann::json leave = nlohmann::json::object();
  for (int i = 0; i < kFates; ++i)
    if (const auto fate = static_cast<Fate>(i); fate != Fate::result && fate != Fate::on_chip) leave[to_string(fate)] = f.of(fate);
  return {{"count", f.intermediates}, {"on_chip", f.of(Fate::on_chip)}, {"leave", leave}, {"saved_pretiled", f.pretiled}};
}

}  // namespace fetta::mapper
