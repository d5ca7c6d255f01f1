#include "sim/system/runner.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>

#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/sys/system.hpp"
#include "mapper/compile.hpp"
#include "mapper/compile_cli.hpp"
#include "mapper/cost_model.hpp"
#include "mapper/layer_search.hpp"
#include "mapper/program.hpp"
#include "mapper/report_json.hpp"
#include "mapper/wall_model.hpp"
#include "sim/cli/run_flags.hpp"
#include "sim/system/bench.hpp"
#include "sim/system/dram.hpp"
#include "verif/contract.hpp"
#include "verif/layer.hpp"
#include "verif/npy.hpp"
#include "verif/numerics.hpp"

namespace fetta::sim::system {

namespace {

using mapper::Op;
using mapper::OpCode;
using mapper::ProgramStep;
using mapper::ProgramTensor;
using verif::Tensor;

// ---- host-side numerics: the operand formats and the conversions the host applies

// Integer operands travel as their two's-complement bits in the operand width (8 or 16), as the
// unified memory stores them; bf16 as its 16 bits.
uint16_t int_operand(int64_t q, arch::DataType t) {
  if (t == arch::DataType::int8) return static_cast<uint8_t>(static_cast<int8_t>(std::clamp<int64_t>(q, -128, 127)));
  return static_cast<uint16_t>(static_cast<int16_t>(std::clamp<int64_t>(q, -32768, 32767)));
}
int64_t int_value(uint16_t bits, arch::DataType t) {
  return t == arch::DataType::int8 ? static_cast<int8_t>(static_cast<uint8_t>(bits)) : static_cast<int16_t>(bits);
}
// Requantization of an integer intermediate (the shift is the program's, mapper/program.cpp).
uint16_t requant(int64_t v, int shift, arch::DataType t) { return int_operand(v >> shift, t); }

// v modulo 2^bits, sign-extended (an integer accumulator's wrap-around).
int64_t wrap_signed(int64_t v, int bits) {
  if (bits >= 64) return v;
  const auto u = static_cast<uint64_t>(v) & ((uint64_t{1} << bits) - 1);
  return (u >> (bits - 1)) & 1U ? static_cast<int64_t>(u | (~uint64_t{0} << bits)) : static_cast<int64_t>(u);
}

uint16_t to_operand(double v, arch::DataType t) {
  if (t == arch::DataType::bf16) return verif::bf16_from_double(v);
  return int_operand(std::llround(std::ldexp(v, arch::operand_frac_bits(t))), t);
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

// The file an input tensor of a layer is dumped to and read from (--dump-dir, --inputs).
std::string input_file(const std::string& layer, const std::string& tensor) { return safe(layer + "_in_" + tensor) + ".npy"; }

void require_input_file(const std::string& path) {
  if (!std::filesystem::exists(path))
    throw std::invalid_argument(fmt::format("--inputs: {} is missing (the layer's inputs are named as --dump-dir writes "
                                            "them: <layer>_in_<tensor>.npy)", path));
}

// The RTL's results (accumulator words) against the golden ones, counting mismatches into rep;
// returns the RTL's as a tensor of the golden's type and labels.
template <typename T>
Tensor<T> compare(const std::vector<uint64_t>& z, const Tensor<T>& gold, StepReport& rep) {
  const std::vector<T> gv = gold.values();
  std::vector<T> rv(z.size());
  for (size_t i = 0; i < z.size(); ++i) {
    rv[i] = static_cast<T>(z[i]);
    if (rv[i] != gv[i]) ++rep.mismatches;
  }
  return Tensor<T>(gold.labels(), gold.shape(), rv);
}

// ---- the scoreboard: the golden model of every tensor the program makes, the checks, the dumps

class Scoreboard {
 public:
  Scoreboard(const RunOptions& opt) : opt_(opt), prog_(*opt.program) {}

  // A layer's inputs: random from the seed (or read from --inputs), dumped when asked.
  void begin_layer(int layer) {
    layer_ = layer;
    const mapper::ProgramLayer& pl = prog_.layers[static_cast<size_t>(layer)];
    spec_ = verif::parse_layer(pl.yaml, pl.name + " (in the program)");
    problems_.clear();
    for (verif::Phase ph : pl.phases) problems_[ph] = verif::phase_problems(spec_, ph);
    const arch::DataType dt = opt_.cfg.dtype;
    verif::TensorMap values = verif::random_cores(spec_, opt_.seed);
    values["X"] = verif::random_input(spec_, opt_.seed);
    values["dY"] = verif::random_output_grad(spec_, opt_.seed);
    const int scale = 1 << arch::operand_frac_bits(dt);  // an integer operand is value * scale
    const std::string odt = dt == arch::DataType::bf16 ? "bf16 bits (<u2)"
                            : dt == arch::DataType::int8 ? fmt::format("int8 bits in <u2 (low byte), value/{}", scale)
                                                         : fmt::format("int16 (<i2 as <u2), value/{}", scale);
    inputs_.clear();
    for (const auto& [name, t] : values) {
      const std::string file = input_file(spec_.name, name);
      Tensor<uint16_t> bits = verif::map_values<uint16_t>(t, [dt](double v) { return to_operand(v, dt); });
      if (!opt_.inputs_dir.empty()) bits = read_input(opt_.inputs_dir + "/" + file, bits);
      dump(file, name, "input", bits, odt);
      inputs_[name] = bits;
    }
    golden_.clear();
  }
  int layer() const { return layer_; }

  // The input tensor's values in its own order (a network node names them with its labels).
  const Tensor<uint16_t>& input(const ProgramTensor& t) const { return inputs_.at(t.input); }

  // Step r's result `acc` (its words as read from the accumulator: z; or, with `out` other than
  // none, as the DMA saved it: rounded to bf16 or requantized by `shift`) against the golden
  // model; the intermediate it becomes, for the steps that read it.
  void check(int32_t r, const ProgramTensor& acc_tensor, const std::vector<uint64_t>& z, StepReport& rep,
             mapper::Convert out, int shift) {
    const ProgramStep& s = prog_.steps[static_cast<size_t>(r)];
    const arch::DataType dt = opt_.cfg.dtype;
    const std::vector<std::string>& labels = acc_tensor.labels;
    const std::string& name = acc_tensor.name;
    const verif::PhaseProblem& prob = problems_.at(s.phase).at(static_cast<size_t>(s.problem));
    const bool sum = s.gemms.size() > 1;
    const std::string base = sum ? safe(fmt::format("{}_{}_{}_sum", spec_.name, rep.phase, s.result))
                                 : safe(fmt::format("{}_{}_{}_t{}_s{}", spec_.name, rep.phase, s.result, s.term, s.step));
    const std::string what = sum ? "result, the sum of every term" : s.last ? "result" : "";
    std::vector<const verif::TensorNetwork*> nets;
    for (size_t t = 0; t < s.gemms.size(); ++t) nets.push_back(&prob.terms.at(sum ? t : s.term));
    if (dt == arch::DataType::bf16) {
      const Tensor<uint32_t> gold = golden_fp32(s, labels);
      if (out != mapper::Convert::none) {  // saved by the DMA: bf16 bits, compared and dumped as such
        const Tensor<uint16_t> gb = verif::map_values<uint16_t>(gold, [](uint32_t x) { return verif::fp32_to_bf16(x); });
        const Tensor<uint16_t> rb = compare(z, gb, rep);
        dump(base + ".npy", name, (what.empty() ? "intermediate" : what) + " as saved (bf16 bits, <u2)", rb, "bf16 bits");
        if (!s.last)
          golden_[s.intermediate] = gb;
        else
          rep.rel_error = rel_error_vs_fp64(nets, verif::map_values<uint32_t>(rb, [](uint16_t x) { return uint32_t{x} << 16; }));
        return;
      }
      const Tensor<uint32_t> rt = compare(z, gold, rep);
      dump(base + ".npy", name, what.empty() ? "intermediate before bf16 rounding (fp32 bits, <u4)" : what + " (fp32 bits, <u4)", rt, "fp32 bits");
      if (!s.last)
        golden_[s.intermediate] = verif::map_values<uint16_t>(gold, [](uint32_t x) { return verif::fp32_to_bf16(x); });
      else
        rep.rel_error = rel_error_vs_fp64(nets, rt);
    } else {
      const Tensor<int64_t> gold = golden_int(s, labels, acc_tensor.dims);
      if (out != mapper::Convert::none) {  // saved by the DMA: operand bits, requantized
        const Tensor<uint16_t> gq = verif::map_values<uint16_t>(gold, [shift, dt](int64_t x) { return requant(x, shift, dt); });
        const Tensor<uint16_t> rq = compare(z, gq, rep);
        dump(base + ".npy", name,
             fmt::format("{} as saved (requantized by >> {}: operand bits in <u2)", what.empty() ? "intermediate" : what, shift),
             rq, "operand bits");
        if (!s.last) golden_[s.intermediate] = gq;
        return;
      }
      const Tensor<int64_t> rt = compare(z, gold, rep);
      const std::string fmt_acc = hw::accumulator_format(dt);
      dump(base + ".npy", name, what.empty() ? "intermediate before requantization (<i8)" : fmt::format("{} ({} in <i8)", what, fmt_acc), rt, fmt_acc);
      if (!s.last) {
        const int sh = s.requant_shift;
        golden_[s.intermediate] = verif::map_values<uint16_t>(gold, [sh, dt](int64_t x) { return requant(x, sh, dt); });
      }
    }
  }

  // The golden operand bits of a program tensor, in its labels. An intermediate's come from its
  // step's check, or, when a reader is checked first (a gathered intermediate is checked at the
  // layer's end), from the golden model alone.
  const Tensor<uint16_t>& golden(int32_t id) {
    auto it = golden_.find(id);
    if (it != golden_.end()) return it->second;
    const ProgramTensor& t = prog_.tensors[static_cast<size_t>(id)];
    if (t.kind == ProgramTensor::Kind::intermediate)
      for (const ProgramStep& s : prog_.steps)
        if (s.intermediate == id) return golden_[id] = golden_operand(s, t);
    if (t.kind != ProgramTensor::Kind::input)
      throw std::logic_error(fmt::format("program: tensor {} is read before a check made it", t.name));
    return golden_[id] = inputs_.at(t.input).relabel(t.labels);
  }

 private:
  // Step s's result as the accumulator holds it, bf16 operands: fp32 bits. Term t of a sum starts
  // from the sum of the terms before it, as the accumulator does.
  Tensor<uint32_t> golden_fp32(const ProgramStep& s, const std::vector<std::string>& labels) {
    std::vector<uint32_t> acc;
    Tensor<uint32_t> gold;
    for (size_t t = 0; t < s.gemms.size(); ++t) {
      const mapper::CompiledGemm c = mapper::rebuild_gemm(opt_.cfg, s.gemms[t]);
      gold = verif::contract_bf16(golden(s.a[t]), golden(s.b[t]), labels, mapper::hardware_order(c, opt_.cfg.ce.rows, acc));
      acc = gold.values();
    }
    return gold;
  }
  // The same for integer operands: the accumulator's sums, wrapping.
  Tensor<int64_t> golden_int(const ProgramStep& s, const std::vector<std::string>& labels, const std::vector<int64_t>& dims) {
    const arch::DataType dt = opt_.cfg.dtype;
    const int AB = arch::accumulator_bits(dt);
    const bool sum = s.gemms.size() > 1;
    std::vector<int64_t> acc;
    for (size_t t = 0; t < s.gemms.size(); ++t) {
      const std::vector<int64_t> term = contract_int(golden(s.a[t]), golden(s.b[t]), labels, dt).values();
      if (acc.empty()) acc.assign(term.size(), 0);
      for (size_t i = 0; i < acc.size(); ++i) acc[i] = sum ? wrap_signed(acc[i] + term[i], AB) : term[i];
    }
    return Tensor<int64_t>(labels, dims, acc);
  }
  // Step s's intermediate t as operand bits: rounded to bf16 or requantized, as its check makes it.
  Tensor<uint16_t> golden_operand(const ProgramStep& s, const ProgramTensor& t) {
    const arch::DataType dt = opt_.cfg.dtype;
    if (dt == arch::DataType::bf16)
      return verif::map_values<uint16_t>(golden_fp32(s, t.labels), [](uint32_t x) { return verif::fp32_to_bf16(x); });
    const int sh = s.requant_shift;
    return verif::map_values<uint16_t>(golden_int(s, t.labels, t.dims), [sh, dt](int64_t x) { return requant(x, sh, dt); });
  }

 public:

  nlohmann::json manifest = nlohmann::json::array();

 private:
  // A --inputs file in place of the random tensor it replaces: the same shape and element type.
  static Tensor<uint16_t> read_input(const std::string& path, const Tensor<uint16_t>& like) {
    require_input_file(path);
    Tensor<uint16_t> t = verif::load_npy<uint16_t>(path);
    if (t.shape() != like.shape())
      throw std::invalid_argument(fmt::format("--inputs: {} has shape {}, the layer's tensor is {}", path,
                                              fmt::join(t.shape(), "x"), fmt::join(like.shape(), "x")));
    return Tensor<uint16_t>(like.labels(), like.shape(), t.values());
  }

  void dump(const std::string& file, const std::string& tensor, const std::string& role, const auto& t,
            const std::string& dtype) {
    if (opt_.dump_dir.empty()) return;
    std::filesystem::create_directories(opt_.dump_dir);
    verif::save_npy(opt_.dump_dir + "/" + file, t);
    manifest.push_back({{"file", file}, {"tensor", tensor}, {"role", role}, {"labels", t.labels()},
                        {"shape", t.shape()}, {"dtype", dtype}});
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

  const RunOptions& opt_;
  const mapper::Program& prog_;
  int layer_ = -1;
  verif::LayerSpec spec_;
  std::map<verif::Phase, std::vector<verif::PhaseProblem>> problems_;
  std::map<std::string, Tensor<uint16_t>> inputs_;  // the current layer's operands
  std::map<int32_t, Tensor<uint16_t>> golden_;      // golden operand bits per program tensor
};

// ---- the executor: the program's operations on the bench and the DRAM, one by one

class Executor {
 public:
  Executor(const RunOptions& opt, DramInitiator& dram)
      : opt_(opt), prog_(*opt.program), dram_(dram), board_(opt), dma_layout_(arch::dma_geometry(opt.cfg)) {
    for (const ProgramStep& s : prog_.steps) {
      StepReport r;
      r.layer = prog_.layers[static_cast<size_t>(s.layer)].name;
      r.phase = verif::to_string(s.phase);
      r.problem = s.result;
      r.term = s.term;
      r.terms = s.terms;
      r.step = s.step;
      r.steps = s.steps;
      r.lhs = s.lhs;
      r.rhs = s.rhs;
      r.mapping = s.mapping;
      r.m = s.m;
      r.k = s.k;
      r.n = s.n;
      r.macs = s.macs;
      r.predicted = s.predicted;
      r.store_predicted = s.store_predicted;
      r.elements = s.checked() ? s.m * s.n : 0;
      r.summed = s.summed;
      r.on_chip = s.on_chip;
      r.saved = s.saved;
      r.index = static_cast<int64_t>(pending_.size());
      r.store = s.store;
      r.through_host_because = s.through_host_because;
      r.fate = mapper::to_string(s.fate);
      pending_.push_back(std::move(r));
    }
    dram_time_.assign(prog_.steps.size(), sc_core::SC_ZERO_TIME);
  }

  void host(SystemBench& bench) {
    bench_ = &bench;
    for (const Op& o : prog_.ops) run(o);
    // Saved results close at their layer's end: the reports go in program order.
    std::stable_sort(reports.begin(), reports.end(), [](const StepReport& a, const StepReport& b) { return a.index < b.index; });
  }

  std::vector<StepReport> reports;  // the finished steps, in order
  int64_t probe_cycles = 0;          // simulated cycles of what only the scoreboard needs (its probes)
  int64_t gathered_bytes = 0;        // DRAM bytes the DMA's gathers read (ProgramOptions::gather)
  // Tensor data through the host (not the scoreboard's probes): its image writes, accumulator reads
  // and DRAM reads and writes, in simulated cycles and bytes. The default path moves none (docs/dma.md §5);
  // instruction and descriptor pushes are not tensor data.
  int64_t host_tensor_cycles = 0, host_tensor_bytes = 0;
  const nlohmann::json& manifest() const { return board_.manifest; }

 private:
  void run(const Op& o) {
    // An op that names neither a step nor a tensor (a push a damaged program left without its
    // step) stays in the current layer.
    const int layer = o.report >= 0   ? prog_.steps[static_cast<size_t>(o.report)].layer
                      : o.tensor >= 0 ? tensor(o.tensor).layer
                                      : board_.layer();
    if (layer != board_.layer()) board_.begin_layer(layer);
    const uint64_t cyc0 = bench_->cycle_count();
    const int64_t host0 = bench_->host_cycles(), now0 = bench_->now();
    bench_->count_host(!o.is_probe());
    perform(o);
    bench_->count_host(true);
    if (o.is_probe()) probe_cycles += bench_->now() - now0;
    if (!o.is_probe()) {
      const int64_t bytes = host_tensor_bytes_of(o);
      if (bytes > 0) {
        host_tensor_bytes += bytes;
        host_tensor_cycles += bench_->now() - now0;
      }
    }
    if (o.report < 0) return;
    StepReport& rep = pending_[static_cast<size_t>(o.report)];
    const auto cycles = static_cast<int64_t>(bench_->cycle_count() - cyc0);
    if (o.account == mapper::Account::compute) rep.cycles += cycles;
    if (o.account == mapper::Account::store) rep.store_cycles += cycles;
    rep.host_cycles += bench_->host_cycles() - host0;
  }

  // The tensor bytes op o moves through the host: 0 for every op of the default path.
  int64_t host_tensor_bytes_of(const Op& o) const {
    switch (o.code) {
      case OpCode::fetch:
      case OpCode::store: return tensor(o.tensor).numel() * tensor(o.tensor).dram_bytes;
      case OpCode::write_rows: return o.b * static_cast<int64_t>(o.c) * (arch::operand_bits(opt_.cfg.dtype) / 8);
      case OpCode::read_acc: return static_cast<int64_t>(o.map_len) * (arch::accumulator_bits(opt_.cfg.dtype) / 8);
      case OpCode::read_saved: return o.b * o.c * (arch::operand_bits(opt_.cfg.dtype) / 8);
      default: return 0;
    }
  }

  void perform(const Op& o) {
    switch (o.code) {
      case OpCode::preload: {
        const ProgramTensor& t = tensor(o.tensor);
        dram_.preload(static_cast<uint64_t>(t.dram_addr), pack(words_of(board_.input(t)), t.dram_bytes));
        break;
      }
      case OpCode::fetch: {
        const ProgramTensor& t = tensor(o.tensor);
        std::vector<uint8_t> bytes(static_cast<size_t>(t.numel() * t.dram_bytes));
        dram_.read(static_cast<uint64_t>(t.dram_addr), bytes, dram_time_[static_cast<size_t>(o.report)]);
        pending_[static_cast<size_t>(o.report)].dram_bytes_read += static_cast<int64_t>(bytes.size());
        host_[o.tensor] = unpack(bytes, t.dram_bytes);
        break;
      }
      case OpCode::write_rows: {
        const std::vector<uint64_t> image = through_map(host_.at(o.tensor), o);
        bench_->write_rows(o.a, o.b, static_cast<int>(o.c), std::vector<uint16_t>(image.begin(), image.end()));
        break;
      }
      case OpCode::push: {
        if (opt_.inject_illegal && !injected_illegal_) {
          bench_->push(arch::Words(static_cast<size_t>(o.b), 0));
          injected_illegal_ = true;
        }
        const auto first = prog_.words.begin() + o.a;
        bench_->push(arch::Words(first, first + o.b));
        break;
      }
      case OpCode::wait_idle: bench_->wait_idle(opt_.timeout_cycles); break;
      case OpCode::read_acc: {
        std::vector<int64_t> rows(static_cast<size_t>(o.a));
        std::iota(rows.begin(), rows.end(), int64_t{0});
        std::vector<int> lanes;
        for (uint64_t i = 0; i < o.lanes_len; ++i) lanes.push_back(static_cast<int>(prog_.maps[o.lanes + i]));
        scatter(o, bench_->read_acc(rows, lanes));
        break;
      }
      case OpCode::check: {
        if (bench_->error()) throw std::runtime_error("the controller raised its error flag (illegal instruction or queue overflow)");
        std::vector<uint64_t>& z = host_[o.tensor];
        z.resize(static_cast<size_t>(tensor(o.tensor).numel()), 0);
        if (opt_.inject_mismatch && !injected_mismatch_ && !z.empty()) z[0] ^= 1U;
        injected_mismatch_ = true;
        board_.check(o.report, tensor(o.tensor), z, pending_[static_cast<size_t>(o.report)], o.convert, o.shift);
        break;
      }
      case OpCode::store: {
        const ProgramTensor& t = tensor(o.tensor);
        std::vector<uint64_t> words = host_.at(o.source);
        const arch::DataType dt = opt_.cfg.dtype;
        for (uint64_t& w : words) {
          if (o.convert == mapper::Convert::bf16) w = verif::fp32_to_bf16(static_cast<uint32_t>(w));
          if (o.convert == mapper::Convert::requant) w = requant(static_cast<int64_t>(w), o.shift, dt);
        }
        const std::vector<uint8_t> data = pack(words, t.dram_bytes);
        dram_.write(static_cast<uint64_t>(t.dram_addr), data, dram_time_[static_cast<size_t>(o.report)]);
        pending_[static_cast<size_t>(o.report)].dram_bytes_written += static_cast<int64_t>(data.size());
        break;
      }
      case OpCode::check_rows: {
        const std::vector<uint16_t> got = bench_->read_rows(o.a, o.b, static_cast<int>(o.c));
        const std::vector<uint16_t> gold = board_.golden(o.tensor).values();
        int64_t bad = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const int64_t e = prog_.maps[o.map + i];
          bad += got[i] != (e < 0 ? o.pad : gold[static_cast<size_t>(e)]);
        }
        pending_[static_cast<size_t>(o.report)].stored_mismatches += bad;
        break;
      }
      case OpCode::finish: finish(o.report); break;
      case OpCode::preload_image: {
        // Whole beats per row: lanes past the image's are never loaded (the descriptor's mask).
        const std::vector<uint64_t> rows = through_map(words_of(board_.input(tensor(o.tensor))), o);
        const int H = bench_->host_lanes();
        const int64_t per_row = (o.c + H - 1) / H * H;
        std::vector<uint64_t> image(static_cast<size_t>(o.b * per_row), 0);
        for (int64_t r = 0; r < o.b; ++r)
          std::copy_n(rows.begin() + r * o.c, o.c, image.begin() + r * per_row);
        dram_.preload(static_cast<uint64_t>(o.a), pack(image, arch::operand_bits(opt_.cfg.dtype) / 8));
        // The DMA reads every beat of it for the job that computes on it: that step's DRAM traffic
        // (its time is in the simulated cycles, not accounted). A gathers' pad beat is theirs.
        if (o.account != mapper::Account::none)
          pending_[static_cast<size_t>(o.report)].dram_bytes_read +=
              static_cast<int64_t>(image.size()) * arch::operand_bits(opt_.cfg.dtype) / 8;
        break;
      }
      case OpCode::dma: {
        const auto first = prog_.words.begin() + o.a;
        const arch::Words w(first, first + o.b);
        bench_->push_descriptor(w);
        // A save's beats are the DRAM writes of the step that pushes it (whether or not anyone reads
        // the rows back: a result checked on chip and saved for later gathers is not).
        if (arch::decode_dma(dma_layout_, w).to_dram && o.report >= 0)
          pending_[static_cast<size_t>(o.report)].dram_bytes_written += arch::dma_bytes(dma_layout_, w);
        if (o.tensor >= 0) {  // a gather of a saved intermediate: a DRAM burst per beat, the step's traffic
          const int64_t bytes = arch::dma_bytes(dma_layout_, w);
          if (o.report >= 0) pending_[static_cast<size_t>(o.report)].dram_bytes_read += bytes;
          gathered_bytes += bytes;
        }
        break;
      }
      case OpCode::wait_retired: bench_->wait_retired(o.a, opt_.timeout_cycles); break;
      case OpCode::wait_dma_idle: bench_->wait_dma_idle(opt_.timeout_cycles); break;
      case OpCode::read_saved: {
        // What the DMA saved (its save counted the writes): the host's DRAM read of an
        // intermediate, in simulated time, or the scoreboard's untimed look at a result.
        const int bytes = arch::operand_bits(opt_.cfg.dtype) / 8;
        std::vector<uint8_t> data(static_cast<size_t>(o.b * o.c * bytes));
        StepReport& rep = pending_[static_cast<size_t>(o.report)];
        if (o.host_counted) {  // a DRAM transaction the host waits for in simulated time, the top running on
          sc_core::sc_time not_accounted = sc_core::SC_ZERO_TIME;
          dram_.read(static_cast<uint64_t>(o.a), data, not_accounted);
          bench_->host_dram_read(static_cast<int64_t>(data.size()));
          rep.dram_bytes_read += static_cast<int64_t>(data.size());
        } else {
          dram_.peek(static_cast<uint64_t>(o.a), data);
        }
        // Row r of c lanes; the op's lanes of each row, row-major, as read_acc delivers them.
        const std::vector<uint64_t> saved = unpack(data, bytes);
        std::vector<uint64_t> words(o.map_len);
        for (size_t i = 0; i < words.size(); ++i)
          words[i] = saved[static_cast<size_t>(static_cast<int64_t>(i / o.lanes_len) * o.c + prog_.maps[o.lanes + i % o.lanes_len])];
        scatter(o, words);
        break;
      }
    }
  }

  void finish(int32_t r) {
    StepReport& rep = pending_[static_cast<size_t>(r)];
    rep.dram_bytes = rep.dram_bytes_read + rep.dram_bytes_written;
    const double s = dram_time_[static_cast<size_t>(r)].to_seconds();
    rep.dram_cycles = static_cast<int64_t>(std::ceil(s * opt_.cfg.clock_mhz * 1e6 - 1e-6));
    reports.push_back(rep);
    progress(rep);
  }

  const ProgramTensor& tensor(int32_t id) const { return prog_.tensors.at(static_cast<size_t>(id)); }

  // Result words (a job's rows, the op's lanes, row-major) into the host buffer of the op's
  // tensor at the elements its map names.
  void scatter(const Op& o, const std::vector<uint64_t>& words) {
    std::vector<uint64_t>& z = host_[o.tensor];
    z.resize(static_cast<size_t>(tensor(o.tensor).numel()), 0);
    for (size_t i = 0; i < words.size(); ++i)
      if (const int64_t e = prog_.maps[o.map + i]; e >= 0) z[static_cast<size_t>(e)] = words[i];
  }

  // An image's slots (row-major) from a tensor's values through the op's element map: `pad` where
  // the map says -1.
  std::vector<uint64_t> through_map(const std::vector<uint64_t>& v, const Op& o) const {
    std::vector<uint64_t> image(o.map_len);
    for (size_t i = 0; i < image.size(); ++i) {
      const int64_t e = prog_.maps[o.map + i];
      image[i] = e < 0 ? o.pad : v[static_cast<size_t>(e)];
    }
    return image;
  }

  void progress(const StepReport& r) const {
    if (opt_.json) return;
    std::fprintf(stderr, "  %s %s %s t%zu s%d: %s  %s\n", r.layer.c_str(), r.phase.c_str(), r.problem.c_str(), r.term,
                 r.step, r.mismatches + r.stored_mismatches == 0 ? "match" : "MISMATCH", r.mapping.c_str());
    if (r.on_chip) std::fprintf(stderr, "    result kept on chip: STORE %s\n", r.store.c_str());
    if (!r.through_host_because.empty())
      std::fprintf(stderr, "    result through %s: %s\n", r.saved ? "DRAM (saved by the DMA)" : "the host",
                   r.through_host_because.c_str());
    if (!r.on_chip && !r.store.empty()) std::fprintf(stderr, "    saved in its reader's layout: %s\n", r.store.c_str());
  }

  const RunOptions& opt_;
  const mapper::Program& prog_;
  DramInitiator& dram_;
  Scoreboard board_;
  const arch::DmaLayout dma_layout_;
  SystemBench* bench_ = nullptr;
  std::vector<StepReport> pending_;            // per program step, filled as its operations run
  std::vector<sc_core::sc_time> dram_time_;    // per program step: its DRAM transactions' time
  std::map<int32_t, std::vector<uint64_t>> host_;  // host buffers per program tensor
  bool injected_illegal_ = false, injected_mismatch_ = false;
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
    if (r.saved) result += ", saved by the DMA";
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

// Overlap as the bench counted it, cycle by cycle: how much of the time the controller executed
// the data movers (the DMA, the host) ran beside it, and how far the run is from the larger of the
// two, the floor no schedule of this program goes below (docs/program.md, "Overlap").
struct Overlap {
  CycleActivity a;
  int64_t simulated = 0;
  int64_t floor() const { return std::max(a.controller, a.moving); }
  int64_t could_overlap() const { return std::min(a.controller, a.moving); }
  double per_floor() const { return floor() > 0 ? static_cast<double>(simulated) / static_cast<double>(floor()) : 0.0; }
  double overlap_percent() const {
    return could_overlap() > 0 ? 100.0 * static_cast<double>(a.overlapped) / static_cast<double>(could_overlap()) : 100.0;
  }
};

nlohmann::json to_json(const Overlap& o) {
  return {{"controller_cycles", o.a.controller}, {"dma_busy_cycles", o.a.dma}, {"host_transfer_cycles", o.a.host},
          {"moving_cycles", o.a.moving},         {"overlapped_cycles", o.a.overlapped}, {"idle_cycles", o.a.none},
          {"overlap_percent", o.overlap_percent()}, {"floor_cycles", o.floor()},
          {"simulated_per_floor", o.per_floor()}};
}

std::string overlap_line(const Overlap& o) {
  return fmt::format("overlap (counted each cycle): the controller executed {} cycles, the DMA was busy {} and the host "
                     "transferred {} (data moved in {} cycles); they overlapped in {} of the {} they could ({:.1f} %), and "
                     "nothing ran in {}; simulated / the larger of the two = {:.2f}\n",
                     o.a.controller, o.a.dma, o.a.host, o.a.moving, o.a.overlapped, o.could_overlap(), o.overlap_percent(),
                     o.a.none, o.per_floor());
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
                     {"kept_on_chip", r.on_chip}, {"saved_by_dma", r.saved}, {"stored_mismatches", r.stored_mismatches},
                     {"store_cycles", r.store_cycles}, {"store_predicted_cycles", r.store_predicted},
                     {"through_host_because", r.through_host_because}, {"fate", r.fate}, {"store", r.store},
                     {"fp64_rel_error", r.rel_error >= 0 ? nlohmann::json(r.rel_error) : nlohmann::json(nullptr)}});
  return {{"config", cfg.name}, {"dtype", arch::to_string(cfg.dtype)}, {"pes", cfg.total_pes()}, {"steps", steps},
          {"sim_cycles", sim_cycles}, {"sim_seconds", wall_s}};
}


}  // namespace

RunOptions parse_run_args(int argc, char** argv) {
  RunOptions o;
  std::string config, program;
  std::vector<std::string> layers;
  mapper::CompileFlags flags;
  CLI::App app("fetta system simulation (one Verilated accelerator)");
  auto* prog = app.add_option("--program", program, "A compiled program (the directory `fetta compile` writes)");
  app.add_option("--config", config,
                 "Architecture configuration (YAML) the model was generated from (with --program: checked against the "
                 "program's)");
  std::vector<CLI::Option*> compile_opts = mapper::add_compile_flags(app, flags);
  compile_opts.push_back(app.add_option("--layer", layers, "Layer description (YAML); repeatable"));
  for (CLI::Option* c : compile_opts) c->excludes(prog);
  RunFlags run;
  add_run_flags(app, run);
  app.add_option("--timeout-cycles", o.timeout_cycles,
                 "End the run with a message naming the unit and its state when one wait (the controller, the DMA, a "
                 "queue) takes longer than this")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--check-model", o.check_model,
               fmt::format("Fail when a contraction's RTL cycles differ from the model's, the controller's executing "
                           "cycles from the wall-cycle model's busy cycles, or end to end from the wall-cycle model's by "
                           "more than {} %",
                           kWallModelTolerancePercent));
  app.add_flag("--inject-illegal", o.inject_illegal,
               "Self-check of the controller: push an illegal instruction (opcode 0) before the first contraction");
  app.add_flag("--inject-mismatch", o.inject_mismatch,
               "Self-check of the scoreboard: flip bit 0 of the first result element of the first contraction");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  o.seed = run.seed;
  o.inputs_dir = run.inputs;
  o.dump_dir = run.dump_dir;
  o.json = run.json;
  o.trace = run.trace;
  if (!run.trace_sample.empty()) o.trace_sample = parse_trace_sample(run.trace_sample);
  if (!program.empty()) {
    auto p = std::make_shared<mapper::Program>(mapper::load_program(program));
    o.cfg = config.empty() ? arch::parse_arch_config(p->config_yaml, program + "/program.json") : arch::load_arch_config(config);
    mapper::check_program_target(*p, o.cfg, hw::hardware_id_hex(o.cfg));
    o.program = std::move(p);
    return o;
  }
  if (config.empty() || layers.empty())
    throw std::invalid_argument("--config and --layer are required unless --program names a compiled program");
  o.cfg = arch::load_arch_config(config);
  auto p = std::make_shared<mapper::Program>(mapper::compile_program(o.cfg, layers, flags.phase_list(), flags.options()));
  p->hw_id = hw::hardware_id_hex(o.cfg);
  o.program = std::move(p);
  return o;
}

