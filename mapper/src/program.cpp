// compile_program: the host program of a run (mapper/program.hpp). The builder walks the layer's
// networks and emits each contraction's jobs; the policies and the state it applies are units of
// their own: which contractions are computed once for several networks (mapper/reuse.hpp), the
// order of the networks (mapper/network_schedule.hpp), what moving an intermediate costs and
// whether it stays on chip (mapper/movement.hpp), what each unified-memory half holds
// (mapper/memory_plan.hpp), the DRAM map (mapper/dram_map.hpp), the op stream with its FLIP parity
// and hoist point (mapper/op_stream.hpp), the DMA's descriptors (mapper/dma_transfers.hpp) and its
// saves with the reads of their rows (mapper/saved_results.hpp). Here: the units a layer's networks
// become, the STOREs of images kept on chip (emit_store), sums formed in the accumulator
// (emit_sum) and what overlaps the GEMM before (overlaps_gemm_before).
#include "mapper/program.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "mapper/dma_transfers.hpp"
#include "mapper/dram_map.hpp"
#include "mapper/gathered_results.hpp"
#include "mapper/pretiled_results.hpp"
#include "mapper/memory_plan.hpp"
#include "mapper/movement.hpp"
#include "mapper/network_schedule.hpp"
#include "mapper/op_stream.hpp"
#include "mapper/reuse.hpp"
#include "mapper/saved_results.hpp"
#include "mapper/verify.hpp"
#include "mapper/wall_model.hpp"

namespace fetta::mapper {

int64_t ProgramTensor::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string to_string(ProgramTensor::Kind k) {
  switch (k) {
    case ProgramTensor::Kind::input: return "input";
    case ProgramTensor::Kind::intermediate: return "intermediate";
    case ProgramTensor::Kind::accumulator: return "accumulator";
  }
  return "?";
}

NetworkOrder parse_network_order(const std::string& s) {
  if (s == "sequential") return NetworkOrder::sequential;
  if (s == "interleaved") return NetworkOrder::interleaved;
  if (s == "fastest") return NetworkOrder::fastest;
  throw std::invalid_argument(fmt::format("network order '{}'; allowed: sequential, interleaved, fastest", s));
}

std::string to_string(NetworkOrder o) {
  switch (o) {
    case NetworkOrder::sequential: return "sequential";
    case NetworkOrder::interleaved: return "interleaved";
    case NetworkOrder::fastest: return "fastest";
  }
  return "?";
}

std::string to_string(OpCode c) {
  static const char* const names[] = {"preload", "fetch",      "write_rows", "push",          "wait_idle", "read_acc",
                                      "check",   "store",      "check_rows", "finish",        "preload_image", "dma",
                                      "wait_retired", "read_saved", "wait_dma_idle"};
  return names[static_cast<size_t>(c)];
}

CompiledGemm rebuild_gemm(const arch::ArchConfig& cfg, const GemmRecord& r) {
  CompiledGemm c = r.os ? compile_gemm_os(cfg, r.shape, r.gm) : compile_gemm(cfg, r.shape, r.gk, r.ib_top);
  if (c.describe() != r.mapping)
    throw CompileError(fmt::format("the mapping '{}' rebuilds as '{}': the program does not match this compiler",
                                   r.mapping, c.describe()));
  return c;
}

namespace {

std::vector<std::string> out_labels_of(const CompiledGemm& c) {
  std::vector<std::string> l = c.shape.m.labels;
  l.insert(l.end(), c.shape.n.labels.begin(), c.shape.n.labels.end());
  return l;
}
std::vector<int64_t> out_dims_of(const CompiledGemm& c) {
  std::vector<int64_t> d = c.shape.m.dims;
  d.insert(d.end(), c.shape.n.dims.begin(), c.shape.n.dims.end());
  return d;
}

GemmRecord record_of(const CompiledGemm& c) {
  return {c.shape, c.map.os, c.map.ib_top, c.map.gk, c.map.gm, c.describe()};
}

// Whether a result later networks read too may also stay on chip for its next reader: only when
// asked, on the DMA path (it saves the result for the later readers while the STORE places it), with
// reuse (without it no result has several readers) and not with every intermediate sent through
// the host.
bool shared_on_chip_allowed(const ProgramOptions& o) { return o.shared_on_chip && o.dma && o.reuse && !o.through_host; }

// A shared result: a layer and the reuse key of the contraction computing it (mapper/reuse.hpp).
using SharedResult = std::pair<int, std::string>;

// Which shared results' next readers may take them on chip: none, or every one but those denied
// (compile_program denies those that make the program longer).
struct SharedChoice {
  bool any = false;
  std::set<SharedResult> deny;
  bool allows(const SharedResult& r) const { return any && !deny.contains(r); }
};

class ProgramBuilder {
 public:
  // The plans of every network, per (layer file, phase, problem, term): plan_network depends only
  // on the configuration and the options, so the programs of both network orders share them.
  using PlanCache = std::map<std::tuple<std::string, verif::Phase, int, size_t>, NetworkPlan>;

  // `shared`: the results later networks read too that may still stay on chip for their next
  // readers (on_chip_plan); compile_program keeps each where the wall-cycle model finds the program
  // shorter.
  ProgramBuilder(const arch::ArchConfig& cfg, const ProgramOptions& o, bool interleave, const SharedChoice& shared,
                 PlanCache& plans, Program& out)
      : cfg_(cfg),
        opt_(o),
        interleave_(interleave),
        shared_on_chip_(shared_on_chip_allowed(o) ? shared : SharedChoice{}),
        out_(out),
        ops_(cfg, out),
        mem_(cfg.memory.unified_depth / 2),
        host_lanes_(arch::host_port_lanes(cfg)),
        movement_(cfg, o.dma, o.through_host, o.gather), dma_(arch::dma_geometry(cfg)), gathered_(cfg), pretiled_(cfg),
        plans_(plans) {}

  // The shared results whose next readers took them on chip.
  const std::set<SharedResult>& kept_shared() const { return kept_shared_; }

  void layer(const std::string& file, const std::vector<verif::Phase>& phases) {
    std::string text = verif::read_layer_text(file);  // read once: the program embeds the text that was parsed
    const verif::LayerSpec spec = verif::parse_layer(text, file);
    layer_ = static_cast<int>(out_.layers.size());
    out_.layers.push_back({spec.name, std::move(text), phases});
    dram_.reset();  // the layer's tensors from address 0: its inputs at first use, then every result
    gathered_.new_layer();
    pretiled_.new_layer();
    ops_.clear_hoist();  // a layer's DMA loads never move into the layer before (its DRAM is reused)
    std::vector<std::vector<verif::PhaseProblem>> problems;
    for (verif::Phase ph : phases) problems.push_back(verif::phase_problems(spec, ph));
    auto each_problem = [&](const ProblemVisitor& f) {
      for (size_t i = 0; i < phases.size(); ++i)
        for (size_t pi = 0; pi < problems[i].size(); ++pi) try {
            f(phases[i], static_cast<int>(pi), problems[i][pi]);
          } catch (const std::exception& e) {
            throw CompileError(fmt::format("{} ({}): {}", file, verif::to_string(phases[i]), e.what()));
          }
    };
    plan_layer(file, each_problem);
    std::vector<Unit> units;
    each_problem([&](verif::Phase ph, int pi, const verif::PhaseProblem& prob) { add_units(ph, pi, prob, units); });
    schedule(units, file);
    saved_.end_layer(ops_);
    dram_.check_capacity(cfg_, file, opt_.dma);
  }

 private:
  using ProblemVisitor = std::function<void(verif::Phase, int, const verif::PhaseProblem&)>;
  // An operand in flight: its tensor, and whether it is in the next contraction's image already.
  struct Operand {
    int32_t tensor = -1;
    bool on_chip = false;
  };
  // A network's last contraction, deferred so that the terms of a sum can run back to back.
  struct Final {
    NetworkPlan plan;
    size_t term = 0;
    Operand lhs, rhs;
    const PlannedStep& step() const { return plan.steps.back(); }
    const CompiledGemm& gemm() const { return step().compiled.gemm; }
    const Operand& a() const { return step().compiled.lhs_is_a ? lhs : rhs; }  // the streamed operand
    const Operand& b() const { return step().compiled.lhs_is_a ? rhs : lhs; }  // the held one
  };
  // The problem being compiled.
  struct Where {
    verif::Phase phase;
    int index;
    const verif::PhaseProblem* prob;
  };
  // One job of an instruction sequence: its operand images come from tensors `a` and `b`; `b_key`
  // names the B tensor (a B image the free half already holds is not written again).
  struct Work {
    const CompiledGemm* c = nullptr;
    size_t job = 0;
    Operand a, b;
    size_t b_key = 0;
    bool accumulate = false;  // force acc_accumulate (a later term of a sum)
    bool read = false;        // read the job's accumulator rows afterwards
    bool probe = false;       // that read is the scoreboard's (the result stays on chip): not host time
    bool save = false;        // instead of the read: STORE the rows at `staging` and let the DMA save them
    std::vector<RowRange> staging{};  // place_saves: the rows of the job's half they wait in (a range or pieces)
    int32_t read_into = -1;   // a saved intermediate's tensor: the host reads the rows into it early
    int32_t z = -1;           // the accumulator tensor read into
    int32_t report = -1;
  };

