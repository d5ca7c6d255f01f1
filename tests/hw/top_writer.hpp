// The test RTL generators' writer: each generator's top into OUT/<top>/, refusing a second top of
// the same name. Two tops that elaborate to one name would leave a directory the build lists
// unwritten, which a clean build then finds empty (and an old build tree hides).
#pragma once

#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::test {

class TopWriter {
 public:
  explicit TopWriter(std::filesystem::path out) : out_(std::move(out)) {}

  // write_design leaves unchanged files alone, so re-running a generator after fetta_hw is
  // relinked rebuilds only the Verilated models whose RTL really changed.
  void operator()(const rtl::GeneratorBase& g) {
    rtl::Design d;
    auto m = d.elaborate(g);
    if (!written_.insert(m->name()).second)
      throw std::runtime_error("top '" + m->name() + "' is emitted twice: give one of the two configurations a different parameter");
    rtl::write_design(d, m->name(), out_ / m->name());
  }

 private:
  std::filesystem::path out_;
  std::set<std::string> written_;
};

}  // namespace fetta::test
