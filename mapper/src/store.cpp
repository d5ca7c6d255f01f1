#include "mapper/store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>

namespace fetta::mapper {

namespace {

using Vec4 = std::array<int64_t, 4>;  // accumulator row, its lane, unified row, its lane

Vec4 sub(const Vec4& a, const Vec4& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]}; }

// Row-major strides of `labels` (the last fastest) for a label -> stride map.
std::map<std::string, int64_t> strides_of(const LabelGroup& g) {
  std::map<std::string, int64_t> s;
  int64_t st = 1;
  for (size_t i = g.labels.size(); i-- > 0;) {
    s[g.labels[i]] = st;
    st *= g.dims[i];
  }
  return s;
}

int64_t wrap(int64_t v, int bits) { return v & ((int64_t{1} << bits) - 1); }

}  // namespace

bool fit_affine_nest(const std::vector<Vec4>& seq, Vec4& base, std::vector<AffineLevel>& levels) {
  levels.clear();
  if (seq.empty()) return false;
  std::vector<Vec4> cur = seq;
  while (cur.size() > 1) {
    const Vec4 d = sub(cur[1], cur[0]);
    size_t run = 1;
    while (run < cur.size() && sub(cur[run], cur[run - 1]) == d) ++run;
    size_t b = run;
    for (; b >= 2; --b) {
      if (cur.size() % b != 0) continue;
      bool all = true;
      for (size_t blk = 0; all && blk < cur.size() / b; ++blk)
        for (size_t t = 1; all && t < b; ++t) all = sub(cur[blk * b + t], cur[blk * b + t - 1]) == d;
      if (all) break;
    }
    if (b < 2) return false;
    levels.push_back({static_cast<int64_t>(b), d});
    std::vector<Vec4> next;
    for (size_t i = 0; i < cur.size(); i += b) next.push_back(cur[i]);
    cur = std::move(next);
  }
  base = cur[0];
  // The greedy split is exact by construction; regenerate to be certain.
  size_t i = 0;
  std::vector<int64_t> idx(levels.size(), 0);
  for (;; ++i) {
    Vec4 v = base;
    for (size_t l = 0; l < levels.size(); ++l)
      for (int s = 0; s < 4; ++s) v[static_cast<size_t>(s)] += idx[l] * levels[l].stride[static_cast<size_t>(s)];
    if (i >= seq.size() || v != seq[i]) return false;
    size_t l = 0;
    while (l < levels.size() && ++idx[l] == levels[l].bound) idx[l++] = 0;
    if (l == levels.size()) break;
  }
  return i + 1 == seq.size();
}

namespace {

// The longest prefix of seq[from ..] that is one affine nest with every bound <= max_bound, as
// `nest` (base and levels); returns its length (>= 1). Built from the innermost level out: a run
// of one step, then blocks repeating the whole nest so far at one stride. The innermost run may
// be cut short where that lets more blocks follow (a run can go on by chance into the next block):
// to any length when it is short, else to its divisors (each try costs up to the nest's length).
size_t longest_nest(const std::vector<Vec4>& seq, size_t from, int64_t max_bound, AffineNest& nest) {
  const size_t n = seq.size() - from;
  nest = {seq[from], {}};
  if (n == 1) return 1;
  const Vec4 d0 = sub(seq[from + 1], seq[from]);
  size_t run = 2;
  while (run < n && static_cast<int64_t>(run) < max_bound && sub(seq[from + run], seq[from + run - 1]) == d0) ++run;
  size_t best = 0;
  constexpr size_t kAnyCut = 64;
  for (size_t b0 = run; b0 >= 2 && best < n; --b0) {
    if (run > kAnyCut && run % b0 != 0) continue;
    std::vector<AffineLevel> levels{{static_cast<int64_t>(b0), d0}};
    size_t size = b0;
    while (size < n) {
      const Vec4 d = sub(seq[from + size], seq[from]);
      size_t k = 1;
      for (; (k + 1) * size <= n && static_cast<int64_t>(k) < max_bound; ++k) {
        const int64_t ki = static_cast<int64_t>(k);
        const Vec4 kd{ki * d[0], ki * d[1], ki * d[2], ki * d[3]};  // block k's offset from block 0
        bool same = true;
        for (size_t t = 0; same && t < size; ++t) same = sub(seq[from + k * size + t], seq[from + t]) == kd;
        if (!same) break;
      }
      if (k == 1) break;
      levels.push_back({static_cast<int64_t>(k), d});
      size *= k;
    }
    if (size > best) {
      best = size;
      nest.levels = std::move(levels);
    }
  }
  return best;
}

}  // namespace