  // What the compiler emits, a step at a time, in the order schedule() picks: one network (a term
  // of a problem), or the sum of a problem's terms once every term's network is done.
  struct Unit {
    Where w;
    size_t term = 0;
    bool defer_final = false;          // a term of a sum: its last contraction is kept in `final`
    std::vector<size_t> terms;         // a sum: the units of its terms (earlier in the list)
    NetworkPlan plan;
    const PlannedNetwork* pn = nullptr;
    std::map<NodeSet, Operand> live;   // the operands in flight (the inputs placed at the first step)
    std::map<NodeSet, std::string> reuse_key;  // groups a repeat computes: read from reused_ once there
    std::set<NodeSet> consumed;        // groups a skipped repeat read (an input there is not live)
    int s = 0;                         // the next step emitted (repeats are skipped)
    std::optional<Final> final;
    bool started = false;              // its first step was taken
    bool done = false;
  };

  void add_units(verif::Phase ph, int index, const verif::PhaseProblem& prob, std::vector<Unit>& units) {
    const size_t T = prob.terms.size();
    std::vector<size_t> terms;
    for (size_t t = 0; t < T; ++t) {
      Unit u;
      u.w = Where{ph, index, &prob};
      u.term = t;
      u.defer_final = T > 1;
      PlannedNetwork& pn = planned_.at({ph, index, t});
      u.pn = &pn;
      u.plan = std::move(pn.plan);  // the unit's own: on_chip_plan may move its consumers' images
      skip_repeats(u);
      terms.push_back(units.size());
      units.push_back(std::move(u));
    }
    if (T == 1) return;
    Unit sum;
    sum.w = Where{ph, index, &prob};
    sum.terms = std::move(terms);
    units.push_back(std::move(sum));
  }

  // Moves unit u past the steps an earlier network computes: their results are read from there.
  static void skip_repeats(Unit& u) {
    const int nsteps = static_cast<int>(u.plan.steps.size());
    for (; u.s < nsteps && u.pn->repeat[static_cast<size_t>(u.s)]; ++u.s) {
      const PlannedStep& st = u.plan.steps[static_cast<size_t>(u.s)];
      for (NodeSet g : {st.left, st.right}) {
        u.live.erase(g);
        u.reuse_key.erase(g);
        u.consumed.insert(g);
      }
      u.reuse_key[st.left | st.right] = u.pn->keys[static_cast<size_t>(u.s)];
    }
    if (u.s == nsteps) u.done = true;
  }

  // Whether any of unit u's steps after its current one, up to step t, reads a result another
  // network has not computed yet. A result kept on chip for step t holds the turn until t runs
  // (schedule), so under interleaving those steps must not wait for another network.
  bool waits_for_others(const Unit& u, int t) const {
    if (!interleave_) return false;  // every earlier network is done
    std::map<NodeSet, std::string> key = u.reuse_key;
    for (int j = u.s + 1; j <= t; ++j) {
      const PlannedStep& st = u.plan.steps[static_cast<size_t>(j)];
      for (NodeSet g : {st.left, st.right})
        if (const auto k = key.find(g); k != key.end() && !reused_.contains(k->second)) return true;
      if (u.pn->repeat[static_cast<size_t>(j)]) key[st.left | st.right] = u.pn->keys[static_cast<size_t>(j)];
    }
    return false;
  }

  // Whether unit u can take its next step now: a sum once its terms are done; a network once the
  // results its next step reads from other networks are there.
  bool ready(const Unit& u, const std::vector<Unit>& units) const {
    if (!u.pn) return std::all_of(u.terms.begin(), u.terms.end(), [&](size_t t) { return units[t].done; });
    const PlannedStep& st = u.plan.steps[static_cast<size_t>(u.s)];
    for (NodeSet g : {st.left, st.right})
      if (const auto k = u.reuse_key.find(g); k != u.reuse_key.end() && !reused_.contains(k->second)) return false;
    return true;
  }

  // The units' steps in the order mapper/network_schedule.hpp describes. A network whose result
  // waits on chip for a later contraction (parked images) keeps the turn: those images' rows are
  // planned against its own jobs only.
  void schedule(std::vector<Unit>& units, const std::string& file) {
    run_schedule(units.size(), interleave_,
                 {.done = [&](size_t i) { return units[i].done; },
                  .ready = [&](size_t i) { return ready(units[i], units); },
                  .keep_turn = [&] { return mem_.any_parked(); },
                  .advance =
                      [&](size_t i) {
                        try {
                          advance(units, i);
                        } catch (const std::exception& e) {
                          throw CompileError(fmt::format("{} ({}): {}", file, verif::to_string(units[i].w.phase), e.what()));
                        }
                      }});
  }

  // The next step of unit i: its network's next contraction, or its sum's terms.
  void advance(std::vector<Unit>& units, size_t i) {
    Unit& u = units[i];
    if (!u.pn) {
      std::vector<Final> finals;
      for (size_t t : u.terms) finals.push_back(std::move(*units[t].final));
      emit_sum_or_terms(u.w, finals);
      u.done = true;
      return;
    }
    const Problem& p = u.plan.problem;
    const int nsteps = static_cast<int>(u.plan.steps.size());
    if (!u.started) {  // the network's inputs, placed in DRAM at their first use (and nothing parked yet)
      u.started = true;
      mem_.clear_parked();
      for (int n = 0; n < p.size(); ++n) {
        const Operand in{input_tensor(p, n), false};
        if (!u.consumed.contains(NodeSet{1} << n)) u.live[NodeSet{1} << n] = in;
      }
    }
    const PlannedStep& st = u.plan.steps[static_cast<size_t>(u.s)];
    const std::string& key = u.pn->keys[static_cast<size_t>(u.s)];
    auto operand = [&](NodeSet g) {
      const auto k = u.reuse_key.find(g);
      if (k == u.reuse_key.end()) return u.live.at(g);
      const auto it = reused_.find(k->second);
      return it != reused_.end() ? Operand{it->second, false} : Operand{};
    };
    const Operand lhs = operand(st.left), rhs = operand(st.right);
    for (NodeSet g : {st.left, st.right}) {
      u.live.erase(g);
      u.reuse_key.erase(g);
    }
    if (lhs.tensor < 0 || rhs.tensor < 0) throw std::logic_error(fmt::format("internal: {} reads a result never kept", st.out));
    if (st.last && u.defer_final) {
      u.final = Final{u.plan, u.term, lhs, rhs};
      u.done = true;
      return;
    }
    Why why;
    const int readers = reuse_.readers(key);
    const int shared = readers > 1 ? readers : 0;
    const std::optional<OnChip> oc = on_chip_plan(u, why, shared, key);
    pretile_why_.clear();
    if (!oc) plan_pretiled(units, i, key, shared);
    const std::optional<Operand> res = emit_step(u.w, u.term, u.s, nsteps, st, lhs, rhs, oc ? &*oc : nullptr, why, shared > 0);
    if (res) u.live[st.left | st.right] = *res;
    if (res && res->on_chip && shared) kept_shared_.insert({layer_, key});
    if (res && shared) reused_[key] = res->tensor;
    ++u.s;
    skip_repeats(u);
  }

  // A sum's terms' last contractions: summed in the accumulator when they can be, else each on its own.
  void emit_sum_or_terms(const Where& w, const std::vector<Final>& finals) {
    if (!opt_.terms_separately && summable(finals)) return emit_sum(w, finals);
    for (const Final& f : finals) {  // each term's result on its own (the report has no "summed on chip" rows)
      const int n = static_cast<int>(f.plan.steps.size());
      emit_step(w, f.term, n - 1, n, f.step(), f.lhs, f.rhs, nullptr, {Fate::result, {}});
    }
  }

  // The layer's networks planned before any is emitted (ProgramOptions::reuse, mapper/reuse.hpp):
  // a step an earlier network computes is a repeat, and a result more than one emitted step reads
  // stays in DRAM.
  void plan_layer(const std::string& file, const std::function<void(const ProblemVisitor&)>& each_problem) {
    planned_.clear();
    reuse_ = ReusePlan(opt_.reuse);
    reused_.clear();
    saved_.forget_reads_again();
    each_problem([&](verif::Phase ph, int pi, const verif::PhaseProblem& prob) {
      for (size_t term = 0; term < prob.terms.size(); ++term) {
        const auto cache_key = std::tuple{file, ph, pi, term};
        auto hit = plans_.find(cache_key);
        if (hit == plans_.end()) {
          NetworkPlan plan = plan_network(
              cfg_, prob, term,
              [this](const CompiledGemm* p, const CompiledGemm& c, bool as_a) {
                // Mapped for compute with every result through the host: no tie is worth breaking.
                return opt_.through_host && opt_.map_for == MapFor::compute ? 0 : movement_.movement_cost(p, c, as_a);
              },
              opt_.map_for);
          hit = plans_.emplace(cache_key, std::move(plan)).first;
        }
        const int64_t before = reuse_.repeats();
        planned_[{ph, pi, term}] = reuse_.add(hit->second);
        out_.layers[static_cast<size_t>(layer_)].repeats += reuse_.repeats() - before;
      }
    });
  }

