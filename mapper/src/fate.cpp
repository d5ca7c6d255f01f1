// Fate (mapper/fate.hpp).
#include "mapper/fate.hpp"

#include <fmt/format.h>

#include <array>
#include <stdexcept>

namespace fetta::mapper {

namespace {

struct FateName {
  const char* key;
  const char* phrase;
};
constexpr std::array<FateName, kFates> kNames{{
    {"result", "a network's result"},
    {"on_chip", "kept on chip"},
    {"option", "--through-host"},
    {"shared", "read by several contractions (kept in DRAM for all)"},
    {"deferred_term", "read by a term's last contraction, run later"},
    {"no_room", "no room for the consumer's images"},
    {"cannot_join", "no STORE program joins the layouts"},
    {"reorder_off_chip", "a layout change on a top that reorders through DRAM"},
    {"store_slower", "STORE slower than DRAM"},
    {"waits_for_network", "its reader waits for another network's result"},
}};

}  // namespace

std::string to_string(Fate f) { return kNames.at(static_cast<size_t>(f)).key; }

std::string describe(Fate f) { return kNames.at(static_cast<size_t>(f)).phrase; }

Fate parse_fate(const std::string& s) {
  std::string allowed;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (s == kNames[i].key) return static_cast<Fate>(i);
    allowed += (i ? ", " : "") + std::string(kNames[i].key);
  }
  throw std::invalid_argument(fmt::format("fate '{}'; allowed: {}", s, allowed));
}

}  // namespace fetta::mapper
