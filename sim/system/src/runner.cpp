#include "sim/system/runner.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <cstring>
#include <array>
#include <map>
#include <optional>
#include <numeric>
#include <set>

#include "arch/isa.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/sys/system.hpp"
#include "mapper/compile.hpp"
#include "mapper/cost_model.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/placement.hpp"
#include "mapper/search.hpp"
#include "mapper/store.hpp"
#include "sim/system/bench.hpp"
#include "sim/system/dram.hpp"
#include "verif/contract.hpp"
#include "verif/npy.hpp"
#include "verif/numerics.hpp"

namespace fetta::sim::system {

namespace {

using verif::Tensor;

// RunOptions keeps a bool (its header stays free of mapper); the objective as the mapper names it.
mapper::MapFor map_for(const RunOptions& o) { return o.map_end_to_end ? mapper::MapFor::end_to_end : mapper::MapFor::compute; }

// An operand in flight: its labels, where the RTL's copy is in DRAM and the golden model's copy
// (they are equal when everything matches; kept apart so a mismatch shows once).
struct Operand {
  std::string name;
  std::vector<std::string> labels;
  std::vector<int64_t> dims;
  uint64_t addr = 0;  // the RTL side's element bits, operand_bytes each, row-major in `labels`
  bool on_chip = false;  // the RTL side's copy is already in the next contraction's operand image
  Tensor<uint16_t> golden;
};

// Fixed-point scale of the integer operands: value = integer / 2^frac_bits. Inputs are in [-1, 1],
// so int16 operands are in [-256, 256] and int8 operands in [-64, 64].
int frac_bits(arch::DataType t) { return t == arch::DataType::int8 ? 6 : 8; }

// Requantization of an integer intermediate: arithmetic shift right by frac_bits + ceil(log2 K),
// then saturation to the operand type (the shifted values stay within the inputs' range).
int requant_shift(arch::DataType t, int64_t K) {
  int b = 0;
  while ((int64_t{1} << b) < K) ++b;
  return frac_bits(t) + b;
}

// Integer operands travel as their two's-complement bits in the operand width (8 or 16), as the
// unified memory stores them; bf16 as its 16 bits.
uint16_t int_operand(int64_t q, arch::DataType t) {
  if (t == arch::DataType::int8) return static_cast<uint8_t>(static_cast<int8_t>(std::clamp<int64_t>(q, -128, 127)));
  return static_cast<uint16_t>(static_cast<int16_t>(std::clamp<int64_t>(q, -32768, 32767)));
}
int64_t int_value(uint16_t bits, arch::DataType t) {
  return t == arch::DataType::int8 ? static_cast<int8_t>(static_cast<uint8_t>(bits)) : static_cast<int16_t>(bits);
}
uint16_t requant(int64_t v, int shift, arch::DataType t) { return int_operand(v >> shift, t); }

// v modulo 2^bits, sign-extended (an integer accumulator's wrap-around).
int64_t wrap_signed(int64_t v, int bits) {
  if (bits >= 64) return v;
  const auto u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  return (u >> (bits - 1)) & 1U ? static_cast<int64_t>(u | (~uint64_t{0} << bits)) : static_cast<int64_t>(u);
}

uint16_t to_operand(double v, arch::DataType t) {
  if (t == arch::DataType::bf16) return verif::bf16_from_double(v);
  return int_operand(std::llround(std::ldexp(v, frac_bits(t))), t);
}

// The golden integer contraction of two operand images, widened to int64 for the comparison.
Tensor<int64_t> contract_int(const Tensor<uint16_t>& a, const Tensor<uint16_t>& b, const std::vector<std::string>& out,
                             arch::DataType t) {
  if (t == arch::DataType::int8) {
    auto to_i8 = [](const Tensor<uint16_t>& x) {
      return verif::map_values<int8_t>(x, [](uint16_t v) { return static_cast<int8_t>(int_value(v, arch::DataType::int8)); });
    };
    return verif::map_values<int64_t>(verif::contract_int8(to_i8(a), to_i8(b), out), [](int32_t v) { return int64_t{v}; });
  }
  auto to_i16 = [](const Tensor<uint16_t>& x) {
    return verif::map_values<int16_t>(x, [](uint16_t v) { return static_cast<int16_t>(v); });
  };
  return verif::contract_int16(to_i16(a), to_i16(b), out);
}

// Tensors in DRAM as mapper::plan_layers allocates them (mapper/compile.hpp).
using mapper::dram_extent;
int operand_bytes(arch::DataType t) { return mapper::dram_operand_bytes(t); }
int result_bytes(arch::DataType t) { return mapper::dram_result_bytes(t); }

std::vector<uint8_t> pack(const std::vector<uint64_t>& v, int bytes) {
  std::vector<uint8_t> out(v.size() * static_cast<size_t>(bytes));
  for (size_t i = 0; i < v.size(); ++i)
    for (int b = 0; b < bytes; ++b) out[i * static_cast<size_t>(bytes) + static_cast<size_t>(b)] = static_cast<uint8_t>(v[i] >> (8 * b));
  return out;
}
std::vector<uint64_t> unpack(const std::vector<uint8_t>& d, int bytes) {
  std::vector<uint64_t> out(d.size() / static_cast<size_t>(bytes), 0);
  for (size_t i = 0; i < out.size(); ++i)
    for (int b = 0; b < bytes; ++b) out[i] |= uint64_t{d[i * static_cast<size_t>(bytes) + static_cast<size_t>(b)]} << (8 * b);
  return out;
}
template <typename T>
std::vector<uint64_t> words_of(const Tensor<T>& t) {
  std::vector<uint64_t> w;
  for (T v : t.values()) w.push_back(static_cast<uint64_t>(v));
  return w;
}

std::string safe(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return s;
}

class Runner {
 public:
  Runner(const RunOptions& opt, DramInitiator& dram) : opt_(opt), isa_(opt.cfg), dram_(dram) {}

  void host(SystemBench& bench) {
    bench_ = &bench;
    for (const std::string& file : opt_.layers) run_layer(file);
  }

  std::vector<StepReport> reports;
  nlohmann::json manifest = nlohmann::json::array();

 private:
  void dump(const std::string& file, const std::string& tensor, const std::string& role, const auto& t,
            const std::string& dtype) {
    if (opt_.dump_dir.empty()) return;
    std::filesystem::create_directories(opt_.dump_dir);
    verif::save_npy(opt_.dump_dir + "/" + file, t);
    manifest.push_back({{"file", file}, {"tensor", tensor}, {"role", role}, {"labels", t.labels()},
                        {"shape", t.shape()}, {"dtype", dtype}});
  }

  void run_layer(const std::string& file) {
    const verif::LayerSpec spec = verif::load_layer(file);
    const arch::DataType dt = opt_.cfg.dtype;
    verif::TensorMap values = verif::random_cores(spec, opt_.seed);
    values["X"] = verif::random_input(spec, opt_.seed);
    values["dY"] = verif::random_output_grad(spec, opt_.seed);
    std::map<std::string, Tensor<uint16_t>> bits;
    const std::string odt = dt == arch::DataType::bf16 ? "bf16 bits (<u2)"
                            : dt == arch::DataType::int8 ? "int8 bits in <u2 (low byte), value/64"
                                                         : "int16 (<i2 as <u2), value/256";
    for (const auto& [name, t] : values) {
      bits[name] = verif::map_values<uint16_t>(t, [dt](double v) { return to_operand(v, dt); });
      dump(safe(spec.name + "_in_" + name) + ".npy", name, "input", bits[name], odt);
    }
    inputs_ = bits;
    dram_next_ = 0;  // the layer's tensors from address 0: its inputs at first use, then every result
    dram_inputs_.clear();
    for (verif::Phase ph : opt_.phases) {
      const auto problems = verif::phase_problems(spec, ph);
      for (const auto& prob : problems) {
        if (prob.terms.size() == 1) {
          run_network(spec, ph, prob, 0, bits, false);
          continue;
        }
        std::vector<Final> finals;
        for (size_t t = 0; t < prob.terms.size(); ++t) finals.push_back(*run_network(spec, ph, prob, t, bits, true));
        if (!opt_.terms_separately && summable(finals)) {
          run_sum(spec, ph, prob, finals);
        } else {  // each term's result on its own (the report has no "summed on chip" rows)
          for (const Final& f : finals) {
            const int n = static_cast<int>(f.plan.steps.size());
            run_step(spec, ph, prob, f.term, n - 1, n, f.step(), f.lhs, f.rhs);
          }
        }
      }
    }
  }

