#include "hw/top.hpp"

#include <stdexcept>

namespace fetta::hw {

std::string part_names() { return "(none yet)"; }

std::string elaborate_part(rtl::Design&, const arch::ArchConfig&, const std::string& part) {
  throw std::invalid_argument("unknown part '" + part + "'; allowed: " + part_names());
}

rtl::ParamList config_summary(const arch::ArchConfig& cfg) {
  return {{"name", cfg.name},
          {"dtype", arch::to_string(cfg.dtype)},
          {"ce", std::to_string(cfg.ce.count) + "x" + std::to_string(cfg.ce.rows) + "x" + std::to_string(cfg.ce.cols)},
          {"lanes", std::to_string(cfg.network.lanes)}};
}

}  // namespace fetta::hw
