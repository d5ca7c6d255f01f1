// Movement (mapper/movement.hpp): the costs of moving an intermediate and the on-chip placement of
// its consumer's images.
#include "mapper/movement.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

#include "mapper/gather.hpp"

namespace fetta::mapper {

int requant_shift(arch::DataType t, int64_t K) {
  int b = 0;
  while ((int64_t{1} << b) < K) ++b;
  return arch::operand_frac_bits(t) + b;
}

std::array<int64_t, 2> b_image(const GemmJob& j) { return {j.nt0, j.kt0}; }

std::array<RowRange, 2> footprint(const CompiledGemm& c, size_t j) {
  const GemmJob& jb = c.jobs[j];
  return {RowRange{jb.a_base, image_shape(c, true, j).rows}, RowRange{jb.b_base, image_shape(c, false, j).rows}};
}

std::array<int64_t, 2> saved_beats(const CompiledGemm& c, int host_lanes) {
  const std::vector<int> acc = acc_lanes(c);
  const int64_t H = host_lanes, first = acc.front() / H;
  return {first, acc.back() / H - first + 1};
}

std::string moves_text(const std::vector<StorePlan>& plans) {
  const int64_t moves = total(plans, [](const StorePlan& sp) { return sp.moves; });
  const int64_t diag = total(plans, [](const StorePlan& sp) { return sp.diagonal_moves; });
  if (diag == 0) return fmt::format("{} moves of {} lane(s)", moves, plans[0].program[0].count);
  return fmt::format("{} moves ({} diagonal: an element per bank)", moves, diag);
}

std::string store_rate_text(const std::vector<StorePlan>& plans, int lanes) {
  const int64_t elements = total(plans, [](const StorePlan& sp) { return sp.elements; });
  const int64_t cycles = total(plans, [](const StorePlan& sp) { return sp.predicted_cycles; });
  return fmt::format("{:.1f} elements per STORE cycle ({} for a row copy)",
                     cycles > 0 ? static_cast<double>(elements) / static_cast<double>(cycles) : 0.0, lanes);
}

Movement::Movement(const arch::ArchConfig& cfg, bool dma, bool through_host, bool gather)
    : cfg_(cfg), dma_(dma), through_host_(through_host), gather_(gather && dma), isa_(cfg),
      host_lanes_(arch::host_port_lanes(cfg)) {}

int64_t Movement::image_write_cycles(const CompiledGemm& c, bool a_operand) const {
  const int H = host_lanes_;
  int64_t cyc = 0;
  std::array<std::array<int64_t, 2>, 2> held{{{-1, -1}, {-1, -1}}};  // per half: the B image it holds
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    if (!a_operand) {
      if (held[j % 2] == b_image(c.jobs[j])) continue;
      held[j % 2] = b_image(c.jobs[j]);
    }
    const ImageShape img = image_shape(c, a_operand, j);
    cyc += img.rows * ((img.lanes + H - 1) / H);
  }
  return cyc;
}

int64_t Movement::host_path_cycles(const CompiledGemm& p, const CompiledGemm& c, bool as_a, bool saved_anyway) const {
  const int H = host_lanes_;
  int64_t cyc = image_write_cycles(c, as_a);
  if (dma_) {
    const auto beats = static_cast<uint64_t>(saved_beats(p, H)[1]);
    if (!saved_anyway) cyc += staging_store_cycles(p);
    double ns = 0;
    for (size_t job : output_chunks(p))
      ns += arch::dram_transfer_ns(cfg_.dram, static_cast<uint64_t>(acc_rows(p, p.jobs[job])) * beats *
                                                  static_cast<uint64_t>(H) *
                                                  static_cast<uint64_t>(dram_operand_bytes(cfg_.dtype)));
    return cyc + static_cast<int64_t>(std::ceil(ns * cfg_.clock_mhz / 1000.0));
  }
  std::set<int> groups;
  for (int l : acc_lanes(p)) groups.insert(l / H);
  for (const GemmJob& j : p.jobs)
    if (j.last_k) cyc += acc_rows(p, j) * static_cast<int64_t>(groups.size());
  const auto bytes = static_cast<uint64_t>(p.shape.m.size() * p.shape.n.size() * dram_operand_bytes(cfg_.dtype));
  const double ns = 2 * arch::dram_transfer_ns(cfg_.dram, bytes);
  return cyc + static_cast<int64_t>(std::ceil(ns * cfg_.clock_mhz / 1000.0));
}

