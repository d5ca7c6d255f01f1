// CSSE stage 2: re-rank candidate trees with a model of the configured hardware.
//
// A pairwise step is a batched GEMM: out[batch, m, n] = sum_k A[batch, m, k] B[batch, k, n],
// where (labels of the two operands, and of the step's result):
//   batch = labels of both operands kept in the result,
//   m     = labels of the left operand only, kept,   n = labels of the right operand only, kept,
//   k     = labels summed away at the step (in one or both operands).
// batch * m * n * k is exactly the step's MAC count of stage 1. docs/search.md states the model.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "mapper/problem.hpp"

namespace fetta::mapper {

enum class Metric { macs, latency, energy, edp };
Metric parse_metric(const std::string& text);  // "macs" | "latency" | "energy" | "edp"
std::string to_string(Metric m);

struct StepShape {
  uint64_t batch = 1, m = 1, n = 1, k = 1;
  uint64_t a_elems = 1, b_elems = 1, out_elems = 1;  // operand and result sizes (elements)
  uint64_t macs = 1;
};
StepShape step_shape(const Problem& p, const Step& s);
StepShape matmul_shape(uint64_t m, uint64_t k, uint64_t n);  // one (m x k) . (k x n) product

// The terms of a step's energy (docs/search.md), in pJ; energy_pj is their sum.
struct EnergyTerms {
  double mac = 0, sram = 0, network = 0, dram = 0, static_power = 0;
  double total() const { return mac + sram + network + dram + static_power; }
};

struct StepCost {
  double cycles = 0;
  double energy_pj = 0;
  EnergyTerms energy;
  std::string dataflow;  // "WS" | "IS" | "OS" (OS may be "OS^T": rows = n, cols = m)
  double compute_cycles = 0, sram_cycles = 0, dram_cycles = 0;
  double sram_bytes = 0, dram_bytes = 0;
  double sram_read_bytes = 0, sram_write_bytes = 0;  // the SRAM energy's accesses, partial sums included
  double dram_read_bytes = 0, dram_write_bytes = 0;  // dram_bytes apart: operands read, the result written
  double utilization = 0;  // MACs / (cycles * total PEs)
};

// A hardware cost model: the cost of one pairwise step. Implementations must be stateless
// with respect to the steps (a tree costs the sum of its steps).
class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;
  virtual double clock_mhz() const = 0;
  virtual StepCost step(const StepShape& s) const = 0;
};

// First-order analytical model of an ArchConfig (see docs/search.md for every term).
class AnalyticalModel : public CostModel {
 public:
  explicit AnalyticalModel(arch::ArchConfig cfg);
  std::string name() const override;
  double clock_mhz() const override { return cfg_.clock_mhz; }
  StepCost step(const StepShape& s) const override;
  // The cost of one dataflow ("WS", "IS", "OS", "OS^T"); infinite cycles if not configured.
  StepCost step_with(const StepShape& s, const std::string& dataflow) const;
  const arch::ArchConfig& config() const { return cfg_; }

 private:
  arch::ArchConfig cfg_;
};

struct TreeCost {
  uint64_t macs = 0;
  double cycles = 0;
  double latency_us = 0;
  double energy_uj = 0;
  double edp = 0;  // energy_uj * latency_us
  std::vector<StepCost> steps;
};
TreeCost evaluate(const Problem& p, const ContractionTree& t, const CostModel& model);

// The energy of a simulated run by the model's constants (docs/power.md, "Energy model"): the
// static power over the run's cycles (host transfers and waits included), each step's MAC, SRAM
// and network terms as the model costs its shape, and the DRAM bytes the run moved.
EnergyTerms run_energy(const AnalyticalModel& model, const std::vector<StepShape>& steps, double run_cycles,
                       double dram_bytes_read, double dram_bytes_written);
double metric_value(const TreeCost& c, Metric m);

}  // namespace fetta::mapper
