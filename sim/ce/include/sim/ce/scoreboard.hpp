// The scoreboard: checks the output rows a CE produced against the plan (every row in the
// expected cycle, from the expected PE row) and, after accumulating the partial results in the
// CE's order, every element of C against the golden model, bit-exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/ce/operands.hpp"
#include "sim/ce/program.hpp"

namespace fetta::sim::ce {

// One valid output row seen by the monitor (cycle relative to the program's cycle 0).
struct ObservedOutput {
  int64_t cycle = 0;
  int row = 0;
  std::vector<uint64_t> psum;  // C values
};

struct CeReport {
  std::string config;    // CE module name
  std::string strategy;
  hw::GemmShape shape;
  int64_t predicted_cycles = 0;  // the documented model (docs/ce.md)
  int64_t measured_cycles = 0;   // last valid output cycle + 1
  int64_t macs = 0;
  double utilization = 0.0;      // macs / (R * C * measured_cycles)
  int64_t outputs_expected = 0;
  int64_t outputs_seen = 0;
  int64_t timing_errors = 0;     // output rows missing, extra, early, late or from the wrong row
  int64_t value_errors = 0;      // elements of C differing from the golden model
  std::string first_error;

  bool ok() const { return timing_errors == 0 && value_errors == 0 && outputs_seen == outputs_expected; }
  std::string summary() const;
};

// The accumulated result (C, M x N bit patterns) from the observed outputs, and the report.
struct ScoreResult {
  Matrix c;
  CeReport report;
};
ScoreResult score_gemm(const CeProgram& prog, const GemmOperands& ops, const std::vector<ObservedOutput>& seen);

}  // namespace fetta::sim::ce
