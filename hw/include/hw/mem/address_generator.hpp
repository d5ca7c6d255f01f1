// AddressGenerator: runs an affine loop nest and emits one address per stream per cycle.
//
// Level 0 is the innermost loop. For index vector (i_0 .. i_{L-1}), 0 <= i_l <= bound_m1[l],
// stream s emits
//     addr[s] = base[s] + sum_l i_l * stride[s][l]   (mod 2^addr_bits: addresses wrap)
// in lexicographic order, the innermost index fastest. A negative stride is its two's
// complement (stride 2^addr_bits - k steps back by k). Permuted and reshaped layouts are read
// in place by the choice of strides (docs/memory.md has the [I,J] -> [J,I] example).
//
// Ports (L = levels, S = streams, A = addr_bits, C = count_bits):
//   start UInt<1>     begin the nest (takes priority over run); base is sampled here
//   run UInt<1>       advance: the current address is consumed (a ready)
//   bound_m1 Vec<L, UInt<C>>    iterations of level l minus one (0: one iteration, 2^C - 1: 2^C)
//   base Vec<S, UInt<A>>, stride Vec<S, Vec<L, UInt<A>>> (port stride_<s>_<l>)
//   valid UInt<1>     an address is presented (from the cycle after start until the last one
//                     is consumed)
//   addr Vec<S, UInt<A>>  the current address of every stream (registers)
//   first UInt<L>, last UInt<L>   bit l: i_l == 0, i_l == bound_m1[l] for the current address
//   done UInt<1>      the nest has finished (the last address was consumed); cleared by start
// bound_m1 and stride must stay stable while valid is high.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

struct AddressGeneratorParams {
  int levels = 6;      // loop levels: 1 .. 16
  int streams = 3;     // operand streams (IA, IB, output): 1 .. 8
  int addr_bits = 15;  // address width; addresses wrap modulo 2^addr_bits: 1 .. 32
  int count_bits = 16; // loop counter width: bounds 1 .. 2^count_bits: 1 .. 32
};

class AddressGenerator : public rtl::IdentifiedGenerator<AddressGeneratorParams> {
 public:
  explicit AddressGenerator(AddressGeneratorParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::AddressGenerator"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
