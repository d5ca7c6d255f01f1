// verify_program (mapper/verify.hpp). The rules follow what the executor (sim/system/src/runner.cpp)
// and the scoreboard do with each field: a value that would index outside a table, a memory or a
// buffer, or make a wait unending, is refused here with its name.
#include "mapper/verify.hpp"

#include <fmt/format.h>

#include <map>
#include <set>
#include <vector>

#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "mapper/half_order.hpp"
#include "verif/layer.hpp"

namespace fetta::mapper {

namespace {

// first .. first + count - 1 inside [0, limit), without overflow.
bool within(int64_t first, int64_t count, int64_t limit) {
  return first >= 0 && count >= 0 && first <= limit && count <= limit - first;
}
bool within_u(uint64_t first, uint64_t count, uint64_t limit) { return first <= limit && count <= limit - first; }

class Verifier {
 public:
  Verifier(const Program& p, const arch::ArchConfig& cfg, const std::string& where)
      : p_(p), cfg_(cfg), where_(where), isa_(cfg), dma_(arch::dma_geometry(cfg)), dma_layout_(dma_) {}

  void run() {
    if (p_.layers.empty()) fail("program.json", "layers", "the program has no layer (a program compiles at least one)");
    for (size_t l = 0; l < p_.layers.size(); ++l) layer(l);
    for (size_t t = 0; t < p_.tensors.size(); ++t) tensor(t);
    for (size_t s = 0; s < p_.steps.size(); ++s) step(s);
    for (size_t i = 0; i < p_.ops.size(); ++i) op(i);
    flow();
    halves();
  }

 private:
  [[noreturn]] void fail(const std::string& record, const std::string& field, const std::string& what) const {
    throw ProgramError(fmt::format("{}: {}: field '{}': {}", where_, record, field, what));
  }
  std::string op_record(size_t i) const { return fmt::format("ops.bin record {} ({})", i, to_string(p_.ops[i].code)); }

  void layer(size_t l) {
    const ProgramLayer& pl = p_.layers[l];
    const std::string rec = fmt::format("program.json layers[{}]", l);
    verif::LayerSpec spec;
    try {
      spec = verif::parse_layer(pl.yaml, pl.name);
    } catch (const std::exception& e) {
      fail(rec, "yaml", fmt::format("the layer does not load: {}", e.what()));
    }
    if (pl.phases.empty()) fail(rec, "phases", "no phase (allowed: one or more of fp, bp, wg)");
    std::map<verif::Phase, std::vector<verif::PhaseProblem>> problems;
    for (verif::Phase ph : pl.phases) problems[ph] = verif::phase_problems(spec, ph);
    problems_.push_back(std::move(problems));
    // The layer tensors the scoreboard makes (its cores, X and dY), by name: their element counts.
    std::map<std::string, int64_t> inputs;
    for (const auto& [name, shape] : verif::layer_input_shapes(spec)) {
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      inputs[name] = n;
    }
    inputs_.push_back(std::move(inputs));
  }

