// DistNet in Verilator, one model per configuration (flat.cpp), many patterns per model.
// Every pattern streams through the pipeline (a new word and control word every cycle), so the
// controls are proven to travel with the data; each output word is compared with the inputs the
// request asked for (cared lanes) and with the functional model (every lane).
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <fmt/format.h>

#include <deque>
#include <iostream>
#include <optional>
#include <random>

#include "Vtb_dist_net_n16_w16_t4_both_p2.h"
#include "Vtb_dist_net_n16_w8_t2_cheap_p1.h"
#include "Vtb_dist_net_n32_w16_t4_full_p3.h"
#include "Vtb_dist_net_n4_w16_t2_both_p0.h"
#include "Vtb_dist_net_n64_w16_t4_both_p0_o.h"
#include "Vtb_dist_net_n8_w8_t2_full_p1.h"
#include "harness.hpp"
#include "route/route.hpp"

using namespace fetta::route;
using namespace nettest;

namespace {

constexpr uint64_t kSeed = 20261124;

// One word through the network: inputs, the control (full or cheap) and what must come out.
struct Job {
  std::vector<uint64_t> in;
  std::optional<DistControl> full;
  std::optional<DistCheapControl> cheap;
  LaneMap map;  // requested sources (-1: don't care); empty: check only against the model
  std::vector<uint64_t> model;  // the functional model's output for this control
};

template <typename V>
class DistDut {
 public:
  DistDut(int lanes, int elems_per_bank, int width, int cycles)
      : g(lanes, elems_per_bank), w(width), latency(cycles), dut(&ctx) {}

  void apply(const Job& j) {
    for (int i = 0; i < g.lanes(); ++i) put_bits(dut.din, i * w, w, j.in[i]);
    if constexpr (requires { dut.ctrl_mode; }) dut.ctrl_mode = j.full.has_value();
    if (j.full) {
      if constexpr (requires { dut.tr_sel; }) {
        for (int i = 0; i < g.lanes(); ++i) put_bits(dut.tr_sel, i, 1, j.full->transpose[i]);
        for (int k = 0; k < g.levels(); ++k)
          for (int i = 0; i < g.lanes(); ++i) put_bits(dut.lvl_sel, k * g.lanes() + i, 1, j.full->level[k][i]);
      } else {
        FAIL("full control on a cheap-only network");
      }
    } else {
      if constexpr (requires { dut.sel_vec; }) {
        dut.sel_vec = j.cheap->sel_vec;
        dut.idx_mask = j.cheap->idx_mask;
        dut.tr_en = j.cheap->transpose;
      } else {
        FAIL("cheap control on a full-only network");
      }
    }
  }
  std::vector<uint64_t> outputs() { return read_lanes(dut.dout, g.lanes(), w); }
  void run(const std::vector<Job>& jobs) { stream_jobs(*this, jobs); }
  void check(const Job& j, int index) {
    std::vector<uint64_t> out = outputs();
    INFO("job " << index << " map " << fmt::format("{}", fmt::join(j.map, ",")));
    for (int o = 0; o < g.lanes(); ++o) {
      INFO("output lane " << o);
      REQUIRE(out[o] == j.model[o]);
      if (!j.map.empty() && j.map[o] >= 0) REQUIRE(out[o] == j.in[j.map[o]]);
    }
  }
  // The first cycle the output shows a marker word entered at cycle 0 (then other words).
  int measure_latency(std::mt19937_64& rng) {
    Job marker = full_or_cheap_identity(rng), filler = full_or_cheap_identity(rng);
    for (int t = 0; t < 20; ++t) {
      apply(t == 0 ? marker : filler);
      settle(dut);
      if (outputs() == marker.in) return t;
      edge(dut);
    }
    return -1;
  }
  Job full_or_cheap_identity(std::mt19937_64& rng) {
    Job j;
    j.in = random_inputs(rng);
    if constexpr (requires { dut.tr_sel; }) {
      j.full = DistControl::zero(g);
    } else {
      j.cheap = DistCheapControl{};
    }
    j.model = j.in;
    return j;
  }
  std::vector<uint64_t> random_inputs(std::mt19937_64& rng) const {
    std::vector<uint64_t> in(g.lanes());
    const uint64_t mask = w >= 64 ? ~uint64_t{0} : ((uint64_t{1} << w) - 1);
    for (auto& v : in) v = rng() & mask;
    return in;
  }
  Job full_job(std::mt19937_64& rng, const DistControl& c, LaneMap map = {}) const {
    Job j;
    j.in = random_inputs(rng);
    j.full = c;
    j.map = std::move(map);
    j.model = simulate_dist(g, c, j.in);
    return j;
  }
  Job cheap_job(std::mt19937_64& rng, const DistCheapControl& c, LaneMap map = {}) const {
    Job j;
    j.in = random_inputs(rng);
    j.cheap = c;
    j.map = std::move(map);
    j.model = simulate_dist(g, expand(g, c), j.in);
    return j;
  }

