// The controller's output-stationary gemm on a whole Verilated top, against the golden model:
// random GEMMs over every CE grid Gm x Gn, K below, at and above R (the fold gap), partial M and N
// tiles, several folds each way, the four operand mixes of the CE tests, and accumulate pairs
// (a second gemm with acc_accumulate onto the first's rows). Each case writes the IA and IB images
// in the layout of mapper/os_gemm.hpp, runs one gemm and checks every result element bit for bit,
// the accumulator rows around the result unchanged, the busy cycles equal to the model's
// (os_gemm_instr_cycles) and the error flag low. Every fourth case is followed by a GEMM the
// compiler maps (mapper/compile.hpp: weight-stationary, output-stationary over two K chunks, or
// its fastest choice; checked the same way against hardware_order), so the controller switches
// modes both ways and the compiler's OS jobs, layouts and result slots run on the RTL. Then
// transposing STOREs (run_transposing_store): diagonal moves on the RTL, their image read back
// and checked lane by lane. Linked against the system tests' models.
#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>

#include FETTA_TOP_HEADER
#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "mapper/compile.hpp"
#include "mapper/os_gemm.hpp"
#include "mapper/store.hpp"
#include "sim/ce/operands.hpp"
#include "sim/system/bench.hpp"
#include "verif/contract.hpp"
#include "verif/numerics.hpp"

namespace {

using namespace fetta;

struct Options {
  arch::ArchConfig cfg;
  uint64_t seed = 11;
  int cases = 12;
  int64_t timeout = 10'000'000;  // cycles to wait for the controller
};

// An operand matrix's bit patterns as a labelled tensor (the layouts' input), of `dims` (default:
// the matrix's rows and columns) in row-major order.
verif::Tensor<uint16_t> operand_tensor(const sim::ce::Matrix& mtx, std::vector<std::string> labels,
                                       std::vector<int64_t> dims = {}) {
  std::vector<uint16_t> v;
  for (uint64_t x : mtx.v) v.push_back(static_cast<uint16_t>(x));
  if (dims.empty()) dims = {mtx.rows, mtx.cols};
  return verif::Tensor<uint16_t>(std::move(labels), std::move(dims), std::move(v));
}

struct Outcome {
  int64_t checked = 0, mismatches = 0, stray = 0, cycle_errors = 0, diagonal_moves = 0;
  bool error_flag = false;
};

class OsGemmTest {
 public:
  explicit OsGemmTest(const Options& o)
      : opt_(o),
        isa_(o.cfg),
        rng_(o.seed),
        acc_mask_(arch::accumulator_bits(o.cfg.dtype) >= 64 ? ~uint64_t{0}
                                                             : (uint64_t{1} << arch::accumulator_bits(o.cfg.dtype)) - 1) {}

  void host(sim::system::SystemBench& bench) {
    bench_ = &bench;
    const arch::ArchConfig& cfg = opt_.cfg;
    const int G = cfg.ce.count, grids = std::countr_zero(static_cast<unsigned>(G)) + 1;
    const int64_t R = cfg.ce.rows;
    const int64_t ks[] = {std::max<int64_t>(1, R / 2), R, 1, 37, R + 1, 64};
    const sim::ce::OperandMix mixes[] = {sim::ce::OperandMix::uniform, sim::ce::OperandMix::wide,
                                         sim::ce::OperandMix::special, sim::ce::OperandMix::tiny};
    for (int i = 0; i < opt_.cases; ++i) {
      const int gm = 1 << (i % grids);
      const int gn = G / gm;
      const int64_t k = ks[i % 6];
      std::uniform_int_distribution<int64_t> dm(1, 3 * gm * R), dn(1, 3 * gn * cfg.ce.cols);
      mapper::OsGemm g = mapper::os_gemm(cfg, dm(rng_), k, dn(rng_), gm);
      const sim::ce::OperandMix mix = mixes[i % 4];
      const bool pair = i % 3 == 2;
      place(g);
      const sim::ce::Matrix z = run(g, mix, fmt::format("case {}", i));
      if (pair) {
        g.acc_accumulate = true;
        g.a_base = 0;  // the second gemm's images at other rows of the other half
        g.b_base = mapper::os_a_rows(g);
        run(g, mix, fmt::format("case {} (accumulate)", i), &z);
      }
      if (i % 4 == 3) run_compiled(fmt::format("case {} (then compiled)", i), (i / 4) % 3);
    }
    const int64_t N = cfg.network.lanes;
    for (const int64_t m : {N, N / 2 + 3, int64_t{5}}) run_transposing_store(fmt::format("store M {}", m), m);
    run_transposing_store(fmt::format("store M {} (b, a)", N), N, N >= 64 ? 8 : 4);
    out.error_flag = bench.error();
  }