  // Whether the result of unit u's next step (s = u.s) can stay on chip (docs/architecture.md §5):
  // its consumer is not a deferred final of a sum, no step up to it waits for another network
  // (waits_for_others), every job's image finds rows in the half that job computes on which
  // nothing writes until the job runs (the images of the jobs in between, the consumer's other
  // operand, images waiting for other consumers), plan_store can join the two layouts and the STORE
  // is cheaper than the host path. On success the consumer's images may have moved (the plan's step
  // is updated) and the images are registered as parked. Otherwise `why` says why not.
  // `readers`: how many steps read the result when more than one. Such a result is saved to DRAM
  // for its readers in later networks; on the DMA path its next reader may still take it on chip
  // (emit_step does both), when the STOREs cost less than that reader's read of the saved rows and
  // its image writes. `key`: the result's reuse key (shared_on_chip_ names the shared results whose
  // next readers may take them on chip).
  std::optional<OnChip> on_chip_plan(Unit& u, Why& why, int readers, const std::string& key) {
    NetworkPlan& plan = u.plan;
    const int s = u.s;
    why = {};
    const PlannedStep& st = plan.steps[static_cast<size_t>(s)];
    mem_.release_read_by(s);  // read by now (or by s)
    if (st.last) {  // a final result: always read out
      why = {Fate::result, {}};
      return std::nullopt;
    }
    if (opt_.through_host) {
      why = {Fate::option, "--through-host"};
      return std::nullopt;
    }
    const bool shared = readers > 1;
    if (shared && !shared_on_chip_.allows({layer_, key})) {  // saved for all readers (through the host port without the DMA)
      why = {Fate::shared, fmt::format("read by {} contractions (later networks reuse it): kept in DRAM for all{}", readers,
                                       opt_.dma ? " (the wall-cycle model found the program longer with its next reader "
                                                  "taking it on chip)"
                                                : "")};
      return std::nullopt;
    }
    // Why the next reader does not take it on chip; a shared result is saved for the later ones anyway.
    auto leave = [&](Why w) {
      if (shared)
        w.text = fmt::format("read by {} contractions, saved to DRAM for later networks; its next reader does not take "
                             "it on chip: {}", readers, w.text);
      why = std::move(w);
      return std::nullopt;
    };
    const int t = consumer_of(plan, s);
    PlannedStep& next = plan.steps[static_cast<size_t>(t)];
    if (next.last && u.defer_final)
      return leave({Fate::deferred_term, "its consumer is a term's last contraction, run later with the other terms"});
    if (waits_for_others(u, t))
      return leave({Fate::waits_for_network, "its consumer, or a contraction before it, reads a result another network "
                                             "has not computed yet, and images waiting on chip would hold the "
                                             "interleaving's turn"});
    const bool as_a = (next.lhs == st.out) == next.compiled.lhs_is_a;
    std::vector<const CompiledGemm*> between;
    for (int j = s + 1; j < t; ++j)  // the steps a later network computes are not emitted (plan_layer)
      if (!u.pn->repeat[static_cast<size_t>(j)]) between.push_back(&plan.steps[static_cast<size_t>(j)].compiled.gemm);
    CompiledGemm c = next.compiled.gemm;
    std::optional<OnChip> oc = movement_.place_and_plan(st.compiled.gemm, c, as_a, ops_.flips(), between, mem_.parked(), why,
                                                        false, shared);
    if (!oc) return leave(why);
    next.compiled.gemm = std::move(c);
    oc->consumer = &next;
    oc->consumer_step = t;
    for (size_t j = 0; j < oc->half_of.size(); ++j) mem_.park(oc->half_of[j], oc->rows[j], t);
    return oc;
  }

  // The step of `plan` that reads step s's result.
  static int consumer_of(const NetworkPlan& plan, int s) {
    const int nsteps = static_cast<int>(plan.steps.size());
    const PlannedStep& st = plan.steps[static_cast<size_t>(s)];
    int t = s + 1;
    while (t < nsteps && plan.steps[static_cast<size_t>(t)].lhs != st.out && plan.steps[static_cast<size_t>(t)].rhs != st.out) ++t;
    if (t == nsteps) throw std::logic_error(fmt::format("internal: no step consumes {}", st.out));
    return t;
  }

  // Step s of `plan` as a reader of its result: the contraction reading it and whether as IA.
  static std::pair<const CompiledGemm*, bool> reader_in(const NetworkPlan& plan, int s) {
    const PlannedStep& st = plan.steps[static_cast<size_t>(s)];
    const PlannedStep& next = plan.steps[static_cast<size_t>(consumer_of(plan, s))];
    return {&next.compiled.gemm, (next.lhs == st.out) == next.compiled.lhs_is_a};
  }

  // With gathers (the host moves no element), an intermediate that leaves the chip is saved in
  // its readers' layouts (docs/dma.md §5, "Pre-tiled saves") where its output chunks can STORE
  // every reader's image rows and that costs less than gathering them from the accumulator's
  // layout: the readers then load row copies. A shared result (`readers` > 1) is saved once for
  // each reader: its next one in this network and those in the later networks that reuse it (`key`).
  void plan_pretiled(const std::vector<Unit>& units, size_t i, const std::string& key, int readers) {
    const Unit& u = units[i];
    const PlannedStep& st = u.plan.steps[static_cast<size_t>(u.s)];
    if (!gathering() || st.last || opt_.through_host) return;
    std::vector<std::pair<const CompiledGemm*, bool>> rd{reader_in(u.plan, u.s)};
    if (readers > 1) {
      for (size_t v = 0; v < units.size(); ++v) {
        const Unit& w = units[v];
        if (v == i || !w.pn) continue;
        for (size_t s2 = 0; s2 < w.plan.steps.size(); ++s2)
          if (w.pn->repeat[s2] && w.pn->keys[s2] == key &&
              !w.pn->repeat[static_cast<size_t>(consumer_of(w.plan, static_cast<int>(s2)))])
            rd.push_back(reader_in(w.plan, static_cast<int>(s2)));
      }
      if (static_cast<int>(rd.size()) != readers) return;
    }
    const CompiledGemm& p = st.compiled.gemm;
    std::optional<PretiledResults::Plan> pl = pretiled_.plan(p, rd, static_cast<uint32_t>(out_shift(p)), pretile_why_);
    if (!pl) return;
    if (std::optional<std::string> loses = movement_.pretiling_loses(*pl)) {
      pretile_why_ = std::move(*loses);
      return;
    }
    pretiled_.start(std::move(*pl));
  }

  // ---- the program's tensors, DRAM map and operations

  int32_t add_tensor(ProgramTensor t) {
    t.layer = layer_;
    out_.tensors.push_back(std::move(t));
    return static_cast<int32_t>(out_.tensors.size() - 1);
  }
  const ProgramTensor& tensor(int32_t id) const { return out_.tensors[static_cast<size_t>(id)]; }

  // Network node i as an operand: the layer's input placed in DRAM at its first use.
  int32_t input_tensor(const Problem& p, int i) {
    ProgramTensor t;
    t.name = p.node_names[static_cast<size_t>(i)];
    t.kind = ProgramTensor::Kind::input;
    t.input = t.name;
    for (int l : p.node_modes[static_cast<size_t>(i)]) {
      t.labels.push_back(p.labels[static_cast<size_t>(l)]);
      t.dims.push_back(static_cast<int64_t>(p.dims[static_cast<size_t>(l)]));
    }
    t.dram_bytes = dram_operand_bytes(cfg_.dtype);
    const DramMap::Input at = dram_.input(t.name, t.numel(), t.dram_bytes);
    t.dram_addr = static_cast<int64_t>(at.addr);
    const int32_t id = add_tensor(std::move(t));
    if (at.placed) ops_.op({.code = OpCode::preload, .tensor = id});
    return id;
  }

  // Where each element of tensor t lands in job j's A (a_operand) or B image: the layout
  // functions run over the elements' indices (+1, in two 16-bit halves: 0 is padding).
  RowImage image_map(const CompiledGemm& c, bool a_operand, size_t j, int32_t t, std::vector<int64_t>& map) const {
    const ProgramTensor& pt = tensor(t);
    std::vector<uint16_t> lo(static_cast<size_t>(pt.numel())), hi(lo.size());
    for (size_t e = 0; e < lo.size(); ++e) {
      lo[e] = static_cast<uint16_t>((e + 1) & 0xFFFFU);
      hi[e] = static_cast<uint16_t>((e + 1) >> 16);
    }
    auto layout = [&](const std::vector<uint16_t>& v) {
      const verif::Tensor<uint16_t> x(pt.labels, pt.dims, v);
      return a_operand ? layout_a(c, x, 0, j) : layout_b(c, x, j);
    };
    RowImage il = layout(lo);
    const RowImage ih = layout(hi);
    map.resize(il.data.size());
    for (size_t e = 0; e < map.size(); ++e) map[e] = ((int64_t{ih.data[e]} << 16) | il.data[e]) - 1;
    il.data.clear();
    return il;
  }

