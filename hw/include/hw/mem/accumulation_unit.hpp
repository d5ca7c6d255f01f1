// The accumulation unit: one AccumBank per reduction-network output group. Each bank holds
// `depth` rows of `elems` accumulators and has an adder per element (Fp32Add for bf16, the
// datapath that `adder_arch` and `adder_prefix` choose; IntAdd for the integer types).
//
// One operation per bank per cycle, selected by `op`:
//   0 idle
//   1 write       acc[addr][e] = data[e]                  for every e with mask[e]
//   2 accumulate  acc[addr][e] = acc[addr][e] + data[e]   for every e with mask[e]
//   3 read        rd_data = acc[addr], rd_valid = 1, one cycle later (with either pipeline)
// Writes and accumulates are sequential: each sees the effect of all earlier ones, at one
// operation per cycle, also back-to-back on the same row. The adder is combinational (stages 0):
// the accumulate loop (a register -> adder -> the same register) closes in one cycle,
// which is what sustains one accumulate per cycle to the same row. docs/memory.md §3.
//
// `pipeline` is the depth of the read-modify-write:
//   2: read the row; add and write it. The path SRAM read data -> forwarding mux -> adder ->
//      SRAM write data is one cycle. A read sees every earlier write and accumulate.
//   3: read the row; register it with the writes of the two operations ahead merged in; add
//      and write it. The adder's path starts at a flip-flop (closes 1 GHz on ASAP7 with the
//      two-path adder); writes land one cycle later, still one accumulate per cycle per row.
//      THE READ RULE: a read sees every write and accumulate issued at least 2 cycles before
//      it; one issued in the cycle right before it, to the same row, is not yet visible (the
//      read returns the row as it was before that operation). Read latency stays 1 cycle.
//
// Lanes carry UInt<32> binary32 patterns for bf16 and SInt<32> / SInt<48> for int8 / int16.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/arith/fp_add.hpp"
#include "hw/arith/prefix.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// The operation codes of an accumulator bank's `op` port.
enum class AccumOp : int { idle = 0, write = 1, accumulate = 2, read = 3 };

struct AccumBankParams {
  int elems = 4;                             // a power of two, 1 .. 64
  int depth = 512;                           // rows: a power of two, 2 .. 2^24
  arch::DataType dtype = arch::DataType::bf16;
  int pipeline = 2;                          // read-modify-write depth: 2 or 3 (see above)
  // The binary32 adder's datapath (bf16 only; normalized to the defaults for the integer types,
  // and the prefix to the default for basic, so names and parameters do not change with them).
  Fp32AddArch adder_arch = Fp32AddArch::basic;
  PrefixKind adder_prefix = PrefixKind::sklansky;
};

// One bank. Ports (aw = log2(depth), L = lane type):
//   op UInt<2>, addr UInt<aw>, mask UInt<elems>, data Vec<elems, L>
//   rd_valid UInt<1>, rd_data Vec<elems, L>
class AccumBank : public rtl::IdentifiedGenerator<AccumBankParams> {
 public:
  explicit AccumBank(AccumBankParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::AccumBank"; }
  // "accum_bank_t4_d512_fp32"; non-default parameters append "_p3" and "_twopath_<ks|sk|bk>":
  // "accum_bank_t4_d512_fp32_p3_twopath_sk"
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;

 private:
  void build_pipeline3(rtl::Module& m) const;  // pipeline = 3
};

struct AccumulationUnitParams {
  int banks = 16;                            // a power of two, 1 .. 256
  int elems = 4;                             // a power of two, 1 .. 64
  int depth = 512;                           // rows per bank: a power of two, 2 .. 2^24
  arch::DataType dtype = arch::DataType::bf16;
  // Passed to every bank, as AccumBankParams.
  int pipeline = 2;                          // 2 or 3
  Fp32AddArch adder_arch = Fp32AddArch::basic;
  PrefixKind adder_prefix = PrefixKind::sklansky;
};

// B banks side by side. Ports (N = B*elems lanes, lane b*elems + e = bank b element e):
//   op Vec<B, UInt<2>>, addr Vec<B, UInt<aw>>, mask UInt<N>, data Vec<N, L>
//   rd_valid UInt<B>, rd_data Vec<N, L>
class AccumulationUnit : public rtl::IdentifiedGenerator<AccumulationUnitParams> {
 public:
  explicit AccumulationUnit(AccumulationUnitParams params);  // throws std::invalid_argument for bad params
  std::string generator_name() const override { return "hw::AccumulationUnit"; }
  // "accum_unit_b16_t4_d512_fp32", "accum_unit_b16_t4_d512_fp32_p3_twopath_sk" (as AccumBank)
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
  int lanes() const { return p.banks * p.elems; }
  AccumBankParams bank_params() const;  // what every bank gets
};

// "fp32", "int32", "int48": the accumulator format of a data type (names in module names).
// Throws std::invalid_argument naming `dtype` and the allowed values for an unknown one.
std::string accumulator_format(arch::DataType dtype);

}  // namespace fetta::hw
