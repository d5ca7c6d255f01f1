// RedNet in Verilator, one model per configuration (flat.cpp), many patterns per model.
// Words stream back to back (controls travel with the data). Each output word is compared with
// the functional model (every lane, with the golden adders: wrapping integers, verif::fp32_add)
// and, for routed requests, each group's output with its add tree evaluated in the router's
// order, bit-exactly.
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <iostream>
#include <random>
#include <set>

#include "Vtb_red_net_n16_fp32_t4_p1_s2.h"
#include "Vtb_red_net_n32_int32_t4_p3.h"
#include "Vtb_red_net_n4_fp32_t2_p0.h"
#include "Vtb_red_net_n4_fp32_t2_p0_twopath_sk.h"
#include "Vtb_red_net_n4_int32_t2_p1.h"
#include "Vtb_red_net_n64_fp32_t4_p1_a2_s1_gated.h"
#include "Vtb_red_net_n8_int48_t2_p2.h"
#include "harness.hpp"
#include "route/route.hpp"
#include "verif/numerics.hpp"

using namespace fetta::route;
using namespace nettest;

namespace {

constexpr uint64_t kSeed = 20261125;

enum class Elem { int32, int48, fp32 };

int bits(Elem e) { return e == Elem::int48 ? 48 : 32; }

AddFn adder(Elem e) {
  switch (e) {
    case Elem::int32: return [](uint64_t a, uint64_t b) { return (a + b) & 0xFFFFFFFFull; };
    case Elem::int48: return [](uint64_t a, uint64_t b) { return (a + b) & 0xFFFFFFFFFFFFull; };
    case Elem::fp32:
      return [](uint64_t a, uint64_t b) {
        return uint64_t{fetta::verif::fp32_add(static_cast<uint32_t>(a), static_cast<uint32_t>(b))};
      };
  }
  return {};
}

// Operands: mostly ordinary values, often corner cases.
uint64_t random_value(Elem e, std::mt19937_64& rng) {
  using namespace fetta::verif;
  if (e != Elem::fp32) {
    const uint64_t mask = (uint64_t{1} << bits(e)) - 1, min = uint64_t{1} << (bits(e) - 1);
    switch (rng() % 8) {
      case 0: return 0;
      case 1: return mask;  // -1
      case 2: return min;   // most negative
      case 3: return min - 1;  // most positive
      case 4: return rng() % 7;
      default: return rng() & mask;
    }
  }
  static const uint32_t corners[] = {0x00000000u, 0x80000000u, kFp32PosInf, 0xFF800000u, kFp32QuietNaN, 0x7F800001u,
                                     0xFFC12345u, 0x00000001u, 0x807FFFFFu, 0x00800000u, 0x80800000u, 0x7F7FFFFFu,
                                     0xFF7FFFFFu, 0x3F800000u, 0xBF800000u, 0x4B800000u, 0x33800000u};
  switch (rng() % 10) {
    case 0: return corners[rng() % std::size(corners)];
    case 1: return rng() & 0xFFFFFFFFu;  // any pattern
    case 2: return fp32_from_double(std::ldexp(static_cast<double>(static_cast<int>(rng() % 2001) - 1000), 100));
    default:  // values of nearby magnitudes, so sums round and cancel
      return fp32_from_double(std::ldexp(static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000),
                                         -static_cast<int>(rng() % 24)));
  }
}

struct Job {
  std::vector<uint64_t> in;
  RedControl control;
  std::vector<ReduceGroup> groups;  // empty: check against the model only
  std::vector<GroupTree> trees;
  std::vector<uint64_t> model;
};

template <typename V>
class RedDut {
 public:
  RedDut(int lanes, int elems_per_bank, Elem e, int cycles, int first_add_level = 0)
      : g(lanes, elems_per_bank, first_add_level), elem(e), w(bits(e)), latency(cycles), add(adder(e)), dut(&ctx) {}