  void tensor(size_t i) {
    const ProgramTensor& t = p_.tensors[i];
    const std::string rec = fmt::format("program.json tensors[{}] ({})", i, t.name);
    if (t.layer < 0 || static_cast<size_t>(t.layer) >= p_.layers.size())
      fail(rec, "layer", fmt::format("{} (allowed: 0 .. {}, the program's layers)", t.layer, p_.layers.size() - 1));
    if (t.dims.size() != t.labels.size())
      fail(rec, "dims", fmt::format("{} dims for {} labels (one each)", t.dims.size(), t.labels.size()));
    int64_t n = 1;
    for (int64_t d : t.dims) {
      if (d < 1 || d > kMaxProgramTensorElements / n)
        fail(rec, "dims", fmt::format("the tensor has more than {} elements, or a size below 1 (allowed: sizes >= 1, "
                                      "at most {} elements)",
                                      kMaxProgramTensorElements, kMaxProgramTensorElements));
      n *= d;
    }
    const bool operand = t.kind != ProgramTensor::Kind::accumulator;
    const int want_bytes = operand ? dram_operand_bytes(cfg_.dtype) : dram_result_bytes(cfg_.dtype);
    if (t.dram_addr >= 0 && t.dram_bytes != want_bytes)
      fail(rec, "dram_bytes", fmt::format("{} (allowed: {} for {} in {})", t.dram_bytes, want_bytes,
                                          operand ? "operands" : "accumulator words", arch::to_string(cfg_.dtype)));
    if (t.dram_addr < -1) fail(rec, "dram_addr", fmt::format("{} (allowed: -1, or a byte address >= 0)", t.dram_addr));
    if (t.dram_addr >= 0 && !within(t.dram_addr, n * t.dram_bytes, capacity()))
      fail(rec, "dram_addr", fmt::format("{} + {} bytes is past the DRAM's {} MiB (dram.capacity_mb)", t.dram_addr,
                                         n * t.dram_bytes, cfg_.dram.capacity_mb));
    if (t.kind == ProgramTensor::Kind::input) {
      const auto& inputs = inputs_[static_cast<size_t>(t.layer)];
      const auto in = inputs.find(t.input);
      if (in == inputs.end()) {
        std::string names;
        for (const auto& [name, _] : inputs) names += (names.empty() ? "" : ", ") + name;
        fail(rec, "input", fmt::format("'{}' is not a tensor of layer {} (allowed: {})", t.input, t.layer, names));
      }
      if (in->second != n)
        fail(rec, "dims", fmt::format("{} elements; layer tensor {} has {}", n, t.input, in->second));
    }
  }

  void step(size_t s) {
    const ProgramStep& st = p_.steps[s];
    const std::string rec = fmt::format("program.json steps[{}]", s);
    if (st.layer < 0 || static_cast<size_t>(st.layer) >= p_.layers.size())
      fail(rec, "layer", fmt::format("{} (allowed: 0 .. {}, the program's layers)", st.layer, p_.layers.size() - 1));
    const auto& problems = problems_[static_cast<size_t>(st.layer)];
    const auto ph = problems.find(st.phase);
    if (ph == problems.end())
      fail(rec, "phase", fmt::format("{}: not a phase of layer {}", verif::to_string(st.phase), st.layer));
    if (st.problem < 0 || static_cast<size_t>(st.problem) >= ph->second.size())
      fail(rec, "problem", fmt::format("{} (allowed: 0 .. {}, the phase's problems)", st.problem,
                                       static_cast<int64_t>(ph->second.size()) - 1));
    const verif::PhaseProblem& prob = ph->second[static_cast<size_t>(st.problem)];
    if (st.terms != prob.terms.size() || st.term >= st.terms)
      fail(rec, "term", fmt::format("term {} of {}; the problem has {} term(s)", st.term, st.terms, prob.terms.size()));
    if (st.a.size() != st.gemms.size() || st.b.size() != st.gemms.size())
      fail(rec, "a", fmt::format("{} and {} operand tensors for {} GEMM(s) (one each)", st.a.size(), st.b.size(), st.gemms.size()));
    if (st.gemms.size() > 1 && st.gemms.size() != st.terms)
      fail(rec, "gemms", fmt::format("a sum of {} GEMMs for {} terms", st.gemms.size(), st.terms));
    for (size_t g = 0; g < st.gemms.size(); ++g) {
      for (int32_t t : {st.a[g], st.b[g]})
        if (!tensor_id(t)) fail(rec, "a", fmt::format("tensor {} (allowed: 0 .. {})", t, p_.tensors.size() - 1));
      try {
        (void)rebuild_gemm(cfg_, st.gemms[g]);
      } catch (const std::exception& e) {
        fail(rec, fmt::format("gemms[{}]", g), e.what());
      }
      const GemmShape& sh = st.gemms[g].shape;
      if (tensor_of(st.a[g]).numel() * tensor_of(st.b[g]).numel() == 0 || sh.m.size() * sh.k.size() != tensor_of(st.a[g]).numel() ||
          sh.k.size() * sh.n.size() != tensor_of(st.b[g]).numel())
        fail(rec, "a", fmt::format("operands of {} and {} elements for a {} x {} x {} GEMM", tensor_of(st.a[g]).numel(),
                                   tensor_of(st.b[g]).numel(), sh.m.size(), sh.k.size(), sh.n.size()));
    }
    if (st.intermediate != -1 && !tensor_id(st.intermediate))
      fail(rec, "intermediate", fmt::format("{} (allowed: -1, or 0 .. {})", st.intermediate, p_.tensors.size() - 1));
  }

