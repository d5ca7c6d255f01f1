// Entry points of the generators: elaborate a named part of the accelerator for a config.
#pragma once

#include <string>
#include <vector>

#include "arch/config.hpp"
#include "rtl_gen/module.hpp"

namespace fetta::hw {

// Parts `fetta gen --part` can emit, in hierarchy order (leaves first).
std::vector<std::string> part_list();
std::string part_names();  // "mac, pe, ce, ..." for --help and messages

// Elaborates `part` into `design`; returns the top module name. Throws std::invalid_argument
// naming the allowed parts for an unknown one.
std::string elaborate_part(rtl::Design& design, const arch::ArchConfig& cfg, const std::string& part);

// Key configuration values recorded in manifest.json.
rtl::ParamList config_summary(const arch::ArchConfig& cfg);

}  // namespace fetta::hw
