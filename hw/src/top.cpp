#include "hw/top.hpp"

#include <fmt/format.h>

#include <functional>
#include <stdexcept>

#include "hw/arith/arith.hpp"
#include "hw/ce/ce.hpp"
#include "hw/mem/dma.hpp"
#include "hw/mem/mem.hpp"
#include "hw/net/net.hpp"
#include "hw/sys/system.hpp"
#include "hw/vector/vector_unit.hpp"

namespace fetta::hw {

namespace {

struct Part {
  const char* name;
  std::function<std::string(rtl::Design&, const arch::ArchConfig&)> elaborate;
};

std::string elaborate_mac(rtl::Design& design, const arch::ArchConfig& cfg) {
  MacChoice mac = make_mac(cfg.dtype, cfg.ce.mac_pipeline_stages);
  return design.elaborate(*mac.generator)->name();
}

const std::vector<Part>& parts() {
  static const std::vector<Part> table{
      {"mac", elaborate_mac},
      {"pe", elaborate_pe},
      {"ce", elaborate_ce},
      {"dist_net", elaborate_dist_net},
      {"red_net", elaborate_red_net},
      {"unified_memory", elaborate_unified_memory},
      {"accumulator", elaborate_accumulator},
      {"address_generator", elaborate_address_generator},
      {"dma", elaborate_dma},
      {"controller", elaborate_controller},
      {"vector_unit", elaborate_vector_unit},
      {"top", elaborate_accelerator},
  };
  return table;
}

}  // namespace

std::vector<std::string> part_list() {
  std::vector<std::string> names;
  for (const Part& p : parts()) names.emplace_back(p.name);
  return names;
}

std::string part_names() { return fmt::format("{}", fmt::join(part_list(), ", ")); }

std::string elaborate_part(rtl::Design& design, const arch::ArchConfig& cfg, const std::string& part) {
  // Every part builds from the configurations the whole accelerator builds from, no more.
  arch::validate(cfg);
  for (const Part& p : parts())
    if (part == p.name) return p.elaborate(design, cfg);
  throw std::invalid_argument(fmt::format("unknown part '{}'; allowed: {}, all", part, part_names()));
}

rtl::ParamList config_summary(const arch::ArchConfig& cfg) {
  return {{"name", cfg.name},
          {"source", cfg.source},
          {"dtype", arch::to_string(cfg.dtype)},
          {"ce", fmt::format("{} x {}x{}", cfg.ce.count, cfg.ce.rows, cfg.ce.cols)},
          {"lanes", std::to_string(cfg.network.lanes)},
          {"memory", fmt::format("{} banks x {} elems, depth {} / accum {}", cfg.memory.banks,
                                 cfg.memory.elems_per_bank, cfg.memory.unified_depth, cfg.memory.accum_depth)}};
}

}  // namespace fetta::hw