  bool tensor_id(int64_t t) const { return t >= 0 && static_cast<size_t>(t) < p_.tensors.size(); }
  const ProgramTensor& tensor_of(int64_t t) const { return p_.tensors[static_cast<size_t>(t)]; }
  int64_t capacity() const { return static_cast<int64_t>(cfg_.dram.capacity_mb) << 20; }

  // The element map of op i: map_len entries from `map`, each -1 or an element of tensor t.
  void element_map(size_t i, uint64_t expect) const {
    const Op& o = p_.ops[i];
    if (!within_u(o.map, o.map_len, p_.maps.size()))
      fail(op_record(i), "map", fmt::format("entries {} .. +{} are past maps.bin's {}", o.map, o.map_len, p_.maps.size()));
    if (o.map_len != expect) fail(op_record(i), "map_len", fmt::format("{} (the op moves {} words)", o.map_len, expect));
    const int64_t n = tensor_of(o.tensor).numel();
    for (uint64_t k = 0; k < o.map_len; ++k)
      if (const int64_t e = p_.maps[o.map + k]; e < -1 || e >= n)
        fail(op_record(i), "map", fmt::format("entry {} names element {} of {} ({} elements; allowed: -1 for none, 0 .. {})",
                                              k, e, tensor_of(o.tensor).name, n, n - 1));
  }
  // A lane list of op i: lanes_len entries from `lanes`, each below `limit`, none twice.
  void lane_list(size_t i, int64_t limit) const {
    const Op& o = p_.ops[i];
    if (!within_u(o.lanes, o.lanes_len, p_.maps.size()) || o.lanes_len == 0 || o.lanes_len > static_cast<uint64_t>(limit))
      fail(op_record(i), "lanes", fmt::format("{} lanes from entry {} (allowed: 1 .. {}, inside maps.bin's {})", o.lanes_len,
                                              o.lanes, limit, p_.maps.size()));
    std::set<int64_t> seen;
    for (uint64_t k = 0; k < o.lanes_len; ++k)
      if (const int64_t l = p_.maps[o.lanes + k]; l < 0 || l >= limit || !seen.insert(l).second)
        fail(op_record(i), "lanes", fmt::format("lane {} (allowed: 0 .. {}, each once)", l, limit - 1));
  }
  void rows_of_half(size_t i) const {
    const Op& o = p_.ops[i];
    const int64_t half = cfg_.memory.unified_depth / 2;
    if (o.b < 1 || !within(o.a, o.b, half))
      fail(op_record(i), "a", fmt::format("rows {} .. +{} (allowed: inside a half of {} rows, at least one)", o.a, o.b, half));
    if (o.c < 1 || o.c > cfg_.network.lanes)
      fail(op_record(i), "c", fmt::format("{} lanes (allowed: 1 .. {})", o.c, cfg_.network.lanes));
  }
  void words(size_t i, int64_t expect) const {
    const Op& o = p_.ops[i];
    if (o.b != expect || !within(o.a, o.b, static_cast<int64_t>(p_.words.size())))
      fail(op_record(i), "b", fmt::format("words {} .. +{} (allowed: {} words inside words.bin's {})", o.a, o.b, expect,
                                          p_.words.size()));
  }
  void needs_tensor(size_t i) const {
    if (!tensor_id(p_.ops[i].tensor))
      fail(op_record(i), "tensor", fmt::format("{} (allowed: 0 .. {})", p_.ops[i].tensor, static_cast<int64_t>(p_.tensors.size()) - 1));
  }
  void needs_report(size_t i) const {
    const int32_t r = p_.ops[i].report;
    if (r < 0 || static_cast<size_t>(r) >= p_.steps.size())
      fail(op_record(i), "report", fmt::format("{} (allowed: 0 .. {}, the program's steps)", r, static_cast<int64_t>(p_.steps.size()) - 1));
  }
  // b rows of c lanes of a half (the shape of an image in DRAM, or of saved rows).
  void image_rows(size_t i) const {
    const Op& o = p_.ops[i];
    if (o.b < 1 || o.b > cfg_.memory.unified_depth / 2 || o.c < 1 || o.c > cfg_.network.lanes)
      fail(op_record(i), "b", fmt::format("{} rows of {} lanes (allowed: 1 .. {} rows of 1 .. {} lanes)", o.b, o.c,
                                          cfg_.memory.unified_depth / 2, cfg_.network.lanes));
  }
  // A requantization's shift fits the 64-bit words it shifts.
  void requant_shift(size_t i) const {
    const Op& o = p_.ops[i];
    if (o.convert == Convert::requant && (o.shift < 0 || o.shift > 63))
      fail(op_record(i), "shift", fmt::format("{} (allowed: 0 .. 63)", o.shift));
  }
  void needs_dram(size_t i, int64_t bytes_at, int64_t bytes) const {
    if (!within(bytes_at, bytes, capacity()))
      fail(op_record(i), "a", fmt::format("DRAM bytes {} .. +{} are past the DRAM's {} MiB", bytes_at, bytes, cfg_.dram.capacity_mb));
  }

