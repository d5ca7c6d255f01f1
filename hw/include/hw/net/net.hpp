// Entry points for `fetta gen`: the two networks for an architecture configuration.
#pragma once

#include <string>

#include "arch/config.hpp"
#include "hw/net/dist_net.hpp"
#include "hw/net/red_net.hpp"
#include "rtl_gen/module.hpp"

namespace fetta::hw {

// Parameters taken from the configuration: lanes = network.lanes, T = memory.elems_per_bank.
// Distribution: elements are operands (dtype bits), both control port sets, register every
// network.dist_pipeline_every stages. Reduction: accumulator elements (bf16 -> fp32, int8 ->
// int32, int16 -> int48), a register after every stage.
DistNetParams dist_net_params(const arch::ArchConfig& cfg);
RedNetParams red_net_params(const arch::ArchConfig& cfg);

// Elaborate into `design`; return the top module name. Throw std::invalid_argument on bad input.
std::string elaborate_dist_net(rtl::Design& design, const arch::ArchConfig& cfg);
std::string elaborate_red_net(rtl::Design& design, const arch::ArchConfig& cfg);

}  // namespace fetta::hw