  void write_image(const CompiledGemm& c, bool a_operand, size_t j, int32_t t, size_t half, int32_t report) {
    std::vector<int64_t> map;
    const RowImage img = image_map(c, a_operand, j, t, map);
    const uint16_t pad = a_operand && cfg_.dtype == arch::DataType::bf16 ? 0x8000 : 0;
    if (by_dma(t)) return dma_image(img, map, pad, t, half, report);
    if (const std::optional<size_t> rd = gathering() ? pretiled_.reader_of(t, c, a_operand) : std::nullopt)
      return push_loads(pretiled_.loads(t, *rd, j, img.first_row, half != 0), {}, t, report);
    if (const GatherPlan* g = gathered_.planned(c, a_operand, j, t)) return gather_image(*g, a_operand, t, half, report);
    // Within a contraction's jobs the host writes the next job's images while the job before
    // computes (its operands were fetched before the first job); the rows go to that GEMM's step,
    // whose cycles run meanwhile.
    // The host's port reaches the free half only once the job's FLIP has taken effect (a FLIP
    // the DMA holds has not): the first write waits for it to retire.
    const bool hoist = ops_.host_hoist();
    const Op o{.code = OpCode::write_rows, .pad = pad, .report = hoist ? ops_.hoist_report() : report, .tensor = t,
               .a = img.first_row, .b = img.rows, .c = img.lanes, .map = ops_.add_map(map), .map_len = map.size()};
    if (!hoist) return ops_.op(o);
    std::vector<Op> ops;
    if (!ops_.flip_waited())
      ops.push_back({.code = OpCode::wait_retired, .report = ops_.hoist_report(), .a = ops_.flip_retired()});
    ops_.set_flip_waited();
    ops.push_back(o);
    ops_.insert_at_hoist(ops);
  }

  // The DMA path moves the layer's inputs and weights: tensors the host placed in DRAM itself.
  bool by_dma(int32_t t) const { return opt_.dma && tensor(t).kind == ProgramTensor::Kind::input; }

  // An image through the DMA: a pre-tiled copy in DRAM (rows of whole beats), and the descriptors
  // that load it into `half`. They go right after the last GEMM pushed, so the DMA fills the free
  // half while that GEMM runs; the controller holds the FLIP to this half until they are done.
  void dma_image(const RowImage& img, const std::vector<int64_t>& map, uint16_t pad, int32_t t, size_t half,
                 int32_t report) {
    const arch::DmaGeometry& g = dma_.geometry();
    const uint64_t at = dram_.allocate(img.rows * image_beats_per_row(g, img.lanes) * g.lanes, g.width / 8);
    // The GEMM running while the host pushes the descriptors keeps its cycles.
    const int32_t in_flight = ops_.hoisting() ? ops_.hoist_report() : report;
    std::vector<Op> ops;
    ops.push_back({.code = OpCode::preload_image, .pad = pad, .report = report, .tensor = t, .a = static_cast<int64_t>(at),
                   .b = img.rows, .c = img.lanes, .map = ops_.add_map(map), .map_len = map.size()});
    for (const arch::DmaDescriptor& d : image_load(g, img.first_row, img.rows, img.lanes, at, half != 0))
      ops.push_back(ops_.words_op(OpCode::dma, arch::encode_dma(dma_, d), in_flight, Account::compute));
    ops_.insert_at_hoist(ops);
  }

  // Saved intermediates come back by DMA gathers where they can (ProgramOptions::gather).
  bool gathering() const { return opt_.gather && opt_.dma; }

  // Whether reader c's operand t (IA when as_a) is gathered: planned for every job, or not at all
  // (then the host reads it and writes the images).
  bool gathers(int32_t t, const CompiledGemm& c, bool as_a) {
    return gathering() && (pretiled_.reader_of(t, c, as_a) || gathered_.plan(t, c, as_a, dram_));
  }

  // A job's image gathered from the saved rows (docs/dma.md §2): the descriptors go where the host's
  // writes would (right after the GEMM before, or here for a contraction's first job that waited
  // for the saves), after the pad beat's placing the first time a gather reads it. Each names the
  // intermediate, whose DRAM traffic its beats are.
  void gather_image(const GatherPlan& plan, bool a_operand, int32_t t, size_t half, int32_t report) {
    std::vector<Op> pad_ops;
    if (const auto pad = gathered_.pad_to_place(plan, a_operand)) {
      const arch::DmaGeometry& g = dma_.geometry();
      const std::vector<int64_t> map(static_cast<size_t>(g.lanes), -1);
      // Not a load of its own: the gathers that read the pad beat count it among their beats.
      pad_ops.push_back({.code = OpCode::preload_image, .account = Account::none, .pad = pad->pad, .report = report,
                         .tensor = any_input(),
                         .a = static_cast<int64_t>(pad->at), .b = 1, .c = g.lanes, .map = ops_.add_map(map),
                         .map_len = map.size()});
    }
    std::vector<arch::DmaDescriptor> ds = plan.descriptors;
    for (arch::DmaDescriptor& d : ds) d.half = half != 0;
    push_loads(ds, pad_ops, t, report);
  }

  // Load descriptors of a saved intermediate t into a reader's image, after `before`: where the
  // host's writes would go (right after the GEMM before, or here for a contraction's first job that
  // waited for the saves). Each names t, whose DRAM traffic its beats are.
  void push_loads(const std::vector<arch::DmaDescriptor>& ds, std::vector<Op> before, int32_t t, int32_t report) {
    const bool hoist = ops_.host_hoist();
    const int32_t in_flight = hoist ? ops_.hoist_report() : report;
    std::vector<Op> ops = std::move(before);
    for (const arch::DmaDescriptor& d : ds) {
      Op o = ops_.words_op(OpCode::dma, arch::encode_dma(dma_, d), in_flight, Account::compute);
      o.tensor = t;
      ops.push_back(o);
    }
    if (hoist) return ops_.insert_at_hoist(ops);
    for (const Op& o : ops) ops_.op(o);
  }

  // The current layer's latest input: a pad beat is placed as an image "of" it (all padding).
  int32_t any_input() const {
    for (size_t i = out_.tensors.size(); i-- > 0;)
      if (out_.tensors[i].kind == ProgramTensor::Kind::input) return static_cast<int32_t>(i);
    throw std::logic_error("internal: a gather before any layer input");
  }

  // Where job j's result words land in tensor z: the word at position i of its accumulator rows'
  // acc_lanes (row-major) is element map[i] (-1: none).
  std::vector<int64_t> result_map(const CompiledGemm& c, size_t j, int32_t z) const {
    const GemmJob& job = c.jobs[j];
    std::vector<uint64_t> words(static_cast<size_t>(acc_rows(c, job)) * acc_lanes(c).size());
    std::vector<uint64_t> at(static_cast<size_t>(tensor(z).numel()), 0);
    for (size_t i = 0; i < words.size(); ++i) words[i] = i + 1;
    gather_result(c, job, words, at);
    std::vector<int64_t> map(words.size(), -1);
    for (size_t e = 0; e < at.size(); ++e)
      if (at[e] != 0) map[at[e] - 1] = static_cast<int64_t>(e);
    return map;
  }

  // Job j's accumulator rows into tensor z: the word read at position i lands at element map[i].
  void read_acc(const CompiledGemm& c, size_t j, int32_t z, bool probe, int32_t report) {
    const int64_t rows = acc_rows(c, c.jobs[j]);
    const std::vector<int> lanes = acc_lanes(c);
    const std::vector<int64_t> map = result_map(c, j, z);
    const std::vector<int64_t> lane_list(lanes.begin(), lanes.end());
    ops_.op({.code = OpCode::read_acc, .host_counted = !probe, .report = report, .tensor = z, .a = rows,
        .map = ops_.add_map(map), .map_len = map.size(), .lanes = ops_.add_map(lane_list), .lanes_len = lane_list.size()});
  }

  // Results that leave the host path go through the DMA on its path (docs/dma.md §5): each job's
  // finished rows are STOREd as row copies (rounded or requantized to the operand type) into rows
  // of the half it computed on that hold nothing a later job of `work` finds there and no image
  // parked for a later contraction, and saved once the next FLIP gives the host that half. Sets
  // the rows of every saving job; false, with nothing set, when one finds no room (its results
  // then go through the host like every result on the host path).
  bool place_saves(std::vector<Work>& work) const {
    std::vector<UnifiedMemoryPlan::Job> jobs;
    for (size_t i = 0; i < work.size(); ++i) {
      const Work& w = work[i];
      // What the job finds in its half before it runs: its B image (jobs over M share one) and an
      // A image a STORE put there.
      const std::array<RowRange, 2> fp = footprint(*w.c, w.job);
      UnifiedMemoryPlan::Job j{.half = static_cast<size_t>((ops_.flips() + 1 + static_cast<int64_t>(i)) % 2),  // emit_jobs'
                               .writes = {fp[1]}, .save = w.save, .save_rows = saved_rows(*w.c, w.job),
                               .split = pretiled_.current() == nullptr};
      if (w.a.on_chip) j.writes.push_back(fp[0]);
      jobs.push_back(std::move(j));
    }
    const std::optional<std::vector<std::vector<RowRange>>> at = mem_.place_staging(jobs);
    if (!at) return false;
    for (size_t i = 0; i < work.size(); ++i) work[i].staging = (*at)[i];
    return true;
  }

