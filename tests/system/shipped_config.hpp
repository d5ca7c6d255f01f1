// The unit tests of tests/system load the shipped configurations by name.
#pragma once

#include <string>

#include "arch/config.hpp"

namespace fetta::test {

// configs/<name>.yaml of the source tree.
inline arch::ArchConfig cfg_named(const std::string& name) {
  return arch::load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/" + name + ".yaml");
}

}  // namespace fetta::test