  // A network's last contraction, deferred so that the terms of a sum can run back to back.
  struct Final {
    mapper::NetworkPlan plan;
    size_t term = 0;
    Operand lhs, rhs;

    const mapper::PlannedStep& step() const { return plan.steps.back(); }
    const mapper::CompiledGemm& gemm() const { return step().compiled.gemm; }
    const Operand& a() const { return step().compiled.lhs_is_a ? lhs : rhs; }  // the streamed operand
    const Operand& b() const { return step().compiled.lhs_is_a ? rhs : lhs; }  // the held one
  };

  // One job of an instruction sequence: its operand images come from `a` and `b`; `b_key` names
  // the B tensor (the host skips rewriting a B image the free half already holds).
  struct Work {
    const mapper::CompiledGemm* c = nullptr;
    size_t job = 0;
    const Tensor<uint16_t>* a = nullptr;
    const Tensor<uint16_t>* b = nullptr;
    size_t b_key = 0;
    bool accumulate = false;       // force acc_accumulate (a later term of a sum)
    bool read = false;             // read the job's accumulator rows into *z afterwards
    bool probe = false;            // that read is the scoreboard's (the result stays on chip): not host time
    bool a_on_chip = false, b_on_chip = false;  // the image is in place already (a STORE wrote it)
    std::vector<uint64_t>* z = nullptr;
    int64_t cycles = 0, host = 0;  // filled in: the controller's busy cycles and host cycles of this job
  };

  // Which B image a job reads (its N and K tiles): jobs over M with the same one share it, so the
  // host writes it into a half once (run_jobs) and the movement estimate counts it once.
  static std::array<int64_t, 2> b_image(const mapper::GemmJob& j) { return {j.nt0, j.kt0}; }

  static std::vector<std::string> out_labels_of(const mapper::CompiledGemm& c) {
    std::vector<std::string> l = c.shape.m.labels;
    l.insert(l.end(), c.shape.n.labels.begin(), c.shape.n.labels.end());
    return l;
  }
  static std::vector<int64_t> out_dims_of(const mapper::CompiledGemm& c) {
    std::vector<int64_t> d = c.shape.m.dims;
    d.insert(d.end(), c.shape.n.dims.begin(), c.shape.n.dims.end());
    return d;
  }

  // Per job: operand images into the free half, FLIP, the GEMM, wait; the finished rows out of
  // the accumulator when asked; then `after(job)` when given (the STOREs of a finished chunk).
  void run_jobs(std::vector<Work>& work, const std::function<void(size_t)>& after = {}) {
    const uint16_t pad = opt_.cfg.dtype == arch::DataType::bf16 ? 0x8000 : 0;
    for (Work& w : work) {
      const mapper::CompiledGemm& c = *w.c;
      const mapper::GemmJob& job = c.jobs[w.job];
      const int64_t host0 = bench_->host_cycles();
      const uint64_t cyc0 = bench_->cycle_count();
      // The job computes on the half the host writes now (the free one); the halves alternate.
      const size_t half = (flips_ + 1) % 2;
      if (!w.a_on_chip) {
        const mapper::RowImage ia = mapper::layout_a(c, *w.a, pad, w.job);
        bench_->write_rows(ia.first_row, ia.rows, ia.lanes, ia.data);
      }
      const std::array<int64_t, 2> img = b_image(job);
      const std::array<int64_t, 3> key{static_cast<int64_t>(w.b_key), img[0], img[1]};
      if (!w.b_on_chip && b_in_half_[half] != key) {
        const mapper::RowImage ib = mapper::layout_b(c, *w.b, w.job);
        bench_->write_rows(ib.first_row, ib.rows, ib.lanes, ib.data);
        b_in_half_[half] = key;
      }
      bench_->push(arch::encode_flip(isa_));
      ++flips_;
      arch::GemmInstr g = job.instr;
      if (w.accumulate) g.acc_accumulate = true;
      bench_->push(arch::encode_gemm(isa_, g));
      bench_->wait_idle(opt_.timeout_cycles);
      if (w.read) {
        std::vector<int64_t> rows(static_cast<size_t>(mapper::acc_rows(c, job)));
        std::iota(rows.begin(), rows.end(), int64_t{0});
        bench_->count_host(!w.probe);
        const std::vector<uint64_t> got = bench_->read_acc(rows, mapper::acc_lanes(c));
        bench_->count_host(true);
        mapper::gather_result(c, job, got, *w.z);
      }
      w.cycles = static_cast<int64_t>(bench_->cycle_count() - cyc0);
      w.host = bench_->host_cycles() - host0;
      if (after) after(w.job);
    }
    if (bench_->error()) throw std::runtime_error("the controller raised its error flag (illegal instruction or queue overflow)");
  }

  void push_red_cfg(const mapper::CompiledGemm& c) {
    for (size_t i = 0; i < c.red_cfg_words(); ++i) bench_->push(c.program[i]);
  }

  StepReport new_report(const verif::LayerSpec& spec, verif::Phase ph, const verif::PhaseProblem& prob, size_t term,
                        int step, int steps, const Operand& lhs, const Operand& rhs, const mapper::CompiledGemm& c) const {
    StepReport rep;
    rep.layer = spec.name;
    rep.phase = verif::to_string(ph);
    rep.problem = prob.result;
    rep.term = term;
    rep.terms = prob.terms.size();
    rep.step = step;
    rep.steps = steps;
    rep.lhs = lhs.name;
    rep.rhs = rhs.name;
    rep.mapping = c.describe();
    rep.m = c.shape.m.size();
    rep.k = c.shape.k.size();
    rep.n = c.shape.n.size();
    rep.macs = c.shape.macs();
    rep.predicted = c.predicted_cycles;
    rep.elements = rep.m * rep.n;
    return rep;
  }

  void finish_report(StepReport& rep, const sc_core::sc_time& dram_time) {
    rep.dram_bytes_read = static_cast<int64_t>(dram_read_);
    rep.dram_bytes_written = static_cast<int64_t>(dram_written_);
    rep.dram_bytes = rep.dram_bytes_read + rep.dram_bytes_written;
    dram_read_ = dram_written_ = 0;
    rep.dram_cycles = static_cast<int64_t>(std::ceil(dram_time.to_seconds() * opt_.cfg.clock_mhz * 1e6 - 1e-6));
    reports.push_back(rep);
    progress(rep);
  }

  // Runs the contractions of one term of a problem in the order of its plan. With defer_final, the
  // last contraction is not run but returned (its operands are ready in DRAM).
  std::optional<Final> run_network(const verif::LayerSpec& spec, verif::Phase ph, const verif::PhaseProblem& prob,
                                   size_t term, const std::map<std::string, Tensor<uint16_t>>& bits, bool defer_final) {
    mapper::NetworkPlan plan = mapper::plan_network(
        opt_.cfg, prob, term,
        [this](const mapper::CompiledGemm* p, const mapper::CompiledGemm& c, bool as_a) {
          // Mapped for compute with every result through the host: no tie is worth breaking.
          return opt_.through_host && !opt_.map_end_to_end ? 0 : movement_cost(p, c, as_a);
        },
        map_for(opt_));
    const mapper::Problem& p = plan.problem;
    std::map<mapper::NodeSet, Operand> live;
    for (int i = 0; i < p.size(); ++i) {
      Operand o;
      o.name = p.node_names[static_cast<size_t>(i)];
      for (int l : p.node_modes[static_cast<size_t>(i)]) {
        o.labels.push_back(p.labels[static_cast<size_t>(l)]);
        o.dims.push_back(static_cast<int64_t>(p.dims[static_cast<size_t>(l)]));
      }
      o.golden = bits.at(o.name).relabel(o.labels);
      o.addr = input_address(o.name, bits.at(o.name));
      live[mapper::NodeSet{1} << i] = std::move(o);
    }
    const int nsteps = static_cast<int>(plan.steps.size());
    parked_.clear();
    for (int s = 0; s < nsteps; ++s) {
      const mapper::PlannedStep& st = plan.steps[static_cast<size_t>(s)];
      Operand lhs = live.at(st.left), rhs = live.at(st.right);
      live.erase(st.left);
      live.erase(st.right);
      if (st.last && defer_final) {
        Final f;
        f.term = term;
        f.lhs = std::move(lhs);
        f.rhs = std::move(rhs);
        f.plan = std::move(plan);
        return f;
      }
      std::string why;
      const std::optional<OnChip> oc = on_chip_plan(plan, s, defer_final, why);
      std::optional<Operand> res = run_step(spec, ph, prob, term, s, nsteps, st, lhs, rhs, oc ? &*oc : nullptr, why);
      if (res) live[st.left | st.right] = std::move(*res);
    }
    return std::nullopt;
  }