// Before anything simulates: two layers with different contents never share their dump and input
// file names (the layer name with every character but [A-Za-z0-9_-] as '_'), and every file
// --inputs names exists with the layer tensor's dtype and shape (read from its header: nothing is
// allocated for a bad one).
void preflight(const RunOptions& opt) {
  if (opt.dump_dir.empty() && opt.inputs_dir.empty()) return;
  const mapper::Program& prog = *opt.program;
  std::map<std::string, const mapper::ProgramLayer*> files;  // file-name stem -> the layer using it
  for (const mapper::ProgramLayer& pl : prog.layers) {
    const verif::LayerSpec spec = verif::parse_layer(pl.yaml, pl.name + " (in the program)");
    const auto [it, fresh] = files.emplace(safe(spec.name), &pl);
    if (!fresh && it->second->yaml != pl.yaml)
      throw std::invalid_argument(fmt::format("--dump-dir, --inputs: layers '{}' and '{}' both name their files {}_*.npy; "
                                              "give the layers distinct names",
                                              it->second->name, pl.name, it->first));
    if (opt.inputs_dir.empty()) continue;
    for (const auto& [name, shape] : verif::layer_input_shapes(spec)) {
      const std::string path = opt.inputs_dir + "/" + input_file(spec.name, name);
      require_input_file(path);
      const verif::NpyHeader h = verif::read_npy_header(path);
      if (h.descr != verif::npy_descr<uint16_t>() || h.shape != shape)
        throw std::invalid_argument(fmt::format("--inputs: {} holds {} of shape ({}); layer {}'s {} is {} of shape ({})", path,
                                                h.descr, fmt::join(h.shape, ", "), spec.name, name,
                                                verif::npy_descr<uint16_t>(), fmt::join(shape, ", ")));
    }
  }
}