  void apply(const Job& j) {
    for (int i = 0; i < g.lanes(); ++i) put_bits(dut.din, i * w, w, j.in[i]);
    for (int k = 0; k < g.levels(); ++k)
      for (int s = 0; s < g.lanes() / 2; ++s)
        put_bits(dut.sw_mode, k * g.lanes() + 2 * s, 2, static_cast<uint64_t>(j.control.level[k][s]));
    for (int i = 0; i < g.lanes(); ++i) put_bits(dut.tr_sel, i, 1, j.control.transpose[i]);
    if constexpr (kGated) dut.valid = 1;
  }
  std::vector<uint64_t> outputs() { return read_lanes(dut.dout, g.lanes(), w); }
  void run(const std::vector<Job>& jobs) {
    if constexpr (kGated)
      run_with_bubbles(jobs);
    else
      stream_jobs(*this, jobs);
  }
  // A network whose stages load only for valid inputs (RedNetParams::gate_stages): the jobs go
  // in with random bubbles of 1..3 cycles (valid 0, another job's data and controls), and each
  // job is checked its latency after it entered. A bubble's output, its latency later, is the
  // last valid job's: the registers held (what the gating is for) instead of taking the bubble.
  void run_with_bubbles(const std::vector<Job>& jobs) {
    std::mt19937_64 rng(jobs.size());
    std::vector<int> slots;  // the job entering each cycle, -1 for a bubble
    for (int i = 0; i < static_cast<int>(jobs.size()); ++i) {
      if (rng() % 4 == 0) slots.insert(slots.end(), 1 + rng() % 3, -1);
      slots.push_back(i);
    }
    const int total = static_cast<int>(slots.size());
    int last_valid = -1;  // the last job to have left
    for (int t = 0; t < total + latency; ++t) {
      const int s = t < total ? slots[static_cast<size_t>(t)] : -1;
      apply(jobs[static_cast<size_t>(s >= 0 ? s : rng() % jobs.size())]);
      dut.valid = s >= 0;
      settle(dut);
      if (t >= latency) {
        const int out = slots[static_cast<size_t>(t - latency)];
        if (out >= 0) last_valid = out;
        if (last_valid >= 0) check(jobs[static_cast<size_t>(last_valid)], last_valid);
      }
      edge(dut);
    }
  }
  static constexpr bool kGated = requires(V& v) { v.valid; };
  void check(const Job& j, int index) {
    std::vector<uint64_t> out = outputs();
    INFO("job " << index << " inputs " << fmt::format("{:x}", fmt::join(j.in, " ")));
    for (int o = 0; o < g.lanes(); ++o) {
      INFO("output lane " << o);
      REQUIRE(out[o] == j.model[o]);
    }
    for (size_t i = 0; i < j.groups.size(); ++i) {
      INFO("group " << i << " lanes " << fmt::format("{}", fmt::join(j.groups[i].lanes, ",")) << " -> "
                    << j.groups[i].out);
      REQUIRE(out[j.groups[i].out] == evaluate(j.trees[i], j.in, add));
    }
  }
  int measure_latency(std::mt19937_64& rng) {
    Job marker = job(rng, RedControl::zero(g)), filler = job(rng, RedControl::zero(g));
    for (int t = 0; t < 20; ++t) {
      apply(t == 0 ? marker : filler);
      settle(dut);
      if (outputs() == marker.in) return t;
      edge(dut);
    }
    return -1;
  }
  Job job(std::mt19937_64& rng, const RedControl& c) const {
    Job j;
    for (int i = 0; i < g.lanes(); ++i) j.in.push_back(random_value(elem, rng));
    j.control = c;
    j.model = simulate_red(g, c, j.in, add);
    return j;
  }
  Job routed_job(std::mt19937_64& rng, const std::vector<ReduceGroup>& groups, const RedRoute& r) const {
    Job j = job(rng, r.control);
    j.groups = groups;
    j.trees = r.trees;
    return j;
  }

  NetGeometry g;
  Elem elem;
  int w;
  int latency;
  AddFn add;
  VerilatedContext ctx;
  V dut;
};

RedControl random_control(const NetGeometry& g, std::mt19937_64& rng) {
  RedControl c = RedControl::zero(g);
  for (auto& lvl : c.level)
    for (auto& m : lvl) m = static_cast<SwitchMode>(rng() & 3);
  for (auto& b : c.transpose) b = rng() & 1;
  return c;
}

// The groups a control word realises (symbolic run: lane i is bit i, the adder ORs).
std::vector<ReduceGroup> groups_of(const NetGeometry& g, const RedControl& c) {
  std::vector<uint64_t> sym(g.lanes());
  for (int i = 0; i < g.lanes(); ++i) sym[i] = uint64_t{1} << i;
  sym = simulate_red(g, c, sym, [](uint64_t a, uint64_t b) { return a | b; });
  // The transpose level may copy a sum to two outputs: keep the first copy of each.
  std::vector<ReduceGroup> req;
  uint64_t taken = 0;
  for (int o = 0; o < g.lanes(); ++o)
    if (sym[o] && !(sym[o] & taken)) {
      taken |= sym[o];
      ReduceGroup grp{{}, o};
      for (int i = 0; i < g.lanes(); ++i)
        if ((sym[o] >> i) & 1) grp.lanes.push_back(i);
      req.push_back(grp);
    }
  return req;
}