  // A result kept on chip: STORE programs write it, rounded or requantized, into the operand
  // images of the contraction that consumes it (right after the producer: the accumulator is
  // overwritten by the next contraction), each into the half its consumer job computes on.
  struct OnChip {
    const mapper::PlannedStep* consumer = nullptr;
    int consumer_step = 0;
    bool as_a = true;
    std::vector<mapper::StorePlan> stores;  // one per job of the consumer (in parts: one per producer chunk)
    std::vector<size_t> half_of;            // per consumer job: the half it computes on
    std::vector<size_t> producer_half;      // per producer job: the half it computes on
    std::vector<mapper::RowRange> rows;     // per consumer job: where its image is
  };

  // An image a STORE wrote that waits in a half for its consumer (a step of the current network).
  struct Parked {
    size_t half = 0;
    mapper::RowRange rows;
    int consumer = 0;
  };

  // The rows job `j` of c writes into its half: its A and B images.
  static std::array<mapper::RowRange, 2> footprint(const mapper::CompiledGemm& c, size_t j) {
    const mapper::GemmJob& jb = c.jobs[j];
    return {mapper::RowRange{jb.a_base, mapper::image_shape(c, true, j).rows},
            mapper::RowRange{jb.b_base, mapper::image_shape(c, false, j).rows}};
  }

  // A quantity summed over the STORE programs of one result (one per consumer job).
  template <typename F>
  static int64_t total(const std::vector<mapper::StorePlan>& plans, F of) {
    int64_t n = 0;
    for (const mapper::StorePlan& sp : plans) n += static_cast<int64_t>(of(sp));
    return n;
  }

  // Whether step s's result can stay on chip (docs/architecture.md §5): its consumer is not a
  // deferred final of a sum, every job's image finds rows in the half that job computes on which
  // nothing writes until the job runs (the images of the jobs in between, the consumer's other
  // operand, images waiting for other consumers), plan_store can join the two layouts and the STORE
  // is cheaper than the host path. On success the consumer's images may have moved (the plan's step
  // is updated) and the images are registered as parked. Otherwise `why` says why not.
  std::optional<OnChip> on_chip_plan(mapper::NetworkPlan& plan, int s, bool defer_final, std::string& why) {
    why.clear();
    const int nsteps = static_cast<int>(plan.steps.size());
    const mapper::PlannedStep& st = plan.steps[static_cast<size_t>(s)];
    std::erase_if(parked_, [s](const Parked& pk) { return pk.consumer <= s; });  // read by now (or by s)
    if (st.last) return std::nullopt;  // a final result: always read out
    if (opt_.through_host) {
      why = "--through-host";
      return std::nullopt;
    }
    int t = s + 1;
    while (t < nsteps && plan.steps[static_cast<size_t>(t)].lhs != st.out && plan.steps[static_cast<size_t>(t)].rhs != st.out) ++t;
    if (t == nsteps) throw std::logic_error(fmt::format("internal: no step consumes {}", st.out));
    mapper::PlannedStep& next = plan.steps[static_cast<size_t>(t)];
    if (next.last && defer_final) {
      why = "its consumer is a term's last contraction, run later with the other terms";
      return std::nullopt;
    }
    const bool as_a = (next.lhs == st.out) == next.compiled.lhs_is_a;
    std::vector<const mapper::CompiledGemm*> between;
    for (int u = s + 1; u < t; ++u) between.push_back(&plan.steps[static_cast<size_t>(u)].compiled.gemm);
    mapper::CompiledGemm c = next.compiled.gemm;
    std::optional<OnChip> oc = place_and_plan(st.compiled.gemm, c, as_a, flips_, between, parked_, why);
    if (!oc) return std::nullopt;
    next.compiled.gemm = std::move(c);
    oc->consumer = &next;
    oc->consumer_step = t;
    for (size_t j = 0; j < oc->half_of.size(); ++j) parked_.push_back({oc->half_of[j], oc->rows[j], t});
    return oc;
  }

  // Places consumer c's images of p's result, each job's in the half it will compute on, clear of
  // what is written there before it runs (the producer's jobs after its first output chunk, the
  // `between` contractions' jobs, the `waiting` images, the consumer's earlier jobs and its other
  // operand; c's bases move where needed), and plans the STOREs into them, when they take fewer
  // cycles than the host path they replace; else nullopt and why not. `flips`: FLIPs pushed before
  // the producer's first job (the i-th job from there computes on half (flips + 1 + i) % 2).
  // `estimate`: as store_that_pays.
  std::optional<OnChip> place_and_plan(const mapper::CompiledGemm& p, mapper::CompiledGemm& c, bool as_a, int64_t flips,
                                       const std::vector<const mapper::CompiledGemm*>& between,
                                       const std::vector<Parked>& waiting, std::string& why, bool estimate = false) const {
    OnChip oc;
    oc.as_a = as_a;
    std::array<std::vector<mapper::RowRange>, 2> taken;
    int64_t i = flips;  // FLIPs before the next job
    const std::vector<size_t> chunks = mapper::output_chunks(p);
    const size_t first_chunk_end = chunks.front();
    for (size_t k = 0; k < p.jobs.size(); ++k, ++i) {
      oc.producer_half.push_back(static_cast<size_t>((i + 1) % 2));
      if (k > first_chunk_end)  // runs after the first STOREs
        for (const mapper::RowRange& r : footprint(p, k)) taken[oc.producer_half.back()].push_back(r);
    }
    for (const mapper::CompiledGemm* cu : between)
      for (size_t j = 0; j < cu->jobs.size(); ++j, ++i)
        for (const mapper::RowRange& r : footprint(*cu, j)) taken[static_cast<size_t>((i + 1) % 2)].push_back(r);
    for (const Parked& pk : waiting) taken[pk.half].push_back(pk.rows);
    for (size_t j = 0; j < c.jobs.size(); ++j) oc.half_of.push_back(static_cast<size_t>((i + 1 + static_cast<int64_t>(j)) % 2));

    const int64_t half_rows = opt_.cfg.memory.unified_depth / 2;
    const size_t own = as_a ? 0 : 1;
    const std::vector<size_t>& half_of = oc.half_of;
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      std::array<mapper::RowRange, 2> fp = footprint(c, j);
      std::vector<mapper::RowRange> clear_of = taken[half_of[j]];
      clear_of.push_back(fp[1 - own]);
      const std::optional<int64_t> at = mapper::place_rows(half_rows, fp[own].rows, fp[own].first, clear_of);
      if (!at) {
        why = fmt::format("no room for its consumer's job {} image ({} rows) in a half of {} rows beside what {} "
                          "write there before it runs",
                          j, fp[own].rows, half_rows,
                          !between.empty() ? fmt::format("the {} contraction(s) in between and the waiting images", between.size())
                          : chunks.size() > 1 ? std::string("the producer's later jobs and the consumer's earlier ones")
                                              : std::string("the consumer's earlier jobs"));
        return std::nullopt;
      }
      if (*at != fp[own].first) mapper::relocate_image(opt_.cfg, c, j, as_a, *at);
      // The consumer's later jobs in this half must not overwrite this job's images.
      for (const mapper::RowRange& r : footprint(c, j)) taken[half_of[j]].push_back(r);
      oc.rows.push_back(footprint(c, j)[own]);
    }
    std::optional<std::vector<mapper::StorePlan>> sp = store_that_pays(p, c, as_a, why, estimate);
    if (!sp) return std::nullopt;
    oc.stores = std::move(*sp);
    return oc;
  }

