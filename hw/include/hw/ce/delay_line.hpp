// DelayLine: `out` is `in` delayed by `depth` clock cycles (a chain of registers). The CE uses it
// to skew its rows in time (row r runs r row-skews behind row 0) and to time its output valid.
// Control lines reset to 0 (`reset`); data lines need no reset.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct DelayLineParams {
  int width = 1;   // 1..4096
  int depth = 1;   // 1..4096 registers
  bool reset = false;
};

class DelayLine : public rtl::IdentifiedGenerator<DelayLineParams> {
 public:
  explicit DelayLine(DelayLineParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::DelayLine"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