std::vector<AffineNest> split_affine_nests(const std::vector<Vec4>& seq, int64_t max_bound) {
  std::vector<AffineNest> out;
  AffineNest whole;
  if (fit_affine_nest(seq, whole.base, whole.levels) &&
      std::all_of(whole.levels.begin(), whole.levels.end(), [&](const AffineLevel& l) { return l.bound <= max_bound; }))
    return {whole};
  for (size_t at = 0; at < seq.size();) {
    AffineNest nest;
    at += longest_nest(seq, at, max_bound, nest);
    out.push_back(std::move(nest));
  }
  return out;
}

namespace {

// A diagonal program's instruction fields beyond the nest (docs/isa.md §2b).
struct Diagonal {
  bool on = false;
  std::array<int64_t, arch::StoreInstr::kMaxBankBits> src_row_bank_stride{}, dst_row_bank_stride{};  // per bank bit
};

// One part's moves (sorted: the consumer's row order) as STORE instructions appended to `plan`:
// one affine nest when they are one, else consecutive nests (one instruction per index of the
// levels beyond the instruction's four); false and plan.why_not when the part (`plan` holds it
// alone) would then take more than `max_instrs` instructions.
bool emit_part(const arch::ArchConfig& cfg, const std::vector<Vec4>& moves, int64_t count, bool as_a, uint32_t shift,
               int64_t max_instrs, StorePlan& plan, const Diagonal& diag = {}) {
  const arch::IsaLayout isa(cfg);
  const int kL = arch::StoreInstr::kLevels;
  const int64_t max_bound = int64_t{1} << isa.field("st_bound_m1_l0").width;
  const std::vector<AffineNest> nests = split_affine_nests(moves, max_bound);
  // A nest takes one instruction per index of its levels beyond the instruction's four.
  auto instructions = [&](const std::vector<AffineLevel>& levels) {
    int64_t outer = 1;
    for (size_t l = kL; l < levels.size(); ++l) outer *= levels[l].bound;
    return outer;
  };
  int64_t instrs = 0;
  for (const AffineNest& nest : nests) instrs += instructions(nest.levels);
  const int64_t total = static_cast<int64_t>(plan.program.size()) + instrs;  // `plan` holds this part alone
  if (total > max_instrs) {
    plan.why_not = diag.on ? fmt::format("as diagonal moves it would take at least {} STORE instructions, more than the {} "
                                         "a part may take", total, max_instrs)
                           : fmt::format("its {} moves of {} lane(s) would take {} STORE instructions ({} affine nests: the "
                                         "consumer's tiles cut across the result's label digits), more than the {} a part "
                                         "may take", moves.size(), count, total, nests.size(), max_instrs);
    return false;
  }
  const bool fp = cfg.dtype == arch::DataType::bf16;
  plan.nests += static_cast<int64_t>(nests.size());
  for (const AffineNest& nest : nests) {
    const std::vector<AffineLevel>& levels = nest.levels;
    for (int64_t o = 0, outer = instructions(levels); o < outer; ++o) {
      Vec4 b = nest.base;
      for (int64_t rest = o, l = kL; l < static_cast<int64_t>(levels.size()); ++l) {
        const AffineLevel& lv = levels[static_cast<size_t>(l)];
        for (int s = 0; s < 4; ++s) b[static_cast<size_t>(s)] += (rest % lv.bound) * lv.stride[static_cast<size_t>(s)];
        rest /= lv.bound;
      }
      arch::StoreInstr st;
      for (int l = 0; l < kL && l < static_cast<int>(levels.size()); ++l) {
        const AffineLevel& lv = levels[static_cast<size_t>(l)];
        st.bound[static_cast<size_t>(l)] = static_cast<uint32_t>(lv.bound);
        st.src_row_stride[static_cast<size_t>(l)] = lv.stride[0];
        st.src_lane_stride[static_cast<size_t>(l)] = lv.stride[1];
        st.dst_row_stride[static_cast<size_t>(l)] = lv.stride[2];
        st.dst_lane_stride[static_cast<size_t>(l)] = lv.stride[3];
      }
      st.src_row_base = static_cast<uint32_t>(wrap(b[0], isa.acc_addr_bits()));
      st.src_lane_base = static_cast<uint32_t>(wrap(b[1], isa.levels()));
      st.dst_row_base = static_cast<uint32_t>(wrap(b[2], isa.half_addr_bits()));
      st.dst_lane_base = static_cast<uint32_t>(wrap(b[3], isa.levels()));
      st.count = static_cast<uint32_t>(count);
      st.pad_neg = fp && as_a;
      st.shift = fp ? 0 : shift;
      st.diag = diag.on;
      for (size_t h = 0; h < st.src_row_bank_stride.size(); ++h) {
        st.src_row_bank_stride[h] = wrap(diag.src_row_bank_stride[h], isa.acc_addr_bits());
        st.dst_row_bank_stride[h] = wrap(diag.dst_row_bank_stride[h], isa.half_addr_bits());
      }
      plan.program.push_back(st);
      plan.moves += st.moves();
      plan.elements += st.moves() * st.count;
      if (diag.on) plan.diagonal_moves += st.moves();
      plan.predicted_cycles += arch::store_instr_cycles(st);
    }
  }
  return true;
}

// The most frequent of `values` (0 when empty; the smallest among equally frequent ones, so the
// result does not depend on their order).
int64_t most_frequent(std::vector<int64_t> values) {
  std::sort(values.begin(), values.end());
  int64_t best = 0, n = 0;
  for (size_t i = 0, j = 0; i < values.size(); i = j) {
    while (j < values.size() && values[j] == values[i]) ++j;
    if (static_cast<int64_t>(j - i) > n) best = values[i], n = static_cast<int64_t>(j - i);
  }
  return best;
}

// One part as diagonal moves (docs/isa.md §2b), appended to `plan`: first an ordinary one-lane
// move onto lane 0 of every row in `pad_moves` (it pads the row; diagonal moves do not), then the
// elements `el` ((dst row, dst lane, src row, src lane)) grouped into diagonals. An element's
// diagonal is (src lane mod T, dst lane mod T, bank distance k, src row less the strides of its
// dst bank's bits, dst row less those of its src bank's bits): elements sharing it sit in
// distinct banks, and a cyclic run of their source banks is one move. Bank bit h's strides are
// the row steps most elements see to the bank 2^h up (a transposition's: T x 2^h rows of the
// result per unified bank; label digits that change with the bank in mixed radix get one each).
// False (and plan.why_not) as emit_part. Sorted vectors rather than ordered maps: the runner
// plans a STORE for every candidate mapping it weighs, so this is the compiler's hot spot.
bool emit_diagonal_part(const arch::ArchConfig& cfg, const std::vector<Vec4>& el, const std::vector<Vec4>& pad_moves,
                        bool as_a, uint32_t shift, int64_t max_instrs, StorePlan& plan) {
  const int64_t B = cfg.memory.banks, T = cfg.memory.elems_per_bank;
  Diagonal diag{true, {}, {}};
  {
    // Each side's slots, (row, lane, the other side's row), sorted: (row, lane) is unique per side.
    using Slot = std::array<int64_t, 3>;
    std::vector<Slot> dst_at, src_at;
    dst_at.reserve(el.size());
    src_at.reserve(el.size());
    for (const Vec4& v : el) {
      dst_at.push_back({v[0], v[1], v[2]});
      src_at.push_back({v[2], v[3], v[0]});
    }
    if (!std::is_sorted(dst_at.begin(), dst_at.end())) std::sort(dst_at.begin(), dst_at.end());  // el's order, as a rule
    std::sort(src_at.begin(), src_at.end());
    // The most frequent row step from a (row, lane) whose bank has bit h clear to the bank 2^h up
    // (same row, further on in its row's run).
    auto step = [&](const std::vector<Slot>& at, int64_t h) {
      std::vector<int64_t> steps;
      for (auto row = at.begin(); row != at.end();) {
        auto row_end = row;
        while (row_end != at.end() && (*row_end)[0] == (*row)[0]) ++row_end;
        for (auto it = row; it != row_end; ++it) {
          if (((*it)[1] / T) >> h & 1) continue;
          const int64_t lane = (*it)[1] + (T << h);
          const auto up = std::lower_bound(it + 1, row_end, lane, [](const Slot& x, int64_t l) { return x[1] < l; });
          if (up != row_end && (*up)[1] == lane) steps.push_back((*up)[2] - (*it)[2]);
        }
        row = row_end;
      }
      return most_frequent(std::move(steps));
    };
    for (int64_t h = 0; (int64_t{1} << h) < B; ++h) {
      diag.src_row_bank_stride[static_cast<size_t>(h)] = step(dst_at, h);
      diag.dst_row_bank_stride[static_cast<size_t>(h)] = step(src_at, h);
    }
  }
  auto offset = [](const std::array<int64_t, arch::StoreInstr::kMaxBankBits>& strides, int64_t bank) {
    int64_t o = 0;
    for (size_t h = 0; h < strides.size(); ++h)
      if (bank >> h & 1) o += strides[h];
    return o;
  };
  // Every element's diagonal and source bank, sorted: each diagonal's banks (a bit mask), in key order.
  using Key = std::array<int64_t, 5>;  // src lane mod T, dst lane mod T, k, src row origin, dst row origin
  std::vector<std::pair<Key, int64_t>> members;
  members.reserve(el.size());
  for (const Vec4& v : el) {
    const int64_t sb = v[3] / T, db = v[1] / T;
    members.push_back({Key{v[3] % T, v[1] % T, (db - sb + B) % B, v[2] - offset(diag.src_row_bank_stride, db),
                           v[0] - offset(diag.dst_row_bank_stride, sb)},
                       sb});
  }
  std::sort(members.begin(), members.end());
  std::vector<std::pair<Key, uint64_t>> diagonals;
  for (const auto& [key, sb] : members) {
    if (diagonals.empty() || diagonals.back().first != key) diagonals.push_back({key, 0});
    diagonals.back().second |= uint64_t{1} << sb;
  }
  // count -> moves (src row origin, src lane, dst row origin, dst lane), in the consumer's row order
  std::map<int64_t, std::vector<std::pair<Vec4, Vec4>>> by_count;  // (sort key, move)
  const uint64_t all = B == 64 ? ~uint64_t{0} : (uint64_t{1} << B) - 1;
  auto rotr = [&](uint64_t x, int64_t r) {  // within B bits
    return r == 0 ? x : ((x >> r) | (x << (B - r))) & all;
  };
  for (const auto& [key, banks] : diagonals) {
    const auto [a, e, k, rs, rd] = key;
    // Each cyclic run of banks, from its first: a set bank whose cyclic predecessor is clear.
    for (uint64_t starts = banks == all ? 1 : banks & ~rotr(banks, B - 1); starts != 0; starts &= starts - 1) {
      const int64_t b = std::countr_zero(starts);
      const int64_t len = banks == all ? B : std::countr_one(rotr(banks, b));
      const Vec4 mv{rs, b * T + a, rd, (b + k) % B * T + e};
      by_count[len].push_back({{rd, mv[3], rs, mv[1]}, mv});
    }
  }
  if (!pad_moves.empty() && !emit_part(cfg, pad_moves, 1, as_a, shift, max_instrs, plan)) return false;
  for (auto& [count, moves] : by_count) {
    std::sort(moves.begin(), moves.end());
    std::vector<Vec4> seq;
    for (const auto& m : moves) seq.push_back(m.second);
    if (!emit_part(cfg, seq, count, as_a, shift, max_instrs, plan, diag)) return false;
  }
  return true;
}

// Cycles a part's program costs the host: the controller's and the pushes of its instructions.
int64_t part_cost(const arch::IsaLayout& isa, const StorePlan& part) {
  return part.predicted_cycles + static_cast<int64_t>(part.program.size()) * isa.words();
}

// Appends a part planned on its own (program and totals) to `plan`.
void append_part(StorePlan& plan, const StorePlan& part) {
  plan.program.insert(plan.program.end(), part.program.begin(), part.program.end());
  plan.moves += part.moves;
  plan.diagonal_moves += part.diagonal_moves;
  plan.elements += part.elements;
  plan.predicted_cycles += part.predicted_cycles;
  plan.nests += part.nests;
}

}  // namespace

