#include "sim/ce/program.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace fetta::sim::ce {

namespace {

// The per-cycle inputs, grown on demand; each input group may be claimed once per cycle.
class Timeline {
 public:
  Timeline(int rows, int cols, bool os) : rows_(rows), cols_(cols), os_(os) {}

  CeCycleInput& claim(int64_t cycle, int group, const char* what) {
    if (cycle < 0) throw std::logic_error(fmt::format("plan: {} scheduled at negative cycle {}", what, cycle));
    while (static_cast<int64_t>(in_.size()) <= cycle) {
      CeCycleInput x;
      x.ia.assign(static_cast<size_t>(rows_), 0);
      x.ib_top.assign(static_cast<size_t>(cols_), 0);
      x.ib_left.assign(static_cast<size_t>(rows_), 0);
      x.os = os_;
      in_.push_back(std::move(x));
      used_.push_back(0);
    }
    auto& u = used_[static_cast<size_t>(cycle)];
    if (u & (1 << group))
      throw std::logic_error(fmt::format("plan: cycle {}: {} collides with another use of the same inputs", cycle, what));
    u |= 1 << group;
    return in_[static_cast<size_t>(cycle)];
  }
  std::vector<CeCycleInput> take() { return std::move(in_); }

  static constexpr int kStream = 0;  // ia, active, first, last (and ib_top in os)
  static constexpr int kLoad = 1;    // ib_load, ib_from_left, ib_top / ib_left

 private:
  int rows_, cols_;
  bool os_;
  std::vector<CeCycleInput> in_;
  std::vector<int> used_;
};

}  // namespace

