// The driver's plan: a GEMM mapped onto one CE with one strategy, as the exact input of every
// cycle and the output rows expected back (cycle, drained row, which part of Z they carry).
// Scheduled with the timing model of hw/ce/ce_timing.hpp; the scoreboard checks the RTL against
// both the expected cycles and the golden values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hw/ce/ce_timing.hpp"
#include "sim/ce/operands.hpp"

namespace fetta::sim::ce {

// What the driver applies to the CE in one cycle (IA and IB aligned; the CE skews rows itself).
struct CeCycleInput {
  std::vector<uint64_t> ia;       // R
  std::vector<uint64_t> ib_top;   // C
  std::vector<uint64_t> ib_left;  // R
  bool os = false, active = false, first = false, last = false, ib_load = false, ib_from_left = false;
};

// One output row the CE must produce.
struct ExpectedOutput {
  int64_t cycle = 0;
  int row = 0;          // out.row: os, the drained PE row; stationary, 0
  int64_t z_row = -1;   // row of Z carried, -1 for a padding row
  int64_t z_col0 = 0;   // Z column of out.psum[0]
  int cols = 0;         // columns of Z carried (out.psum[0..cols-1]); the rest is padding
  int64_t chunk = 0;    // stationary: the reduction chunk (K rows k0 = chunk*R ..), in order
};

// Deliberate deviations from the documented schedule, to show that its limits are tight.
struct PlanOptions {
  int64_t period_adjust = 0;  // added to every fold period (negative: too tight)
  // Stationary: start IB load f at the start of fold f-1 (+ load_adjust) instead of just in time.
  bool eager_load = false;
  int64_t load_adjust = 0;
};

struct CeProgram {
  hw::CeParams ce;
  hw::Strategy strategy;
  hw::GemmShape shape;
  hw::CeMapping mapping;
  hw::CeTiming timing;       // the documented model (without PlanOptions deviations)
  PlanOptions options;
  std::vector<CeCycleInput> inputs;      // cycle 0 .. inputs.size()-1; idle afterwards
  std::vector<ExpectedOutput> outputs;   // increasing cycle
  std::vector<int64_t> fold_starts;      // cycle of each fold's first IA vector

  int64_t scheduled_cycles() const { return outputs.empty() ? 0 : outputs.back().cycle + 1; }
  int64_t macs() const { return shape.m * shape.k * shape.n; }
};

// Throws std::invalid_argument for a strategy the CE cannot run (see hw::map_gemm) or operands
// of a different data type than the CE; std::logic_error if the schedule asks for two things
// on one input in the same cycle (PlanOptions too aggressive).
CeProgram plan_gemm(const hw::CeParams& ce, const hw::Strategy& strategy, const GemmOperands& ops,
                    const PlanOptions& options = {});

}  // namespace fetta::sim::ce