namespace {

using Element = std::pair<size_t, Vec4>;  // (producer chunk, (dst row, dst lane, src row, src lane))

// Every element of the result that job `job`'s image of the consumer holds, in the result's
// row-major order; or why the result's labels cannot be placed ("" when they can).
std::string image_elements(const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                           const std::vector<size_t>& chunk_job, std::vector<Element>& el) {
  // Chunk of (m, N tile): the producer's jobs cover M x N tiles in blocks.
  auto chunk_of = [&](int64_t m, int64_t nt) {
    for (size_t ch = 0; ch < chunk_job.size(); ++ch) {
      const GemmJob& jb = p.jobs[chunk_job[ch]];
      if (m >= jb.m0 && m < jb.m0 + jb.m_count && nt >= jb.nt0 && nt < jb.nt0 + jb.nt_count) return ch;
    }
    throw std::logic_error("internal: an output element in no chunk of the producer");
  };
  const GemmJob& cj = c.jobs.at(job);
  // Where every element of Z lives on each side: per label of Z (producer m labels, then n), its
  // stride in the producer's m or n index and in the consumer's row or k index.
  const LabelGroup& rows_g = as_a ? c.shape.m : c.shape.n;
  const auto p_m = strides_of(p.shape.m), p_n = strides_of(p.shape.n);
  const auto c_r = strides_of(rows_g), c_k = strides_of(c.shape.k);
  std::vector<std::string> labels = p.shape.m.labels;
  labels.insert(labels.end(), p.shape.n.labels.begin(), p.shape.n.labels.end());
  std::vector<int64_t> dims = p.shape.m.dims;
  dims.insert(dims.end(), p.shape.n.dims.begin(), p.shape.n.dims.end());
  const size_t nl = labels.size();
  std::vector<int64_t> s_pm(nl, 0), s_pn(nl, 0), s_cr(nl, 0), s_ck(nl, 0);
  for (size_t i = 0; i < nl; ++i) {
    const std::string& l = labels[i];
    if (!c_r.count(l) && !c_k.count(l)) return fmt::format("label {} of the result is not in the consumer's operand", l);
    (p_m.count(l) ? s_pm[i] : s_pn[i]) = p_m.count(l) ? p_m.at(l) : p_n.at(l);
    (c_r.count(l) ? s_cr[i] : s_ck[i]) = c_r.count(l) ? c_r.at(l) : c_k.at(l);
  }
  const int64_t R0 = as_a ? cj.m0 : cj.nt0 * c.map.n_tile;
  const int64_t RC = as_a ? cj.m_count : cj.nt_count * c.map.n_tile;
  const int64_t row_base = as_a ? cj.a_base : cj.b_base;
  const int64_t M = p.shape.m.size(), Nn = p.shape.n.size(), Kt = c.map.k_tile;  // (OS: the K chunk)

  std::vector<int64_t> idx(nl, 0);
  int64_t pm = 0, pn = 0, cr = 0, ck = 0;  // the four indices of the element at idx
  const ImageShape image = image_shape(c, as_a, job);
  el.reserve(static_cast<size_t>(image.rows * image.lanes));  // the job's image holds at most that many
  for (int64_t e = 0; e < M * Nn; ++e) {
    const int64_t kt = ck / Kt;
    if (cr >= R0 && cr < R0 + RC && kt >= cj.kt0 && kt < cj.kt0 + cj.kt_count) {  // this job's
      const int64_t nt = pn / p.map.n_tile;
      const size_t ch = chunk_of(pm, nt);
      const GemmJob& pj = p.jobs[chunk_job[ch]];
      const ImageSlot at = as_a ? a_slot(c, cj, cr, ck) : b_slot(c, cj, ck, cr);
      const ImageSlot from = z_slot(p, pj, pm, pn);
      el.push_back({ch, {row_base + at.row, at.lane, from.row, from.lane}});
    }
    for (size_t i = nl; i-- > 0;) {  // the next element, row-major over Z's labels
      const int64_t back = ++idx[i] < dims[i] ? 1 : 1 - dims[i];
      if (back != 1) idx[i] = 0;
      pm += back * s_pm[i];
      pn += back * s_pn[i];
      cr += back * s_cr[i];
      ck += back * s_ck[i];
      if (back == 1) break;
    }
  }
  return "";
}

// The elements in (chunk, dst row, dst lane) order: a bucket per (chunk, image row), each sorted by
// lane (at most a row's lanes). A comparison sort of every element dominated the planner's time.
void sort_by_destination(std::vector<Element>& el, size_t chunks, int64_t row_base, int64_t image_rows) {
  const size_t nb = chunks * static_cast<size_t>(image_rows);
  auto bucket = [&](const Element& e) {
    const int64_t r = e.second[0] - row_base;
    if (r < 0 || r >= image_rows) throw std::logic_error("internal: an operand slot outside its image");
    return e.first * static_cast<size_t>(image_rows) + static_cast<size_t>(r);
  };
  std::vector<size_t> start(nb + 1, 0);
  for (const auto& e : el) ++start[bucket(e) + 1];
  for (size_t b = 0; b < nb; ++b) start[b + 1] += start[b];
  std::vector<Element> sorted(el.size());
  std::vector<size_t> at = start;
  for (const auto& e : el) sorted[at[bucket(e)]++] = e;
  for (size_t b = 0; b < nb; ++b)
    std::sort(sorted.begin() + static_cast<std::ptrdiff_t>(start[b]), sorted.begin() + static_cast<std::ptrdiff_t>(start[b + 1]),
              [](const auto& x, const auto& y) { return x.second[1] < y.second[1]; });
  el = std::move(sorted);
}

// Who writes each destination row: a STORE writes only rows that receive an element (padding
// rides on a row's lane-0 move, which pads the whole row: so the chunk holding a row's lane 0 must
// be the first to write that row). Rows some lane of which no element reaches get, in a diagonal
// program, a lane-0 move first.
struct RowWriters {
  size_t first_chunk = 0;  // the first chunk writing the row
  bool lane0 = false;      // its lane 0 is in that chunk
  int64_t lanes = 0;       // lanes that receive an element
};

std::map<int64_t, RowWriters> row_writers(const std::vector<Element>& el) {
  std::map<int64_t, RowWriters> rows;  // dst row -> its writers
  for (const auto& [ch, v] : el) {
    RowWriters& r = rows.try_emplace(v[0], RowWriters{ch}).first->second;
    if (r.first_chunk == ch && v[1] == 0) r.lane0 = true;
    ++r.lanes;
  }
  return rows;
}

// One chunk's elements (el[from, to)) as a STORE part: ordinary moves of the widest lane runs both
// sides share and, where those are narrower than a diagonal move (and the banks few enough for the
// planner's masks), diagonal moves; the cheaper is kept. False with `best.why_not` when neither fits.
bool plan_part(const arch::ArchConfig& cfg, const arch::IsaLayout& isa, const std::vector<Element>& el, size_t from,
               size_t to, const std::map<int64_t, RowWriters>& rows, bool as_a, uint32_t shift, int64_t max_part_instrs,
               StorePlan& best) {
  // Runs: consecutive lanes on both sides in one row pair.
  std::vector<std::pair<Vec4, int64_t>> runs;  // (src row, src lane, dst row, dst lane), length
  for (size_t i = from; i < to; ++i) {
    const Vec4& v = el[i].second;
    const Vec4 mv{v[2], v[3], v[0], v[1]};
    if (!runs.empty()) {
      auto& [r, len] = runs.back();
      if (r[0] == mv[0] && r[2] == mv[2] && r[1] + len == mv[1] && r[3] + len == mv[3]) {
        ++len;
        continue;
      }
    }
    runs.push_back({mv, 1});
  }
  int64_t count = 0;
  for (const auto& r : runs) count = std::gcd(count, r.second);
  std::vector<Vec4> moves;
  for (const auto& [r, len] : runs)
    for (int64_t o = 0; o < len; o += count) moves.push_back({r[0], r[1] + o, r[2], r[3] + o});
  StorePlan ordinary, diag;
  const bool ordinary_ok = emit_part(cfg, moves, count, as_a, shift, max_part_instrs, ordinary);
  bool diag_ok = false;
  if (count < cfg.memory.banks && cfg.memory.banks <= 64) {
    std::vector<Vec4> part, pads;
    for (size_t i = from; i < to; ++i) {
      const Vec4& v = el[i].second;
      part.push_back(v);
      if (v[1] == 0 && rows.at(v[0]).lanes < cfg.network.lanes) pads.push_back({v[2], v[3], v[0], v[1]});
    }
    diag_ok = emit_diagonal_part(cfg, part, pads, as_a, shift, max_part_instrs, diag);
  }
  if (!ordinary_ok && !diag_ok) {
    best = std::move(ordinary);
    return false;
  }
  best = !ordinary_ok || (diag_ok && part_cost(isa, diag) < part_cost(isa, ordinary)) ? std::move(diag) : std::move(ordinary);
  return true;
}

}  // namespace

