#include "hw/ce/delay_line.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace fetta::hw {

using namespace rtl;

DelayLine::DelayLine(DelayLineParams params) : IdentifiedGenerator(params) {
  if (p.width < 1 || p.width > 4096)
    throw std::invalid_argument(fmt::format("DelayLine: width = {} is out of range; allowed: 1..4096", p.width));
  if (p.depth < 1 || p.depth > 4096)
    throw std::invalid_argument(fmt::format("DelayLine: depth = {} is out of range; allowed: 1..4096", p.depth));
}

Identity DelayLine::identity() const {
  return Identity("delay")
      .param("width", p.width, fmt::format("_w{}", p.width))
      .param("depth", p.depth, fmt::format("_d{}", p.depth))
      .flag("reset", p.reset, p.reset ? "_rst" : "");
}

void DelayLine::build(Module& m) const {
  Sig in = m.input("in", UInt(p.width));
  Sig out = m.output("out", UInt(p.width));
  Expr prev = in;
  for (int i = 0; i < p.depth; ++i) {
    Sig stage = p.reset ? m.reg(fmt::format("stage_{}", i), UInt(p.width), reset_to(0))
                        : m.reg(fmt::format("stage_{}", i), UInt(p.width));
    stage <<= prev;
    prev = stage;
  }
  out <<= prev;
}

}  // namespace fetta::hw