  Outcome out;

 private:
  void place(mapper::OsGemm& g) {
    const int64_t half = opt_.cfg.memory.unified_depth / 2, acc = opt_.cfg.memory.accum_depth;
    const int64_t a = mapper::os_a_rows(g), b = mapper::os_b_rows(g), z = mapper::os_z_rows(g);
    if (a + b > half || z + 2 * g.rows > acc) throw std::logic_error("os_gemm test: a case does not fit the memories");
    g.a_base = std::uniform_int_distribution<int64_t>(0, half - a - b)(rng_);
    g.b_base = g.a_base + a;
    g.acc_base = std::uniform_int_distribution<int64_t>(g.rows, acc - z - g.rows)(rng_);
  }

  // Runs one gemm on fresh operands; returns the golden accumulator contents (M x N).
  sim::ce::Matrix run(const mapper::OsGemm& g, sim::ce::OperandMix mix, const std::string& what,
                      const sim::ce::Matrix* init = nullptr) {
    const arch::ArchConfig& cfg = opt_.cfg;
    const int N = cfg.network.lanes;
    const uint64_t case_seed = rng_();
    const sim::ce::GemmOperands ops = sim::ce::random_gemm(cfg.dtype, {g.m, g.k, g.n}, case_seed, mix);
    // Operand images (padding in every slot no element takes).
    std::vector<uint16_t> ia(static_cast<size_t>(mapper::os_a_rows(g) * N), static_cast<uint16_t>(sim::ce::ia_padding(cfg.dtype)));
    std::vector<uint16_t> ib(static_cast<size_t>(mapper::os_b_rows(g) * N), static_cast<uint16_t>(sim::ce::ib_padding(cfg.dtype)));
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t k = 0; k < g.k; ++k) {
        const mapper::OsSlot s = mapper::os_a_slot(g, m, k);
        ia[static_cast<size_t>((s.row - g.a_base) * N + s.lane)] = static_cast<uint16_t>(ops.a.at(m, k));
      }
    for (int64_t k = 0; k < g.k; ++k)
      for (int64_t n = 0; n < g.n; ++n) {
        const mapper::OsSlot s = mapper::os_b_slot(g, k, n);
        ib[static_cast<size_t>((s.row - g.b_base) * N + s.lane)] = static_cast<uint16_t>(ops.b.at(k, n));
      }
    bench_->write_rows(g.a_base, mapper::os_a_rows(g), N, ia);
    bench_->write_rows(g.b_base, mapper::os_b_rows(g), N, ib);
    // The reduction network passes every lane straight (pass = 0 in every switch, no transpose).
    const std::vector<uint8_t> pass(static_cast<size_t>(isa_.red_cfg_bits()), 0);
    for (int c = 0; c < isa_.red_chunks(); ++c) bench_->push(arch::encode_red_cfg(isa_, c, pass));
    bench_->push(arch::encode_flip(isa_));
    bench_->wait_idle(opt_.timeout);