  // The STOREs of p's result into consumer c's operand images, one per job of c, when the
  // hardware can place them there and they take fewer cycles than the way through the host they
  // replace; else why not. `estimate`: the caller wants only the cost, so planning stops as soon
  // as the STOREs planned so far cost the host path (the planner's look ahead asks often).
  std::optional<std::vector<mapper::StorePlan>> store_that_pays(const mapper::CompiledGemm& p,
                                                                const mapper::CompiledGemm& c, bool as_a,
                                                                std::string& why, bool estimate = false) const {
    const uint32_t shift =
        opt_.cfg.dtype == arch::DataType::bf16 ? 0 : static_cast<uint32_t>(requant_shift(opt_.cfg.dtype, p.shape.k.size()));
    const int64_t host = host_path_cycles(p, c, as_a);
    std::vector<mapper::StorePlan> plans;
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      plans.push_back(mapper::plan_store(opt_.cfg, p, c, as_a, j, shift, true));
      if (!plans.back().ok()) {
        why = plans.back().why_not;
        return std::nullopt;
      }
      if (estimate && store_cost(plans) >= host) {
        why = "STORE would cost the host path";
        return std::nullopt;
      }
    }
    const int64_t store = store_cost(plans);
    if (store >= host) {
      why = fmt::format("STORE would take {} cycles ({}), the host and DRAM {}", store, moves_text(plans), host);
      return std::nullopt;
    }
    return plans;
  }

  // "800 moves of 4 lane(s)"; with diagonal moves (whose width varies) "800 moves (768 diagonal)".
  static std::string moves_text(const std::vector<mapper::StorePlan>& plans) {
    const int64_t moves = total(plans, [](const mapper::StorePlan& sp) { return sp.moves; });
    const int64_t diag = total(plans, [](const mapper::StorePlan& sp) { return sp.diagonal_moves; });
    if (diag == 0) return fmt::format("{} moves of {} lane(s)", moves, plans[0].program[0].count);
    return fmt::format("{} moves ({} diagonal: an element per bank)", moves, diag);
  }

  // STORE programs' cost: their busy cycles and the host's pushes of their instructions.
  int64_t store_cost(const std::vector<mapper::StorePlan>& plans) const {
    return total(plans, [this](const mapper::StorePlan& sp) {
      return sp.predicted_cycles + static_cast<int64_t>(sp.program.size()) * isa_.words();
    });
  }