  // The fields an op of each code uses; the others must hold their defaults, so that a damaged or
  // misaligned record is not read as a harmless one.
  void unused_fields(size_t i) const {
    const Op& o = p_.ops[i];
    enum : unsigned { kAccount = 1, kConvert = 2, kHost = 4, kPad = 8, kReport = 16, kTensor = 32, kSource = 64, kShift = 128,
                      kA = 256, kB = 512, kC = 1024, kMap = 2048, kLanes = 4096 };
    static constexpr unsigned kUses[] = {
        /* preload */ kTensor,
        /* fetch */ kReport | kTensor,
        /* write_rows */ kPad | kReport | kTensor | kA | kB | kC | kMap,
        /* push */ kAccount | kReport | kA | kB | kC,
        /* wait_idle */ kAccount | kReport,
        /* read_acc */ kHost | kReport | kTensor | kA | kMap | kLanes,
        /* check */ kConvert | kReport | kTensor | kShift,
        /* store */ kConvert | kReport | kTensor | kSource | kShift,
        /* check_rows */ kAccount | kPad | kReport | kTensor | kA | kB | kC | kMap,
        /* finish */ kReport,
        /* preload_image */ kAccount | kPad | kReport | kTensor | kA | kB | kC | kMap,
        /* dma */ kAccount | kReport | kTensor | kA | kB,
        /* wait_retired */ kReport | kA,
        /* read_saved */ kAccount | kHost | kReport | kTensor | kSource | kA | kB | kC | kMap | kLanes,
        /* wait_dma_idle */ kAccount | kReport,
    };
    const unsigned uses = kUses[static_cast<size_t>(o.code)];
    auto must = [&](unsigned bit, bool is_default, const char* field, const char* value) {
      if (!(uses & bit) && !is_default)
        fail(op_record(i), field, fmt::format("a {} op does not use it, so it must be {} (a damaged or misaligned record?)",
                                              to_string(o.code), value));
    };
    must(kAccount, o.account == Account::compute, "account", "0 (compute)");
    must(kConvert, o.convert == Convert::none, "convert", "0 (none)");
    must(kHost, o.host_counted, "host_counted", "1");
    must(kPad, o.pad == 0, "pad", "0");
    must(kReport, o.report == -1, "report", "-1");
    must(kTensor, o.tensor == -1, "tensor", "-1");
    must(kSource, o.source == -1, "source", "-1");
    must(kShift, o.shift == 0, "shift", "0");
    must(kA, o.a == 0, "a", "0");
    must(kB, o.b == 0, "b", "0");
    must(kC, o.c == 0, "c", "0");
    must(kMap, o.map == 0 && o.map_len == 0, "map", "0 (and map_len 0)");
    must(kLanes, o.lanes == 0 && o.lanes_len == 0, "lanes", "0 (and lanes_len 0)");
  }

