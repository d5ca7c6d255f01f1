// bench_search: times of the exact contraction sequence search (stage 1) on chains (tensor
// trains), rings (tensor rings) and random graphs of 6 to 16 nodes, then the optimum MACs vs
// the baselines for every layer in configs/layers (or the directory given as argument).
// Fixed seeds; the times are the best of a few runs.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mapper/csse.hpp"
#include "mapper/layer_search.hpp"
#include "verif/layer.hpp"
#include "verif/network.hpp"

using namespace fetta;

namespace {

std::string label(const char* prefix, int i) {
  std::string s(prefix);
  s += std::to_string(i);
  return s;
}

// Tensor train / ring: node i = [r(i-1), p_i, r_i], open ends dropped for the train.
verif::TensorNetwork chain(int n, bool ring) {
  verif::TensorNetwork net;
  const int64_t bonds[] = {8, 16, 4, 12};
  for (int i = 0; i < n; ++i) {
    net.dims[label("p", i)] = 4 + 2 * (i % 3);
    net.dims[label("r", i)] = bonds[i % 4];
    net.output_labels.push_back(label("p", i));
    std::vector<std::string> l;
    if (i > 0 || ring) l.push_back(label("r", i == 0 ? n - 1 : i - 1));
    l.push_back(label("p", i));
    if (i + 1 < n || ring) l.push_back(label("r", i));
    net.nodes.push_back({label("G", i), l});
  }
  if (!ring) net.dims.erase(label("r", n - 1));
  return net;
}

// Random graph: a spanning path in random order plus each other pair with probability p; some
// nodes with an open (output) label. Seeded.
verif::TensorNetwork random_graph(int n, uint32_t seed, double p = 0.3) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> size(2, 16);
  verif::TensorNetwork net;
  for (int i = 0; i < n; ++i) net.nodes.push_back({label("N", i), {}});
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  int next = 0;
  auto join = [&](int a, int b) {
    const std::string l = label("e", next++);
    net.dims[l] = size(rng);
    net.nodes[static_cast<size_t>(a)].labels.push_back(l);
    net.nodes[static_cast<size_t>(b)].labels.push_back(l);
  };
  std::vector<std::vector<bool>> linked(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n), false));
  for (int i = 1; i < n; ++i) {
    const int a = order[static_cast<size_t>(i - 1)], b = order[static_cast<size_t>(i)];
    join(a, b);
    linked[static_cast<size_t>(a)][static_cast<size_t>(b)] = linked[static_cast<size_t>(b)][static_cast<size_t>(a)] = true;
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      if (!linked[static_cast<size_t>(a)][static_cast<size_t>(b)] && u(rng) < p) join(a, b);
    }
    if (u(rng) < 0.3) {
      const std::string l = label("o", a);
      net.dims[l] = size(rng);
      net.nodes[static_cast<size_t>(a)].labels.push_back(l);
      net.output_labels.push_back(l);
    }
  }
  return net;
}

template <class F>
double best_ms(F&& f, int runs) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void bench_row(const std::string& family, const verif::TensorNetwork& net) {
  const mapper::Problem p = mapper::make_problem(net);
  const int runs = p.size() <= 12 ? 5 : p.size() <= 14 ? 3 : 1;
  uint64_t opt = 0;
  const double t1 = best_ms([&] { opt = mapper::k_best_trees(p, 1).front().macs; }, runs);
  const double t8 = best_ms([&] { (void)mapper::k_best_trees(p, 8); }, runs);
  mapper::ContractionTree inf;
  const double ti = best_ms([&] { inf = mapper::input_first(p, true); }, runs);
  const auto l2r = mapper::left_to_right(p);
  fmt::print("| {:<7} | {:>2} | {:>3} | {:>22} | {:>10.3f} | {:>10.3f} | {:>10.3f} | {:>20} | {:>9} | {:>9} |\n",
             family, p.size(), p.labels.size(), mapper::group_digits(mapper::tree_count(p.size())), t1, t8, ti,
             mapper::group_digits(opt), mapper::format_ratio(l2r.macs, opt), mapper::format_ratio(inf.macs, opt));
}

}  // namespace

int main(int argc, char** argv) {
  fmt::print("## Exact search (stage 1) times, ms (best of up to 5 runs; 1 MAC = 2 FLOPs)\n\n");
  fmt::print("| family  |  K | lbl |                  trees | top-1 ms   | top-8 ms   | in-first ms | optimum MACs         | l-to-r    | in-first  |\n");
  fmt::print("| ---     | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n");
  for (int k = 6; k <= 16; k += 2) bench_row("chain", chain(k, false));
  for (int k = 6; k <= 16; k += 2) bench_row("ring", chain(k, true));
  for (int k = 6; k <= 16; k += 2) bench_row("random", random_graph(k, 1000U + static_cast<uint32_t>(k)));
  fmt::print("\n(random graphs: spanning path + each other pair with p = 0.3, sizes 2..16, seed 1000 + K)\n");

  const std::string dir = argc > 1 ? argv[1] : std::string(FETTA_SOURCE_DIR) + "configs/layers";
  std::vector<std::string> files;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  fmt::print("\n## Shipped layers ({}): optimum MACs vs baselines, all phases\n\n", dir);
  if (files.empty()) {
    fmt::print("(no layer files)\n");
    return 0;
  }
  mapper::SearchOptions opt;
  opt.top = 1;
  std::vector<mapper::LayerResult> results;
  for (const auto& f : files) {
    results.push_back(mapper::search_layer(verif::load_layer(f), mapper::parse_phases("all"), opt));
  }
  fmt::print("{}", mapper::summary_table(results));
  return 0;
}
