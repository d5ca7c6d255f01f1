#include "mapper/cost_model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fetta::mapper {

Metric parse_metric(const std::string& text) {
  if (text == "macs") return Metric::macs;
  if (text == "latency") return Metric::latency;
  if (text == "energy") return Metric::energy;
  if (text == "edp") return Metric::edp;
  throw SearchError(fmt::format("unknown metric '{}' (expected macs, latency, energy or edp)", text));
}

std::string to_string(Metric m) {
  switch (m) {
    case Metric::macs: return "macs";
    case Metric::latency: return "latency";
    case Metric::energy: return "energy";
    case Metric::edp: return "edp";
  }
  return "?";
}

StepShape matmul_shape(uint64_t m, uint64_t k, uint64_t n) {
  StepShape s;
  s.m = m, s.k = k, s.n = n;
  s.a_elems = m * k, s.b_elems = k * n, s.out_elems = m * n;
  s.macs = m * k * n;
  return s;
}

StepShape step_shape(const Problem& p, const Step& s) {
  const LabelSet a = p.operand_labels(s.left);
  const LabelSet b = p.operand_labels(s.right);
  const LabelSet r = p.kept_labels(s.left | s.right);
  StepShape sh;
  sh.batch = p.volume(a & b & r);
  sh.m = p.volume(minus(a, b) & r);
  sh.n = p.volume(minus(b, a) & r);
  sh.k = p.volume(minus(a | b, r));
  sh.a_elems = p.volume(a);
  sh.b_elems = p.volume(b);
  sh.out_elems = p.volume(r);
  sh.macs = s.macs;
  return sh;
}

namespace {

double ceil_div(double a, double b) { return std::ceil(a / b); }

int operand_bytes(arch::DataType t) { return t == arch::DataType::int8 ? 1 : 2; }
int accumulator_bytes(arch::DataType t) { return t == arch::DataType::int16 ? 6 : 4; }

bool configured(const arch::ArchConfig& cfg, arch::Dataflow d) {
  return std::find(cfg.ce.dataflows.begin(), cfg.ce.dataflows.end(), d) != cfg.ce.dataflows.end();
}

}  // namespace

AnalyticalModel::AnalyticalModel(arch::ArchConfig cfg) : cfg_(std::move(cfg)) {
  if (cfg_.ce.rows < 1 || cfg_.ce.cols < 1 || cfg_.ce.count < 1) {
    throw SearchError("the cost model needs at least one CE of at least 1x1 PEs");
  }
  if (cfg_.memory.banks < 1 || cfg_.memory.elems_per_bank < 1 || cfg_.clock_mhz <= 0 ||
      cfg_.dram.bandwidth_gbps <= 0) {
    throw SearchError("the cost model needs positive memory banks, elements per bank, clock and DRAM bandwidth");
  }
  if (cfg_.ce.dataflows.empty()) throw SearchError("the cost model needs at least one dataflow");
}

namespace {

// A step's unified-memory traffic, in elements: the two operand ports, the partial sums and the result.
struct SramTraffic {
  double ia = 0, ib = 0, psums = 0, out = 0;
};

// The step's energy terms from its MACs, its traffic and its cycles (c.cycles set).
void add_energy(const arch::ArchConfig& cfg, const StepShape& s, const SramTraffic& x, StepCost& c) {
  const double lanes = static_cast<double>(cfg.memory.banks) * cfg.memory.elems_per_bank;
  const double ob = operand_bytes(cfg.dtype), ab = accumulator_bytes(cfg.dtype);
  const auto& e = cfg.energy;
  const double levels = std::log2(lanes) + 1;  // butterfly levels + the transpose level
  EnergyTerms& t = c.energy;
  t.mac = static_cast<double>(s.macs) * e.mac_pj;
  c.sram_read_bytes = (x.ia + x.ib) * ob;
  c.sram_write_bytes = x.out * ob;
  if (x.psums > x.out) {  // accumulate: every partial sum read and written back
    c.sram_read_bytes += x.psums * ab;
    c.sram_write_bytes += x.psums * ab;
  }
  t.sram = c.sram_read_bytes * e.sram_read_pj_per_byte + c.sram_write_bytes * e.sram_write_pj_per_byte;
  t.network = (x.ia + x.ib + x.psums) * levels * e.network_hop_pj;
  t.dram = c.dram_read_bytes * e.dram_read_pj_per_byte + c.dram_write_bytes * e.dram_write_pj_per_byte;
  t.static_power = e.static_mw * c.cycles * 1000.0 / cfg.clock_mhz;  // mW x ns
  c.energy_pj = t.total();
}

}  // namespace

std::string AnalyticalModel::name() const {
  return fmt::format("analytical({}: {} CEs of {}x{}, {} lanes, {:g} MHz)", cfg_.name, cfg_.ce.count, cfg_.ce.rows,
                     cfg_.ce.cols, cfg_.memory.banks * cfg_.memory.elems_per_bank, cfg_.clock_mhz);
}