std::string result_image_elements(const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                                  std::vector<ImageElement>& out) {
  std::vector<Element> el;
  std::string why = image_elements(p, c, as_a, job, output_chunks(p), el);
  out.clear();
  out.reserve(el.size());
  for (const auto& [ch, v] : el) out.push_back({ch, v[0], v[1], v[2], v[3]});
  return why;
}

bool changes_layout(const arch::ArchConfig& cfg, const StorePlan& sp) {
  const int64_t lanes = cfg.network.lanes;
  auto mod = [lanes](int64_t v) { return ((v % lanes) + lanes) % lanes; };
  for (const arch::StoreInstr& st : sp.program) {
    if (st.diag || st.src_lane_base != st.dst_lane_base) return true;
    for (int l = 0; l < arch::StoreInstr::kLevels; ++l)
      if (st.bound[static_cast<size_t>(l)] > 1 &&
          mod(st.src_lane_stride[static_cast<size_t>(l)]) != mod(st.dst_lane_stride[static_cast<size_t>(l)]))
        return true;
  }
  return false;
}

std::string image_rows_by_chunk(const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                                std::vector<ChunkRows>& rows) {
  const std::vector<size_t> chunk_job = output_chunks(p);
  rows.assign(chunk_job.size(), {});
  if (c.replicate != 1 && (as_a || !c.map.ib_top)) return "the consumer's operand is replicated per CE (fixed network)";
  std::vector<Element> el;
  if (std::string why = image_elements(p, c, as_a, job, chunk_job, el); !why.empty()) return why;
  const GemmJob& cj = c.jobs.at(job);
  const int64_t base = as_a ? cj.a_base : cj.b_base;
  const ImageShape image = image_shape(c, as_a, job);
  constexpr size_t kNone = ~size_t{0};
  const auto L = static_cast<size_t>(image.lanes);
  std::vector<size_t> owner(static_cast<size_t>(image.rows) * L, kNone);  // (row, lane) -> chunk
  for (const auto& [ch, v] : el) owner[static_cast<size_t>(v[0] - base) * L + static_cast<size_t>(v[1])] = ch;
  for (size_t r = 0; r < static_cast<size_t>(image.rows); ++r) {
    const size_t padder = owner[r * L];
    if (padder == kNone) {
      const bool any = std::any_of(owner.begin() + static_cast<std::ptrdiff_t>(r * L),
                                   owner.begin() + static_cast<std::ptrdiff_t>((r + 1) * L), [](size_t o) { return o != kNone; });
      return any ? fmt::format("image row {} has no element on lane 0 to pad it from", r)
                 : fmt::format("image row {} holds only padding, which a STORE does not write", r);
    }
    std::map<size_t, std::vector<bool>> fills;  // chunk -> lanes
    for (size_t l = 0; l < L; ++l) {
      const size_t ch = owner[r * L + l] == kNone ? padder : owner[r * L + l];
      auto& f = fills.try_emplace(ch, std::vector<bool>(L, false)).first->second;
      f[l] = true;
    }
    for (auto& [ch, f] : fills) {
      rows[ch].rows.push_back(static_cast<int64_t>(r));
      rows[ch].lanes.push_back(std::move(f));
    }
  }
  return "";
}