  // The rows job j's save stages: its accumulator rows, or its chunk's pieces of a pre-tiled save.
  int64_t saved_rows(const CompiledGemm& c, size_t j) const {
    const PretiledResults::Plan* pl = pretiled_.current();
    return pl ? pl->staging_rows(chunk_of(c, j)) : acc_rows(c, c.jobs[j]);
  }

  // Which output chunk (output_chunks order) job j of c completes.
  static size_t chunk_of(const CompiledGemm& c, size_t j) {
    const std::vector<size_t> chunks = output_chunks(c);
    return static_cast<size_t>(std::find(chunks.begin(), chunks.end(), j) - chunks.begin());
  }

  // How a result becomes operands on its way out: bf16 rounded, integers requantized by
  // out_shift.
  Convert out_convert() const { return cfg_.dtype == arch::DataType::bf16 ? Convert::bf16 : Convert::requant; }
  int out_shift(const CompiledGemm& c) const {
    return cfg_.dtype == arch::DataType::bf16 ? 0 : requant_shift(cfg_.dtype, c.shape.k.size());
  }

  // Job j's finished accumulator rows out through the DMA: a STORE of whole rows into `row` ..
  // of the half the job computed on (waited for, so its cycles are the step's STORE cycles), a
  // save descriptor held until the next FLIP, and the read of the DRAM it fills (SavedResults),
  // for when every save is done: the scoreboard's at the layer's end for a final result
  // (SavedResults::end_layer), the host's at the consumer for an intermediate (SavedResults::fetch).
  // `early`: the rows are an intermediate's, which the host may read as soon as they are saved.
  // Job j's accumulator rows saved as they are: copied in order into the staging pieces (one
  // STORE and one save descriptor each; DRAM holds the rows one after another either way).
  void save_rows(const CompiledGemm& c, size_t j, int32_t z, const std::vector<RowRange>& staging, size_t half,
                 int32_t report, bool early) {
    if (PretiledResults::Plan* pl = pretiled_.current()) return save_pretiled(*pl, c, j, z, staging.at(0).first, half, report);
    const GemmJob& job = c.jobs[j];
    const int64_t rows = acc_rows(c, job);
    int64_t offset = 0;
    for (const RowRange& piece : staging) {
      arch::StoreInstr st;
      st.bound[0] = static_cast<uint32_t>(piece.rows);
      st.src_row_stride[0] = st.dst_row_stride[0] = 1;
      st.src_row_base = static_cast<uint32_t>(offset);
      st.dst_row_base = static_cast<uint32_t>(piece.first);
      st.count = static_cast<uint32_t>(cfg_.network.lanes);
      st.shift = static_cast<uint32_t>(out_shift(c));
      ops_.push(arch::encode_store(ops_.isa(), st), report, Account::store, arch::store_instr_cycles(st));
      step_of(report).store_predicted += arch::store_instr_cycles(st);
      offset += piece.rows;
    }
    if (offset != rows) throw std::logic_error("internal: a save's staging pieces do not hold its rows");
    if (staging.size() > 1) {
      std::string& why = step_of(report).through_host_because;
      if (why.find("; staged in pieces") == std::string::npos)
        why += fmt::format("; staged in pieces: no one clear range of its half holds a job's {} rows, so they wait in {}",
                           rows, staging.size());
    }
    ops_.op({.code = OpCode::wait_idle, .account = Account::store, .report = report});

    const arch::DmaGeometry& g = dma_.geometry();
    const auto [g0, beats] = saved_beats(c, host_lanes_);
    const uint64_t at = dram_.allocate(rows * beats * g.lanes, g.width / 8);
    if (gathering()) gathered_.saved(report, j, at);
    std::vector<int64_t> lane_list;  // within the saved beats
    for (int l : acc_lanes(c)) lane_list.push_back(l - g0 * g.lanes);
    const std::vector<int64_t> map = result_map(c, j, z);
    const auto per_row = static_cast<int64_t>(lane_list.size());
    const auto row_bytes = static_cast<uint64_t>(beats * g.lanes * (g.width / 8));
    offset = 0;
    for (const RowRange& piece : staging) {
      const uint64_t piece_at = at + static_cast<uint64_t>(offset) * row_bytes;
      const std::vector<int64_t> piece_map(map.begin() + offset * per_row, map.begin() + (offset + piece.rows) * per_row);
      queue_save(result_save(g, piece.first, piece.rows, g0, beats, piece_at, half != 0), piece_at, piece_map, lane_list,
                 z, report, early);
      offset += piece.rows;
    }
  }

  // A save descriptor into DRAM byte address `at`, pushed after the next FLIP, and the scoreboard's
  // read of the rows it fills into tensor z: word `lanes[l]` of each saved row (of d's beats) is
  // element map[row * lanes.size() + l].
  void queue_save(const arch::DmaDescriptor& d, uint64_t at, const std::vector<int64_t>& map,
                  const std::vector<int64_t>& lanes, int32_t z, int32_t report, bool early) {
    const Op descriptor = ops_.words_op(OpCode::dma, arch::encode_dma(dma_, d), report, Account::compute);
    const auto rows = static_cast<int64_t>(d.bound[1]);
    const auto row_lanes = static_cast<int64_t>(d.bound[0]) * dma_.geometry().lanes;
    const uint64_t map_at = ops_.add_map(map);
    const uint64_t lanes_at = ops_.add_map(lanes);
    saved_.queue(descriptor,
                 {.code = OpCode::read_saved, .account = Account::none, .host_counted = false, .report = report,
                  .tensor = z, .a = static_cast<int64_t>(at), .b = rows,
                  .c = row_lanes, .map = map_at, .map_len = map.size(), .lanes = lanes_at, .lanes_len = lanes.size()},
                 early);
  }

  // Job j's output chunk saved pre-tiled (PretiledResults): STOREs pack the reader's image rows the
  // chunk holds into the staging rows from `row` (waited for: the step's STORE cycles), and a save
  // descriptor per piece, held until the next FLIP, with the scoreboard's read of its rows.
  void save_pretiled(PretiledResults::Plan& pl, const CompiledGemm& c, size_t j, int32_t z, int64_t row, size_t half,
                     int32_t report) {
    const size_t k = chunk_of(c, j);
    const auto shift = static_cast<uint32_t>(out_shift(c));
    for (const PretiledResults::Piece& pc : pl.chunks.at(k)) {
      const PretiledResults::Reader& rd = pl.readers[pc.reader];
      const StorePlan sp = plan_store_rows(cfg_, c, rd.gemm, rd.as_a, pc.job, shift, k, pc.rows, row + pc.offset);
      if (!sp.ok()) throw std::logic_error("internal: a pre-tiled piece's STORE planned once fails: " + sp.why_not);
      for (arch::StoreInstr st : sp.program) {
        st.other_half = false;
        ops_.push(arch::encode_store(ops_.isa(), st), report, Account::store, arch::store_instr_cycles(st));
        step_of(report).store_predicted += arch::store_instr_cycles(st);
      }
    }
    ops_.op({.code = OpCode::wait_idle, .account = Account::store, .report = report});
    const arch::DmaGeometry& g = dma_.geometry();
    for (PretiledResults::Piece& pc : pl.chunks.at(k)) {
      std::vector<int64_t> image;
      const PretiledResults::Reader& rd = pl.readers[pc.reader];
      const RowImage img = image_map(rd.gemm, rd.as_a, pc.job, z, image);
      const int64_t per_row = image_beats_per_row(g, img.lanes);
      const auto rows = static_cast<int64_t>(pc.rows.size());
      const uint64_t at = dram_.allocate(rows * per_row * g.lanes, g.width / 8);
      pc.at = at;
      std::vector<int64_t> map, lane_list;  // the elements the piece's rows carry: those its reader loads
      for (size_t i = 0; i < pc.rows.size(); ++i)
        for (int l = 0; l < img.lanes; ++l) {
          const bool loaded = (pc.masks[i][static_cast<size_t>(l / g.lanes)] >> (l % g.lanes) & 1U) != 0;
          map.push_back(loaded ? image[static_cast<size_t>(pc.rows[i] * img.lanes + l)] : -1);
        }
      for (int l = 0; l < img.lanes; ++l) lane_list.push_back(l);
      queue_save(result_save(g, row + pc.offset, rows, 0, per_row, at, half != 0), at, map, lane_list, z, report, false);
    }
  }

  // Whether a contraction's operands can be read and its first job's images written while the
  // GEMM last pushed computes (at the hoist point), where interleaving (schedule) put another
  // network's contraction before it: on the DMA path, when none of them is that GEMM's result
  // (saved after it: its last rows leave at the next FLIP) or on chip; each is an input the DMA
  // loads, a saved intermediate of an earlier contraction, or one read again.
  bool overlaps_gemm_before(std::initializer_list<const Operand*> operands) const {
    if (!opt_.dma || !interleave_ || !ops_.hoisting()) return false;
    for (const Operand* o : operands) {
      if (o->on_chip) return false;
      if (by_dma(o->tensor) || saved_.read_again(o->tensor)) continue;
      if (!saved_.waiting(o->tensor) || saved_.producer(o->tensor) == ops_.hoist_report()) return false;
    }
    return true;
  }

