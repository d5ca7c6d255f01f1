// bench_reorder: what it would cost to reorder on chip the intermediates that leave the chip. For
// every shipped layer (FP+BP+WG, the default options) it compiles the program and, for each
// intermediate not kept on chip and each contraction that reads it, plans the STORE program that
// would write the producer's result into that reader's operand images (mapper::plan_store, one
// part per output chunk, as on_chip_plan does). It prints, per layer, the elements the readers
// take, the STOREs' busy cycles (serial with compute: the controller runs them), the elements
// they move per cycle, and those cycles against the layer's compute cycles. Issue #22 weighed
// this path (each reader's images stored, saved pre-tiled by the DMA and loaded back, where today
// the host reads the intermediate and writes the images) to bring end to end within 1.15x of its
// bound. It also prices the other honest way back, a DMA gather of the saved rows straight into
// each reader's images (mapper::plan_gather: a DRAM burst per beat, each descriptor's requests
// beside the one before's responses; mapper::gather_cycles), against the host path the program takes by default
// (mapper::Movement::host_path_cycles: the host reads the saved rows and writes the images,
// permuting for free).
//   bench_reorder [config] [layer.yaml ...]   (defaults: configs/default.yaml, the six shipped layers)
#include <fmt/core.h>

#include <cstdint>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "mapper/gather.hpp"
#include "mapper/movement.hpp"
#include "mapper/program.hpp"
#include "mapper/store.hpp"
#include "verif/layer.hpp"

using namespace fetta;

