#include "sim/ce/scoreboard.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "hw/ce/ce.hpp"

namespace fetta::sim::ce {

std::string CeReport::summary() const {
  std::string s = fmt::format("{} {} M={} K={} N={}: {} cycles (model {}), {} MACs, utilization {:.4f}; ", config,
                              strategy, shape.m, shape.k, shape.n, measured_cycles, predicted_cycles, macs,
                              utilization);
  if (ok()) return s + "PASS";
  return s + fmt::format("FAIL: {} timing errors, {} value errors, {}/{} outputs; first: {}", timing_errors,
                         value_errors, outputs_seen, outputs_expected, first_error);
}

ScoreResult score_gemm(const CeProgram& prog, const GemmOperands& ops, const std::vector<ObservedOutput>& seen) {
  ScoreResult res;
  CeReport& rep = res.report;
  rep.config = hw::Ce(prog.ce).module_name();
  rep.strategy = hw::to_string(prog.strategy);
  rep.shape = prog.shape;
  rep.predicted_cycles = prog.timing.total;
  rep.macs = prog.macs();
  rep.outputs_expected = static_cast<int64_t>(prog.outputs.size());
  rep.outputs_seen = static_cast<int64_t>(seen.size());
  rep.measured_cycles = seen.empty() ? 0 : seen.back().cycle + 1;
  rep.utilization = rep.measured_cycles > 0 ? static_cast<double>(rep.macs) / (static_cast<double>(prog.ce.rows) *
                                                                                 prog.ce.cols * rep.measured_cycles)
                                            : 0.0;
  auto error = [&](int64_t& counter, const std::string& what) {
    if (counter++ == 0 && rep.first_error.empty()) rep.first_error = what;
  };

  // Timing: the same rows, in the same cycles, from the same PE rows.
  const size_t n = std::min(seen.size(), prog.outputs.size());
  for (size_t i = 0; i < n; ++i) {
    const ExpectedOutput& e = prog.outputs[i];
    const ObservedOutput& o = seen[i];
    if (o.cycle != e.cycle || o.row != e.row)
      error(rep.timing_errors, fmt::format("output #{} at cycle {} row {}, expected cycle {} row {}", i, o.cycle, o.row,
                                           e.cycle, e.row));
  }
  if (seen.size() != prog.outputs.size())
    error(rep.timing_errors, fmt::format("{} output rows seen, {} expected", seen.size(), prog.outputs.size()));

  // Values: partial results accumulated per element in reduction-chunk order (stationary), or
  // taken as they are (os: one complete chain per element).
  const hw::CeMapping& mp = prog.mapping;
  Matrix z(mp.z_rows, mp.z_cols);
  Matrix chunks(mp.z_rows, mp.z_cols);  // partial results received so far per element
  for (size_t i = 0; i < n; ++i) {
    const ExpectedOutput& e = prog.outputs[i];
    if (e.z_row < 0) continue;
    for (int c = 0; c < e.cols; ++c) {
      const int64_t zc = e.z_col0 + c;
      const uint64_t v = seen[i].psum[static_cast<size_t>(c)];
      uint64_t& got = chunks.at(e.z_row, zc);
      if (static_cast<int64_t>(got) != e.chunk)
        error(rep.timing_errors, fmt::format("Z[{},{}]: partial result of chunk {} arrived as number {}", e.z_row, zc,
                                             e.chunk, got));
      ++got;
      z.at(e.z_row, zc) = mp.os ? v : accumulate(ops.dtype, z.at(e.z_row, zc), v);
    }
  }
  res.c = mp.z_is_transposed ? z.transposed() : z;

  const Matrix want = golden_gemm(ops, mp.os ? 0 : prog.ce.rows);
  for (int64_t i = 0; i < want.rows; ++i)
    for (int64_t j = 0; j < want.cols; ++j)
      if (res.c.at(i, j) != want.at(i, j))
        error(rep.value_errors, fmt::format("C[{},{}] = 0x{:x}, golden 0x{:x}", i, j, res.c.at(i, j), want.at(i, j)));
  return res;
}

}  // namespace fetta::sim::ce
