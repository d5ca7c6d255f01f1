// The distribution network (ARCHITECTURE 4.3, docs/networks.md): memory-bank lanes -> CE inputs.
//
// N scalar lanes (lane = bank * T + elem). Stages from input to output:
//   stage 0      transpose level: lane i takes lane i or its partner in its TxT block
//                ((bank b, elem e) <-> (bank e, elem b) within the block);
//   stage k + 1  butterfly level k (k = 0 .. log2(N)-1): lane i takes lane i (vertical) or
//                lane i ^ 2^k (diagonal).
// Every stage is N 2:1 muxes. Control, by `control`:
//   full : tr_sel (N bits, bit i = lane i takes its partner) and lvl_sel_k (N bits per level,
//          bit i = lane i takes the diagonal at level k);
//   cheap: sel_vec, idx_mask (log2(N) bits each) and tr_en: the bit of lane i at level k is
//          sel_vec[k] ^ (idx_mask[k] & bit k of i); tr_en drives every transpose mux;
//   both : all of the above plus ctrl_mode (1: full vectors, 0: cheap).
// Pipelining: a register after stage s (1-based) when pipeline_every > 0 and s % pipeline_every
// == 0; the controls travel with the data (they are registered alongside), so a word and its
// control presented together leave together, dist_net_latency() cycles later.
#pragma once

#include <string>

#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

enum class DistControlPorts { full, cheap, both };
std::string to_string(DistControlPorts c);

struct DistNetParams {
  int lanes = 64;           // N, power of two
  int elem_bits = 16;       // element width (bf16 operands)
  int elems_per_bank = 4;   // T: transpose block T x T; needs N >= T^2
  DistControlPorts control = DistControlPorts::both;
  int pipeline_every = 0;   // 0: combinational; k: register after every k stages (0 .. log2(N)+1)
  // A register at the output (the CEs' input register); implied (and normalized to false) when
  // pipeline_every already ends on the last stage.
  bool output_register = false;
};

// Throws std::invalid_argument naming the field and the allowed values.
void validate(const DistNetParams& p);
// Cycles from `in` to `out`: floor((log2(N) + 1) / pipeline_every) (0 when combinational), + 1
// for the output register.
int dist_net_latency(const DistNetParams& p);

class DistNet : public rtl::IdentifiedGenerator<DistNetParams> {
 public:
  explicit DistNet(DistNetParams params);
  std::string generator_name() const override { return "hw::DistNet"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

}  // namespace fetta::hw