namespace {

struct Totals {
  int64_t intermediates = 0, readers = 0, planned = 0, refused = 0;
  int64_t elements = 0, store_cycles = 0, compute = 0;
  int64_t gathered = 0, gather_beats = 0, image_beats = 0, descriptors = 0, gather_cycles = 0, host_cycles = 0;
  std::map<std::string, int64_t> why_not;  // a refused plan's reason (numbers as N) -> readers
};

// The reader's images gathered from the producer's saved rows (laid out as the program saves them:
// each output chunk's rows one after another), and the host path the program takes instead.
void gather(const arch::ArchConfig& cfg, const mapper::CompiledGemm& pg, const mapper::CompiledGemm& cg, bool as_a,
            Totals& t) {
  const mapper::SavedRows saved = mapper::consecutive_saves(pg, arch::host_port_lanes(cfg), 1);  // beat 0: the pad beat
  int64_t beats = 0, image = 0, descs = 0, cycles = 0;
  for (size_t j = 0; j < cg.jobs.size(); ++j) {
    const mapper::GatherPlan g = mapper::plan_gather(cfg, pg, cg, as_a, j, saved, 0, false);
    if (!g.ok()) return;
    beats += g.beats;
    image += g.image_beats;
    descs += static_cast<int64_t>(g.descriptors.size());
    cycles += mapper::gather_cycles(cfg, g);
  }
  ++t.gathered;
  t.gather_beats += beats;
  t.image_beats += image;
  t.descriptors += descs;
  t.gather_cycles += cycles;
  t.host_cycles += mapper::Movement(cfg, true, false).host_path_cycles(pg, cg, as_a);
}

Totals measure(const arch::ArchConfig& cfg, const std::string& layer) {
  const mapper::Program p =
      mapper::compile_program(cfg, {layer}, {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg});
  Totals t;
  for (const mapper::ProgramStep& s : p.steps) t.compute += s.predicted;
  for (const mapper::ProgramStep& producer : p.steps) {
    if (producer.intermediate < 0 || producer.on_chip || producer.gemms.size() != 1) continue;
    ++t.intermediates;
    const mapper::CompiledGemm pg = mapper::rebuild_gemm(cfg, producer.gemms[0]);
    const mapper::ProgramTensor& z = p.tensors.at(static_cast<size_t>(producer.intermediate));
    for (const mapper::ProgramStep& reader : p.steps)
      for (size_t g = 0; g < reader.gemms.size(); ++g)
        for (const bool as_a : {true, false}) {
          const std::vector<int32_t>& ops = as_a ? reader.a : reader.b;
          if (g >= ops.size() || ops[g] != producer.intermediate) continue;
          ++t.readers;
          t.elements += z.numel();
          const mapper::CompiledGemm cg = mapper::rebuild_gemm(cfg, reader.gemms[g]);
          int64_t cycles = 0;
          std::string why;
          gather(cfg, pg, cg, as_a, t);
          for (size_t j = 0; j < cg.jobs.size() && why.empty(); ++j) {
            const mapper::StorePlan sp =
                mapper::plan_store(cfg, pg, cg, as_a, j, static_cast<uint32_t>(producer.requant_shift), true);
            if (!sp.ok()) why = sp.why_not;
            cycles += sp.predicted_cycles;
          }
          if (!why.empty()) {
            ++t.refused;
            ++t.why_not[std::regex_replace(why, std::regex("[0-9]+"), "N")];  // one line per kind of reason
            continue;
          }
          ++t.planned;
          t.store_cycles += cycles;
        }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string root = FETTA_SOURCE_DIR;
  const std::string config = argc > 1 ? argv[1] : root + "configs/default.yaml";
  std::vector<std::string> layers;
  for (int i = 2; i < argc; ++i) layers.emplace_back(argv[i]);
  if (layers.empty())
    for (const char* l : {"tt_fetta_example", "tt_transformer_768", "ttm_transformer_768", "tr_transformer_768",
                          "ht_transformer_768", "bt_transformer_768"})
      layers.push_back(root + "configs/layers/" + l + ".yaml");
  try {
    const arch::ArchConfig cfg = arch::load_arch_config(config);
    fmt::print("{}: intermediates that leave the chip, reordered on chip into every reader's images by STORE\n", cfg.name);
    fmt::print("{:22} {:>6} {:>8} {:>11} {:>12} {:>7} {:>10} {:>8}  refused\n", "layer", "off", "readers", "elements",
               "STORE cyc", "el/cyc", "compute", "/compute");
    for (const std::string& l : layers) {
      const Totals t = measure(cfg, l);
      const std::string name = verif::load_layer(l).name;
      const double rate = t.store_cycles > 0 ? static_cast<double>(t.elements) / static_cast<double>(t.store_cycles) : 0.0;
      std::string refused;
      for (const auto& [why, n] : t.why_not) refused += fmt::format("{}x \"{}\" ", n, why);
      fmt::print("{:22} {:>6} {:>8} {:>11} {:>12} {:>7.2f} {:>10} {:>8.2f}  {}\n", name, t.intermediates, t.readers,
                 t.elements, t.store_cycles, rate, t.compute,
                 static_cast<double>(t.store_cycles) / static_cast<double>(t.compute), refused.empty() ? "-" : refused);
    }
    fmt::print("\n{}: the same readers' images gathered by the DMA from the saved rows, against the host path\n", cfg.name);
    fmt::print("{:22} {:>8} {:>12} {:>12} {:>7} {:>12} {:>12} {:>12} {:>7}\n", "layer", "readers", "beats", "pre-tiled",
               "x", "descriptors", "DMA cyc", "host cyc", "x");
    for (const std::string& l : layers) {
      const Totals t = measure(cfg, l);
      auto ratio = [](int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
      fmt::print("{:22} {:>8} {:>12} {:>12} {:>7.2f} {:>12} {:>12} {:>12} {:>7.2f}\n", verif::load_layer(l).name, t.gathered,
                 t.gather_beats, t.image_beats, ratio(t.gather_beats, t.image_beats), t.descriptors, t.gather_cycles,
                 t.host_cycles, ratio(t.gather_cycles, t.host_cycles));
    }
    fmt::print("beats: DMA beats of the gathers (a DRAM burst each); pre-tiled: the beats of the same images loaded as "
               "row copies; DMA cyc: the gathers run alone (a burst per beat, or a request a cycle and a gap per descriptor; the latency once); host cyc: the host "
               "path today (its image writes and its read of the saved rows)\n\n");
    fmt::print("off: intermediates not kept on chip; elements: what their readers take (each reader its own images); "
               "STORE cyc: the planned readers' STOREs, busy cycles serial with compute; el/cyc: elements over those "
               "cycles (a move carries up to {}: a row's lanes in place, or one element per bank on a diagonal)\n", cfg.network.lanes);
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_reorder: {}\n", e.what());
    return 1;
  }
  return 0;
}
