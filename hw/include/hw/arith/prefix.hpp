// Log-depth integer building blocks written out gate by gate in rtl_gen: parallel-prefix adders
// (Kogge-Stone, Sklansky, Brent-Kung), a compound adder (a + b and a + b + 1 from one carry
// network) and a leading-zero count tree. A plain `+` leaves the adder's structure to the
// synthesis tool (Yosys' generic `$alu` lowering is a ripple carry, which ABC only partly
// rebalances); these fix a log-depth carry network in the netlist. Each level of a network is
// one named vector node (`<name>_g<k>`, `<name>_p<k>`, `<name>_v<k>`, `<name>_c<k>`), so the RTL
// reads level by level and the names never depend on anything but `name` and the width.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// The carry network of a prefix adder of n bits (L = ceil(log2 n)):
//   kogge_stone: L levels, every position combines at every level (most wires, fan-out 2);
//   sklansky:    L levels, divide and conquer (fewest levels and cells, fan-out up to n/2);
//   brent_kung:  2L - 1 levels, a tree up and a tree down (fewest cells, fan-out 2).
enum class PrefixKind { kogge_stone = 0, sklansky = 1, brent_kung = 2 };

// "ks", "sk", "bk" (module-name tags); throws std::invalid_argument naming `what` and the allowed
// values for a value outside the enum.
std::string prefix_tag(PrefixKind kind, const std::string& what = "prefix");
// "kogge_stone", "sklansky", "brent_kung" (parameter values in RTL headers).
std::string prefix_name(PrefixKind kind, const std::string& what = "prefix");

struct PrefixSum {
  rtl::Sig sum;    // (a + b + cin) mod 2^n
  rtl::Sig carry;  // the carry out of bit n-1
};

// a + b + cin for a, b UInt<n> (n >= 1) and cin UInt<1>.
PrefixSum prefix_add(rtl::Module& m, const std::string& name, const rtl::Expr& a, const rtl::Expr& b,
                     const rtl::Expr& cin, PrefixKind kind);
// a + b (no carry in).
PrefixSum prefix_add(rtl::Module& m, const std::string& name, const rtl::Expr& a, const rtl::Expr& b,
                     PrefixKind kind);

struct CompoundSum {
  rtl::Sig sum;     // (a + b) mod 2^n
  rtl::Sig carry;   // carry out of a + b
  rtl::Sig sum1;    // (a + b + 1) mod 2^n
  rtl::Sig carry1;  // carry out of a + b + 1
};

// a + b and a + b + 1 from one carry network: the carry into bit i is G[i-1:0] without and
// G[i-1:0] | P[i-1:0] with the extra one, so the second sum costs one OR and one XOR per bit.
CompoundSum compound_add(rtl::Module& m, const std::string& name, const rtl::Expr& a, const rtl::Expr& b,
                         PrefixKind kind);

// The number of leading zeros of x (UInt<n>, n >= 1), n when x = 0, as UInt<ceil(log2(n + 1))>.
// A tree of (any one, count) pairs: the count's top bit ("the upper half is all zero") is ready
// after a few gate levels, the bottom bit last, which suits a normalization shifter that shifts
// by the largest amount first.
rtl::Sig leading_zeros(rtl::Module& m, const std::string& name, const rtl::Expr& x);

}  // namespace fetta::hw