  // Host cycles writing consumer c's A (a_operand) or B images through the host port, as run_jobs
  // does: A for every job, B only when the half the job computes on (they alternate) does not
  // hold that job's B image already (its N and K tiles; jobs over M share it).
  int64_t image_write_cycles(const mapper::CompiledGemm& c, bool a_operand) const {
    const int H = bench_->host_lanes();
    int64_t cyc = 0;
    std::array<std::array<int64_t, 2>, 2> held{{{-1, -1}, {-1, -1}}};  // per half: the B image it holds
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      if (!a_operand) {
        if (held[j % 2] == b_image(c.jobs[j])) continue;
        held[j % 2] = b_image(c.jobs[j]);
      }
      const mapper::ImageShape img = mapper::image_shape(c, a_operand, j);
      cyc += img.rows * ((img.lanes + H - 1) / H);
    }
    return cyc;
  }

  // The data movement around step c, for plan_network's choice of mapping (mapper::MapFor): for
  // a consumer of the previous result p, the STORE (when it pays; not with --through-host) or the
  // host path of that operand, plus the host writes of the other operand's images; without p the
  // host writes of both. c runs next after p (plan_network asks about adjacent steps); images
  // waiting for later consumers are not known yet.
  int64_t movement_cost(const mapper::CompiledGemm* p, const mapper::CompiledGemm& c, bool as_a) const {
    if (!p) return image_write_cycles(c, true) + image_write_cycles(c, false);
    std::string why;
    mapper::CompiledGemm placed = c;
    const std::optional<OnChip> oc = opt_.through_host ? std::nullopt : place_and_plan(*p, placed, as_a, 0, {}, {}, why, true);
    return (oc ? store_cost(oc->stores) : host_path_cycles(*p, c, as_a)) + image_write_cycles(c, !as_a);
  }

  // The cycles an intermediate takes through the host: reading its accumulator rows, the DRAM
  // round trip (a write and a read), writing the consumer's operand images (every job).
  int64_t host_path_cycles(const mapper::CompiledGemm& p, const mapper::CompiledGemm& c, bool as_a) const {
    const arch::ArchConfig& cfg = opt_.cfg;
    const int H = bench_->host_lanes();
    std::set<int> groups;
    for (int l : mapper::acc_lanes(p)) groups.insert(l / H);
    int64_t cyc = 0;
    for (const mapper::GemmJob& j : p.jobs)
      if (j.last_k) cyc += mapper::acc_rows(p, j) * static_cast<int64_t>(groups.size());
    cyc += image_write_cycles(c, as_a);
    const auto bytes = static_cast<uint64_t>(p.shape.m.size() * p.shape.n.size() * operand_bytes(cfg.dtype));
    const double ns = 2 * dram_transfer_ns(cfg.dram, bytes);
    return cyc + static_cast<int64_t>(std::ceil(ns * cfg.clock_mhz / 1000.0));
  }

  // After the producer's job k: pushes the parts of the STORE programs that store the output
  // chunk k completed, each consumer job's image into the half that job computes on (the free one,
  // or the compute half when the consumer job computes there: after the producer's last job, whose
  // operands are dead by then), and waits for them. Returns the cycles they took.
  int64_t run_store(const OnChip& oc, size_t k) {
    const uint64_t cyc0 = bench_->cycle_count();
    bool any = false;
    for (size_t j = 0; j < oc.stores.size(); ++j) {
      const mapper::StorePlan& sp = oc.stores[j];
      for (size_t part = 0; part < sp.after_job.size(); ++part) {
        if (sp.after_job[part] != k) continue;
        for (size_t n = sp.part_begin[part]; n < sp.part_end(part); ++n) {
          arch::StoreInstr st = sp.program[n];
          st.other_half = oc.half_of[j] != oc.producer_half[k];
          bench_->push(arch::encode_store(isa_, st));
          any = true;
        }
      }
    }
    if (!any) return 0;
    // The images are placed clear of every job still to run; after the last job nothing of the
    // producer's B is needed again.
    if (k + 1 == oc.producer_half.size()) b_in_half_[0] = b_in_half_[1] = {-1, -1, -1};
    bench_->wait_idle(opt_.timeout_cycles);
    return static_cast<int64_t>(bench_->cycle_count() - cyc0);
  }

  // The images the STOREs wrote, read back through the host port (not counted: the scoreboard's
  // probe), against the golden operand laid out the same way. The host port reaches only the
  // free half: an image in the producer's half is read between two FLIPs that put the halves back.
  int64_t check_stored(const OnChip& oc, const Tensor<uint16_t>& golden) {
    const mapper::CompiledGemm& c = oc.consumer->compiled.gemm;
    const uint16_t pad = opt_.cfg.dtype == arch::DataType::bf16 ? 0x8000 : 0;
    int64_t bad = 0;
    bench_->count_host(false);
    for (size_t j = 0; j < oc.stores.size(); ++j) {
      const mapper::RowImage img = oc.as_a ? mapper::layout_a(c, golden, pad, j) : mapper::layout_b(c, golden, j);
      const bool flip = oc.half_of[j] == oc.producer_half.back();  // the compute half
      if (flip) {
        bench_->push(arch::encode_flip(isa_));
        bench_->wait_idle(opt_.timeout_cycles);
      }
      const std::vector<uint16_t> got = bench_->read_rows(img.first_row, img.rows, img.lanes);
      if (flip) {
        bench_->push(arch::encode_flip(isa_));
        bench_->wait_idle(opt_.timeout_cycles);
      }
      for (size_t i = 0; i < got.size(); ++i) bad += got[i] != img.data[i];
    }
    bench_->count_host(true);
    return bad;
  }

  // "<moves_text> in <n> instruction(s)[ of <k> affine nests], as A of s<t>"
  // and where the images wait (the nests only when some job's program is more than one).
  std::string describe_store(const OnChip& oc, int s) const {
    const mapper::CompiledGemm& c = oc.consumer->compiled.gemm;
    std::string where;
    const size_t n = oc.stores.size();
    const bool both = std::count(oc.half_of.begin(), oc.half_of.end(), oc.half_of[0]) != static_cast<int64_t>(n);
    if (n > 1) where += fmt::format(" (its {} jobs{})", n, both ? ": both halves" : "");
    const size_t parts = oc.stores[0].after_job.size();
    if (parts > 1) where += fmt::format(", one part after each of the producer's {} output chunks", parts);
    if (oc.consumer_step > s + 1) where += fmt::format(", {} contraction(s) later", oc.consumer_step - s - 1);
    std::vector<int64_t> moved;  // first rows of the images away from the compiler's place
    for (const mapper::RowRange& r : oc.rows)
      if (r.first != (oc.as_a ? c.a_base : c.b_base)) moved.push_back(r.first);
    if (!moved.empty()) where += fmt::format(", {} image(s) moved to row(s) {}", moved.size(), fmt::join(moved, "/"));
    const int64_t nests = total(oc.stores, [](const mapper::StorePlan& sp) { return sp.nests; });
    const int64_t one_each = total(oc.stores, [](const mapper::StorePlan& sp) { return sp.part_begin.size(); });
    return fmt::format("{} in {} instruction(s){}, as {} of s{}{}", moves_text(oc.stores),
                       total(oc.stores, [](const mapper::StorePlan& sp) { return sp.program.size(); }),
                       nests > one_each ? fmt::format(" of {} affine nests", nests) : "", oc.as_a ? "A" : "B",
                       oc.consumer_step, where);
  }

  // One contraction on its own: returns the intermediate (rounded or requantized; kept on chip
  // when `oc` says how, else stored in DRAM) unless it is the network's result.
  std::optional<Operand> run_step(const verif::LayerSpec& spec, verif::Phase ph, const verif::PhaseProblem& prob,
                                  size_t term, int s, int nsteps, const mapper::PlannedStep& st, const Operand& lhs,
                                  const Operand& rhs, const OnChip* oc = nullptr, const std::string& why_not = {}) {
    const arch::DataType dt = opt_.cfg.dtype;
    const bool last = st.last;
    const mapper::CompiledGemm& c = st.compiled.gemm;
    const Operand& A = st.compiled.lhs_is_a ? lhs : rhs;
    const Operand& B = st.compiled.lhs_is_a ? rhs : lhs;
    StepReport rep = new_report(spec, ph, prob, term, s, nsteps, lhs, rhs, c);

    // ---- RTL: operands from DRAM into the free half, flip, program, results out of the accumulator
    sc_core::sc_time dram_time = sc_core::SC_ZERO_TIME;
    const Tensor<uint16_t> a_rtl = fetch(A, dram_time), b_rtl = fetch(B, dram_time);
    const int64_t host0 = bench_->host_cycles();
    const uint64_t cyc0 = bench_->cycle_count();
    if (opt_.inject_illegal && reports.empty()) bench_->push(arch::Words(static_cast<size_t>(isa_.words()), 0));
    push_red_cfg(c);
    std::vector<uint64_t> z(static_cast<size_t>(rep.elements));
    std::vector<Work> work;
    const size_t key = ++b_keys_;
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      Work w;
      w.c = &c;
      w.job = j;
      w.a = &a_rtl;
      w.b = &b_rtl;
      w.b_key = key;
      w.read = c.jobs[j].last_k;  // otherwise the next K chunk accumulates onto these rows
      w.probe = oc != nullptr;
      w.a_on_chip = A.on_chip;
      w.b_on_chip = B.on_chip;
      w.z = &z;
      work.push_back(w);
    }
    run_jobs(work, [&](size_t k) {
      if (oc) rep.store_cycles += run_store(*oc, k);
    });
    rep.cycles = static_cast<int64_t>(bench_->cycle_count() - cyc0) - rep.store_cycles;
    if (oc) {
      rep.store_predicted = total(oc->stores, [](const mapper::StorePlan& sp) { return sp.predicted_cycles; });
      rep.on_chip = true;
      rep.store = describe_store(*oc, s);
    } else {
      rep.through_host_because = last ? "" : why_not;
    }
    if (opt_.inject_mismatch && reports.empty() && !z.empty()) z[0] ^= 1U;
    rep.host_cycles = bench_->host_cycles() - host0;

    // ---- golden and compare
    Operand res;
    res.name = st.out;
    res.labels = out_labels_of(c);
    res.dims = out_dims_of(c);
    const std::string base = safe(fmt::format("{}_{}_{}_t{}_s{}", spec.name, rep.phase, prob.result, term, s));
    if (dt == arch::DataType::bf16) {
      const Tensor<uint32_t> gold = verif::contract_bf16(A.golden, B.golden, res.labels, mapper::hardware_order(c, opt_.cfg.ce.rows));
      const Tensor<uint32_t> rt = compare(z, gold, rep);
      dump(base + ".npy", st.out, last ? "result (fp32 bits, <u4)" : "intermediate before bf16 rounding (fp32 bits, <u4)", rt,
           "fp32 bits");
      if (!last) {
        res.golden = verif::map_values<uint16_t>(gold, [](uint32_t x) { return verif::fp32_to_bf16(x); });
        if (!oc)
          res.addr = store(words_of(verif::map_values<uint16_t>(rt, [](uint32_t x) { return verif::fp32_to_bf16(x); })),
                           operand_bytes(dt), dram_time);
      } else {
        store(words_of(rt), result_bytes(dt), dram_time);
        rep.rel_error = rel_error_vs_fp64({&prob.terms[term]}, rt);
      }
    } else {
      const Tensor<int64_t> gold = contract_int(A.golden, B.golden, res.labels, dt);
      const Tensor<int64_t> rt = compare(z, gold, rep);
      const std::string acc = hw::accumulator_format(dt);
      dump(base + ".npy", st.out, last ? fmt::format("result ({} in <i8)", acc) : "intermediate before requantization (<i8)",
           rt, acc);
      if (!last) {
        const int sh = requant_shift(dt, rep.k);
        res.golden = verif::map_values<uint16_t>(gold, [sh, dt](int64_t x) { return requant(x, sh, dt); });
        if (!oc)
          res.addr = store(words_of(verif::map_values<uint16_t>(rt, [sh, dt](int64_t x) { return requant(x, sh, dt); })),
                           operand_bytes(dt), dram_time);
      } else {
        store(words_of(rt), result_bytes(dt), dram_time);
      }
    }
    if (oc) {
      res.on_chip = true;
      rep.stored_mismatches = check_stored(*oc, res.golden);
    }
    finish_report(rep, dram_time);
    if (last) return std::nullopt;
    return res;
  }

  // The RTL's results (accumulator words) against the golden ones, counting mismatches into rep;
  // returns the RTL's as a tensor of the golden's type and labels.
  template <typename T>
  static Tensor<T> compare(const std::vector<uint64_t>& z, const Tensor<T>& gold, StepReport& rep) {
    const std::vector<T> gv = gold.values();
    std::vector<T> rv(z.size());
    for (size_t i = 0; i < z.size(); ++i) {
      rv[i] = static_cast<T>(z[i]);
      if (rv[i] != gv[i]) ++rep.mismatches;
    }
    return Tensor<T>(gold.labels(), gold.shape(), rv);
  }

  // Whether the last contractions of a sum's terms can add into the same accumulator rows: the
  // same output layout (labels, sizes, dataflow and grid, N tile, lanes, reduction pattern) and the
  // same output chunks, job by job (their K chunks may differ).
  static bool summable(const std::vector<Final>& finals) {
    const mapper::CompiledGemm& c0 = finals.front().gemm();
    auto chunks = [](const mapper::CompiledGemm& c) {
      std::vector<std::array<int64_t, 4>> v;
      for (const mapper::GemmJob& j : c.jobs)
        if (j.last_k) v.push_back({j.m0, j.m_count, j.nt0, j.nt_count});
      return v;
    };
    for (const Final& f : finals) {
      const mapper::CompiledGemm& c = f.gemm();
      const bool same_grid = c.map.os == c0.map.os && c.map.gm == c0.map.gm && c.map.n_tile == c0.map.n_tile;
      if (out_labels_of(c) != out_labels_of(c0) || out_dims_of(c) != out_dims_of(c0) || !same_grid ||
          c.col_lane != c0.col_lane || c.red_cfg != c0.red_cfg || chunks(c) != chunks(c0))
        return false;
    }
    return true;
  }

  // The terms of a sum (BT layers): their last contractions run back to back, output chunk by
  // output chunk, each later term's instructions accumulating onto the rows the earlier terms
  // left (acc_accumulate = 1), so the sum is formed in the accumulator and read once. The golden
  // model chains the same way: term t starts from the sum of terms 0..t-1.
  void run_sum(const verif::LayerSpec& spec, verif::Phase ph, const verif::PhaseProblem& prob, const std::vector<Final>& finals) {
    const arch::DataType dt = opt_.cfg.dtype;
    const size_t T = finals.size();
    sc_core::sc_time dram_time = sc_core::SC_ZERO_TIME;
    std::vector<Tensor<uint16_t>> a(T), b(T);
    std::vector<StepReport> reps;
    for (size_t t = 0; t < T; ++t) {
      const Final& f = finals[t];
      a[t] = fetch(f.a(), dram_time);
      b[t] = fetch(f.b(), dram_time);
      const int n = static_cast<int>(f.plan.steps.size());
      reps.push_back(new_report(spec, ph, prob, t, n - 1, n, f.lhs, f.rhs, f.gemm()));
    }
    const mapper::CompiledGemm& c0 = finals[0].gemm();
    std::vector<uint64_t> z(static_cast<size_t>(reps[0].elements));
    // Output chunk by output chunk (the accumulator holds one at a time), every term's jobs of it.
    std::vector<Work> work;
    std::vector<size_t> term_of;  // of each work item
    std::vector<size_t> next(T, 0);  // each term's next job
    const size_t key0 = b_keys_ + 1;
    b_keys_ += T;
    while (next[0] < c0.jobs.size()) {  // summable: every term has the same output chunks
      for (size_t t = 0; t < T; ++t) {
        const mapper::CompiledGemm& c = finals[t].gemm();
        bool chunk_done = false;
        for (bool first = true; !chunk_done && next[t] < c.jobs.size(); first = false) {
          Work w;
          w.c = &c;
          w.job = next[t];
          w.a = &a[t];
          w.b = &b[t];
          w.b_key = key0 + t;
          w.accumulate = t > 0 && first;  // a term's later K chunks accumulate anyway
          chunk_done = c.jobs[next[t]].last_k;
          w.read = chunk_done && t + 1 == T;
          w.z = &z;
          work.push_back(w);
          term_of.push_back(t);
          ++next[t];
        }
      }
    }
    // RED_CFG once, identical for every term (summable): its cycles are term 0's, and the later
    // terms' model drops them.
    const int64_t host0 = bench_->host_cycles();
    const uint64_t cyc0 = bench_->cycle_count();
    push_red_cfg(c0);
    run_jobs(work);
    reps[0].cycles = static_cast<int64_t>(bench_->cycle_count() - cyc0);
    reps[0].host_cycles = bench_->host_cycles() - host0;
    for (size_t i = 0; i < work.size(); ++i)
      if (term_of[i] > 0) {
        reps[term_of[i]].cycles += work[i].cycles;
        reps[term_of[i]].host_cycles += work[i].host;
        reps[0].cycles -= work[i].cycles;
        reps[0].host_cycles -= work[i].host;
      }
    for (size_t t = 1; t < T; ++t) reps[t].predicted -= static_cast<int64_t>(c0.red_cfg_words());
    if (opt_.inject_mismatch && reports.empty() && !z.empty()) z[0] ^= 1U;

    // ---- golden: term t from the sum of the terms before it, as the accumulator does
    const std::vector<std::string> labels = out_labels_of(c0);
    std::vector<const verif::TensorNetwork*> nets;
    for (const Final& f : finals) nets.push_back(&prob.terms[f.term]);
    const std::string base = safe(fmt::format("{}_{}_{}_sum", spec.name, reps[0].phase, prob.result));
    if (dt == arch::DataType::bf16) {
      std::vector<uint32_t> sum;
      Tensor<uint32_t> gold;
      for (const Final& f : finals) {
        gold = verif::contract_bf16(f.a().golden, f.b().golden, labels, mapper::hardware_order(f.gemm(), opt_.cfg.ce.rows, sum));
        sum = gold.values();
      }
      const Tensor<uint32_t> rt = compare(z, gold, reps.back());
      dump(base + ".npy", prob.result, "result, the sum of every term (fp32 bits, <u4)", rt, "fp32 bits");
      store(words_of(rt), result_bytes(dt), dram_time);
      reps.back().rel_error = rel_error_vs_fp64(nets, rt);
    } else {
      const int AB = arch::accumulator_bits(dt);
      std::vector<int64_t> sum(z.size(), 0);
      for (const Final& f : finals) {
        const std::vector<int64_t> term = contract_int(f.a().golden, f.b().golden, labels, dt).values();
        for (size_t i = 0; i < sum.size(); ++i) sum[i] = wrap_signed(sum[i] + term[i], AB);  // the accumulator wraps
      }
      const Tensor<int64_t> rt = compare(z, Tensor<int64_t>(labels, out_dims_of(c0), sum), reps.back());
      const std::string acc = hw::accumulator_format(dt);
      dump(base + ".npy", prob.result, fmt::format("result, the sum of every term ({} in <i8)", acc), rt, acc);
      store(words_of(rt), result_bytes(dt), dram_time);
    }
    for (size_t t = 0; t < T; ++t) {
      reps[t].summed = true;
      if (t + 1 < T) reps[t].elements = 0;  // checked in the sum, on the last term's row
      finish_report(reps[t], t + 1 == T ? dram_time : sc_core::SC_ZERO_TIME);
    }
  }

  // DRAM: the layer's inputs are placed once, at first use, before the run (debug transport, no
  // time); every operand a contraction reads and every result it writes is a timed transaction.
  uint64_t allocate(int64_t elements, int bytes) {
    const uint64_t addr = dram_next_;
    dram_next_ += dram_extent(elements, bytes);
    return addr;
  }
  uint64_t input_address(const std::string& name, const Tensor<uint16_t>& t) {
    auto it = dram_inputs_.find(name);
    if (it != dram_inputs_.end()) return it->second;
    const uint64_t addr = allocate(t.numel(), operand_bytes(opt_.cfg.dtype));
    dram_.preload(addr, pack(words_of(t), operand_bytes(opt_.cfg.dtype)));
    return dram_inputs_[name] = addr;
  }
  Tensor<uint16_t> fetch(const Operand& o, sc_core::sc_time& t) {
    if (o.on_chip) return {};  // in the unified memory already
    int64_t n = 1;
    for (int64_t d : o.dims) n *= d;
    const int eb = operand_bytes(opt_.cfg.dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(n * eb));
    dram_.read(o.addr, bytes, t);
    dram_read_ += bytes.size();
    std::vector<uint16_t> v;
    for (uint64_t w : unpack(bytes, eb)) v.push_back(static_cast<uint16_t>(w));
    return Tensor<uint16_t>(o.labels, o.dims, v);
  }
  uint64_t store(const std::vector<uint64_t>& words, int bytes, sc_core::sc_time& t) {
    const uint64_t addr = allocate(static_cast<int64_t>(words.size()), bytes);
    const std::vector<uint8_t> data = pack(words, bytes);
    dram_.write(addr, data, t);
    dram_written_ += data.size();
    return addr;
  }

  // Relative L2 error of a final bf16 result against the fp64 contraction of the same inputs
  // (summed over the given terms).
  double rel_error_vs_fp64(const std::vector<const verif::TensorNetwork*>& nets, const Tensor<uint32_t>& result) const {
    std::vector<double> rv;
    for (const verif::TensorNetwork* net : nets) {
      std::map<std::string, Tensor<double>> in;
      for (const auto& node : net->nodes) in[node.name] = verif::bf16_to_double(inputs_.at(node.name)).relabel(node.labels);
      const std::vector<double> term = verif::evaluate(*net, in).permute(result.labels()).values();
      if (rv.empty()) rv.assign(term.size(), 0.0);
      for (size_t i = 0; i < term.size(); ++i) rv[i] += term[i];
    }
    const std::vector<uint32_t> gv = result.values();
    double num = 0, den = 0;
    for (size_t i = 0; i < rv.size(); ++i) {
      float f = 0;
      std::memcpy(&f, &gv[i], sizeof f);
      num += (static_cast<double>(f) - rv[i]) * (static_cast<double>(f) - rv[i]);
      den += rv[i] * rv[i];
    }
    return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
  }

  void progress(const StepReport& r) {
    if (opt_.json) return;
    std::fprintf(stderr, "  %s %s %s t%zu s%d: %s  %s\n", r.layer.c_str(), r.phase.c_str(), r.problem.c_str(), r.term,
                 r.step, r.mismatches + r.stored_mismatches == 0 ? "match" : "MISMATCH", r.mapping.c_str());
    if (r.on_chip) std::fprintf(stderr, "    result kept on chip: STORE %s\n", r.store.c_str());
    if (!r.through_host_because.empty())
      std::fprintf(stderr, "    result through the host: %s\n", r.through_host_because.c_str());
  }

  RunOptions opt_;
  std::map<std::string, Tensor<uint16_t>> inputs_;  // the current layer's operands
  arch::IsaLayout isa_;
  DramInitiator& dram_;
  uint64_t dram_next_ = 0, dram_read_ = 0, dram_written_ = 0;
  std::map<std::string, uint64_t> dram_inputs_;  // the current layer's inputs placed in DRAM
  SystemBench* bench_ = nullptr;
  int64_t flips_ = 0;  // FLIPs pushed so far: the TCU computes on half flips_ % 2
  std::array<int64_t, 3> b_in_half_[2] = {{-1, -1, -1}, {-1, -1, -1}};  // (B tensor key, nt0, kt0) each half holds
  size_t b_keys_ = 0;  // B tensors handed to run_jobs so far
  std::vector<Parked> parked_;  // STOREd images waiting for their consumers in the current network
};

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

