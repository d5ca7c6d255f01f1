#include "sim/system/runner.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <cstring>
#include <map>

#include "arch/isa.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/sys/system.hpp"
#include "mapper/compile.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/search.hpp"
#include "sim/system/bench.hpp"
#include "sim/system/dram.hpp"
#include "verif/contract.hpp"
#include "verif/npy.hpp"
#include "verif/numerics.hpp"

namespace fetta::sim::system {

namespace {

using verif::Tensor;

// An operand in flight: its labels, where the RTL's copy is in DRAM and the golden model's copy
// (they are equal when everything matches; kept apart so a mismatch shows once).
struct Operand {
  std::string name;
  std::vector<std::string> labels;
  std::vector<int64_t> dims;
  uint64_t addr = 0;  // the RTL side's element bits, operand_bytes each, row-major in `labels`
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
      for (const auto& prob : problems)
        for (size_t t = 0; t < prob.terms.size(); ++t) run_network(spec, ph, prob, t, bits);
    }
  }

  void run_network(const verif::LayerSpec& spec, verif::Phase ph, const verif::PhaseProblem& prob, size_t term,
                   const std::map<std::string, Tensor<uint16_t>>& bits) {
    const verif::TensorNetwork& net = prob.terms[term];
    const mapper::NetworkPlan plan = mapper::plan_network(opt_.cfg, prob, term);
    const mapper::Problem& p = plan.problem;
    const arch::DataType dt = opt_.cfg.dtype;
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
    for (int s = 0; s < nsteps; ++s) {
      const mapper::PlannedStep& st = plan.steps[static_cast<size_t>(s)];
      const bool last = st.last;
      const Operand lhs = live.at(st.left), rhs = live.at(st.right);
      live.erase(st.left);
      live.erase(st.right);
      const std::string out_name = st.out;
      StepReport rep;
      rep.layer = spec.name;
      rep.phase = verif::to_string(ph);
      rep.problem = prob.result;
      rep.term = term;
      rep.terms = prob.terms.size();
      rep.step = s;
      rep.steps = nsteps;
      rep.lhs = lhs.name;
      rep.rhs = rhs.name;
      const mapper::CompiledStep& cs = st.compiled;
      const mapper::CompiledGemm& c = cs.gemm;
      const Operand& A = cs.lhs_is_a ? lhs : rhs;
      const Operand& B = cs.lhs_is_a ? rhs : lhs;
      rep.mapping = c.describe();
      rep.m = c.shape.m.size();
      rep.k = c.shape.k.size();
      rep.n = c.shape.n.size();
      rep.macs = c.shape.macs();

      // ---- RTL: operands from DRAM into the free half, flip, program, results out of the accumulator
      sc_core::sc_time dram_time = sc_core::SC_ZERO_TIME;
      const Tensor<uint16_t> a_rtl = fetch(A, dram_time), b_rtl = fetch(B, dram_time);
      const int64_t host0 = bench_->host_cycles();
      const uint16_t pad = dt == arch::DataType::bf16 ? 0x8000 : 0;
      const uint64_t cyc0 = bench_->cycle_count();
      if (opt_.inject_illegal && reports.empty()) bench_->push(arch::Words(static_cast<size_t>(isa_.words()), 0));
      const int nred = static_cast<int>(c.program.size() - c.jobs.size());  // the RED_CFG chunks
      for (int i = 0; i < nred; ++i) bench_->push(c.program[static_cast<size_t>(i)]);
      std::vector<int64_t> out_dims = c.shape.m.dims;
      out_dims.insert(out_dims.end(), c.shape.n.dims.begin(), c.shape.n.dims.end());
      std::vector<std::string> out_labels = c.shape.m.labels;
      out_labels.insert(out_labels.end(), c.shape.n.labels.begin(), c.shape.n.labels.end());
      const int64_t M = rep.m, Nn = rep.n;
      std::vector<uint64_t> z(static_cast<size_t>(M * Nn));
      std::pair<int64_t, int64_t> b_in_half[2] = {{-1, -1}, {-1, -1}};  // (nt0, kt0) of the B image each half holds
      for (size_t j = 0; j < c.jobs.size(); ++j) {
        const mapper::GemmJob& job = c.jobs[j];
        // Job j computes on the half the host writes now (the free one); the halves alternate.
        const size_t half = (flips_ + 1) % 2;
        const mapper::RowImage ia = mapper::layout_a(c, a_rtl, pad, j);
        bench_->write_rows(ia.first_row, ia.rows, ia.lanes, ia.data);
        if (b_in_half[half] != std::make_pair(job.nt0, job.kt0)) {
          const mapper::RowImage ib = mapper::layout_b(c, b_rtl, j);
          bench_->write_rows(ib.first_row, ib.rows, ib.lanes, ib.data);
          b_in_half[half] = {job.nt0, job.kt0};
        }
        bench_->push(arch::encode_flip(isa_));
        ++flips_;
        bench_->push(c.program[static_cast<size_t>(nred) + j]);
        bench_->wait_idle(opt_.timeout_cycles);
        if (!job.last_k) continue;  // the next K chunk accumulates onto these rows
        std::vector<int64_t> rows;
        for (int64_t nt = 0; nt < job.nt_count; ++nt)
          for (int64_t m = 0; m < job.m_count; ++m) rows.push_back(nt * job.m_count + m);
        const std::vector<uint64_t> got = bench_->read_acc(rows, c.col_lane);
        const size_t L = c.col_lane.size();
        for (int64_t nt = 0; nt < job.nt_count; ++nt)
          for (int64_t m = 0; m < job.m_count; ++m)
            for (size_t jj = 0; jj < L; ++jj) {
              const int64_t n = (job.nt0 + nt) * c.map.n_tile + static_cast<int64_t>(jj);
              if (n < Nn)
                z[static_cast<size_t>((job.m0 + m) * Nn + n)] = got[static_cast<size_t>(nt * job.m_count + m) * L + jj];
            }
      }
      if (opt_.inject_mismatch && reports.empty() && !z.empty()) z[0] ^= 1U;
      if (bench_->error()) throw std::runtime_error("the controller raised its error flag (illegal instruction or queue overflow)");
      rep.cycles = static_cast<int64_t>(bench_->cycle_count() - cyc0);
      rep.predicted = c.predicted_cycles;
      rep.host_cycles = bench_->host_cycles() - host0;

      // ---- golden and compare
      Operand res;
      res.name = out_name;
      res.labels = out_labels;
      res.dims = out_dims;
      rep.elements = M * Nn;
      const std::string base = safe(fmt::format("{}_{}_{}_t{}_s{}", spec.name, rep.phase, prob.result, term, s));
      if (dt == arch::DataType::bf16) {
        const Tensor<uint32_t> gold = verif::contract_bf16(A.golden, B.golden, out_labels, mapper::hardware_order(c, opt_.cfg.ce.rows));
        const std::vector<uint32_t> gv = gold.values();
        std::vector<uint32_t> rv(z.size());
        for (size_t i = 0; i < z.size(); ++i) {
          rv[i] = static_cast<uint32_t>(z[i]);
          if (rv[i] != gv[i]) ++rep.mismatches;
        }
        const Tensor<uint32_t> rt(out_labels, out_dims, rv);
        dump(base + ".npy", out_name, last ? "result (fp32 bits, <u4)" : "intermediate before bf16 rounding (fp32 bits, <u4)", rt,
             "fp32 bits");
        if (!last) {
          res.addr = store(words_of(verif::map_values<uint16_t>(rt, [](uint32_t x) { return verif::fp32_to_bf16(x); })),
                           operand_bytes(dt), dram_time);
          res.golden = verif::map_values<uint16_t>(gold, [](uint32_t x) { return verif::fp32_to_bf16(x); });
        } else {
          store(words_of(rt), result_bytes(dt), dram_time);
          rep.rel_error = rel_error_vs_fp64(net, rt);
        }
      } else {
        const Tensor<int64_t> gold = contract_int(A.golden, B.golden, out_labels, dt);
        const std::vector<int64_t> gv = gold.values();
        std::vector<int64_t> rv(z.size());
        for (size_t i = 0; i < z.size(); ++i) {
          rv[i] = static_cast<int64_t>(z[i]);
          if (rv[i] != gv[i]) ++rep.mismatches;
        }
        const Tensor<int64_t> rt(out_labels, out_dims, rv);
        const std::string acc = hw::accumulator_format(dt);
        dump(base + ".npy", out_name, last ? fmt::format("result ({} in <i8)", acc) : "intermediate before requantization (<i8)",
             rt, acc);
        if (!last) {
          const int sh = requant_shift(dt, rep.k);
          res.addr = store(words_of(verif::map_values<uint16_t>(rt, [sh, dt](int64_t x) { return requant(x, sh, dt); })),
                           operand_bytes(dt), dram_time);
          res.golden = verif::map_values<uint16_t>(gold, [sh, dt](int64_t x) { return requant(x, sh, dt); });
        } else {
          store(words_of(rt), result_bytes(dt), dram_time);
        }
      }
      rep.dram_bytes = static_cast<int64_t>(dram_bytes_);
      dram_bytes_ = 0;
      rep.dram_cycles = static_cast<int64_t>(std::ceil(dram_time.to_seconds() * opt_.cfg.clock_mhz * 1e6 - 1e-6));
      reports.push_back(rep);
      progress(rep);
      if (!last) live[st.left | st.right] = std::move(res);
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
    int64_t n = 1;
    for (int64_t d : o.dims) n *= d;
    const int eb = operand_bytes(opt_.cfg.dtype);
    std::vector<uint8_t> bytes(static_cast<size_t>(n * eb));
    dram_.read(o.addr, bytes, t);
    dram_bytes_ += bytes.size();
    std::vector<uint16_t> v;
    for (uint64_t w : unpack(bytes, eb)) v.push_back(static_cast<uint16_t>(w));
    return Tensor<uint16_t>(o.labels, o.dims, v);
  }
  uint64_t store(const std::vector<uint64_t>& words, int bytes, sc_core::sc_time& t) {
    const uint64_t addr = allocate(static_cast<int64_t>(words.size()), bytes);
    const std::vector<uint8_t> data = pack(words, bytes);
    dram_.write(addr, data, t);
    dram_bytes_ += data.size();
    return addr;
  }

  // Relative L2 error of a final bf16 result against the fp64 contraction of the same inputs.
  double rel_error_vs_fp64(const verif::TensorNetwork& net, const Tensor<uint32_t>& result) const {
    std::map<std::string, Tensor<double>> in;
    for (const auto& node : net.nodes) in[node.name] = verif::bf16_to_double(inputs_.at(node.name)).relabel(node.labels);
    const Tensor<double> ref = verif::evaluate(net, in).permute(result.labels());
    const std::vector<double> rv = ref.values();
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
                 r.step, r.mismatches == 0 ? "match" : "MISMATCH", r.mapping.c_str());
  }