  NetGeometry g;
  int w;
  int latency;
  VerilatedContext ctx;
  V dut;
};

DistControl random_control(const NetGeometry& g, std::mt19937_64& rng) {
  DistControl c = DistControl::zero(g);
  for (auto& b : c.transpose) b = rng() & 1;
  for (auto& l : c.level)
    for (auto& b : l) b = rng() & 1;
  return c;
}

// A request from one of the families of docs/networks.md, or a random one (may be blocked).
LaneMap random_request(const NetGeometry& g, std::mt19937_64& rng) {
  const int n = g.lanes(), t = g.elems_per_bank();
  LaneMap map(n, -1);
  const int c = static_cast<int>(rng() % n);
  switch (rng() % 9) {
    case 0:
    case 1: {  // whatever a random control word does, with don't-cares
      map = dist_sources(g, random_control(g, rng));
      for (auto& m : map)
        if (rng() % 3 == 0) m = -1;
      break;
    }
    case 2: for (int o = 0; o < n; ++o) map[o] = (o + c) % n; break;
    case 3: for (int o = 0; o < n; ++o) map[o] = o ^ c; break;
    case 4: for (int o = 0; o < n; ++o) map[o] = c; break;
    case 5: for (int o = 0; o < n; ++o) map[o] = (c / t) * t + o % t; break;  // bank row broadcast
    case 6: for (int o = 0; o < n; ++o) map[o] = g.partner((o + c) % n); break;
    case 7: {  // a few outputs, random sources
      for (int k = 0, m = 1 + static_cast<int>(rng() % 4); k < m; ++k) map[rng() % n] = static_cast<int>(rng() % n);
      break;
    }
    default: {  // a random permutation (almost always blocked for N >= 16)
      for (int o = 0; o < n; ++o) map[o] = o;
      std::shuffle(map.begin(), map.end(), rng);
      break;
    }
  }
  return map;
}

// >= kRandomPatterns requests through the router and the network.
template <typename V>
void random_requests(DistDut<V>& d, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::cout << "dist " << d.g.str() << ": " << kRandomPatterns << " random requests, seed=" << seed << "\n";
  std::vector<Job> jobs;
  int blocked = 0;
  for (int i = 0; i < kRandomPatterns; ++i) {
    LaneMap map = random_request(d.g, rng);
    DistRoute r = route_dist(d.g, map);
    if (!r.routable) {
      REQUIRE(!r.message.empty());
      ++blocked;
      continue;
    }
    jobs.push_back(d.full_job(rng, r.control, map));
    if (jobs.size() == 1000) d.run(jobs), jobs.clear();
  }
  if (!jobs.empty()) d.run(jobs);
  std::cout << "  routed " << kRandomPatterns - blocked << ", blocked " << blocked << "\n";
  CHECK(kRandomPatterns - blocked >= 10000);
}

}  // namespace

TEST_CASE("dist N=4: every control word, every lane map, latency 0", "[dist_sim]") {
  DistDut<Vtb_dist_net_n4_w16_t2_both_p0> d(4, 2, 16, 0);
  std::mt19937_64 rng(kSeed);
  std::cout << "dist N=4 seed=" << kSeed << "\n";
  REQUIRE(d.measure_latency(rng) == 0);
  // All 2^12 full control words (4 transpose + 2 levels x 4 bits), two data words each.
  std::vector<Job> jobs;
  for (uint64_t w = 0; w < 4096; ++w) {
    DistControl c = DistControl::zero(d.g);
    int b = 0;
    for (auto& x : c.transpose) x = (w >> b++) & 1;
    for (auto& l : c.level)
      for (auto& x : l) x = (w >> b++) & 1;
    jobs.push_back(d.full_job(rng, c));
    jobs.push_back(d.full_job(rng, c));
  }
  // All 2^5 cheap words (sel_vec, idx_mask, tr_en) through the cheap ports (ctrl_mode = 0).
  for (uint32_t sel = 0; sel < 4; ++sel)
    for (uint32_t mask = 0; mask < 4; ++mask)
      for (int t = 0; t < 2; ++t) jobs.push_back(d.cheap_job(rng, {sel, mask, t == 1}));
  d.run(jobs);
  // Every lane map (5^4 with don't-cares) through the router; routable ones through the network.
  jobs.clear();
  int routable = 0;
  LaneMap map(4);
  for (int code = 0; code < 625; ++code) {
    for (int o = 0, c = code; o < 4; ++o, c /= 5) map[o] = c % 5 - 1;
    DistRoute r = route_dist(d.g, map);
    if (!r.routable) continue;
    ++routable;
    jobs.push_back(d.full_job(rng, r.control, map));
    if (auto cheap = route_dist_cheap(d.g, map)) jobs.push_back(d.cheap_job(rng, *cheap, map));
  }
  d.run(jobs);
  std::cout << "  " << routable << " of 625 lane maps routable and checked\n";
}