    const int64_t z_rows = mapper::os_z_rows(g);
    std::vector<int64_t> guard;  // R rows on either side of the result
    for (int64_t r = 1; r <= g.rows; ++r) {
      guard.push_back(g.acc_base - r);
      guard.push_back(g.acc_base + z_rows - 1 + r);
    }
    std::vector<int> lanes(static_cast<size_t>(N));
    for (int l = 0; l < N; ++l) lanes[static_cast<size_t>(l)] = l;
    const std::vector<uint64_t> guard_before = bench_->read_acc(guard, lanes);

    const uint64_t c0 = bench_->cycle_count();
    bench_->push(arch::encode_gemm(isa_, mapper::os_gemm_instr(g)));
    bench_->wait_idle(opt_.timeout);
    const int64_t cycles = static_cast<int64_t>(bench_->cycle_count() - c0);
    const int64_t model = mapper::os_gemm_instr_cycles(cfg, g);

    sim::ce::Matrix want = sim::ce::golden_gemm(ops, 0);  // one chain per output, over all of K
    if (init)
      for (size_t i = 0; i < want.v.size(); ++i) want.v[i] = sim::ce::accumulate(cfg.dtype, init->v[i], want.v[i]);
    std::vector<int64_t> rows(static_cast<size_t>(z_rows));
    for (int64_t r = 0; r < z_rows; ++r) rows[static_cast<size_t>(r)] = g.acc_base + r;
    const std::vector<uint64_t> got = bench_->read_acc(rows, lanes);
    int64_t bad = 0;
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t n = 0; n < g.n; ++n) {
        const mapper::OsSlot s = mapper::os_z_slot(g, m, n);
        const uint64_t v = got[static_cast<size_t>((s.row - g.acc_base) * N + s.lane)] & acc_mask_;
        if (v != (want.at(m, n) & acc_mask_)) {
          if (bad < 3)
            std::fprintf(stderr, "  %s: Z[%lld][%lld] = %llx, golden %llx (acc row %lld lane %d)\n", what.c_str(),
                         static_cast<long long>(m), static_cast<long long>(n), static_cast<unsigned long long>(v),
                         static_cast<unsigned long long>(want.at(m, n) & acc_mask_), static_cast<long long>(s.row), s.lane);
          ++bad;
        }
      }
    const std::vector<uint64_t> guard_after = bench_->read_acc(guard, lanes);
    int64_t stray = 0;
    for (size_t i = 0; i < guard_after.size(); ++i) stray += guard_after[i] != guard_before[i];
    out.checked += g.m * g.n;
    out.mismatches += bad;
    out.stray += stray;
    out.cycle_errors += cycles != model;
    fmt::print("{:<22} grid {:>2}x{:<2} M {:>3} K {:>2} N {:>3} folds {:>2} {:<7} cycles {:>4} model {:>4}  {}\n", what,
               g.gm, g.gn, g.m, g.k, g.n, g.m_tiles() * g.n_tiles(), sim::ce::to_string(mix), cycles, model,
               bad == 0 && stray == 0 && cycles == model
                   ? "match"
                   : fmt::format("MISMATCH ({} elements, {} stray accumulator words)", bad, stray));
    return want;
  }

  // A GEMM mapped by the compiler, run job by job as the system runner does (images by
  // layout_a / layout_b, results read where z_slot says), every element checked against the
  // golden model in the hardware's order and every job's cycles against the model. `kind`: 0 a
  // weight-stationary grid, 1 output-stationary with K over two chunks (the second accumulates),
  // 2 the compiler's fastest mapping (either dataflow).
  void run_compiled(const std::string& what, int kind) {
    const arch::ArchConfig& cfg = opt_.cfg;
    const int G = cfg.ce.count;
    const int64_t half = cfg.memory.unified_depth / 2;
    std::uniform_int_distribution<int64_t> dm(1, 40), dk(1, 70), dn(1, 40), dk_chunked(half / 2 + 1, half);
    std::uniform_int_distribution<int> dgrid(0, std::countr_zero(static_cast<unsigned>(G)));
    const int64_t M = dm(rng_), K = kind == 1 ? dk_chunked(rng_) : dk(rng_), Nn = dn(rng_);
    const int grid = 1 << dgrid(rng_);
    const mapper::GemmShape shape = mapper::gemm_shape("A", {"m", "k"}, {M, K}, "B", {"k", "n"}, {K, Nn}, {"m", "n"});
    const mapper::CompiledGemm c = kind == 0   ? mapper::compile_gemm(cfg, shape, grid, grid % 2 == 1)
                                   : kind == 1 ? mapper::compile_gemm_os(cfg, shape, grid)
                                               : mapper::compile_gemm(cfg, shape);
    // Uniform operands over two K chunks: with a wide exponent range one chunk's sum would often
    // swamp the other's, and a lost chunk would go unseen.
    const sim::ce::OperandMix mix = kind == 1 ? sim::ce::OperandMix::uniform : sim::ce::OperandMix::wide;
    const sim::ce::GemmOperands ops = sim::ce::random_gemm(cfg.dtype, {M, K, Nn}, rng_(), mix);
    const verif::Tensor<uint16_t> a = operand_tensor(ops.a, {"m", "k"}), b = operand_tensor(ops.b, {"k", "n"});
    for (size_t w = 0; w < c.red_cfg_words(); ++w) bench_->push(c.program[w]);
    bench_->wait_idle(opt_.timeout);
    std::vector<uint64_t> got(static_cast<size_t>(M * Nn), 0);
    int64_t cycle_errors = 0;
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      const mapper::GemmJob& job = c.jobs[j];
      const mapper::RowImage ia = mapper::layout_a(c, a, static_cast<uint16_t>(sim::ce::ia_padding(cfg.dtype)), j);
      const mapper::RowImage ib = mapper::layout_b(c, b, j);
      bench_->write_rows(ia.first_row, ia.rows, ia.lanes, ia.data);
      bench_->write_rows(ib.first_row, ib.rows, ib.lanes, ib.data);
      const uint64_t c0 = bench_->cycle_count();
      bench_->push(arch::encode_flip(isa_));
      bench_->push(c.program[c.red_cfg_words() + j]);
      bench_->wait_idle(opt_.timeout);
      cycle_errors += static_cast<int64_t>(bench_->cycle_count() - c0) != job.predicted_cycles;
      if (!job.last_k) continue;
      std::vector<int64_t> rows(static_cast<size_t>(mapper::acc_rows(c, job)));
      for (size_t r = 0; r < rows.size(); ++r) rows[r] = static_cast<int64_t>(r);
      mapper::gather_result(c, job, bench_->read_acc(rows, mapper::acc_lanes(c)), got);
    }
    // bf16 in the hardware's order; integers are exact in any order.
    std::vector<uint64_t> want;
    if (cfg.dtype == arch::DataType::bf16) {
      for (uint32_t v : verif::contract_bf16(a, b, {"m", "n"}, mapper::hardware_order(c, cfg.ce.rows)).values()) want.push_back(v);
    } else {
      want = sim::ce::golden_gemm(ops, 0).v;
    }
    int64_t bad = 0;
    for (size_t e = 0; e < got.size(); ++e) bad += (got[e] & acc_mask_) != (want[e] & acc_mask_);
    out.checked += M * Nn;
    out.mismatches += bad;
    out.cycle_errors += cycle_errors;
    fmt::print("{:<22} compiled {} x {} x {}: {}  {}\n", what, M, K, Nn, c.describe(),
               bad == 0 && cycle_errors == 0 ? "match"
                                             : fmt::format("MISMATCH ({} elements, {} job(s) off the cycle model)", bad,
                                                           cycle_errors));
  }

  // A result transposed on chip: Z[m, n] = A[m, k] B[k, n] with the producer's CEs side by side on
  // N (each result row spans every bank), stored by mapper::plan_store into the A image of a
  // consumer contracting over m with its CEs all on K (each image row spans every bank): diagonal
  // moves, an element per bank a cycle, where the banks allow. The image is read back through the
  // host port and compared lane by lane (padding included) with layout_a of the golden result, the
  // STORE's busy cycles with the plan's. With `a` > 0 the result's rows are two labels (a, b = M /
  // a) and the consumer contracts over (b, a): digits that change with the bank in mixed radix,
  // which take a row stride per bank bit.
  void run_transposing_store(const std::string& what, int64_t M, int64_t a = 0) {
    const arch::ArchConfig& cfg = opt_.cfg;
    const int64_t N = cfg.network.lanes, K = 1 + static_cast<int64_t>(rng_() % 24);
    auto append = [](auto v, const auto& x) {
      v.push_back(x);
      return v;
    };
    auto prepend = [](auto v, const auto& x) {
      v.insert(v.begin(), x);
      return v;
    };
    const std::vector<std::string> ml = a > 0 ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"m"};
    const std::vector<int64_t> md = a > 0 ? std::vector<int64_t>{a, M / a} : std::vector<int64_t>{M};
    const std::vector<std::string> kl = a > 0 ? std::vector<std::string>{"b", "a"} : ml;  // the consumer's K
    const std::vector<int64_t> kd = a > 0 ? std::vector<int64_t>{M / a, a} : md;
    const mapper::CompiledGemm p = mapper::compile_gemm(
        cfg, mapper::gemm_shape("A", append(ml, "k"), append(md, K), "B", {"k", "n"}, {K, N}, append(ml, "n")), 1);
    const mapper::CompiledGemm c = mapper::compile_gemm(
        cfg, mapper::gemm_shape("Z", prepend(kl, "n"), prepend(kd, N), "W", append(kl, "j"), append(kd, 8), {"n", "j"}),
        cfg.ce.count);
    const mapper::StorePlan sp = mapper::plan_store(cfg, p, c, true, 0);
    if (!sp.ok()) throw std::logic_error(what + ": no STORE plan: " + sp.why_not);
    const sim::ce::GemmOperands ops = sim::ce::random_gemm(cfg.dtype, {M, K, N}, rng_(), sim::ce::OperandMix::wide);
    const verif::Tensor<uint16_t> ta = operand_tensor(ops.a, append(ml, "k"), append(md, K)),
                                  tb = operand_tensor(ops.b, {"k", "n"});
    for (size_t w = 0; w < p.red_cfg_words(); ++w) bench_->push(p.program[w]);
    for (size_t j = 0; j < p.jobs.size(); ++j) {
      const mapper::RowImage ia = mapper::layout_a(p, ta, static_cast<uint16_t>(sim::ce::ia_padding(cfg.dtype)), j);
      const mapper::RowImage ib = mapper::layout_b(p, tb, j);
      bench_->wait_idle(opt_.timeout);
      bench_->write_rows(ia.first_row, ia.rows, ia.lanes, ia.data);
      bench_->write_rows(ib.first_row, ib.rows, ib.lanes, ib.data);
      bench_->push(arch::encode_flip(isa_));
      bench_->push(p.program[p.red_cfg_words() + j]);
    }
    bench_->wait_idle(opt_.timeout);
    const uint64_t c0 = bench_->cycle_count();
    for (const arch::StoreInstr& st : sp.program) bench_->push(arch::encode_store(isa_, st));
    bench_->wait_idle(opt_.timeout);
    const int64_t cycles = static_cast<int64_t>(bench_->cycle_count() - c0);
    bench_->push(arch::encode_flip(isa_));  // the stored image into the host's half
    bench_->wait_idle(opt_.timeout);
    // The operand the consumer should read: the result converted as a STORE converts it.
    std::vector<uint16_t> z;
    if (cfg.dtype == arch::DataType::bf16) {
      for (uint32_t v : verif::contract_bf16(ta, tb, append(ml, "n"), mapper::hardware_order(p, cfg.ce.rows)).values())
        z.push_back(verif::fp32_to_bf16(v));
    } else {
      const int w = arch::operand_bits(cfg.dtype);
      const int64_t lo = -(int64_t{1} << (w - 1)), hi = (int64_t{1} << (w - 1)) - 1;
      const int sx = 64 - arch::accumulator_bits(cfg.dtype);  // golden words hold the accumulator's bits
      for (uint64_t v : sim::ce::golden_gemm(ops, 0).v) {
        const int64_t acc = static_cast<int64_t>(v << sx) >> sx;
        z.push_back(static_cast<uint16_t>(std::clamp(acc, lo, hi) & ((int64_t{1} << w) - 1)));
      }
    }
    const mapper::RowImage want = mapper::layout_a(c, verif::Tensor<uint16_t>(append(ml, "n"), append(md, N), std::move(z)),
                                                   static_cast<uint16_t>(sim::ce::ia_padding(cfg.dtype)), 0);
    const std::vector<uint16_t> got = bench_->read_rows(want.first_row, want.rows, want.lanes);
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want.data[i];
    out.checked += static_cast<int64_t>(got.size());
    out.mismatches += bad;
    out.cycle_errors += cycles != sp.predicted_cycles;
    out.diagonal_moves += sp.diagonal_moves;
    fmt::print("{:<22} transposing STORE {}x{} -> A image {}x{}: {} moves ({} diagonal) in {} instruction(s), cycles {} "
               "model {}  {}\n",
               what, M, N, want.rows, want.lanes, sp.moves, sp.diagonal_moves, sp.program.size(), cycles,
               sp.predicted_cycles, bad == 0 && cycles == sp.predicted_cycles ? "match" : fmt::format("MISMATCH ({} lanes)", bad));
  }

  Options opt_;
  arch::IsaLayout isa_;
  std::mt19937_64 rng_;
  uint64_t acc_mask_;  // the accumulator word's bits (read_acc sign-extends integer words)
  sim::system::SystemBench* bench_ = nullptr;
};

}  // namespace