  void op(size_t i) {
    unused_fields(i);
    const Op& o = p_.ops[i];
    if (o.report < -1 || (o.report >= 0 && static_cast<size_t>(o.report) >= p_.steps.size())) needs_report(i);
    if (o.tensor < -1) needs_tensor(i);
    switch (o.code) {
      case OpCode::preload:
        needs_tensor(i);
        if (tensor_of(o.tensor).kind != ProgramTensor::Kind::input || tensor_of(o.tensor).dram_addr < 0)
          fail(op_record(i), "tensor", "a preload places a layer input that has a DRAM address");
        break;
      case OpCode::fetch:
        needs_tensor(i);
        needs_report(i);
        if (tensor_of(o.tensor).dram_addr < 0) fail(op_record(i), "tensor", "a fetch reads a tensor that has a DRAM address");
        break;
      case OpCode::write_rows:
      case OpCode::check_rows:
        needs_tensor(i);
        if (o.code == OpCode::check_rows) needs_report(i);
        rows_of_half(i);
        element_map(i, static_cast<uint64_t>(o.b * o.c));
        break;
      case OpCode::push:
        words(i, isa_.words());
        if (o.c < 0) fail(op_record(i), "c", fmt::format("{} busy cycles (allowed: >= 0)", o.c));
        ++pushes_;
        break;
      case OpCode::wait_idle:
      case OpCode::wait_dma_idle: break;
      case OpCode::read_acc:
        needs_tensor(i);
        if (o.a < 1 || o.a > cfg_.memory.accum_depth)
          fail(op_record(i), "a", fmt::format("{} rows (allowed: 1 .. {}, the accumulator's)", o.a, cfg_.memory.accum_depth));
        lane_list(i, cfg_.network.lanes);
        element_map(i, static_cast<uint64_t>(o.a) * o.lanes_len);
        break;
      case OpCode::check:
        needs_tensor(i);
        needs_report(i);
        requant_shift(i);
        break;
      case OpCode::store: store(i); break;
      case OpCode::finish: needs_report(i); break;
      case OpCode::preload_image: preload_image(i); break;
      case OpCode::dma: descriptor(i); break;
      case OpCode::wait_retired:
        // Only instructions pushed before it can retire: a larger count would wait forever.
        if (o.a < 0 || o.a > pushes_)
          fail(op_record(i), "a", fmt::format("waits for {} instructions retired, {} pushed before it (allowed: 0 .. {})", o.a,
                                              pushes_, pushes_));
        break;
      case OpCode::read_saved: read_saved(i); break;
    }
  }

  void store(size_t i) const {
    const Op& o = p_.ops[i];
    needs_tensor(i);
    needs_report(i);
    if (!tensor_id(o.source)) fail(op_record(i), "source", fmt::format("{} (allowed: 0 .. {})", o.source, p_.tensors.size() - 1));
    if (tensor_of(o.tensor).dram_addr < 0) fail(op_record(i), "tensor", "a store writes a tensor that has a DRAM address");
    if (tensor_of(o.source).numel() != tensor_of(o.tensor).numel())
      fail(op_record(i), "source", fmt::format("{} elements stored as a tensor of {}", tensor_of(o.source).numel(),
                                               tensor_of(o.tensor).numel()));
    requant_shift(i);
  }

  void preload_image(size_t i) const {
    const Op& o = p_.ops[i];
    const int operand = arch::operand_bits(cfg_.dtype) / 8;
    const int64_t H = arch::host_port_lanes(cfg_);
    needs_tensor(i);
    needs_report(i);
    if (o.account == Account::store)
      fail(op_record(i), "account", "0 (compute: an image the DMA loads) or 2 (none: the pad beat gathers read)");
    if (tensor_of(o.tensor).kind != ProgramTensor::Kind::input) fail(op_record(i), "tensor", "an operand image in DRAM is of a layer input");
    image_rows(i);
    needs_dram(i, o.a, o.b * ((o.c + H - 1) / H * H) * operand);
    element_map(i, static_cast<uint64_t>(o.b * o.c));
  }