TEST_CASE("dist N=8: every permutation, latency 4", "[dist_sim]") {
  DistDut<Vtb_dist_net_n8_w8_t2_full_p1> d(8, 2, 8, 4);
  std::mt19937_64 rng(kSeed + 1);
  std::cout << "dist N=8 seed=" << kSeed + 1 << "\n";
  REQUIRE(d.measure_latency(rng) == 4);
  std::vector<Job> jobs;
  LaneMap perm{0, 1, 2, 3, 4, 5, 6, 7};
  int routable = 0;
  do {
    DistRoute r = route_dist(d.g, perm);
    if (!r.routable) continue;
    ++routable;
    jobs.push_back(d.full_job(rng, r.control, perm));
  } while (std::next_permutation(perm.begin(), perm.end()));
  for (int i = 0; i < 2000; ++i) jobs.push_back(d.full_job(rng, random_control(d.g, rng)));
  d.run(jobs);
  std::cout << "  " << routable << " of 40320 permutations routable and checked\n";
  CHECK(routable == 9216);
}

TEST_CASE("dist N=16 (T=4, both control sets, register every 2 stages): random, latency 2", "[dist_sim]") {
  DistDut<Vtb_dist_net_n16_w16_t4_both_p2> d(16, 4, 16, 2);
  std::mt19937_64 rng(kSeed + 2);
  REQUIRE(d.measure_latency(rng) == 2);
  random_requests(d, kSeed + 2);
  // Cheap words through the cheap ports, interleaved with full words (ctrl_mode toggles).
  std::vector<Job> jobs;
  for (uint32_t sel = 0; sel < 16; ++sel)
    for (uint32_t mask = 0; mask < 16; ++mask)
      for (int t = 0; t < 2; ++t) {
        jobs.push_back(d.cheap_job(rng, {sel, mask, t == 1}));
        jobs.push_back(d.full_job(rng, random_control(d.g, rng)));
      }
  d.run(jobs);
}

TEST_CASE("dist N=16 (cheap control only, register every stage): latency 5", "[dist_sim]") {
  DistDut<Vtb_dist_net_n16_w8_t2_cheap_p1> d(16, 2, 8, 5);
  std::mt19937_64 rng(kSeed + 3);
  std::cout << "dist N=16 cheap seed=" << kSeed + 3 << "\n";
  REQUIRE(d.measure_latency(rng) == 5);
  std::vector<Job> jobs;
  for (int rep = 0; rep < 20; ++rep)
    for (uint32_t sel = 0; sel < 16; ++sel)
      for (uint32_t mask = 0; mask < 16; ++mask)
        for (int t = 0; t < 2; ++t) jobs.push_back(d.cheap_job(rng, {sel, mask, t == 1}));
  // Families the cheap control carries, found by the cheap router.
  for (int c = 0; c < 16; ++c) {
    LaneMap bcast(16, c), x(16), row(16);
    for (int o = 0; o < 16; ++o) x[o] = o ^ c, row[o] = (c / 2) * 2 + o % 2;
    for (const LaneMap& m : {bcast, x, row}) {
      auto cheap = route_dist_cheap(d.g, m);
      REQUIRE(cheap.has_value());
      jobs.push_back(d.cheap_job(rng, *cheap, m));
    }
  }
  d.run(jobs);
}

TEST_CASE("dist N=32 (T=4, full control, register every 3 stages): random, latency 2", "[dist_sim]") {
  DistDut<Vtb_dist_net_n32_w16_t4_full_p3> d(32, 4, 16, 2);
  std::mt19937_64 rng(kSeed + 4);
  REQUIRE(d.measure_latency(rng) == 2);
  random_requests(d, kSeed + 4);
}

TEST_CASE("dist N=64 (the default: T=4, both control sets, an output register): random, latency 1", "[dist_sim]") {
  DistDut<Vtb_dist_net_n64_w16_t4_both_p0_o> d(64, 4, 16, 1);
  std::mt19937_64 rng(kSeed + 5);
  REQUIRE(d.measure_latency(rng) == 1);
  random_requests(d, kSeed + 5);
  std::vector<Job> jobs;
  for (int i = 0; i < 2000; ++i) {
    DistCheapControl c{static_cast<uint32_t>(rng() % 64), static_cast<uint32_t>(rng() % 64), (rng() & 1) == 1};
    jobs.push_back(d.cheap_job(rng, c, dist_sources(d.g, expand(d.g, c))));
  }
  d.run(jobs);
}