  RunOptions opt_;
  std::map<std::string, Tensor<uint16_t>> inputs_;  // the current layer's operands
  arch::IsaLayout isa_;
  DramInitiator& dram_;
  uint64_t dram_next_ = 0, dram_bytes_ = 0;
  std::map<std::string, uint64_t> dram_inputs_;  // the current layer's inputs placed in DRAM
  SystemBench* bench_ = nullptr;
  int64_t flips_ = 0;  // FLIPs pushed so far: the TCU computes on half flips_ % 2
};

std::string pct(double v) { return fmt::format("{:.1f}%", v); }

void print_tables(const std::vector<StepReport>& reps, const arch::ArchConfig& cfg, double wall_s, int64_t sim_cycles) {
  const int64_t pes = cfg.total_pes();
  std::string cur;
  int64_t t_cycles = 0, t_macs = 0, t_host = 0, t_dram = 0, t_dram_bytes = 0, t_mis = 0;
  auto flush = [&] {
    if (cur.empty()) return;
    fmt::print("  total: {} cycles, {} MACs, PE utilization {}; host transfer {} cycles; DRAM {} cycles ({:.1f} KiB); {}\n\n",
               t_cycles, t_macs, pct(100.0 * static_cast<double>(t_macs) / (static_cast<double>(t_cycles) * pes)), t_host,
               t_dram, static_cast<double>(t_dram_bytes) / 1024.0,
               t_mis == 0 ? "all match" : fmt::format("{} mismatching elements", t_mis));
    t_cycles = t_macs = t_host = t_dram = t_dram_bytes = t_mis = 0;
  };
  for (const StepReport& r : reps) {
    const std::string key = r.layer + " / " + r.phase;
    if (key != cur) {
      flush();
      cur = key;
      fmt::print("{} ({} {}x{} CEs x {}, {} lanes)\n", key, arch::to_string(cfg.dtype), cfg.ce.rows, cfg.ce.cols, cfg.ce.count,
                 cfg.network.lanes);
      fmt::print("  {:<28} {:>16} {:>10} {:>9} {:>9} {:>7} {:>7} {:>8} {:>8}  {}\n", "contraction", "M x K x N", "MACs",
                 "cycles", "model", "error", "util", "host", "DRAM", "result");
    }
    const std::string name = fmt::format("{}{} s{}: {} x {}", r.problem, r.terms > 1 ? fmt::format("[{}]", r.term) : "", r.step, r.lhs, r.rhs);
    const double err = 100.0 * static_cast<double>(r.predicted - r.cycles) / static_cast<double>(r.cycles);
    std::string result = r.mismatches == 0 ? "match" : fmt::format("MISMATCH {}/{}", r.mismatches, r.elements);
    if (r.rel_error >= 0) result += fmt::format(" (fp64 rel err {:.2e})", r.rel_error);
    fmt::print("  {:<28} {:>16} {:>10} {:>9} {:>9} {:>7} {:>7} {:>8} {:>8}  {}\n", name.size() > 28 ? name.substr(0, 28) : name,
               fmt::format("{}x{}x{}", r.m, r.k, r.n), r.macs, r.cycles, r.predicted, fmt::format("{:+.1f}%", err),
               pct(100.0 * static_cast<double>(r.macs) / (static_cast<double>(r.cycles) * pes)), r.host_cycles,
               r.dram_cycles, result);
    t_cycles += r.cycles;
    t_macs += r.macs;
    t_host += r.host_cycles;
    t_dram += r.dram_cycles;
    t_dram_bytes += r.dram_bytes;
    t_mis += r.mismatches;
  }
  flush();
  fmt::print("simulated {} cycles in {:.1f} s ({:.0f} cycles/s)\n", sim_cycles, wall_s, static_cast<double>(sim_cycles) / wall_s);
}