void print_tables(const std::vector<StepReport>& reps, const arch::ArchConfig& cfg, double wall_s, int64_t sim_cycles) {
  const int64_t pes = cfg.total_pes();
  std::string cur;
  int64_t t_cycles = 0, t_macs = 0, t_store = 0, t_host = 0, t_dram = 0, t_dram_bytes = 0, t_mis = 0;
  auto flush = [&] {
    if (cur.empty()) return;
    fmt::print("  total: {} cycles, {} MACs, PE utilization {}; STORE {} cycles; host transfer {} cycles; DRAM {} cycles "
               "({:.1f} KiB); {}\n\n",
               t_cycles, t_macs, pct(100.0 * static_cast<double>(t_macs) / (static_cast<double>(t_cycles) * pes)), t_store,
               t_host, t_dram, static_cast<double>(t_dram_bytes) / 1024.0,
               t_mis == 0 ? "all match" : fmt::format("{} mismatching elements", t_mis));
    t_cycles = t_macs = t_store = t_host = t_dram = t_dram_bytes = t_mis = 0;
  };
  for (const StepReport& r : reps) {
    const std::string key = r.layer + " / " + r.phase;
    if (key != cur) {
      flush();
      cur = key;
      fmt::print("{} ({} {}x{} CEs x {}, {} lanes)\n", key, arch::to_string(cfg.dtype), cfg.ce.rows, cfg.ce.cols, cfg.ce.count,
                 cfg.network.lanes);
      fmt::print("  {:<28} {:>16} {:>10} {:>9} {:>9} {:>7} {:>7} {:>6} {:>8} {:>8}  {}\n", "contraction", "M x K x N", "MACs",
                 "cycles", "model", "error", "util", "store", "host", "DRAM", "result");
    }
    const std::string name = fmt::format("{}{} s{}: {} x {}", r.problem, r.terms > 1 ? fmt::format("[{}]", r.term) : "", r.step, r.lhs, r.rhs);
    const double err = 100.0 * static_cast<double>(r.predicted - r.cycles) / static_cast<double>(r.cycles);
    std::string result = r.mismatches == 0 ? "match" : fmt::format("MISMATCH {}/{}", r.mismatches, r.elements);
    if (r.summed) result = r.elements == 0 ? "summed on chip, checked below" : result + fmt::format(" (sum of {} terms)", r.terms);
    if (r.rel_error >= 0) result += fmt::format(" (fp64 rel err {:.2e})", r.rel_error);
    if (r.on_chip)
      result += r.stored_mismatches == 0 ? ", kept on chip" : fmt::format(", kept on chip: {} STORED ELEMENTS WRONG", r.stored_mismatches);
    fmt::print("  {:<28} {:>16} {:>10} {:>9} {:>9} {:>7} {:>7} {:>6} {:>8} {:>8}  {}\n", name.size() > 28 ? name.substr(0, 28) : name,
               fmt::format("{}x{}x{}", r.m, r.k, r.n), r.macs, r.cycles, r.predicted, fmt::format("{:+.1f}%", err),
               pct(100.0 * static_cast<double>(r.macs) / (static_cast<double>(r.cycles) * pes)), r.store_cycles,
               r.host_cycles, r.dram_cycles, result);
    t_store += r.store_cycles;
    t_cycles += r.cycles;
    t_macs += r.macs;
    t_host += r.host_cycles;
    t_dram += r.dram_cycles;
    t_dram_bytes += r.dram_bytes;
    t_mis += r.mismatches + r.stored_mismatches;
  }
  flush();
  fmt::print("simulated {} cycles in {:.1f} s ({:.0f} cycles/s)\n", sim_cycles, wall_s, static_cast<double>(sim_cycles) / wall_s);
}