std::optional<int64_t> Movement::gather_path_cycles(const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                                                    bool saved_anyway) const {
  const SavedRows saved = consecutive_saves(p, host_lanes_, 1);  // beat 0: the pad beat
  int64_t cyc = saved_anyway ? 0 : staging_store_cycles(p);
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const GatherPlan g = plan_gather(cfg_, p, c, as_a, j, saved, 0, false);
    if (!g.ok()) return std::nullopt;
    cyc += gather_cycles(cfg_, g);
  }
  return cyc;
}

std::optional<std::string> Movement::pretiling_loses(const PretiledResults::Plan& plan) const {
  const auto loads = static_cast<int64_t>(std::ceil(
      arch::dram_transfer_ns(cfg_.dram, plan.load_bytes(arch::dma_geometry(cfg_))) * cfg_.clock_mhz / 1000.0));
  int64_t gathers = 0;
  for (size_t r = 0; r < plan.readers.size(); ++r) {
    const std::optional<int64_t> g = gather_path_cycles(plan.producer, plan.readers[r].gemm, plan.readers[r].as_a, r > 0);
    if (!g) return std::nullopt;
    gathers += *g;
  }
  if (plan.store_cycles + loads < gathers) return std::nullopt;
  return fmt::format("packing its readers' images would take {} STORE cycles and {} of loads, the gathers {}",
                     plan.store_cycles, loads, gathers);
}

int64_t Movement::staging_store_cycles(const CompiledGemm& p) const {
  int64_t cyc = 0;
  for (size_t job : output_chunks(p)) cyc += acc_rows(p, p.jobs[job]) + 4 + isa_.words();  // its moves, drain and push
  return cyc;
}

int64_t Movement::store_cost(const std::vector<StorePlan>& plans) const {
  return total(plans, [this](const StorePlan& sp) {
    return sp.predicted_cycles + static_cast<int64_t>(sp.program.size()) * isa_.words();
  });
}

bool Movement::changes_layout(const StorePlan& sp) const { return mapper::changes_layout(cfg_, sp); }

std::optional<std::vector<StorePlan>> Movement::store_that_pays(const CompiledGemm& p, const CompiledGemm& c, bool as_a,
                                                                Why& why, bool estimate, bool saved_anyway) const {
  const uint32_t shift =
      cfg_.dtype == arch::DataType::bf16 ? 0 : static_cast<uint32_t>(requant_shift(cfg_.dtype, p.shape.k.size()));
  // The way through DRAM this STORE would replace: gathers where the program takes them (priced
  // once the plans are wanted whole: they are too dear to make for every mapping tried).
  const std::optional<int64_t> gathered =
      gather_ && !estimate ? gather_path_cycles(p, c, as_a, saved_anyway) : std::nullopt;
  const int64_t host = gathered ? *gathered : host_path_cycles(p, c, as_a, saved_anyway);
  const char* way = gathered ? "the DMA's gathers through DRAM" : "the host and DRAM";
  std::vector<StorePlan> plans;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    plans.push_back(plan_store(cfg_, p, c, as_a, j, shift, true));
    if (!plans.back().ok()) {
      why = {Fate::cannot_join, plans.back().why_not};
      return std::nullopt;
    }
    if (!cfg_.memory.store_reorder && changes_layout(plans.back())) {
      why = {Fate::reorder_off_chip, fmt::format("the layout changes ({}) and this configuration reorders only "
                                                 "through DRAM (memory.store_reorder: false)",
                                                 moves_text(plans))};
      return std::nullopt;
    }
    if (estimate && store_cost(plans) >= host) {
      why = {Fate::store_slower, "STORE would cost the host path"};
      return std::nullopt;
    }
  }
  const int64_t store = store_cost(plans);
  if (store >= host) {
    why = {Fate::store_slower,
           fmt::format("STORE would take {} cycles ({}; {}), {} {}", store, moves_text(plans),
                       store_rate_text(plans, cfg_.network.lanes), way, host)};
    return std::nullopt;
  }
  return plans;
}