nlohmann::json to_json(const std::vector<StepReport>& reps, const arch::ArchConfig& cfg, double wall_s, int64_t sim_cycles) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& r : reps)
    steps.push_back({{"layer", r.layer}, {"phase", r.phase}, {"problem", r.problem}, {"term", r.term}, {"terms", r.terms},
                     {"step", r.step}, {"steps", r.steps}, {"lhs", r.lhs}, {"rhs", r.rhs}, {"mapping", r.mapping},
                     {"m", r.m}, {"k", r.k}, {"n", r.n}, {"macs", r.macs}, {"cycles", r.cycles}, {"predicted_cycles", r.predicted},
                     {"host_cycles", r.host_cycles}, {"dram_cycles", r.dram_cycles}, {"dram_bytes", r.dram_bytes},
                     {"utilization", static_cast<double>(r.macs) / (static_cast<double>(r.cycles) * cfg.total_pes())},
                     {"elements", r.elements}, {"mismatches", r.mismatches},
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
  return o;
}

int64_t preflight(const RunOptions& opt) {
  hw::validate_system(opt.cfg);
  return mapper::plan_layers(opt.cfg, opt.layers, opt.phases);
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
    fmt::print(stderr, "fetta sim: {} layer(s), seed {}, config {}\n", opt.layers.size(), opt.seed, opt.cfg.name);
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
    j["dram"] = {{"bandwidth_gbps", opt.cfg.dram.bandwidth_gbps}, {"latency_ns", opt.cfg.dram.latency_ns},
                 {"transactions", dram.transactions()}, {"bytes_read", dram.bytes_read()}, {"bytes_written", dram.bytes_written()}};
    std::cout << j.dump(2) << "\n";
  } else {
    print_tables(runner.reports, opt.cfg, wall, bench.now());
    fmt::print("DRAM (TLM-2.0 target, {} GB/s, {} ns per transaction): {} transactions, {:.1f} KiB read, {:.1f} KiB written\n",
               opt.cfg.dram.bandwidth_gbps, opt.cfg.dram.latency_ns, dram.transactions(),
               static_cast<double>(dram.bytes_read()) / 1024.0, static_cast<double>(dram.bytes_written()) / 1024.0);
  }
  if (!bench.failure().empty()) {
    fmt::print(stderr, "error: {}\n", bench.failure());
    return 2;
  }
  int64_t bad = 0, model_off = 0;
  bool tol_ok = true;
  for (const StepReport& r : runner.reports) {
    bad += r.mismatches;
    if (r.rel_error > kBf16RelTolerance) tol_ok = false;
    if (r.cycles != r.predicted) ++model_off;
  }
  if (bad != 0 || !tol_ok || (opt.check_model && model_off != 0)) {
    fmt::print(stderr, "FAIL: {} mismatching elements{}{}\n", bad, tol_ok ? "" : "; a result is outside the fp64 tolerance",
               opt.check_model && model_off != 0 ? fmt::format("; {} contraction(s) off the cycle model", model_off) : "");
    return 1;
  }
  return 0;
}

}  // namespace fetta::sim::system