  void descriptor(size_t i) const {
    const Op& o = p_.ops[i];
    words(i, dma_layout_.words());
    if (o.tensor >= 0) {  // a gather: its beats are that intermediate's DRAM traffic
      needs_tensor(i);
      if (tensor_of(o.tensor).kind != ProgramTensor::Kind::intermediate)
        fail(op_record(i), "tensor", "a descriptor names a tensor only as the saved intermediate it gathers");
    }
    const arch::Words w(p_.words.begin() + o.a, p_.words.begin() + o.a + o.b);
    const arch::DmaDescriptor d = arch::decode_dma(dma_layout_, w);
    // A descriptor moves at most a half's slots: more would wrap onto itself, and at the
    // fields' maximum it would run for 2^48 beats.
    const int64_t slots = int64_t{1} << dma_.slot_bits();
    if (d.bound[0] > static_cast<uint64_t>(slots) || d.bound[1] > static_cast<uint64_t>(slots) ||
        d.bound[2] > static_cast<uint64_t>(slots) || d.beats() > slots)
      fail(op_record(i), "b", fmt::format("a descriptor of {} x {} x {} beats (allowed: at most {}, a half's slots)", d.bound[0],
                                          d.bound[1], d.bound[2], slots));
    // Every beat inside the DRAM (the target refuses an access past its capacity), as the
    // hardware computes the addresses (modulo the address space: arch::dma_beats).
    const int64_t beat = dma_.beat_bytes(), beats = capacity() / beat;
    for (const arch::DmaBeat& b : arch::dma_beats(dma_layout_, d))
      if (b.dram >= static_cast<uint64_t>(beats))
        fail(op_record(i), "a", fmt::format("a descriptor reaching DRAM beat {} (allowed: 0 .. {}, the DRAM's {} MiB in "
                                            "beats of {} bytes)",
                                            b.dram, beats - 1, cfg_.dram.capacity_mb, beat));
  }

  void read_saved(size_t i) const {
    const Op& o = p_.ops[i];
    const int operand = arch::operand_bits(cfg_.dtype) / 8;
    needs_tensor(i);
    needs_report(i);
    image_rows(i);
    needs_dram(i, o.a, o.b * o.c * operand);
    lane_list(i, o.c);
    element_map(i, static_cast<uint64_t>(o.b) * o.lanes_len);
    if (o.source != -1 && o.source != o.tensor)
      fail(op_record(i), "source", fmt::format("{} (allowed: -1, or the op's own tensor {} for a read again)", o.source, o.tensor));
  }

  // The data flow: every host buffer written before it is read, every checked step checked once
  // and every step finished once, after its check.
  void flow() const {
    std::vector<bool> in_host(p_.tensors.size(), false), in_dram(p_.tensors.size(), false);
    std::vector<int> checks(p_.steps.size(), 0), finishes(p_.steps.size(), 0);
    std::set<std::pair<int, std::string>> preloaded;
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const Op& o = p_.ops[i];
      auto read = [&](int32_t t, const char* field) {
        if (!in_host[static_cast<size_t>(t)])
          fail(op_record(i), field, fmt::format("{} is read from the host's buffer before anything put it there",
                                                tensor_of(t).name));
      };
      switch (o.code) {
        case OpCode::preload:
          preloaded.insert({tensor_of(o.tensor).layer, tensor_of(o.tensor).input});
          in_dram[static_cast<size_t>(o.tensor)] = true;
          break;
        case OpCode::fetch: {
          const ProgramTensor& t = tensor_of(o.tensor);
          if (!in_dram[static_cast<size_t>(o.tensor)] &&
              !(t.kind == ProgramTensor::Kind::input && preloaded.contains({t.layer, t.input})))
            fail(op_record(i), "tensor", fmt::format("{} is fetched from DRAM before anything put it there", t.name));
          in_host[static_cast<size_t>(o.tensor)] = true;
          break;
        }
        case OpCode::write_rows: read(o.tensor, "tensor"); break;
        case OpCode::store:
          read(o.source, "source");
          in_dram[static_cast<size_t>(o.tensor)] = true;
          break;
        case OpCode::read_acc:
        case OpCode::read_saved: in_host[static_cast<size_t>(o.tensor)] = true; break;
        case OpCode::check:
          read(o.tensor, "tensor");
          if (!p_.steps[static_cast<size_t>(o.report)].checked())
            fail(op_record(i), "report", fmt::format("step {} has no GEMM record to check against", o.report));
          if (finishes[static_cast<size_t>(o.report)] > 0)
            fail(op_record(i), "report", fmt::format("step {} is checked after it finished", o.report));
          ++checks[static_cast<size_t>(o.report)];
          break;
        case OpCode::finish: ++finishes[static_cast<size_t>(o.report)]; break;
        default: break;
      }
    }
    for (size_t s = 0; s < p_.steps.size(); ++s) {
      const int want = p_.steps[s].checked() ? 1 : 0;
      if (checks[s] != want)
        fail(fmt::format("program.json steps[{}]", s), "gemms",
             fmt::format("checked by {} check op(s); the step claims {} (a result the program says it checks must be checked "
                         "exactly once)",
                         checks[s], want));
      if (finishes[s] != 1)
        fail(fmt::format("program.json steps[{}]", s), "step",
             fmt::format("finished by {} finish op(s) (allowed: exactly 1)", finishes[s]));
    }
  }