// The run's energy by the analytical model's constants (the configuration's `energy:`, measured
// on the default top: docs/power.md, "Energy model"): an estimate for every run, where
// `fetta power` measures one traced run.
struct RunEnergy {
  mapper::EnergyTerms pj;
  int64_t macs = 0;
  double seconds = 0;
};

RunEnergy run_energy(const std::vector<StepReport>& reps, const arch::ArchConfig& cfg, int64_t sim_cycles,
                     uint64_t dram_read, uint64_t dram_written) {
  std::vector<mapper::StepShape> shapes;
  RunEnergy e;
  for (const StepReport& r : reps) {
    shapes.push_back(mapper::matmul_shape(static_cast<uint64_t>(r.m), static_cast<uint64_t>(r.k), static_cast<uint64_t>(r.n)));
    e.macs += r.macs;
  }
  e.pj = mapper::run_energy(mapper::AnalyticalModel(cfg), shapes, static_cast<double>(sim_cycles),
                            static_cast<double>(dram_read), static_cast<double>(dram_written));
  e.seconds = static_cast<double>(sim_cycles) / (cfg.clock_mhz * 1e6);
  return e;
}

nlohmann::json to_json(const RunEnergy& e) {
  const double j = e.pj.total() * 1e-12;
  return {{"source", "the analytical model's constants (the configuration's energy:), not a measurement"},
          {"joules", j},
          {"static_joules", e.pj.static_power * 1e-12},
          {"mac_joules", e.pj.mac * 1e-12},
          {"sram_joules", e.pj.sram * 1e-12},
          {"network_joules", e.pj.network * 1e-12},
          {"dram_joules", e.pj.dram * 1e-12},
          {"pj_per_mac", e.macs > 0 ? e.pj.total() / static_cast<double>(e.macs) : 0.0},
          {"tops_per_w", j > 0 ? 2.0 * static_cast<double>(e.macs) / j * 1e-12 : 0.0},
          {"edp_js", j * e.seconds}};
}