  // Per job: operand images into the free half, FLIP, the GEMM, wait; the finished rows out of
  // the accumulator when asked; then `after(job)` when given (the STOREs of a finished chunk).
  // `overlap`: the first job's images go to the hoist point too (overlaps_gemm_before).
  void emit_jobs(const std::vector<Work>& work, const std::function<void(size_t)>& after = {}, bool overlap = false) {
    ops_.set_host_hoist(overlap);  // else the first job's operands were fetched after the GEMM before
    for (const Work& w : work) {
      const CompiledGemm& c = *w.c;
      const GemmJob& job = c.jobs[w.job];
      // The job computes on the half the host writes now (the free one); the halves alternate.
      const size_t half = static_cast<size_t>((ops_.flips() + 1) % 2);
      if (!w.a.on_chip) write_image(c, true, w.job, w.a.tensor, half, w.report);
      const std::array<int64_t, 2> img = b_image(job);
      const UnifiedMemoryPlan::BImage key{static_cast<int64_t>(w.b_key), img[0], img[1]};
      if (!w.b.on_chip && !mem_.holds(half, key)) {
        write_image(c, false, w.job, w.b.tensor, half, w.report);
        mem_.hold(half, key);
      }
      ops_.flip(w.report, Account::compute);
      arch::GemmInstr g = job.instr;
      if (w.accumulate) g.acc_accumulate = true;
      ops_.push(arch::encode_gemm(ops_.isa(), g), w.report, Account::compute, job.predicted_cycles - 1);  // its FLIP's is above
      // The FLIP gave the host the half the job before computed on: its results may leave now.
      const std::vector<int64_t> early = saved_.push_pending(ops_, w.report, Account::compute);
      ops_.set_hoist(w.report);  // the next job's DMA loads and host writes may start from here
      // The rows the job before saved, when they are this contraction's intermediate: the host reads
      // them from DRAM while this job computes, once the DMA is done with them (and with the next
      // job's loads, which the hoist point puts first). The last job's wait for the consumer.
      if (&w != &work.front() && !early.empty()) saved_.read_early(ops_, early, w.read_into, w.report);
      ops_.op({.code = OpCode::wait_idle, .report = w.report});
      if (w.read) read_acc(c, w.job, w.z, w.probe, w.report);
      if (w.save) save_rows(c, w.job, w.z, w.staging, half, w.report, w.read_into >= 0);
      if (after) after(w.job);
    }
    ops_.set_host_hoist(false);
  }

  // After the producer's job k: the parts of the STORE programs that store the output chunk k
  // completed, each consumer job's image into the half that job computes on (the free one, or the
  // compute half when the consumer job computes there: after the producer's last job, whose
  // operands are dead by then), and a wait for them.
  void emit_store(const OnChip& oc, size_t k, int32_t report) {
    bool any = false;
    for (size_t j = 0; j < oc.stores.size(); ++j) {
      const StorePlan& sp = oc.stores[j];
      for (size_t part = 0; part < sp.after_job.size(); ++part) {
        if (sp.after_job[part] != k) continue;
        for (size_t n = sp.part_begin[part]; n < sp.part_end(part); ++n) {
          arch::StoreInstr st = sp.program[n];
          st.other_half = oc.half_of[j] != oc.producer_half[k];
          ops_.push(arch::encode_store(ops_.isa(), st), report, Account::store, arch::store_instr_cycles(st));
          any = true;
        }
      }
    }
    if (!any) return;
    // The images are placed clear of every job still to run; after the last job nothing of the
    // producer's B is needed again.
    if (k + 1 == oc.producer_half.size()) mem_.forget_b_images();
    ops_.op({.code = OpCode::wait_idle, .account = Account::store, .report = report});
  }

  // The scoreboard's probe of the images the STOREs wrote, through the host port (not counted).
  // The port reaches only the free half: an image in the producer's half is read between two
  // FLIPs that put the halves back.
  void emit_check_stored(const OnChip& oc, int32_t golden, int32_t report) {
    const CompiledGemm& c = oc.consumer->compiled.gemm;
    for (size_t j = 0; j < oc.stores.size(); ++j) {
      const bool flip = oc.half_of[j] == oc.producer_half.back();  // the compute half
      if (flip) {
        ops_.push(arch::encode_flip(ops_.isa()), report, Account::none, 1);
        ops_.op({.code = OpCode::wait_idle, .account = Account::none, .report = report});
      }
      std::vector<int64_t> map;
      const RowImage img = image_map(c, oc.as_a, j, golden, map);
      const uint16_t pad = oc.as_a && cfg_.dtype == arch::DataType::bf16 ? 0x8000 : 0;
      ops_.op({.code = OpCode::check_rows, .account = Account::none, .pad = pad, .report = report, .tensor = golden,
          .a = img.first_row, .b = img.rows, .c = img.lanes, .map = ops_.add_map(map), .map_len = map.size()});
      if (flip) {
        ops_.push(arch::encode_flip(ops_.isa()), report, Account::none, 1);
        ops_.op({.code = OpCode::wait_idle, .account = Account::none, .report = report});
      }
    }
  }

  // "<moves_text> in <n> instruction(s)[ of <k> affine nests], as A of s<t>", where the images wait
  // (the nests only when some job's program is more than one), and the rate the STOREs write at.
  std::string describe_store(const OnChip& oc, int s) const {
    const CompiledGemm& c = oc.consumer->compiled.gemm;
    std::string where;
    const size_t n = oc.stores.size();
    const bool both = std::count(oc.half_of.begin(), oc.half_of.end(), oc.half_of[0]) != static_cast<int64_t>(n);
    if (n > 1) where += fmt::format(" (its {} jobs{})", n, both ? ": both halves" : "");
    const size_t parts = oc.stores[0].after_job.size();
    if (parts > 1) where += fmt::format(", one part after each of the producer's {} output chunks", parts);
    if (oc.consumer_step > s + 1) where += fmt::format(", {} contraction(s) later", oc.consumer_step - s - 1);
    std::vector<int64_t> moved;  // first rows of the images away from the compiler's place
    for (const RowRange& r : oc.rows)
      if (r.first != (oc.as_a ? c.a_base : c.b_base)) moved.push_back(r.first);
    if (!moved.empty()) where += fmt::format(", {} image(s) moved to row(s) {}", moved.size(), fmt::join(moved, "/"));
    const int64_t nests = total(oc.stores, [](const StorePlan& sp) { return sp.nests; });
    const int64_t one_each = total(oc.stores, [](const StorePlan& sp) { return sp.part_begin.size(); });
    return fmt::format("{} in {} instruction(s){}, as {} of s{}{}; {}", moves_text(oc.stores),
                       total(oc.stores, [](const StorePlan& sp) { return sp.program.size(); }),
                       nests > one_each ? fmt::format(" of {} affine nests", nests) : "", oc.as_a ? "A" : "B",
                       oc.consumer_step, where, store_rate_text(oc.stores, cfg_.network.lanes));
  }

  int32_t new_step(const Where& w, size_t term, int step, int steps, const Operand& lhs, const Operand& rhs,
                   const CompiledGemm& c) {
    ProgramStep r;
    r.layer = layer_;
    r.phase = w.phase;
    r.problem = w.index;
    r.result = w.prob->result;
    r.term = term;
    r.terms = w.prob->terms.size();
    r.step = step;
    r.steps = steps;
    r.lhs = tensor(lhs.tensor).name;
    r.rhs = tensor(rhs.tensor).name;
    r.mapping = c.describe();
    r.m = c.shape.m.size();
    r.k = c.shape.k.size();
    r.n = c.shape.n.size();
    r.macs = c.shape.macs();
    r.predicted = c.predicted_cycles;
    out_.steps.push_back(std::move(r));
    return static_cast<int32_t>(out_.steps.size() - 1);
  }
  ProgramStep& step_of(int32_t r) { return out_.steps[static_cast<size_t>(r)]; }

  // A step's result as the accumulator holds it.
  int32_t accumulator_tensor(const std::string& name, const CompiledGemm& c) {
    ProgramTensor t;
    t.name = name;
    t.kind = ProgramTensor::Kind::accumulator;
    t.labels = out_labels_of(c);
    t.dims = out_dims_of(c);
    return add_tensor(std::move(t));
  }

