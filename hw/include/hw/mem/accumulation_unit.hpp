// The accumulation unit: one AccumBank per reduction-network output group. Each bank holds
// `depth` rows of `elems` accumulators and has an adder per element (Fp32Add for bf16, IntAdd
// for the integer types, chosen by hw::make_adder).
//
// One operation per bank per cycle, selected by `op`:
//   0 idle
//   1 write       acc[addr][e] = data[e]                  for every e with mask[e]
//   2 accumulate  acc[addr][e] = acc[addr][e] + data[e]   for every e with mask[e]
//   3 read        rd_data = acc[addr], rd_valid = 1, one cycle later
// Semantics are sequential: every operation sees the effect of all earlier ones, at one
// operation per cycle, also back-to-back on the same row. The read-modify-write is a two-stage
// pipeline (read the row; add and write it) with the last write forwarded to the next operation
// (docs/memory.md). The adder is combinational (stages 0): the accumulate loop
// (row value -> adder -> row value) closes in one cycle, which is what sustains one accumulate
// per cycle to the same row.
//
// Lanes carry UInt<32> binary32 patterns for bf16 and SInt<32> / SInt<48> for int8 / int16.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// The operation codes of an accumulator bank's `op` port.
enum class AccumOp : int { idle = 0, write = 1, accumulate = 2, read = 3 };

struct AccumBankParams {
  int elems = 4;                             // a power of two, 1 .. 64
  int depth = 512;                           // rows: a power of two, 2 .. 2^24
  arch::DataType dtype = arch::DataType::bf16;
};

// One bank. Ports (aw = log2(depth), L = lane type):
//   op UInt<2>, addr UInt<aw>, mask UInt<elems>, data Vec<elems, L>
//   rd_valid UInt<1>, rd_data Vec<elems, L>
class AccumBank : public rtl::Generator<AccumBankParams> {
 public:
  explicit AccumBank(AccumBankParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::AccumBank"; }
  std::string module_name() const override;  // "accum_bank_t4_d512_fp32"
  rtl::ParamList params() const override;
  void build(rtl::Module& m) const override;
};

struct AccumulationUnitParams {
  int banks = 16;                            // a power of two, 1 .. 256
  int elems = 4;                             // a power of two, 1 .. 64
  int depth = 512;                           // rows per bank: a power of two, 2 .. 2^24
  arch::DataType dtype = arch::DataType::bf16;
};

// B banks side by side. Ports (N = B*elems lanes, lane b*elems + e = bank b element e):
//   op Vec<B, UInt<2>>, addr Vec<B, UInt<aw>>, mask UInt<N>, data Vec<N, L>
//   rd_valid UInt<B>, rd_data Vec<N, L>
class AccumulationUnit : public rtl::Generator<AccumulationUnitParams> {
 public:
  explicit AccumulationUnit(AccumulationUnitParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::AccumulationUnit"; }
  std::string module_name() const override;  // "accum_unit_b16_t4_d512_fp32"
  rtl::ParamList params() const override;
  void build(rtl::Module& m) const override;
  int lanes() const { return p.banks * p.elems; }
};

// "fp32", "int32", "int48": the accumulator format of a data type (names in module names).
// Throws std::invalid_argument naming `dtype` and the allowed values for an unknown one.
std::string accumulator_format(arch::DataType dtype);

}  // namespace fetta::hw