std::string energy_line(const RunEnergy& e) {
  const nlohmann::json j = to_json(e);
  auto uj = [&](const char* k) { return j[k].get<double>() * 1e6; };
  return fmt::format("energy (model, the configuration's energy: constants): {:.4g} uJ = static {:.4g} + MACs {:.4g} + SRAM "
                     "{:.4g} + network {:.4g} + DRAM {:.4g}; {:.3f} pJ/MAC, {:.3f} TOPS/W, EDP {:.4g} J s\n",
                     uj("joules"), uj("static_joules"), uj("mac_joules"), uj("sram_joules"), uj("network_joules"),
                     uj("dram_joules"), j["pj_per_mac"].get<double>(), j["tops_per_w"].get<double>(),
                     j["edp_js"].get<double>());
}

nlohmann::json to_json(const std::vector<StepReport>& reps, const arch::ArchConfig& cfg, double wall_s, int64_t sim_cycles) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& r : reps)
    steps.push_back({{"layer", r.layer}, {"phase", r.phase}, {"problem", r.problem}, {"term", r.term}, {"terms", r.terms},
                     {"step", r.step}, {"steps", r.steps}, {"lhs", r.lhs}, {"rhs", r.rhs}, {"mapping", r.mapping},
                     {"m", r.m}, {"k", r.k}, {"n", r.n}, {"macs", r.macs}, {"cycles", r.cycles}, {"predicted_cycles", r.predicted},
                     {"host_cycles", r.host_cycles}, {"dram_cycles", r.dram_cycles}, {"dram_bytes", r.dram_bytes},
                     {"dram_bytes_read", r.dram_bytes_read}, {"dram_bytes_written", r.dram_bytes_written},
                     {"utilization", static_cast<double>(r.macs) / (static_cast<double>(r.cycles) * cfg.total_pes())},
                     {"elements", r.elements}, {"mismatches", r.mismatches}, {"summed_on_chip", r.summed},
                     {"kept_on_chip", r.on_chip}, {"stored_mismatches", r.stored_mismatches},
                     {"store_cycles", r.store_cycles}, {"store_predicted_cycles", r.store_predicted},
                     {"through_host_because", r.through_host_because}, {"store", r.store},
                     {"fp64_rel_error", r.rel_error >= 0 ? nlohmann::json(r.rel_error) : nlohmann::json(nullptr)}});
  return {{"config", cfg.name}, {"dtype", arch::to_string(cfg.dtype)}, {"pes", cfg.total_pes()}, {"steps", steps},
          {"sim_cycles", sim_cycles}, {"sim_seconds", wall_s}};
}

}  // namespace

RunOptions parse_run_args(int argc, char** argv) {
  RunOptions o;
  std::string config, phases = "fp,bp,wg";
  CLI::App app("fetta system simulation (one Verilated accelerator)");
  app.add_option("--config", config, "Architecture configuration (YAML) the model was generated from")->required();
  app.add_option("--layer", o.layers, "Layer description (YAML); repeatable")->required();
  app.add_option("--phases", phases, "Comma-separated: fp, bp, wg");
  app.add_option("--seed", o.seed, "Seed of the random tensors");
  app.add_option("--dump-dir", o.dump_dir, "Write every input and output tensor as .npy with manifest.json");
  app.add_flag("--json", o.json, "JSON report on stdout instead of the tables");
  app.add_option("--trace", o.trace, "FST waveform file (the model must be built with tracing: fetta run --trace)");
  app.add_flag("--check-model", o.check_model, "Fail when a contraction's RTL cycles differ from the model's");
  std::string map_for = "compute";
  app.add_option("--map-for", map_for,
                 "What each contraction's mapping minimizes: compute (the model's cycles; data movement breaks "
                 "ties) or end-to-end (cycles plus the data movement it implies)")
      ->check(CLI::IsMember({"compute", "end-to-end"}));
  app.add_flag("--through-host", o.through_host,
               "Send every intermediate through the host and DRAM, none kept on chip by STORE (the path before STORE)");
  app.add_flag("--terms-separately", o.terms_separately,
               "Sums of terms (BT layers): check every term's result on its own instead of summing them in the accumulator");
  app.add_flag("--inject-illegal", o.inject_illegal,
               "Self-check of the controller: push an illegal instruction (opcode 0) before the first contraction");
  app.add_flag("--inject-mismatch", o.inject_mismatch,
               "Self-check of the scoreboard: flip bit 0 of the first result element of the first contraction");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  o.cfg = arch::load_arch_config(config);
  o.phases = mapper::parse_phases(phases);
  o.map_end_to_end = mapper::parse_map_for(map_for) == mapper::MapFor::end_to_end;
  return o;
}

void preflight(const RunOptions& opt) {
  arch::validate(opt.cfg);
  (void)mapper::plan_layers(opt.cfg, opt.layers, opt.phases);
}

int run_system(sc_core::sc_module& dut, const RunOptions& opt, const TraceHooks& hooks) {
  preflight(opt);
  // SystemC's infos ("Simulation stopped by user") go to stdout, which carries the report.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  DramTarget dram("dram", opt.cfg.dram);
  DramInitiator dma("dma");
  dma.socket.bind(dram.socket);
  Runner runner(opt, dma);
  SystemBench bench("bench", dut, opt.cfg, [&](SystemBench& b) { runner.host(b); });
  if (!opt.json)
    fmt::print(stderr, "fetta sim: {} layer(s), seed {}, config {}, mapped for {}\n", opt.layers.size(), opt.seed,
               opt.cfg.name, mapper::to_string(map_for(opt)));
  const auto t0 = std::chrono::steady_clock::now();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  if (hooks.start) hooks.start();
  sc_core::sc_start();
  if (hooks.stop) hooks.stop();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!opt.dump_dir.empty()) {
    std::ofstream(opt.dump_dir + "/manifest.json") << runner.manifest.dump(2) << "\n";
  }
  if (opt.json) {
    nlohmann::json j = to_json(runner.reports, opt.cfg, wall, bench.now());
    j["map_for"] = mapper::to_string(map_for(opt));
    j["streams"] = {{"instructions_fnv1a", fmt::format("{:016x}", bench.instruction_digest())},
                    {"writes_fnv1a", fmt::format("{:016x}", bench.write_digest())}};
    j["dram"] = {{"bandwidth_gbps", opt.cfg.dram.bandwidth_gbps}, {"latency_ns", opt.cfg.dram.latency_ns},
                 {"transactions", dram.transactions()}, {"bytes_read", dram.bytes_read()}, {"bytes_written", dram.bytes_written()}};
    j["energy"] = to_json(run_energy(runner.reports, opt.cfg, bench.now(), dram.bytes_read(), dram.bytes_written()));
    std::cout << j.dump(2) << "\n";
  } else {
    print_tables(runner.reports, opt.cfg, wall, bench.now());
    fmt::print("streams: instructions fnv1a {:016x}, unified-memory writes fnv1a {:016x}\n", bench.instruction_digest(),
               bench.write_digest());
    fmt::print("DRAM (TLM-2.0 target, {} GB/s, {} ns per transaction): {} transactions, {:.1f} KiB read, {:.1f} KiB written\n",
               opt.cfg.dram.bandwidth_gbps, opt.cfg.dram.latency_ns, dram.transactions(),
               static_cast<double>(dram.bytes_read()) / 1024.0, static_cast<double>(dram.bytes_written()) / 1024.0);
    fmt::print("{}", energy_line(run_energy(runner.reports, opt.cfg, bench.now(), dram.bytes_read(), dram.bytes_written())));
  }
  if (!bench.failure().empty()) {
    fmt::print(stderr, "error: {}\n", bench.failure());
    return 2;
  }
  int64_t bad = 0, model_off = 0;
  bool tol_ok = true;
  for (const StepReport& r : runner.reports) {
    bad += r.mismatches + r.stored_mismatches;
    if (r.rel_error > kBf16RelTolerance) tol_ok = false;
    if (r.cycles != r.predicted || r.store_cycles != r.store_predicted) ++model_off;
  }
  if (bad != 0 || !tol_ok || (opt.check_model && model_off != 0)) {
    fmt::print(stderr, "FAIL: {} mismatching elements{}{}\n", bad, tol_ok ? "" : "; a result is outside the fp64 tolerance",
               opt.check_model && model_off != 0 ? fmt::format("; {} contraction(s) off the cycle model", model_off) : "");
    return 1;
  }
  return 0;
}

}  // namespace fetta::sim::system