  // One contraction on its own: returns the intermediate (rounded or requantized; kept on chip
  // when `oc` says how, else stored in DRAM) unless it is the network's result.
  // `shared`: later networks read the result too (a saved one is then read again from DRAM). A
  // shared result with `oc` is both: STOREd into its next reader's images and saved for the later
  // ones (when the save finds rows; else it only leaves); it is checked here, its saved rows are
  // only read where a later reader fetches them.
  std::optional<Operand> emit_step(const Where& w, size_t term, int s, int nsteps, const PlannedStep& st,
                                   const Operand& lhs, const Operand& rhs, const OnChip* oc, Why why_not,
                                   bool shared = false) {
    const CompiledGemm& c = st.compiled.gemm;
    const Operand& A = st.compiled.lhs_is_a ? lhs : rhs;
    const Operand& B = st.compiled.lhs_is_a ? rhs : lhs;
    const int32_t r = new_step(w, term, s, nsteps, lhs, rhs, c);
    const bool overlap = overlaps_gemm_before({&A, &B});
    for (const Operand* o : {&A, &B})
      if (!o->on_chip && !by_dma(o->tensor)) saved_.fetch(ops_, o->tensor, r, overlap, gathers(o->tensor, c, o == &A));
    for (size_t i = 0; i < c.red_cfg_words(); ++i) ops_.push(c.program[i], r, Account::compute, 1);
    const int32_t z = accumulator_tensor(st.out, c);
    std::vector<Work> work;
    const size_t key = ++b_keys_;
    for (size_t j = 0; j < c.jobs.size(); ++j)
      work.push_back({.c = &c, .job = j, .a = A, .b = B, .b_key = key, .read = c.jobs[j].last_k,  // else the next K chunk accumulates
                      .probe = oc != nullptr && !shared, .z = z, .report = r});
    bool saved = (st.last || !oc || shared) && save_or_read(work);
    if (!saved && pretiled_.current()) {  // no room to stage the pieces: saved as the accumulator holds it
      pretiled_.cancel();
      saved = save_or_read(work);
    }
    // No rows to stage the save in: it leaves the host's way for every reader (the images' rows
    // on_chip_plan reserved stay reserved until the reader runs).
    if (oc && shared && !saved) {
      why_not = {Fate::no_room, "read by several contractions; no rows of the half to stage its save in beside its "
                                "next reader's images, so it leaves through the host for all"};
      oc = nullptr;
    }
    const bool both = oc && saved;
    if (both)
      for (Work& wk : work) {  // the scoreboard probes the rows too, to check the result before its reader runs
        wk.read = wk.save;
        wk.probe = true;
      }
    // A saved intermediate: the tensor its rows are read into is the next one made (below). Kept on
    // chip too, or gathered by its readers, no one reads them early.
    const int32_t into = saved && !st.last && !both && !gathering() ? static_cast<int32_t>(out_.tensors.size()) : -1;
    for (Work& wk : work) wk.read_into = into;
    emit_jobs(work, [&](size_t k) {
      if (oc) emit_store(*oc, k, r);
    }, overlap);
    ProgramStep& rep = step_of(r);
    rep.last = st.last;
    if (oc) {
      rep.store_predicted += total(oc->stores, [](const StorePlan& sp) { return sp.predicted_cycles; });  // after a save's STOREs
      rep.on_chip = true;
      rep.store = describe_store(*oc, s);
      for (size_t j = 0; j < oc->rows.size(); ++j)
        rep.images.push_back({static_cast<int64_t>(oc->half_of[j]), oc->rows[j].first, oc->rows[j].rows});
    } else if (!st.last) {
      rep.through_host_because = why_not.text + rep.through_host_because;  // after the save's own notes (save_rows)
      if (saved && !pretiled_.current() && !pretile_why_.empty())
        rep.through_host_because += "; gathered, not saved in its reader's layout: " + pretile_why_;
    } else if (rep.through_host_because.starts_with("; ")) {
      rep.through_host_because.erase(0, 2);  // a result's save notes stand alone
    }
    rep.fate = oc ? Fate::on_chip : st.last ? Fate::result : why_not.fate;
    rep.gemms = {record_of(c)};
    rep.a = {A.tensor};
    rep.b = {B.tensor};
    if (saved && st.last) {
      close_saved(r, z, c);
      return std::nullopt;
    }
    if (!saved || both) ops_.op({.code = OpCode::check, .report = r, .tensor = z});
    std::optional<Operand> res;
    if (!st.last) {
      ProgramTensor t = tensor(z);
      t.kind = ProgramTensor::Kind::intermediate;
      t.dram_bytes = dram_operand_bytes(cfg_.dtype);
      const int shift = out_shift(c);
      if (!oc && !saved) t.dram_addr = static_cast<int64_t>(dram_.allocate(t.numel(), t.dram_bytes));
      const int32_t id = add_tensor(std::move(t));
      if (into >= 0 && id != into) throw std::logic_error("internal: a saved intermediate's tensor id moved");
      step_of(r).intermediate = id;
      step_of(r).requant_shift = shift;
      step_of(r).saved = saved;
      if (saved) {  // read back (what was not read early), checked and finished where its consumer fetches it
        saved_.keep(id, r, out_convert(), shift, shared, both);
        if (gathering()) gathered_.made(id, r, c);
        if (const PretiledResults::Plan* pl = pretiled_.current()) {
          step_of(r).store = pl->describe();
          pretiled_.made(id);
        }
        if (!both) return Operand{id, false};
      }
      if (!oc)
        ops_.op({.code = OpCode::store, .convert = out_convert(), .report = r, .tensor = id, .source = z, .shift = shift});
      res = Operand{id, oc != nullptr};
    } else {
      store_result(z, r);
    }
    if (oc) emit_check_stored(*oc, res->tensor, r);
    ops_.op({.code = OpCode::finish, .report = r});
    return res;
  }

  // A final result to DRAM as accumulator words.
  void store_result(int32_t z, int32_t report) {
    ProgramTensor& t = out_.tensors[static_cast<size_t>(z)];
    t.dram_bytes = dram_result_bytes(cfg_.dtype);
    t.dram_addr = static_cast<int64_t>(dram_.allocate(t.numel(), t.dram_bytes));
    ops_.op({.code = OpCode::store, .report = report, .tensor = z, .source = z});
  }

  // Whether the last contractions of a sum's terms can add into the same accumulator rows: the
  // same output layout (labels, sizes, dataflow and grid, N tile, lanes, reduction pattern) and the
  // same output chunks, job by job (their K chunks may differ).
  static bool summable(const std::vector<Final>& finals) {
    const CompiledGemm& c0 = finals.front().gemm();
    auto chunks = [](const CompiledGemm& c) {
      std::vector<std::array<int64_t, 4>> v;
      for (const GemmJob& j : c.jobs)
        if (j.last_k) v.push_back({j.m0, j.m_count, j.nt0, j.nt_count});
      return v;
    };
    for (const Final& f : finals) {
      const CompiledGemm& c = f.gemm();
      const bool same_grid = c.map.os == c0.map.os && c.map.gm == c0.map.gm && c.map.n_tile == c0.map.n_tile;
      if (out_labels_of(c) != out_labels_of(c0) || out_dims_of(c) != out_dims_of(c0) || !same_grid ||
          c.col_lane != c0.col_lane || c.red_cfg != c0.red_cfg || chunks(c) != chunks(c0))
        return false;
    }
    return true;
  }

  // The terms of a sum (BT layers): their last contractions run back to back, output chunk by
  // output chunk, each later term's instructions accumulating onto the rows the earlier terms
  // left (acc_accumulate = 1), so the sum is formed in the accumulator and read once. The check
  // (on the last term's row) chains the golden model the same way.
  void emit_sum(const Where& w, const std::vector<Final>& finals) {
    const size_t T = finals.size();
    std::vector<int32_t> reps;
    for (size_t t = 0; t < T; ++t) {
      const Final& f = finals[t];
      const int n = static_cast<int>(f.plan.steps.size());
      reps.push_back(new_step(w, f.term, n - 1, n, f.lhs, f.rhs, f.gemm()));
      step_of(reps.back()).summed = true;
      step_of(reps.back()).last = true;
    }
    const int32_t last = reps.back();
    bool overlap = true;
    for (const Final& f : finals) overlap = overlap && overlaps_gemm_before({&f.a(), &f.b()});
    for (const Final& f : finals)
      for (const Operand* o : {&f.a(), &f.b()})
        if (!o->on_chip && !by_dma(o->tensor))
          saved_.fetch(ops_, o->tensor, last, overlap, gathers(o->tensor, f.gemm(), o == &f.a()));
    const CompiledGemm& c0 = finals[0].gemm();
    const int32_t z = accumulator_tensor(w.prob->result, c0);
    // Output chunk by output chunk (the accumulator holds one at a time), every term's jobs of it.
    std::vector<Work> work;
    std::vector<size_t> next(T, 0);  // each term's next job
    const size_t key0 = b_keys_ + 1;
    b_keys_ += T;
    while (next[0] < c0.jobs.size()) {  // summable: every term has the same output chunks
      for (size_t t = 0; t < T; ++t) {
        const CompiledGemm& c = finals[t].gemm();
        bool chunk_done = false;
        for (bool first = true; !chunk_done && next[t] < c.jobs.size(); first = false) {
          chunk_done = c.jobs[next[t]].last_k;
          work.push_back({.c = &c, .job = next[t], .a = finals[t].a(), .b = finals[t].b(), .b_key = key0 + t,
                          .accumulate = t > 0 && first,  // a term's later K chunks accumulate anyway
                          .read = chunk_done && t + 1 == T, .z = z, .report = reps[t]});
          ++next[t];
        }
      }
    }
    const bool saved = save_or_read(work);
    // RED_CFG once, identical for every term (summable): its cycles are term 0's, and the later
    // terms' model drops them.
    for (size_t i = 0; i < c0.red_cfg_words(); ++i) ops_.push(c0.program[i], reps[0], Account::compute, 1);
    emit_jobs(work, {}, overlap);
    for (size_t t = 1; t < T; ++t) step_of(reps[t]).predicted -= static_cast<int64_t>(c0.red_cfg_words());
    ProgramStep& chk = step_of(last);
    for (const Final& f : finals) {
      chk.gemms.push_back(record_of(f.gemm()));
      chk.a.push_back(f.a().tensor);
      chk.b.push_back(f.b().tensor);
    }
    if (saved) {
      for (size_t t = 0; t + 1 < T; ++t) ops_.op({.code = OpCode::finish, .report = reps[t]});
      close_saved(last, z, c0);
      return;
    }
    ops_.op({.code = OpCode::check, .report = last, .tensor = z});
    store_result(z, last);
    for (int32_t r : reps) ops_.op({.code = OpCode::finish, .report = r});
  }