namespace {

// Output chunk `chunk`'s elements of `all` (image_elements of c's job image, whose first row is
// `base`) as one STORE part writing its image rows `rows` packed from unified row `first_row`.
StorePlan pack_chunk(const arch::ArchConfig& cfg, const std::vector<Element>& all, int64_t base, size_t chunk,
                     size_t after_job, const std::vector<int64_t>& rows, int64_t first_row, bool as_a, uint32_t shift,
                     int64_t max_part_instrs) {
  std::vector<Element> el;  // the chunk's elements, their rows packed from first_row
  for (const auto& [ch, v] : all) {
    if (ch != chunk) continue;
    const auto at = std::lower_bound(rows.begin(), rows.end(), v[0] - base);
    if (at == rows.end() || *at != v[0] - base) throw std::logic_error("internal: a chunk's element outside its rows");
    el.push_back({0, {first_row + (at - rows.begin()), v[1], v[2], v[3]}});
  }
  sort_by_destination(el, 1, first_row, static_cast<int64_t>(rows.size()));
  const std::map<int64_t, RowWriters> writers = row_writers(el);
  if (writers.size() != rows.size()) throw std::logic_error("internal: a packed image row with no element");
  StorePlan plan, best;
  if (!plan_part(cfg, arch::IsaLayout(cfg), el, 0, el.size(), writers, as_a, shift, max_part_instrs, best)) {
    plan.why_not = best.why_not;
    return plan;
  }
  plan.part_begin.push_back(0);
  plan.after_job.push_back(after_job);
  append_part(plan, best);
  return plan;
}

}  // namespace