CeProgram plan_gemm(const hw::CeParams& ce, const hw::Strategy& strategy, const GemmOperands& ops,
                    const PlanOptions& options) {
  if (ops.dtype != ce.pe.dtype)
    throw std::invalid_argument(fmt::format("plan: operands are {} but the CE is built for {}",
                                            arch::to_string(ops.dtype), arch::to_string(ce.pe.dtype)));
  CeProgram prog;
  prog.ce = ce;
  prog.strategy = strategy;
  prog.shape = ops.shape();
  prog.mapping = hw::map_gemm(ce, strategy, prog.shape);
  prog.timing = hw::ce_timing(ce, strategy, prog.shape);
  prog.options = options;
  const hw::CeMapping& mp = prog.mapping;
  const hw::CeTiming& tm = prog.timing;
  const int R = ce.rows, C = ce.cols, s = ce.row_skew();
  const uint64_t ia_pad = ia_padding(ops.dtype), ib_pad = ib_padding(ops.dtype);

  // X (streamed as IA) and Y (IB) of Z = X Y.
  const Matrix x = mp.z_is_transposed ? ops.b.transposed() : ops.a;
  const Matrix y = mp.z_is_transposed ? ops.a.transposed() : ops.b;
  auto x_at = [&](int64_t i, int64_t k) { return i < x.rows && k < x.cols ? x.at(i, k) : ia_pad; };
  auto y_at = [&](int64_t k, int64_t j) { return k < y.rows && j < y.cols ? y.at(k, j) : ib_pad; };

  Timeline tl(R, C, mp.os);
  const int64_t period = tm.period + options.period_adjust;
  const int64_t early = options.eager_load ? std::max<int64_t>(0, -options.load_adjust) : 0;
  const int64_t first_start = tm.first_start + early;
  int64_t f = 0;
  for (int64_t outer = 0; outer < (mp.os ? mp.row_folds : mp.col_folds); ++outer) {
    for (int64_t inner = 0; inner < (mp.os ? mp.col_folds : mp.row_folds); ++inner, ++f) {
      const int64_t start = first_start + f * period;
      prog.fold_starts.push_back(start);
      if (mp.os) {
        // Fold (outer, inner): Z rows i0.., columns j0..; K steps of IA column + IB row.
        const int64_t i0 = outer * R, j0 = inner * C;
        for (int64_t k = 0; k < mp.stream; ++k) {
          CeCycleInput& in = tl.claim(start + k, Timeline::kStream, "IA/IB stream");
          in.active = true;
          in.first = k == 0;
          in.last = k == mp.stream - 1;
          for (int r = 0; r < R; ++r) in.ia[static_cast<size_t>(r)] = x_at(i0 + r, k);
          for (int c = 0; c < C; ++c) in.ib_top[static_cast<size_t>(c)] = y_at(k, j0 + c);
        }
        const int64_t drain = start + tm.out_first;
        for (int q = 0; q < R; ++q) {
          ExpectedOutput e;
          e.cycle = drain + q;
          e.row = R - 1 - q;
          const int64_t zr = i0 + e.row;
          e.z_row = zr < mp.z_rows ? zr : -1;
          e.z_col0 = j0;
          e.cols = static_cast<int>(std::min<int64_t>(C, mp.z_cols - j0));
          prog.outputs.push_back(e);
        }
      } else {
        // Fold (outer, inner): Z columns j0.., reduction rows k0..; load Y[k0.., j0..], then
        // stream T IA columns X[t, k0..].
        const int64_t j0 = outer * C, k0 = inner * R;
        int64_t load_at = start - tm.load;
        if (options.eager_load && f > 0) load_at = prog.fold_starts[static_cast<size_t>(f - 1)] + options.load_adjust;
        if (f == 0) load_at = 0;
        if (strategy.ib_path == hw::IbPath::top) {
          // Row r of the tile must be the (len-1-r)-th value: last row first; the first
          // len - R cycles (pipelined MACs only) carry nothing.
          for (int64_t i = 0; i < tm.load; ++i) {
            CeCycleInput& in = tl.claim(load_at + i, Timeline::kLoad, "IB load");
            in.ib_load = true;
            const int64_t r = tm.load - 1 - i;
            if (r < R)
              for (int c = 0; c < C; ++c) in.ib_top[static_cast<size_t>(c)] = y_at(k0 + r, j0 + c);
          }
        } else {
          // Column C-1 first: it travels to the far right.
          for (int j = 0; j < C; ++j) {
            CeCycleInput& in = tl.claim(load_at + j, Timeline::kLoad, "IB load");
            in.ib_load = true;
            in.ib_from_left = true;
            for (int r = 0; r < R; ++r) in.ib_left[static_cast<size_t>(r)] = y_at(k0 + r, j0 + C - 1 - j);
          }
        }
        for (int64_t t = 0; t < mp.stream; ++t) {
          CeCycleInput& in = tl.claim(start + t, Timeline::kStream, "IA stream");
          in.active = true;
          in.first = t == 0 && ce.has_first_ctrl();
          for (int r = 0; r < R; ++r) in.ia[static_cast<size_t>(r)] = x_at(t, k0 + r);
          ExpectedOutput e;
          // R row skews, then the product stages (the result leaves that much later).
          e.cycle = start + t + static_cast<int64_t>(R) * s + ce.pe.product_stages;
          e.z_row = t;
          e.z_col0 = j0;
          e.cols = static_cast<int>(std::min<int64_t>(C, mp.z_cols - j0));
          e.chunk = inner;
          prog.outputs.push_back(e);
        }
      }
    }
  }
  prog.inputs = tl.take();
  std::sort(prog.outputs.begin(), prog.outputs.end(),
            [](const ExpectedOutput& a, const ExpectedOutput& b) { return a.cycle < b.cycle; });
  if (options.period_adjust == 0 && !options.eager_load && prog.scheduled_cycles() != tm.total)
    throw std::logic_error(fmt::format("plan: schedule ends at {} cycles, the timing model says {}",
                                       prog.scheduled_cycles(), tm.total));
  return prog;
}

}  // namespace fetta::sim::ce