  // A descriptor (record `rec`) that may never start, found at op i, where the host's `what` never ends.
  [[noreturn]] void stuck_at(const std::string& rec, const HalfOrder::Stuck& stuck, size_t i, const std::string& what) const {
    fail(rec, "half",
         fmt::format("{}: the TCU computes on that half when the DMA reaches this descriptor, and no FLIP pushed before "
                     "ops.bin record {} ({}) frees it, so the host's {} never ends (a descriptor waits for the half it "
                     "moves to be the host's: docs/dma.md, \"Order and the halves\")",
                     stuck.half ? 1 : 0, i, to_string(p_.ops[i].code), what));
  }

  // No wait for the DMA hangs (HalfOrder). The host waits for the DMA to be idle before its own
  // accesses to the unified memory and DRAM (sim::SystemBench) as well as at wait_dma_idle.
  void halves() const {
    HalfOrder order(arch::kTopDmaQueueDepth);
    std::vector<size_t> descriptor_op;
    for (size_t i = 0; i < p_.ops.size(); ++i) {
      const Op& o = p_.ops[i];
      const bool waits_dma = o.code == OpCode::wait_dma_idle || o.code == OpCode::write_rows ||
                             o.code == OpCode::check_rows || (o.code == OpCode::read_saved && o.host_counted);
      if (waits_dma) {
        if (const auto stuck = order.wait_dma_idle()) {
          const size_t d = descriptor_op[stuck->descriptor];
          stuck_at(op_record(d), *stuck, i, "wait for the DMA there");
        }
      }
      switch (o.code) {
        case OpCode::push:
          order.push_instruction(static_cast<arch::Opcode>(arch::field_value(
                                     arch::Words(p_.words.begin() + o.a, p_.words.begin() + o.a + o.b), isa_.field("op"))) ==
                                 arch::Opcode::flip);
          break;
        case OpCode::dma: {
          const arch::Words w(p_.words.begin() + o.a, p_.words.begin() + o.a + o.b);
          if (const auto stuck = order.push_descriptor(arch::decode_dma(dma_layout_, w).half))
            stuck_at(op_record(descriptor_op[stuck->descriptor]), *stuck, i,
                     fmt::format("push there, into the DMA's full queue of {},", arch::kTopDmaQueueDepth));
          descriptor_op.push_back(i);
          break;
        }
        case OpCode::wait_retired: order.wait_retired(o.a); break;
        case OpCode::wait_idle: order.wait_idle(); break;
        default: break;
      }
    }
  }

  const Program& p_;
  const arch::ArchConfig& cfg_;
  std::string where_;
  arch::IsaLayout isa_;
  arch::DmaGeometry dma_;
  arch::DmaLayout dma_layout_;
  std::vector<std::map<verif::Phase, std::vector<verif::PhaseProblem>>> problems_;  // per layer and phase
  std::vector<std::map<std::string, int64_t>> inputs_;  // per layer: its input tensors' element counts
  int64_t pushes_ = 0;
};

}  // namespace

void verify_program(const Program& p, const arch::ArchConfig& cfg, const std::string& where) {
  Verifier(p, cfg, where).run();
}

}  // namespace fetta::mapper