int run_system(sc_core::sc_module& dut, const RunOptions& opt, const TraceHooks& hooks) {
  preflight(opt);
  // SystemC's infos ("Simulation stopped by user") go to stdout, which carries the report.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
  const mapper::Program& prog = *opt.program;
  const std::string map_for = mapper::to_string(prog.options.map_for);
  DramTarget dram("dram", opt.cfg.dram);
  DramInitiator dma("dma");
  dma.socket.bind(dram.socket);
  Executor exec(opt, dma);
  SystemBench bench("bench", dut, opt.cfg, [&](SystemBench& b) { exec.host(b); }, &dma);
  bench.set_timeout(opt.timeout_cycles);
  if (!opt.json)
    fmt::print(stderr, "fetta sim: {} layer(s), {} contraction(s), seed {}, config {}, mapped for {}\n", prog.layers.size(),
               prog.steps.size(), opt.seed, opt.cfg.name, map_for);
  const auto t0 = std::chrono::steady_clock::now();
  TraceWindows trace("trace_windows", opt.trace, opt.trace_sample, hooks, bench.period());
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();
  trace.finish(bench.now());
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!opt.dump_dir.empty()) {
    std::ofstream(opt.dump_dir + "/manifest.json") << exec.manifest().dump(2) << "\n";
  }
  const std::vector<StepReport>& reports = exec.reports;
  // End to end: the simulated cycles (host transfers, and the DMA's DRAM traffic, waited for in
  // them) plus the host path's DRAM time, which is accounted beside the clocked model.
  int64_t dram_accounted = 0;
  for (const StepReport& r : reports) dram_accounted += r.dram_cycles;
  const int64_t end_to_end = bench.now() + dram_accounted;
  const mapper::ProgramCost cost = mapper::program_cost(prog);
  const int64_t bound = mapper::end_to_end_bound(cost, opt.cfg);
  const mapper::WallPrediction model = mapper::predict_wall(prog, opt.cfg);
  const double model_error = 100.0 * static_cast<double>(model.total() - end_to_end) / static_cast<double>(end_to_end);
  const Overlap overlap{bench.activity(), bench.now()};
  if (opt.json) {
    nlohmann::json j = to_json(reports, opt.cfg, wall, bench.now());
    j["map_for"] = map_for;
    j["controller_busy_cycles"] = bench.busy_cycles();
    j["program"] = {{"config_sha256", prog.config_hash}, {"hw_id", prog.hw_id}, {"ops", prog.ops.size()},
                    {"words", prog.words.size()}, {"interleaved", prog.interleaved}};
    j["dma"] = {{"enabled", prog.options.dma}, {"bytes", bench.dma_bytes()}, {"saved_bytes", bench.dma_saved_bytes()},
                {"gathered_bytes", exec.gathered_bytes}, {"host_wait_cycles", bench.dma_wait_cycles()}};
    j["overlap"] = to_json(overlap);
    j["intermediates"] = mapper::to_json(mapper::intermediate_fates(prog));
    j["end_to_end"] = {{"cycles", end_to_end}, {"simulated_cycles", bench.now()}, {"dram_accounted_cycles", dram_accounted},
                       {"probe_cycles", exec.probe_cycles}, {"host_tensor_cycles", exec.host_tensor_cycles},
                       {"host_tensor_bytes", exec.host_tensor_bytes}, {"bound_cycles", bound},
                       {"least_dram_bytes", cost.least_dram_bytes}, {"model_cycles", model.total()},
                       {"model_simulated_cycles", model.simulated}, {"model_error_percent", model_error},
                       {"model_tolerance_percent", kWallModelTolerancePercent},
                       {"model_controller", mapper::controller_json(model)}};
    j["streams"] = {{"instructions_fnv1a", fmt::format("{:016x}", bench.instruction_digest())},
                    {"writes_fnv1a", fmt::format("{:016x}", bench.write_digest())}};
    j["dram"] = {{"bandwidth_gbps", opt.cfg.dram.bandwidth_gbps}, {"latency_ns", opt.cfg.dram.latency_ns},
                 {"transactions", dram.transactions()}, {"bytes_read", dram.bytes_read()}, {"bytes_written", dram.bytes_written()}};
    j["energy"] = to_json(run_energy(reports, opt.cfg, bench.now(), dram.bytes_read(), dram.bytes_written()));
    std::cout << j.dump(2) << "\n";
  } else {
    print_tables(reports, opt.cfg, wall, bench.now());
    fmt::print("streams: instructions fnv1a {:016x}, unified-memory writes fnv1a {:016x}\n", bench.instruction_digest(),
               bench.write_digest());
    fmt::print("DRAM (TLM-2.0 target, {} GB/s, {} ns per transaction): {} transactions, {:.1f} KiB read, {:.1f} KiB written\n",
               opt.cfg.dram.bandwidth_gbps, opt.cfg.dram.latency_ns, dram.transactions(),
               static_cast<double>(dram.bytes_read()) / 1024.0, static_cast<double>(dram.bytes_written()) / 1024.0);
    fmt::print("end to end: {} cycles = {} simulated (host transfers{} in them; {} of them the scoreboard's probes) + {} "
               "of DRAM time accounted beside them (the host path's)\n",
               end_to_end, bench.now(), prog.options.dma ? " and the DMA's DRAM traffic" : "", exec.probe_cycles,
               dram_accounted);
    fmt::print("model (mapper::predict_wall): {} cycles end to end = {} simulated + {} accounted; {:+.2f} % against the "
               "run\n",
               model.total(), model.simulated, model.dram_accounted, model_error);
    fmt::print("{}\n", mapper::stalls_text(model));
    fmt::print("{}", overlap_line(overlap));
    fmt::print("{}\n", mapper::fates_text(mapper::intermediate_fates(prog)));
    fmt::print("host transfers of tensor data: {} cycles, {:.1f} KiB (image writes, accumulator reads, DRAM reads and "
               "writes through the host; its instruction and descriptor pushes are not counted)\n",
               exec.host_tensor_cycles, static_cast<double>(exec.host_tensor_bytes) / 1024.0);
    fmt::print("bound: {} cycles, the larger of {} compute cycles and {:.1f} KiB (each input read once, each result "
               "written once) at {} GB/s; end to end / bound = {:.2f}\n",
               bound, cost.compute_cycles, static_cast<double>(cost.least_dram_bytes) / 1024.0, opt.cfg.dram.bandwidth_gbps,
               static_cast<double>(end_to_end) / static_cast<double>(bound));
    if (prog.options.dma)
      fmt::print("DMA (docs/dma.md): {:.1f} KiB of inputs and weights loaded, {:.1f} KiB of saved intermediates gathered "
                 "into their readers' images and {:.1f} KiB of results and intermediates saved beside compute; the host "
                 "waited {} cycles for it\n",
                 static_cast<double>(bench.dma_bytes() - bench.dma_saved_bytes() - exec.gathered_bytes) / 1024.0,
                 static_cast<double>(exec.gathered_bytes) / 1024.0, static_cast<double>(bench.dma_saved_bytes()) / 1024.0,
                 bench.dma_wait_cycles());
    else
      fmt::print("DMA (docs/dma.md): off (--no-dma); inputs and weights went through the host's port\n");
    fmt::print("{}", energy_line(run_energy(reports, opt.cfg, bench.now(), dram.bytes_read(), dram.bytes_written())));
  }
  if (!bench.failure().empty()) {
    fmt::print(stderr, "error: {}\n", bench.failure());
    return 2;
  }
  int64_t bad = 0, model_off = 0;
  bool tol_ok = true;
  const std::vector<mapper::StepTraffic> traffic = mapper::program_traffic(prog, opt.cfg);
  for (const StepReport& r : reports) {
    bad += r.mismatches + r.stored_mismatches;
    if (r.rel_error > kBf16RelTolerance) tol_ok = false;
    const mapper::StepTraffic& t = traffic.at(static_cast<size_t>(r.index));
    if (r.cycles != r.predicted || r.store_cycles != r.store_predicted || r.dram_bytes_read != t.read ||
        r.dram_bytes_written != t.written)
      ++model_off;
  }
  // The wall-cycle model is checked to the target it is held to (docs/program.md).
  const bool wall_off = std::abs(model_error) > kWallModelTolerancePercent;
  // The model's timeline gives every instruction the cycles the RTL takes: the cycles the
  // controller executed, counted by the bench, are its busy cycles exactly.
  const bool busy_off = overlap.a.controller != model.busy;
  if (bad != 0 || !tol_ok || (opt.check_model && (model_off != 0 || wall_off || busy_off))) {
    fmt::print(stderr, "FAIL: {} mismatching elements{}{}{}{}\n", bad, tol_ok ? "" : "; a result is outside the fp64 tolerance",
               opt.check_model && model_off != 0
                   ? fmt::format("; {} contraction(s) off the cycle model or the program's DRAM traffic", model_off)
                   : "",
               opt.check_model && wall_off
                   ? fmt::format("; end to end {:+.2f} % off the wall-cycle model (allowed: within {} %)", model_error,
                                 kWallModelTolerancePercent)
                   : "",
               opt.check_model && busy_off
                   ? fmt::format("; the controller executed {} cycles, the wall-cycle model's busy cycles are {}",
                                 overlap.a.controller, model.busy)
                   : "");
    return 1;
  }
  return 0;
}

}  // namespace fetta::sim::system
