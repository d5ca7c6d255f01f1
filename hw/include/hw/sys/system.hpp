// The whole accelerator (ARCHITECTURE 4.5-4.6, docs/architecture.md): the controller with its
// instruction queue, and the top that joins unified memory, the two distribution networks, the
// CE array, the reduction network and the accumulation unit behind one host interface.
//
// Dataflow of every GEMM instruction (docs/isa.md): weight-stationary, IB loaded from the left.
// The G CEs form Gn groups of Gk CEs (CE g = gn*Gk + gk): the Gk CEs of a group split the K tile
// (Gk*R lanes, summed by the reduction network), the groups hold different N columns and share
// the IA stream (multicast by the IA network).
#pragma once

#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "hw/ports.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// Everything the controller needs to know about the datapath around it.
struct ControllerParams {
  arch::ArchConfig cfg;  // sizes (CE count/rows/cols, lanes, depths) and the ISA layout
  int ctrl_delay = 1;    // cycles from an IA/IB read issue to the data at the CE inputs
  int acc_delay = 6;     // cycles from an IA read issue to its results at the accumulator
  int queue_depth = arch::kTopInstrQueueDepth;  // instructions the queue holds
};

class Controller : public rtl::IdentifiedGenerator<ControllerParams> {
 public:
  static constexpr rtl::Port<WordPort> kInstr{"instr"};
  using IdentifiedGenerator::IdentifiedGenerator;
  std::string generator_name() const override { return "hw::Controller"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

struct AcceleratorParams {
  arch::ArchConfig cfg;
};

// arch::system_timing(cfg), checked against the latencies of the generated networks.
arch::SystemTiming system_timing(const arch::ArchConfig& cfg);

class Accelerator : public rtl::IdentifiedGenerator<AcceleratorParams> {
 public:
  using IdentifiedGenerator::IdentifiedGenerator;
  std::string generator_name() const override { return "hw::Accelerator"; }
  rtl::Identity identity() const override;
  void build(rtl::Module& m) const override;
};

// The top's ports, declared once: the accelerator declares them, and the system bench checks a
// model's ports against them and binds them. `input`: the top is the answering side
// (rtl::Module::input; a bundle's flipped fields are then outputs), else the driving side.
struct TopPort {
  std::string name;
  rtl::Type type;
  bool input = true;
};
struct TopPorts {
  TopPort instr;        // hw::WordPort: instruction words into the controller's queue
  TopPort busy, error, cycle_count, retired, hw_id;  // the controller's status; hw_id (hardware_id)
  TopPort host;         // hw::HostPort: the host's accesses to the unified memory (when the DMA has no work)
  TopPort host_rvalid;  // a host read's data is on host_rdata
  TopPort acc;          // the accumulator read port: re, group, row -> rvalid, rdata (the host side of a drain)
  TopPort desc;         // hw::WordPort: descriptor words into the DMA's queue
  TopPort dma;          // the DMA's status: busy, done (descriptors finished), error
  TopPort mem;          // hw::DramPort: the DMA's external memory port
  std::vector<TopPort> all() const;  // in declaration order
  // The SystemVerilog port names of every leaf, clk and rst first.
  std::vector<std::string> leaf_names() const;
};
TopPorts top_ports(const arch::ArchConfig& cfg);

// The value of the top's `hw_id` output: the first 32 bits of the sha256 of its module name
// (which spells every parameter), so a host can check which configuration it is talking to.
uint32_t hardware_id(const arch::ArchConfig& cfg);
// The same as 8 hex digits: how a compiled program names the top it is for (mapper::Program::hw_id).
std::string hardware_id_hex(const arch::ArchConfig& cfg);
// The hw_id of the top whose module is named `top` (a generated design's manifest names it), as 8 hex digits.
std::string hardware_id_hex_of(const std::string& top);

std::string elaborate_controller(rtl::Design& design, const arch::ArchConfig& cfg);
std::string elaborate_accelerator(rtl::Design& design, const arch::ArchConfig& cfg);

}  // namespace fetta::hw