  // On the DMA path the reads of a result (final, or an intermediate not kept on chip) become
  // saves when every job finds rows to wait in (place_saves); returns whether they did.
  bool save_or_read(std::vector<Work>& work) const {
    if (!opt_.dma) return false;
    for (Work& w : work) std::swap(w.save, w.read);
    if (place_saves(work)) return true;
    for (Work& w : work) std::swap(w.save, w.read);
    return false;
  }

  // A saved result's check (of the rounded words the DMA saved) and its step's end, after the
  // layer's saves (SavedResults::end_layer).
  void close_saved(int32_t r, int32_t z, const CompiledGemm& c) {
    step_of(r).saved = true;
    saved_.defer_result(r, z, out_convert(), out_shift(c));
  }

  const arch::ArchConfig& cfg_;
  ProgramOptions opt_;
  bool interleave_ = false;  // schedule() interleaves the networks
  SharedChoice shared_on_chip_;  // the shared results whose next readers may take them on chip (on_chip_plan)
  std::set<SharedResult> kept_shared_;  // those whose next readers did
  Program& out_;
  OpStream ops_;            // the program's ops, the FLIP parity and the hoist point
  UnifiedMemoryPlan mem_;   // what each half holds: images waiting for their consumers, B images
  SavedResults saved_;      // the DMA's saves and the reads of the saved rows
  int host_lanes_ = 0;
  int layer_ = 0;
  Movement movement_;  // what moving an intermediate costs, and whether it stays on chip
  DramMap dram_;       // the current layer's
  arch::DmaLayout dma_;
  GatheredResults gathered_;  // where saved intermediates sit in DRAM, for gathers into their readers
  PretiledResults pretiled_;  // intermediates saved in their reader's layout, for row-copy loads
  std::string pretile_why_;   // why the result being emitted is not saved in its readers' layouts
  size_t b_keys_ = 0;           // B tensors handed to emit_jobs so far
  // The layer's networks, planned before they are emitted (plan_layer), per (phase, problem, term).
  std::map<std::tuple<verif::Phase, int, size_t>, PlannedNetwork> planned_;
  ReusePlan reuse_{true};                  // the layer's: repeats, and the steps reading each result
  std::map<std::string, int32_t> reused_;  // per key read by more than one step: the tensor holding it
  PlanCache& plans_;
};

// The program of the layers with the networks interleaved (schedule) or not, and the shared results
// `shared` allows kept on chip for their next readers (ProgramBuilder); `kept` gets those whose
// readers did.
Program build(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
              const std::vector<verif::Phase>& phases, const ProgramOptions& options, bool interleave,
              const SharedChoice& shared, ProgramBuilder::PlanCache& plans, std::set<SharedResult>& kept) {
  Program p;
  p.config_yaml = arch::to_yaml(cfg);
  p.config_name = cfg.name;
  p.config_hash = program_sha256(p.config_yaml);
  p.options = options;
  p.interleaved = interleave;
  ProgramBuilder b(cfg, options, interleave, shared, plans, p);
  for (const std::string& file : layer_files) b.layer(file, phases);
  kept = b.kept_shared();
  return p;
}

}  // namespace

namespace {

// A program, the wall-cycle model's prediction for it (made once), and the shared results whose
// readers took them on chip.
struct Candidate {
  Program program;
  WallPrediction wall;
  std::set<SharedResult> kept;
  int64_t host_moves = 0;  // ops that move tensor data through the host (not the scoreboard's probes)
  int64_t own() const { return wall.total() - wall.probe; }  // without the scoreboard's probes
  // Where the host moves no tensor element by default (ProgramOptions::gather), a program in which
  // it still does (a fallback: a shared result kept on chip whose save finds no rows) loses to
  // every program in which it does not, however much shorter the model finds it: its host moves
  // are free permutations no real host makes. Else the shorter wins.
  bool beats(const Candidate& o, bool host_free) const {
    if (host_free && (host_moves == 0) != (o.host_moves == 0)) return host_moves == 0;
    return own() < o.own();
  }
};

// The ops of p that move tensor data through the host: image writes, accumulator reads and the
// host path's DRAM reads and writes, the scoreboard's probes left out.
int64_t host_moves(const Program& p) {
  return std::count_if(p.ops.begin(), p.ops.end(), [](const Op& o) {
    const bool moves = o.code == OpCode::write_rows || o.code == OpCode::read_acc || o.code == OpCode::fetch ||
                       o.code == OpCode::store || o.code == OpCode::read_saved;
    return moves && !o.is_probe();
  });
}

// The program for one mapping objective (compute or end-to-end).
Candidate compile_mapped(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
                         const std::vector<verif::Phase>& phases, const ProgramOptions& options) {
  ProgramBuilder::PlanCache plans;
  // Interleaving helps where a network's steps wait for their producers' results and another
  // network can compute meanwhile; where the DMA is the bottleneck it can reorder the traffic for
  // the worse. The wall-cycle model (within 0.13 % of the RTL) picks; a tie keeps the plain order.
  // The shorter of the sequential and the interleaved program (or the order asked for).
  auto candidate = [&](bool interleave, const SharedChoice& shared) {
    Candidate c;
    c.program = build(cfg, layer_files, phases, options, interleave, shared, plans, c.kept);
    c.wall = predict_wall(c.program, cfg);
    c.host_moves = host_moves(c.program);
    return c;
  };
  const bool host_free = options.gather && options.dma;
  auto fastest_order = [&](const SharedChoice& shared) {
    Candidate c = candidate(options.order == NetworkOrder::interleaved, shared);
    if (options.order != NetworkOrder::fastest) return c;
    Candidate interleaved = candidate(true, shared);
    if (host_free && (interleaved.host_moves == 0) != (c.host_moves == 0)) return c.host_moves == 0 ? c : interleaved;
    if (interleaved.wall.total() < c.wall.total()) return interleaved;
    return c;
  };
  Candidate best = fastest_order({});
  // A shared result's next reader taking it on chip saves that reader's DRAM read and image writes
  // but runs a STORE the controller waits for, and the later readers' reads of the saved rows no
  // longer overlap the reader's jobs: it pays for some results and costs for others (docs/program.md,
  // "A contraction computed once"). The wall-cycle model picks, result by result, without the
  // scoreboard's probes (the kept results' checks). The candidates are the results whose readers
  // take them on chip when every one may; the shortest of none on chip, every candidate, and none
  // of the candidates (the others keep the reason they leave for), then each candidate turned the
  // other way, kept where the program gets shorter. A tie keeps a result in DRAM.
  if (shared_on_chip_allowed(options)) {
    Candidate all = fastest_order({.any = true, .deny = {}});
    const std::set<SharedResult> candidates = all.kept;
    SharedChoice choice{.any = true, .deny = candidates};
    if (Candidate none_of_them = fastest_order(choice); none_of_them.beats(best, host_free)) best = std::move(none_of_them);
    if (all.beats(best, host_free)) {
      best = std::move(all);
      choice.deny.clear();
    }
    for (const SharedResult& r : candidates) {
      SharedChoice trial = choice;
      if (!trial.deny.erase(r)) trial.deny.insert(r);
      if (Candidate q = fastest_order(trial); q.beats(best, host_free)) {
        best = std::move(q);
        choice = std::move(trial);
      }
    }
  }
  return best;
}

}  // namespace

Program compile_program(const arch::ArchConfig& cfg, const std::vector<std::string>& layer_files,
                        const std::vector<verif::Phase>& phases, const ProgramOptions& options) {
  arch::validate(cfg);
  Candidate best;
  if (options.map_for != MapFor::fastest) {
    best = compile_mapped(cfg, layer_files, phases, options);
  } else {
    // Neither objective wins everywhere: pricing each step's movement (end-to-end) cuts the STOREs
    // and gathers around some contractions and, by its estimate alone, overloads the DMA around
    // others. The wall-cycle model judges the whole programs; a tie keeps compute. The program
    // records the objective it was mapped for.
    // The two are independent (each has its own plan cache), so the end-to-end one compiles on a
    // second thread: a fastest compile takes about as long as the slower objective alone.
    ProgramOptions c = options, e = options;
    c.map_for = MapFor::compute;
    e.map_for = MapFor::end_to_end;
    // (std::async's future waits in its destructor, so a throw here cannot leave it running.)
    std::future<Candidate> other =
        std::async(std::launch::async, [&] { return compile_mapped(cfg, layer_files, phases, e); });
    best = compile_mapped(cfg, layer_files, phases, c);
    if (Candidate alt = other.get(); alt.beats(best, options.gather && options.dma)) best = std::move(alt);
  }
  Program p = std::move(best.program);
  verify_program(p, cfg, "the compiled program");  // a refusal here is a compiler bug
  return p;
}

}  // namespace fetta::mapper
