// The SystemC testbench around one Verilated CE (verilator --sc): a clock, a driver that replays
// a CeProgram cycle by cycle, a monitor that collects the valid output rows, and run_gemm() which
// plans, runs and scores one GEMM.
//
// The bench binds to the model's ports by name (ia_0, ctrl_active, out_psum_3, ...), so it works
// with any CE configuration: construct the Verilated model, pass it with its CeParams, and
// construct every bench before the first run (SystemC elaborates once). Each bench has its own
// clock that runs only during its run(), so idle models cost nothing.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hw/ce/ce.hpp"
#include "sim/ce/program.hpp"
#include "sim/port_signal.hpp"
#include "sim/ce/scoreboard.hpp"

namespace fetta::sim::ce {

using sim::PortSignal;

class CeBench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(CeBench);
  // Throws std::invalid_argument if the model's ports do not match `params` (a port missing,
  // left over, or not of the type Verilator gives its width).
  CeBench(sc_core::sc_module_name name, sc_core::sc_module& dut, const hw::CeParams& params);
  ~CeBench() override;

  // The model's ports by name if they are exactly those of a CE with `params`; else throws
  // std::invalid_argument naming the first missing, extra or mistyped port. Binds nothing.
  static std::map<std::string, sc_core::sc_object*> check_ports(const sc_core::sc_module& dut,
                                                                 const hw::CeParams& params);

  const hw::CeParams& params() const { return params_; }
  std::string config() const { return hw::Ce(params_).module_name(); }

  // Resets the CE for kResetCycles, replays the program and keeps the clock running until
  // `tail` cycles after the last expected output; returns the valid output rows seen.
  std::vector<ObservedOutput> run(const CeProgram& prog, int64_t tail = 16);
  static constexpr int kResetCycles = 2;

 private:
  void clock_thread();
  void drive();    // driver: at the falling edge, the inputs of the coming rising edge
  void monitor();  // monitor: at the falling edge, the outputs registered at the last rising edge
  PortSignal& port(const std::string& name);
  bool has_port(const std::string& name) const { return ports_.count(name) != 0; }

  hw::CeParams params_;
  sc_core::sc_signal<bool> clk_;
  std::map<std::string, std::unique_ptr<PortSignal>> ports_;
  sc_core::sc_event run_event_;
  const CeProgram* prog_ = nullptr;
  int64_t cycle_ = 0;      // relative to the program's cycle 0 (negative during reset)
  int64_t remaining_ = 0;  // cycles left in this run
  std::vector<ObservedOutput> seen_;
};

// Plans the GEMM for the bench's CE, runs it, scores it (the report is in the result).
ScoreResult run_gemm(CeBench& bench, const hw::Strategy& strategy, const GemmOperands& ops,
                     const PlanOptions& options = {});

}  // namespace fetta::sim::ce