StepCost AnalyticalModel::step_with(const StepShape& s, const std::string& dataflow) const {
  const double R = cfg_.ce.rows, C = cfg_.ce.cols, P = cfg_.ce.count;
  const double lanes = static_cast<double>(cfg_.memory.banks) * cfg_.memory.elems_per_bank;
  const double stages = cfg_.ce.mac_pipeline_stages + cfg_.ce.mac_product_stages;
  const double ob = operand_bytes(cfg_.dtype);
  const double batch = static_cast<double>(s.batch), m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k);

  StepCost c;
  c.dataflow = dataflow;
  const bool os = dataflow == "OS" || dataflow == "OS^T";
  const arch::Dataflow df = os ? arch::Dataflow::os : dataflow == "WS" ? arch::Dataflow::ws : arch::Dataflow::is;
  if (!configured(cfg_, df)) {
    c.cycles = std::numeric_limits<double>::infinity();
    c.energy_pj = std::numeric_limits<double>::infinity();
    return c;
  }
  // Spatial mapping (SCALE-Sim style): rows x cols of the array, T streamed per fold.
  double rows = 0, cols = 0, T = 0;
  if (dataflow == "OS") {
    rows = m, cols = n, T = k;
  } else if (dataflow == "OS^T") {
    rows = n, cols = m, T = k;
  } else if (dataflow == "WS") {  // B stationary
    rows = k, cols = n, T = m;
  } else {  // IS: A stationary
    rows = k, cols = m, T = n;
  }
  const double row_folds = ceil_div(rows, R), col_folds = ceil_div(cols, C);
  const double folds = batch * row_folds * col_folds;
  const double waves = ceil_div(folds, P);  // folds spread over the CEs
  if (os) {
    const double fill = R + C - 2 + stages;  // skew in + drain out
    c.compute_cycles = cfg_.ce.psum_double_buffer ? waves * std::max(T, R) + fill : waves * (T + fill);
  } else {
    const double fill = 2 * R + C - 2 + stages;  // preload R + skew
    c.compute_cycles = cfg_.ce.ib_double_buffer ? waves * std::max(T, R) + fill : waves * (T + fill);
  }

  // Unified-memory traffic, in elements, per port.
  double ia = 0, ib = 0, psums = 0;
  if (os) {  // rows operand on IA, cols operand on IB, both streamed once per fold of the other
    ia = batch * rows * T * col_folds;
    ib = batch * cols * T * row_folds;
    psums = batch * m * n;  // complete sums leave the array once
  } else {  // stationary operand loaded once on IB, the other streamed once per column fold
    ib = batch * rows * cols;
    ia = batch * T * rows * col_folds;
    psums = batch * m * n * row_folds;  // one partial sum per row fold
  }
  const double out = batch * m * n;
  c.sram_cycles = std::max({ia, ib, psums}) / lanes;
  c.sram_bytes = (ia + ib + out) * ob;

  // DRAM: when operands and result do not fit in half the unified memory (the other half is the
  // ping-pong buffer), they cross DRAM once.
  const double capacity = lanes * cfg_.memory.unified_depth / 2.0;
  const double footprint =
      static_cast<double>(s.a_elems) + static_cast<double>(s.b_elems) + static_cast<double>(s.out_elems);
  if (footprint > capacity) {
    c.dram_read_bytes = (static_cast<double>(s.a_elems) + static_cast<double>(s.b_elems)) * ob;
    c.dram_write_bytes = static_cast<double>(s.out_elems) * ob;
    c.dram_bytes = c.dram_read_bytes + c.dram_write_bytes;
    c.dram_cycles = c.dram_bytes / arch::dram_bytes_per_cycle(cfg_);
  }
  c.cycles = std::max({c.compute_cycles, c.sram_cycles, c.dram_cycles});

  add_energy(cfg_, s, {ia, ib, psums, out}, c);
  c.utilization = static_cast<double>(s.macs) / (c.cycles * P * R * C);
  return c;
}

StepCost AnalyticalModel::step(const StepShape& s) const {
  StepCost best;
  bool have = false;
  for (const char* d : {"WS", "IS", "OS", "OS^T"}) {
    StepCost c = step_with(s, d);
    if (!have || c.cycles < best.cycles || (c.cycles == best.cycles && c.energy_pj < best.energy_pj)) {
      best = c;
      have = true;
    }
  }
  return best;
}

TreeCost evaluate(const Problem& p, const ContractionTree& t, const CostModel& model) {
  TreeCost tc;
  tc.macs = t.macs;
  double pj = 0;
  for (const auto& s : t.steps) {
    StepCost c = model.step(step_shape(p, s));
    tc.cycles += c.cycles;
    pj += c.energy_pj;
    tc.steps.push_back(std::move(c));
  }
  tc.latency_us = tc.cycles / model.clock_mhz();
  tc.energy_uj = pj * 1e-6;
  tc.edp = tc.energy_uj * tc.latency_us;
  return tc;
}

EnergyTerms run_energy(const AnalyticalModel& model, const std::vector<StepShape>& steps, double run_cycles,
                       double dram_bytes_read, double dram_bytes_written) {
  const arch::EnergyConfig& e = model.config().energy;
  EnergyTerms t;
  for (const StepShape& s : steps) {
    const StepCost c = model.step(s);
    t.mac += c.energy.mac;
    t.sram += c.energy.sram;
    t.network += c.energy.network;
  }
  t.dram = dram_bytes_read * e.dram_read_pj_per_byte + dram_bytes_written * e.dram_write_pj_per_byte;
  t.static_power = e.static_mw * run_cycles * 1000.0 / model.clock_mhz();
  return t;
}

double metric_value(const TreeCost& c, Metric m) {
  switch (m) {
    case Metric::macs: return static_cast<double>(c.macs);
    case Metric::latency: return c.cycles;
    case Metric::energy: return c.energy_uj;
    case Metric::edp: return c.edp;
  }
  return 0;
}

}  // namespace fetta::mapper