std::optional<OnChip> Movement::place_and_plan(const CompiledGemm& p, CompiledGemm& c, bool as_a, int64_t flips,
                                               const std::vector<const CompiledGemm*>& between,
                                               const std::vector<Parked>& waiting, Why& why,
                                               bool estimate, bool saved_anyway) const {
  OnChip oc;
  oc.as_a = as_a;
  std::array<std::vector<RowRange>, 2> taken;
  int64_t i = flips;  // FLIPs before the next job
  const std::vector<size_t> chunks = output_chunks(p);
  const size_t first_chunk_end = chunks.front();
  for (size_t k = 0; k < p.jobs.size(); ++k, ++i) {
    oc.producer_half.push_back(static_cast<size_t>((i + 1) % 2));
    if (k > first_chunk_end)  // runs after the first STOREs
      for (const RowRange& r : footprint(p, k)) taken[oc.producer_half.back()].push_back(r);
  }
  for (const CompiledGemm* cu : between)
    for (size_t j = 0; j < cu->jobs.size(); ++j, ++i)
      for (const RowRange& r : footprint(*cu, j)) taken[static_cast<size_t>((i + 1) % 2)].push_back(r);
  for (const Parked& pk : waiting) taken[pk.half].push_back(pk.rows);
  for (size_t j = 0; j < c.jobs.size(); ++j) oc.half_of.push_back(static_cast<size_t>((i + 1 + static_cast<int64_t>(j)) % 2));

  const int64_t half_rows = cfg_.memory.unified_depth / 2;
  const size_t own = as_a ? 0 : 1;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    std::array<RowRange, 2> fp = footprint(c, j);
    std::vector<RowRange> clear_of = taken[oc.half_of[j]];
    clear_of.push_back(fp[1 - own]);
    const std::optional<int64_t> at = place_rows(half_rows, fp[own].rows, fp[own].first, clear_of);
    if (!at) {
      why = {Fate::no_room,
             fmt::format("no room for its consumer's job {} image ({} rows) in a half of {} rows beside what {} "
                         "write there before it runs",
                         j, fp[own].rows, half_rows,
                         !between.empty() ? fmt::format("the {} contraction(s) in between and the waiting images", between.size())
                         : chunks.size() > 1 ? std::string("the producer's later jobs and the consumer's earlier ones")
                                             : std::string("the consumer's earlier jobs"))};
      return std::nullopt;
    }
    if (*at != fp[own].first) relocate_image(cfg_, c, j, as_a, *at);
    // The consumer's later jobs in this half must not overwrite this job's images.
    for (const RowRange& r : footprint(c, j)) taken[oc.half_of[j]].push_back(r);
    oc.rows.push_back(footprint(c, j)[own]);
  }
  std::optional<std::vector<StorePlan>> sp = store_that_pays(p, c, as_a, why, estimate, saved_anyway);
  if (!sp) return std::nullopt;
  oc.stores = std::move(*sp);
  return oc;
}

int64_t Movement::movement_cost(const CompiledGemm* p, const CompiledGemm& c, bool as_a) const {
  if (!p) return image_write_cycles(c, true) + image_write_cycles(c, false);
  Why why;
  CompiledGemm placed = c;
  const std::optional<OnChip> oc = through_host_ ? std::nullopt : place_and_plan(*p, placed, as_a, 0, {}, {}, why, true);
  return (oc ? store_cost(oc->stores) : host_path_cycles(*p, c, as_a)) + image_write_cycles(c, !as_a);
}

}  // namespace fetta::mapper
