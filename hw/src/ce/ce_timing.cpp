#include "hw/ce/ce_timing.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

namespace fetta::hw {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool built_in(const PeParams& p, arch::Dataflow d) {
  switch (d) {
    case arch::Dataflow::ws: return p.ws;
    case arch::Dataflow::is: return p.is;
    case arch::Dataflow::os: return p.os;
  }
  return false;
}

}  // namespace

std::string to_string(const Strategy& s) {
  if (s.dataflow == arch::Dataflow::os) return s.ia_role == IaRole::a ? "os_a" : "os_b";
  return arch::to_string(s.dataflow) + (s.ib_path == IbPath::top ? "_top" : "_left");
}

const std::vector<Strategy>& all_strategies() {
  using arch::Dataflow;
  static const std::vector<Strategy> list{
      {Dataflow::ws, IbPath::top, IaRole::a}, {Dataflow::ws, IbPath::left, IaRole::a},
      {Dataflow::is, IbPath::top, IaRole::b}, {Dataflow::is, IbPath::left, IaRole::b},
      {Dataflow::os, IbPath::top, IaRole::a}, {Dataflow::os, IbPath::top, IaRole::b}};
  return list;
}

Strategy parse_strategy(const std::string& name) {
  std::string names;
  for (const Strategy& s : all_strategies()) {
    if (to_string(s) == name) return s;
    names += (names.empty() ? "" : ", ") + to_string(s);
  }
  throw std::invalid_argument(fmt::format("strategy: unknown '{}'; allowed: {}", name, names));
}

void validate(const Strategy& s) {
  if (s.dataflow == arch::Dataflow::ws && s.ia_role != IaRole::a)
    throw std::invalid_argument("strategy: ws holds B as IB, so IA must be A (ia_role a); use is for IA = B");
  if (s.dataflow == arch::Dataflow::is && s.ia_role != IaRole::b)
    throw std::invalid_argument("strategy: is holds A as IB, so IA must be B (ia_role b); use ws for IA = A");
  if (s.dataflow == arch::Dataflow::os && s.ib_path != IbPath::top)
    throw std::invalid_argument("strategy: in os IB streams down the columns; allowed ib_path: top");
}

CeMapping map_gemm(const CeParams& ce, const Strategy& s, const GemmShape& g) {
  validate(ce);
  validate(s);
  if (!built_in(ce.pe, s.dataflow))
    throw std::invalid_argument(fmt::format("strategy {}: dataflow {} is not built into this CE (dataflows: {}); "
                                            "allowed: the strategies of the built-in dataflows",
                                            to_string(s), arch::to_string(s.dataflow), dataflow_tag(ce.pe)));
  if (g.m < 1 || g.k < 1 || g.n < 1)
    throw std::invalid_argument(
        fmt::format("gemm: M={}, K={}, N={}; allowed: every dimension >= 1", g.m, g.k, g.n));
  CeMapping mp;
  mp.os = s.dataflow == arch::Dataflow::os;
  mp.z_is_transposed = s.ia_role == IaRole::b;
  mp.z_rows = mp.z_is_transposed ? g.n : g.m;
  mp.z_cols = mp.z_is_transposed ? g.m : g.n;
  mp.reduce = g.k;
  mp.stream = mp.os ? g.k : mp.z_rows;
  mp.row_folds = mp.os ? ceil_div(mp.z_rows, ce.rows) : ceil_div(g.k, ce.rows);
  mp.col_folds = ceil_div(mp.z_cols, ce.cols);
  return mp;
}

CeTiming ce_timing(const CeParams& ce, const Strategy& s, const GemmShape& g) {
  const CeMapping mp = map_gemm(ce, s, g);
  const int64_t R = ce.rows, C = ce.cols, sk = ce.row_skew(), T = mp.stream;
  CeTiming t;
  if (mp.os) {
    // Fold f streams K IA/IB vectors from S_f; the bottom row's last MAC is at S_f + K - 1 + R - 1,
    // the drain starts the next cycle and takes R cycles. A double-buffered Psum lets the next
    // fold start once this one has left the top row's drain register (R cycles after S_f).
    t.load = 0;
    t.period = ce.pe.psum_double_buffer ? std::max(T, R) : T + R - 1;
    t.first_start = 0;
    t.out_first = T + R - 1;
    t.out_span = R;
  } else {
    // Fold f's IB load takes `load` cycles and ends just before S_f; IA vector t enters at S_f + t
    // and its output row leaves the bottom at S_f + t + R*s. A double-buffered IB loads during the
    // previous fold (from its start: row r swaps at S_f + r*s and is overwritten from then on);
    // a single-buffered one only after the previous fold's last IA (S_f + T - 1).
    t.load = s.ib_path == IbPath::top ? 1 + (R - 1) * sk : C;
    t.period = ce.pe.ib_double_buffer ? std::max(T, t.load) : T - 1 + t.load;
    t.first_start = t.load;
    t.out_first = R * sk;
    t.out_span = T;
  }
  // Product stages delay every result by as many cycles; nothing else moves (docs/ce.md).
  t.out_first += ce.pe.product_stages;
  t.total = t.first_start + (mp.folds() - 1) * t.period + t.out_first + t.out_span;
  return t;
}

}  // namespace fetta::hw