std::vector<ReduceGroup> random_request(const NetGeometry& g, std::mt19937_64& rng) {
  const int n = g.lanes();
  std::vector<ReduceGroup> req;
  switch (rng() % 7) {
    case 0:
    case 1: {  // whatever a random control word sums, maybe only some of the groups
      for (auto& grp : groups_of(g, random_control(g, rng)))
        if (rng() % 4 != 0) req.push_back(grp);
      break;
    }
    case 2: {  // aligned blocks of one size, each to a random lane of the block or its partner
      const int size = 1 << (rng() % (g.levels() + 1));
      const bool partner = rng() % 2;
      for (int base = 0; base < n; base += size) {
        ReduceGroup grp;
        for (int i = 0; i < size; ++i) grp.lanes.push_back(base + i);
        grp.out = base + static_cast<int>(rng() % size);
        if (partner) grp.out = g.partner(grp.out);
        req.push_back(grp);
      }
      break;
    }
    case 3: {  // strided groups: the reduction across CEs
      const int stride = 1 << (rng() % (g.levels() + 1));
      for (int r0 = 0; r0 < stride; ++r0) {
        ReduceGroup grp;
        for (int l = r0; l < n; l += stride) grp.lanes.push_back(l);
        grp.out = grp.lanes[rng() % grp.lanes.size()];
        req.push_back(grp);
      }
      break;
    }
    case 4: {  // a random permutation of single lanes (almost always unroutable)
      std::vector<int> perm(n);
      for (int i = 0; i < n; ++i) perm[i] = i;
      std::shuffle(perm.begin(), perm.end(), rng);
      for (int i = 0; i < n; ++i) req.push_back({{i}, perm[i]});
      break;
    }
    case 5: {  // a few random disjoint groups to random distinct outputs
      std::vector<int> lanes(n), outs(n);
      for (int i = 0; i < n; ++i) lanes[i] = outs[i] = i;
      std::shuffle(lanes.begin(), lanes.end(), rng);
      std::shuffle(outs.begin(), outs.end(), rng);
      int used = 0;
      for (int gi = 0, m = 1 + static_cast<int>(rng() % 3); gi < m && used < n; ++gi) {
        ReduceGroup grp;
        for (int k = 0, sz = 1 + static_cast<int>(rng() % 4); k < sz && used < n; ++k) grp.lanes.push_back(lanes[used++]);
        grp.out = outs[gi];
        req.push_back(grp);
      }
      break;
    }
    default: {  // every lane into one sum
      ReduceGroup grp;
      for (int i = 0; i < n; ++i) grp.lanes.push_back(i);
      grp.out = static_cast<int>(rng() % n);
      req.push_back(grp);
    }
  }
  return req;
}

template <typename V>
void random_requests(RedDut<V>& d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::cout << "red " << d.g.str() << ": " << kRandomPatterns << " random requests, seed=" << seed << "\n";
  std::vector<Job> jobs;
  int blocked = 0;
  for (int i = 0; i < kRandomPatterns; ++i) {
    std::vector<ReduceGroup> req = random_request(d.g, rng);
    if (const int f = d.g.red_first_add_level(); f > 0)
      // Below the adders a request may only route: keep one member of each lane >> f class
      // (the rest are what a pruned network refuses; the router test covers that message).
      for (ReduceGroup& grp : req) {
        std::set<int> seen;
        std::vector<int> kept;
        for (int lane : grp.lanes)
          if (seen.insert(lane >> f).second) kept.push_back(lane);
        grp.lanes = kept;
      }
    RedRoute r = route_red(d.g, req);
    if (!r.routable) {
      REQUIRE(!r.message.empty());
      ++blocked;
      continue;
    }
    jobs.push_back(d.routed_job(rng, req, r));
    if (jobs.size() == 1000) d.run(jobs), jobs.clear();
  }
  if (!jobs.empty()) d.run(jobs);
  std::cout << "  routed " << kRandomPatterns - blocked << ", unroutable " << blocked << "\n";
  CHECK(kRandomPatterns - blocked >= 10000);
}

// Every control word of an N = 4 network (4 switches x 2 bits + 4 transpose bits), `reps` data
// words each, then every routable request.
template <typename V>
void exhaustive_n4(RedDut<V>& d, std::mt19937_64& rng, int reps) {
  std::vector<Job> jobs;
  for (uint64_t w = 0; w < 4096; ++w) {
    RedControl c = RedControl::zero(d.g);
    int b = 0;
    for (auto& lvl : c.level)
      for (auto& m : lvl) m = static_cast<SwitchMode>((w >> b) & 3), b += 2;
    for (auto& t : c.transpose) t = (w >> b++) & 1;
    for (int r = 0; r < reps; ++r) jobs.push_back(d.job(rng, c));
  }
  d.run(jobs);
  // Every request the N = 4 router accepts: each lane in no group or one, distinct targets
  // (some target choices repeat; the route tests count each request once).
  jobs.clear();
  for (int code = 0; code < 5 * 5 * 5 * 5; ++code) {
    std::vector<int> label(4);
    for (int i = 0, c = code; i < 4; ++i, c /= 5) label[i] = c % 5 - 1;
    std::vector<ReduceGroup> req;
    for (int gi = 0; gi < 4; ++gi) {
      ReduceGroup grp;
      for (int i = 0; i < 4; ++i)
        if (label[i] == gi) grp.lanes.push_back(i);
      if (!grp.lanes.empty()) req.push_back(grp);
    }
    if (req.empty()) continue;
    std::vector<int> outs{0, 1, 2, 3};
    do {
      for (size_t gi = 0; gi < req.size(); ++gi) req[gi].out = outs[gi];
      RedRoute r = route_red(d.g, req);
      if (r.routable) jobs.push_back(d.routed_job(rng, req, r));
    } while (std::next_permutation(outs.begin(), outs.end()));
  }
  d.run(jobs);
}

}  // namespace

