#include "hw/net/net.hpp"

#include <stdexcept>

#include "arch/isa.hpp"

namespace fetta::hw {

DistNetParams dist_net_params(const arch::ArchConfig& cfg) {
  DistNetParams p;
  p.lanes = cfg.network.lanes;
  p.elem_bits = arch::operand_bits(cfg.dtype);
  p.elems_per_bank = cfg.memory.elems_per_bank;
  p.control = DistControlPorts::both;
  p.pipeline_every = cfg.network.dist_pipeline_every;
  p.output_register = cfg.network.dist_output_register;
  return p;
}

RedNetParams red_net_params(const arch::ArchConfig& cfg) {
  RedNetParams p;
  p.lanes = cfg.network.lanes;
  p.elems_per_bank = cfg.memory.elems_per_bank;
  p.pipeline_every = 1;
  p.gate_stages = true;  // the CEs' valid results clock the stages (docs/networks.md)
  p.adder = reduction_adder_choice(cfg);
  p.adder_stages = cfg.arith.reduction_adder_stages;
  p.first_add_level = arch::red_first_add_level(cfg);
  switch (cfg.dtype) {
    case arch::DataType::bf16: p.elem = RedElem::fp32; break;
    case arch::DataType::int8: p.elem = RedElem::int32; break;
    case arch::DataType::int16: p.elem = RedElem::int48; break;
    default: throw std::invalid_argument("dtype: unknown data type; allowed: bf16, int8, int16");
  }
  return p;
}

std::string elaborate_dist_net(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(DistNet(dist_net_params(cfg)))->name();
}

std::string elaborate_red_net(rtl::Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(RedNet(red_net_params(cfg)))->name();
}

}  // namespace fetta::hw