StorePlan plan_store_rows(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                          size_t job, uint32_t shift, size_t chunk, const std::vector<int64_t>& rows, int64_t first_row,
                          int64_t max_part_instrs) {
  const std::vector<size_t> chunk_job = output_chunks(p);
  std::vector<Element> all;
  if (std::string why = image_elements(p, c, as_a, job, chunk_job, all); !why.empty()) {
    StorePlan plan;
    plan.why_not = why;
    return plan;
  }
  const GemmJob& cj = c.jobs.at(job);
  return pack_chunk(cfg, all, as_a ? cj.a_base : cj.b_base, chunk, chunk_job.at(chunk), rows, first_row, as_a, shift,
                    max_part_instrs);
}

std::vector<StorePlan> plan_store_pieces(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c,
                                         bool as_a, size_t job, uint32_t shift, const std::vector<ChunkRows>& rows) {
  const std::vector<size_t> chunk_job = output_chunks(p);
  std::vector<Element> all;
  std::vector<StorePlan> plans(rows.size());
  if (std::string why = image_elements(p, c, as_a, job, chunk_job, all); !why.empty()) {
    for (StorePlan& sp : plans) sp.why_not = why;
    return plans;
  }
  const GemmJob& cj = c.jobs.at(job);
  for (size_t k = 0; k < rows.size(); ++k)
    if (!rows[k].rows.empty())
      plans[k] = pack_chunk(cfg, all, as_a ? cj.a_base : cj.b_base, k, chunk_job.at(k), rows[k].rows, 0, as_a, shift,
                            kMaxStorePartInstrs);
  return plans;
}

