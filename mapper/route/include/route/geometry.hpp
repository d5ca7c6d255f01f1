// The lane geometry shared by both butterfly networks (docs/networks.md).
//
// N scalar lanes, lane = bank * T + elem (T = elements per bank). log2(N) butterfly levels; level
// k pairs lane i with lane i ^ 2^k. The transpose level pairs lane i with its partner inside a
// block of T banks x T elements: (bank b, elem e) <-> (bank e, elem b), b and e taken within
// the block. Lanes on the block diagonal are their own partner.
#pragma once

#include <stdexcept>
#include <string>

namespace fetta::route {

// A request the network cannot carry (blocked distribution pattern, unroutable reduction).
class RouteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class NetGeometry {
 public:
  // Throws std::invalid_argument naming the field and the allowed values unless lanes is a power
  // of two in [2, 4096], elems_per_bank a power of two in [1, 64], lanes >= elems_per_bank^2 and
  // red_first_add_level in [0, log2(lanes)].
  NetGeometry(int lanes, int elems_per_bank, int red_first_add_level = 0);

  int lanes() const { return lanes_; }
  int elems_per_bank() const { return elems_; }
  int levels() const { return levels_; }  // log2(lanes)
  // The reduction network's switches below this level have no adder (they pass or swap only).
  int red_first_add_level() const { return red_first_add_level_; }
  // The transpose partner of `lane` (itself on the block diagonal).
  int partner(int lane) const;
  std::string str() const;  // "N=64 T=4"

 private:
  int lanes_;
  int elems_;
  int levels_;
  int red_first_add_level_;
};

// Bit helpers used by the routers and documented in docs/networks.md.
int lowest_set_bit(unsigned x);   // x != 0
int highest_set_bit(unsigned x);  // x != 0

}  // namespace fetta::route