TEST_CASE("red N=4 int32: every control word, every request, latency 3", "[red_sim]") {
  RedDut<Vtb_red_net_n4_int32_t2_p1> d(4, 2, Elem::int32, 3);
  std::mt19937_64 rng(kSeed);
  std::cout << "red N=4 int32 seed=" << kSeed << "\n";
  REQUIRE(d.measure_latency(rng) == 3);
  exhaustive_n4(d, rng, 2);
}

TEST_CASE("red N=4 binary32: every control word with corner values, latency 0", "[red_sim]") {
  RedDut<Vtb_red_net_n4_fp32_t2_p0> d(4, 2, Elem::fp32, 0);
  std::mt19937_64 rng(kSeed + 1);
  std::cout << "red N=4 fp32 seed=" << kSeed + 1 << "\n";
  REQUIRE(d.measure_latency(rng) == 0);
  exhaustive_n4(d, rng, 4);
}

TEST_CASE("red N=4 binary32, two-path adders: every control word with corner values", "[red_sim]") {
  RedDut<Vtb_red_net_n4_fp32_t2_p0_twopath_sk> d(4, 2, Elem::fp32, 0);
  std::mt19937_64 rng(kSeed + 11);
  std::cout << "red N=4 fp32 two-path seed=" << kSeed + 11 << "\n";
  REQUIRE(d.measure_latency(rng) == 0);
  exhaustive_n4(d, rng, 4);
}

TEST_CASE("red N=8 int48: every permutation, latency 2", "[red_sim]") {
  RedDut<Vtb_red_net_n8_int48_t2_p2> d(8, 2, Elem::int48, 2);
  std::mt19937_64 rng(kSeed + 2);
  std::cout << "red N=8 int48 seed=" << kSeed + 2 << "\n";
  REQUIRE(d.measure_latency(rng) == 2);
  std::vector<Job> jobs;
  std::vector<int> perm{0, 1, 2, 3, 4, 5, 6, 7};
  int routable = 0;
  do {
    std::vector<ReduceGroup> req;
    for (int i = 0; i < 8; ++i) req.push_back({{i}, perm[i]});
    RedRoute r = route_red(d.g, req);
    if (!r.routable) continue;
    ++routable;
    jobs.push_back(d.routed_job(rng, req, r));
  } while (std::next_permutation(perm.begin(), perm.end()));
  for (int i = 0; i < 4000; ++i) jobs.push_back(d.job(rng, random_control(d.g, rng)));
  d.run(jobs);
  std::cout << "  " << routable << " of 40320 permutations routable and checked\n";
  CHECK(routable == 11776);
  random_requests(d, kSeed + 2);
}

TEST_CASE("red N=16 binary32 (T=4, register every stage, adders over three cycles): random, latency 5 + 2x4",
          "[red_sim]") {
  RedDut<Vtb_red_net_n16_fp32_t4_p1_s2> d(16, 4, Elem::fp32, 13);
  std::mt19937_64 rng(kSeed + 3);
  REQUIRE(d.measure_latency(rng) == 13);
  random_requests(d, kSeed + 3);
}

TEST_CASE("red N=32 int32 (T=4, register every 3 stages): random, latency 2", "[red_sim]") {
  RedDut<Vtb_red_net_n32_int32_t4_p3> d(32, 4, Elem::int32, 2);
  std::mt19937_64 rng(kSeed + 4);
  REQUIRE(d.measure_latency(rng) == 2);
  random_requests(d, kSeed + 4);
}

TEST_CASE("red N=64 binary32 (the default: T=4, register every stage, basic adders over two cycles from level 2, "
          "stages clocked by valid inputs): random with bubbles, latency 7 + 4",
          "[red_sim]") {
  RedDut<Vtb_red_net_n64_fp32_t4_p1_a2_s1_gated> d(64, 4, Elem::fp32, 11, 2);
  std::mt19937_64 rng(kSeed + 5);
  REQUIRE(d.measure_latency(rng) == 11);
  random_requests(d, kSeed + 5);
}