StorePlan plan_store(const arch::ArchConfig& cfg, const CompiledGemm& p, const CompiledGemm& c, bool as_a, size_t job,
                     uint32_t shift, bool per_chunk, int64_t max_part_instrs) {
  StorePlan plan;
  auto fail = [&](std::string why) {
    plan.program.clear();
    plan.part_begin.clear();
    plan.after_job.clear();
    plan.why_not = std::move(why);
    return plan;
  };
  const std::vector<size_t> chunk_job = output_chunks(p);
  if (chunk_job.size() > 1 && !per_chunk)
    return fail(fmt::format("the producer's result is computed in {} output chunks (the accumulator holds {} rows)",
                            chunk_job.size(), cfg.memory.accum_depth));
  // Fixed wiring replicates A, and B loaded from the left, once per CE; a top-load B image is not.
  if (c.replicate != 1 && (as_a || !c.map.ib_top))
    return fail("the consumer's operand is replicated per CE (fixed network)");

  std::vector<Element> el;
  if (std::string why = image_elements(p, c, as_a, job, chunk_job, el); !why.empty()) return fail(why);
  const GemmJob& cj = c.jobs.at(job);
  const int64_t image_rows = image_shape(c, as_a, job).rows;
  sort_by_destination(el, chunk_job.size(), as_a ? cj.a_base : cj.b_base, image_rows);
  const std::map<int64_t, RowWriters> rows = row_writers(el);
  if (static_cast<int64_t>(rows.size()) != image_rows)
    return fail(fmt::format("{} of the consumer's {} image rows hold only padding (a partial {} tile), which a STORE "
                            "does not write",
                            image_rows - static_cast<int64_t>(rows.size()), image_rows, c.map.ib_top ? "K" : "N"));
  for (const auto& [row, first] : rows)
    if (!first.lane0)
      return fail(chunk_job.size() > 1
                      ? fmt::format("unified row {} gets its lane 0 from a later output chunk than its other lanes", row)
                      : fmt::format("unified row {} has no element on lane 0 to pad it from", row));

  const arch::IsaLayout isa(cfg);
  for (size_t ch = 0, at = 0; ch < chunk_job.size(); ++ch) {
    const size_t from = at;
    while (at < el.size() && el[at].first == ch) ++at;
    if (at == from) continue;  // this chunk holds nothing of the job's image
    plan.part_begin.push_back(plan.program.size());
    plan.after_job.push_back(chunk_job[ch]);
    StorePlan best;
    if (!plan_part(cfg, isa, el, from, at, rows, as_a, shift, max_part_instrs, best)) return fail(best.why_not);
    append_part(plan, best);
  }
  return plan;
}

}  // namespace fetta::mapper