int sc_main(int argc, char** argv) {
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  try {
    Options opt;
    std::string config;
    CLI::App app("output-stationary gemm of the controller against the golden model (one Verilated top)");
    app.add_option("--config", config, "Architecture configuration (YAML) the model was generated from")->required();
    app.add_option("--seed", opt.seed, "Seed of the shapes, placements and operands");
    app.add_option("--cases", opt.cases, "Random GEMMs (every third followed by an accumulating one)")->check(CLI::Range(1, 1000));
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      return app.exit(e);
    }
    opt.cfg = arch::load_arch_config(config);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    fmt::print("os_gemm: config {}, seed {}, {} cases\n", opt.cfg.name, opt.seed, opt.cases);
    FETTA_TOP_CLASS dut("dut");
    OsGemmTest test(opt);
    sim::system::SystemBench bench("bench", dut, opt.cfg, [&](sim::system::SystemBench& b) { test.host(b); });
    sc_core::sc_start();
    if (!bench.failure().empty()) {
      std::fprintf(stderr, "error: %s\n", bench.failure().c_str());
      return 2;
    }
    const Outcome& o = test.out;
    fmt::print("{} elements checked, {} mismatching, {} stray accumulator words, {} gemm(s) off the cycle model, "
               "error flag {}\n",
               o.checked, o.mismatches, o.stray, o.cycle_errors, o.error_flag ? 1 : 0);
    fmt::print("{} diagonal STORE moves\n", o.diagonal_moves);
    // The transposing STOREs are built to take diagonal moves: none means the path went untested.
    if (o.checked == 0 || o.mismatches || o.stray || o.cycle_errors || o.error_flag || o.diagonal_moves == 0) {
      std::fprintf(stderr, "FAIL\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
