// Tensorized layers: the phase networks of every format against the dense computation (FP, BP)
// and finite-difference gradients (WG); the label conventions; the YAML descriptions and their
// error messages.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include "verif/contract.hpp"
#include "verif/layer.hpp"

using namespace fetta::verif;

#ifndef FETTA_VERIF_CONFIG_DIR
#error "FETTA_VERIF_CONFIG_DIR must point at configs/layers"
#endif

namespace {

std::string config(const std::string& name) { return std::string(FETTA_VERIF_CONFIG_DIR) + "/" + name; }

double dot(const Tensor<double>& a, const Tensor<double>& b) { return contract(a, b, {}).values()[0]; }

// Y = X W^T and dX = dY W with the dense W, in the layer's mode labels.
void check_fp_bp(const LayerSpec& spec, uint64_t seed) {
  INFO("layer " << spec.name << " (" << to_string(spec.format) << ") seed=" << seed);
  std::cout << "[layer] " << spec.name << " fp/bp seed=" << seed << "\n";
  TensorMap t = random_cores(spec, seed);
  t.emplace("X", random_input(spec, seed + 1));
  t.emplace("dY", random_output_grad(spec, seed + 2));
  const Tensor<double> w = reconstruct_dense(spec, t);
  REQUIRE(w.shape() == std::vector<int64_t>{out_size(spec), in_size(spec)});
  const Tensor<double> x = t.at("X").contiguous().reshape({"b", "n"}, {spec.batch, in_size(spec)});
  const Tensor<double> dy = t.at("dY").contiguous().reshape({"b", "m"}, {spec.batch, out_size(spec)});

  const auto fp = phase_problems(spec, Phase::fp);
  REQUIRE(fp.size() == 1);
  CHECK(fp[0].result == "Y");
  CHECK(fp[0].result_labels == y_labels(spec));
  const Tensor<double> y = evaluate(fp[0], t).contiguous().reshape({"b", "m"}, {spec.batch, out_size(spec)});
  const Difference dfp = difference(y, contract(x, w, {"b", "m"}));
  INFO("FP max abs difference " << dfp.max_abs);
  CHECK(dfp.max_abs < 1e-11);

  const auto bp = phase_problems(spec, Phase::bp);
  REQUIRE(bp.size() == 1);
  CHECK(bp[0].result == "dX");
  CHECK(bp[0].result_labels == x_labels(spec));
  const Tensor<double> dx = evaluate(bp[0], t).contiguous().reshape({"b", "n"}, {spec.batch, in_size(spec)});
  const Difference dbp = difference(dx, contract(dy, w, {"b", "n"}));
  INFO("BP max abs difference " << dbp.max_abs);
  CHECK(dbp.max_abs < 1e-11);
}

// dG for every core equals the central difference of L = sum(dY .* Y) (L is linear in each core
// entry, so the difference quotient is exact up to rounding).
void check_wg(const LayerSpec& spec, uint64_t seed) {
  INFO("layer " << spec.name << " (" << to_string(spec.format) << ") seed=" << seed);
  std::cout << "[layer] " << spec.name << " wg seed=" << seed << "\n";
  TensorMap t = random_cores(spec, seed);
  t.emplace("X", random_input(spec, seed + 1));
  t.emplace("dY", random_output_grad(spec, seed + 2));
  const PhaseProblem fp = phase_problems(spec, Phase::fp).at(0);
  auto loss = [&]() { return dot(evaluate(fp, t), t.at("dY")); };
  const auto wg = phase_problems(spec, Phase::wg);
  const auto cores = layer_cores(spec);
  REQUIRE(wg.size() == cores.size());
  const double h = 1e-3;
  int64_t checked = 0;
  for (size_t c = 0; c < cores.size(); ++c) {
    const std::string& name = cores[c].name;
    CHECK(wg[c].result == "d" + name);
    CHECK(wg[c].result_labels == cores[c].labels);
    const Tensor<double> grad = evaluate(wg[c], t);
    Tensor<double>& g = t.at(name);
    REQUIRE(g.labels() == grad.labels());
    std::vector<int64_t> idx(g.shape().size(), 0);
    const int64_t n = g.numel();
    for (int64_t e = 0; e < n; ++e) {
      int64_t rest = e;
      for (size_t i = idx.size(); i-- > 0;) {
        idx[i] = rest % g.shape()[i];
        rest /= g.shape()[i];
      }
      const double saved = g.at(idx);
      g.at(idx) = saved + h;
      const double lp = loss();
      g.at(idx) = saved - h;
      const double lm = loss();
      g.at(idx) = saved;
      const double fd = (lp - lm) / (2 * h);
      INFO("core " << name << " entry " << e << ": network " << grad.at(idx) << ", finite difference " << fd);
      REQUIRE(std::fabs(grad.at(idx) - fd) <= 1e-8 * (1.0 + std::fabs(fd)));
      ++checked;
    }
  }
  CHECK(checked > 0);
}

const char* kSmall[] = {"tt_small.yaml", "ttm_small.yaml", "tr_small.yaml", "ht_small.yaml", "bt_small.yaml"};

}  // namespace

TEST_CASE("layers: FP and BP networks equal the dense computation, every format", "[layer]") {
  uint64_t seed = 0x1A7E0;
  for (const char* f : kSmall) check_fp_bp(load_layer(config(f)), seed++);
  // Variants: a 4-leaf HT (balanced, two internal edges), a 1-core TTM, a rank-1 ring, 3 BT terms.
  LayerSpec ht{"ht4", "<test>", Format::ht, 2, {2, 2, 3, 2}, {2, 3, 2, 2}, {2, 2, 3, 2}, 3, 1};
  check_fp_bp(ht, seed++);
  LayerSpec ttm1{"ttm1", "<test>", Format::ttm, 3, {4}, {5}, {1, 1}, 0, 1};
  check_fp_bp(ttm1, seed++);
  LayerSpec tr1{"tr1", "<test>", Format::tr, 2, {2, 2}, {3}, {1, 2, 2, 1}, 0, 1};
  check_fp_bp(tr1, seed++);
  LayerSpec bt3{"bt3", "<test>", Format::bt, 2, {2, 3, 2}, {3, 2, 2}, {2, 2, 3}, 0, 3};
  check_fp_bp(bt3, seed++);
  LayerSpec tt_uneven{"tt_uneven", "<test>", Format::tt, 2, {4}, {2, 3, 2}, {1, 3, 2, 2, 1}, 0, 1};
  check_fp_bp(tt_uneven, seed++);
}

TEST_CASE("layers: WG networks equal finite-difference gradients, every format", "[layer]") {
  uint64_t seed = 0x9AD0;
  for (const char* f : kSmall) check_wg(load_layer(config(f)), seed++);
  LayerSpec ht{"ht4", "<test>", Format::ht, 2, {2, 2, 3, 2}, {2, 3, 2, 2}, {2, 2, 2, 2}, 2, 1};
  check_wg(ht, seed++);
  LayerSpec ttm1{"ttm1", "<test>", Format::ttm, 3, {4}, {5}, {1, 1}, 0, 1};
  check_wg(ttm1, seed++);
}

TEST_CASE("layers: label convention and network shapes", "[layer]") {
  const LayerSpec tt = load_layer(config("tt_fetta_example.yaml"));
  CHECK(tt.name == "tt_fetta_example");
  CHECK(tt.batch == 128);
  CHECK(num_cores(tt) == 6);
  CHECK(out_size(tt) == 768);
  CHECK(in_size(tt) == 768);
  const auto fp = phase_problems(tt, Phase::fp);
  CHECK(fp[0].terms.size() == 1);
  CHECK(fp[0].terms[0].to_string() ==
        "b n1 n2 n3, m1 r1, r1 m2 r2, r2 m3 r3, r3 n1 r4, r4 n2 r5, r5 n3 -> b m1 m2 m3");
  CHECK(fp[0].terms[0].dims.at("r3") == 8);
  CHECK(fp[0].terms[0].dims.at("m1") == 12);
  CHECK(fp[0].terms[0].dims.at("b") == 128);
  CHECK_FALSE(fp[0].terms[0].dims.contains("r0"));
  CHECK(phase_problems(tt, Phase::bp)[0].terms[0].to_string() ==
        "b m1 m2 m3, m1 r1, r1 m2 r2, r2 m3 r3, r3 n1 r4, r4 n2 r5, r5 n3 -> b n1 n2 n3");
  const auto wg = phase_problems(tt, Phase::wg);
  REQUIRE(wg.size() == 6);
  CHECK(wg[0].result == "dG1");
  CHECK(wg[0].terms[0].to_string() ==
        "b n1 n2 n3, b m1 m2 m3, r1 m2 r2, r2 m3 r3, r3 n1 r4, r4 n2 r5, r5 n3 -> m1 r1");
  CHECK(wg[3].result_labels == std::vector<std::string>{"r3", "n1", "r4"});

  const LayerSpec tr = load_layer(config("tr_small.yaml"));
  const auto tr_cores = layer_cores(tr);
  CHECK(tr_cores.front().labels == std::vector<std::string>{"r0", "m1", "r1"});
  CHECK(tr_cores.back().labels == std::vector<std::string>{"r3", "n2", "r0"});
  CHECK(layer_dims(tr).at("r0") == 2);

  const LayerSpec ttm = load_layer(config("ttm_small.yaml"));
  CHECK(layer_cores(ttm)[0].labels == std::vector<std::string>{"m1", "n1", "r1"});
  CHECK(layer_cores(ttm)[1].labels == std::vector<std::string>{"r1", "m2", "n2"});

  const LayerSpec ht = load_layer(config("ht_small.yaml"));
  std::vector<std::string> names;
  for (const auto& c : layer_cores(ht)) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"G1", "G2", "G3", "T1_2", "T1_3"});
  CHECK(layer_cores(ht)[3].labels == std::vector<std::string>{"r1", "r2", "r1_2"});
  CHECK(layer_cores(ht)[4].labels == std::vector<std::string>{"r1_2", "r3"});
  CHECK(layer_dims(ht).at("r1_2") == 2);
  CHECK(phase_problems(ht, Phase::wg).size() == 5);

  LayerSpec ht4{"ht4", "<test>", Format::ht, 2, {2, 2, 2, 2}, {2, 2, 2, 2}, {2, 2, 2, 2}, 3, 1};
  names.clear();
  for (const auto& c : layer_cores(ht4)) names.push_back(c.name);
  CHECK(names == std::vector<std::string>{"G1", "G2", "G3", "G4", "T1_2", "T3_4", "T1_4"});
  CHECK(layer_cores(ht4).back().labels == std::vector<std::string>{"r1_2", "r3_4"});

  const LayerSpec bt = load_layer(config("bt_small.yaml"));
  const auto bfp = phase_problems(bt, Phase::fp);
  REQUIRE(bfp[0].terms.size() == 2);
  CHECK(bfp[0].terms[1].to_string() == "b n1 n2, r1 r2, m1 n1 r1, m2 n2 r2 -> b m1 m2");
  CHECK(bfp[0].terms[1].nodes[1].name == "U_2");
  CHECK(bfp[0].terms[1].nodes[3].name == "G_2_2");
  const auto bwg = phase_problems(bt, Phase::wg);
  REQUIRE(bwg.size() == 6);
  CHECK(bwg[3].result == "dU_2");
  CHECK(bwg[3].terms.size() == 1);
}

TEST_CASE("layers: every shipped description loads and builds its networks", "[layer]") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(FETTA_VERIF_CONFIG_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    INFO(entry.path().string());
    const LayerSpec s = load_layer(entry.path().string());
    CHECK(s.name == entry.path().stem().string());
    for (Phase p : {Phase::fp, Phase::bp, Phase::wg})
      for (const auto& prob : phase_problems(s, p))
        for (const auto& net : prob.terms) CHECK_NOTHROW(validate(net));
    ++count;
  }
  CHECK(count >= 11);
  // The realistic layers are all 768 x 768.
  for (const char* f : {"tt_transformer_768.yaml", "ttm_transformer_768.yaml", "tr_transformer_768.yaml",
                        "ht_transformer_768.yaml", "bt_transformer_768.yaml"}) {
    const LayerSpec s = load_layer(config(f));
    CHECK(out_size(s) == 768);
    CHECK(in_size(s) == 768);
  }
}

// ------------------------------------------------------------------------------------------------

namespace {
const std::string kGood =
    "format: tt\n"        // 1
    "batch: 4\n"          // 2
    "out_modes: [2, 3]\n" // 3
    "in_modes: [3, 2]\n"  // 4
    "ranks: [1, 2, 3, 2, 1]\n";  // 5

std::string error_of(const std::string& text) {
  try {
    parse_layer(text, "bad.yaml");
  } catch (const LayerError& e) {
    return e.what();
  }
  return "<no error>";
}
}  // namespace

TEST_CASE("layer YAML: valid text parses", "[layer_yaml]") {
  const LayerSpec s = parse_layer(kGood, "good.yaml");
  CHECK(s.name == "good");
  CHECK(s.source == "good.yaml");
  CHECK(s.format == Format::tt);
  CHECK(s.batch == 4);
  CHECK(s.out_modes == std::vector<int64_t>{2, 3});
  CHECK(s.in_modes == std::vector<int64_t>{3, 2});
  CHECK(s.ranks == std::vector<int64_t>{1, 2, 3, 2, 1});
  CHECK(parse_layer(kGood).name == "layer");
  CHECK(parse_layer("name: x\nformat: BT\nbatch: 1\nout_modes: [2]\nin_modes: [2]\nranks: [3]\nterms: 2\n").terms == 2);
}

TEST_CASE("layer YAML: error messages name the file, line, field and allowed values", "[layer_yaml]") {
  CHECK(error_of(kGood + "rank: 3\n") ==
        "bad.yaml:6: unknown key 'rank' (allowed keys: name, format, batch, out_modes, in_modes, ranks, "
        "transfer_rank, terms)");
  CHECK(error_of("format: tucker\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [1, 1]\n") ==
        "bad.yaml:1: field 'format': unknown format 'tucker' (allowed: tt, ttm, tr, ht, bt)");
  CHECK(error_of("format: [tt]\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [1, 1]\n") ==
        "bad.yaml:1: field 'format': expected one of tt, ttm, tr, ht, bt, got a list");
  CHECK(error_of("format: tt\nbatch: many\nout_modes: [2]\nin_modes: [2]\nranks: [1, 1, 1]\n") ==
        "bad.yaml:2: field 'batch': expected an integer, got 'many'");
  CHECK(error_of("format: tt\nbatch: 2.5\nout_modes: [2]\nin_modes: [2]\nranks: [1, 1, 1]\n") ==
        "bad.yaml:2: field 'batch': expected an integer, got '2.5'");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: 6\nin_modes: [2]\nranks: [1, 1, 1]\n") ==
        "bad.yaml:3: field 'out_modes': expected a list of integers, e.g. [8, 8, 12], got '6'");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: [2]\nin_modes:\n  - 3\n  - two\nranks: [1, 1, 1, 1]\n") ==
        "bad.yaml:6: field 'in_modes[1]': expected an integer, got 'two'");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes:\n  - 2\n  - 0\nin_modes: [2]\nranks: [1, 1, 1, 1]\n") ==
        "bad.yaml:5: field 'out_modes[1]': size 0 in out_modes [2, 0] (allowed: integers 1 .. 67108864)");
  CHECK(error_of("format: tt\nbatch: -4\nout_modes: [2]\nin_modes: [2]\nranks: [1, 1, 1]\n") ==
        "bad.yaml:2: field 'batch': -4 (allowed: integers 1 .. 67108864)");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: [2, 3]\nin_modes: [3, 2]\nranks: [1, 2, 1]\n") ==
        "bad.yaml:5: field 'ranks': format tt with 4 cores needs 5 ranks [R_0 .. R_4], got 3 [1, 2, 1]");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [2, 2, 1]\n") ==
        "bad.yaml:5: field 'ranks': format tt needs R_0 = R_2 = 1 (allowed: [1, R_1 .. R_1, 1]), got [2, 2, 1]");
  CHECK(error_of("format: tr\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [2, 2, 3]\n") ==
        "bad.yaml:5: field 'ranks': format tr closes the ring: the first and last ranks must be equal (R_0 = R_2), "
        "got [2, 2, 3]");
  CHECK(error_of("format: ht\nbatch: 4\nout_modes: [2, 2, 2]\nin_modes: [2, 2, 2]\nranks: [2, 2, 2, 2]\n"
                 "transfer_rank: 2\n") ==
        "bad.yaml:5: field 'ranks': format ht with 3 cores needs 3 ranks [R_1 .. R_3], got 4 [2, 2, 2, 2]");
  CHECK(error_of("format: ht\nbatch: 4\nout_modes: [2, 2, 2]\nin_modes: [2, 2, 2]\nranks: [2, 2, 2]\n") ==
        "bad.yaml:1: field 'transfer_rank': missing: format ht with more than 2 leaves needs it (allowed: integers "
        ">= 1)");
  CHECK(error_of("format: ht\nbatch: 4\nout_modes: [2, 2, 2]\nin_modes: [2, 2, 2]\nranks: [2, 2, 2]\n"
                 "transfer_rank: 0\n") ==
        "bad.yaml:6: field 'transfer_rank': 0 (allowed: integers >= 1)");
  CHECK(error_of("format: ttm\nbatch: 4\nout_modes: [2, 2]\nin_modes: [2]\nranks: [1, 2, 1]\n") ==
        "bad.yaml:4: field 'in_modes': format ttm pairs output and input modes: out_modes has 2 entries, in_modes 1 "
        "(allowed: equal counts)");
  CHECK(error_of(kGood + "transfer_rank: 4\n") ==
        "bad.yaml:6: field 'transfer_rank': only format ht has a transfer rank (format is tt; remove the key)");
  CHECK(error_of(kGood + "terms: 2\n") ==
        "bad.yaml:6: field 'terms': only format bt has block terms (format is tt; remove the key)");
  CHECK(error_of("format: bt\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [2]\nterms: 0\n") ==
        "bad.yaml:6: field 'terms': 0 (allowed: integers 1 .. 1024)");
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: [2]\nin_modes: [2]\n") ==
        "bad.yaml:1: field 'ranks': missing (required fields: format, batch, out_modes, in_modes, ranks)");
  CHECK(error_of(kGood + "batch: 5\n") == "bad.yaml:6: field 'batch': given twice");
  CHECK(error_of("format: tt\nbatch: [4\n").rfind("bad.yaml:", 0) == 0);
  CHECK(error_of("format: tt\nbatch: [4\n").find("YAML syntax error") != std::string::npos);
  CHECK(error_of("- 1\n- 2\n").find("expected a mapping") != std::string::npos);
  CHECK(error_of("") == "bad.yaml: <file>: the file holds no YAML document (empty, or only comments)");
  CHECK(error_of(kGood + "---\n" + kGood) == "bad.yaml:7: <file>: 2 YAML documents (separated by ---); allowed: exactly one");

  // load_layer names the file it read.
  const auto path = std::filesystem::temp_directory_path() / ("fetta_verif_bad_layer_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(path) << kGood << "colour: blue\n";
  CHECK_THROWS_WITH(load_layer(path.string()), path.string() + ":6: unknown key 'colour' (allowed keys: name, format, "
                                                               "batch, out_modes, in_modes, ranks, transfer_rank, terms)");
  std::filesystem::remove(path);
  CHECK_THROWS_WITH(load_layer("/nonexistent/layer.yaml"), Catch::Contains("/nonexistent/layer.yaml: cannot open"));

  // Specs built in code are validated too (no line to report).
  LayerSpec s = parse_layer(kGood, "code");
  s.ranks = {1, 2, 1};
  CHECK_THROWS_WITH(validate_layer(s), Catch::StartsWith("code: field 'ranks': format tt with 4 cores"));
  CHECK_THROWS_AS(phase_problems(s, Phase::fp), LayerError);
}

// Sizes are judged before anything is allocated: a huge layer is refused at parse, naming the
// field, instead of ending in std::bad_alloc after tens of seconds.
TEST_CASE("layers beyond the size budget are refused when parsed", "[layer]") {
  using Catch::Contains;
  auto error_of = [](const std::string& yaml) {
    try {
      (void)parse_layer(yaml, "big.yaml");
    } catch (const LayerError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(error_of("format: tt\nbatch: 1099511627776\nout_modes: [2]\nin_modes: [2]\nranks: [1, 2, 1]\n") ==
        "big.yaml:2: field 'batch': 1099511627776 (allowed: integers 1 .. 67108864)");
  CHECK_THAT(error_of("format: tt\nbatch: 65536\nout_modes: [64, 64]\nin_modes: [64, 64]\nranks: [1, 2, 2, 2, 1]\n"),
             Contains("big.yaml:2: field 'batch': the layer is too large: X [batch x in_modes] has more than 67108864 "
                      "elements (allowed: at most 67108864 = 512 MiB in fp64)"));
  CHECK(error_of("format: tt\nbatch: 4\nout_modes: [2147483648]\nin_modes: [2]\nranks: [1, 2, 1]\n") ==
        "big.yaml:3: field 'out_modes[0]': size 2147483648 in out_modes [2147483648] (allowed: integers 1 .. 67108864)");
  CHECK_THAT(error_of("format: tt\nbatch: 4\nout_modes: [64, 64]\nin_modes: [64, 64]\nranks: [1, 4096, 8192, 4, 1]\n"),
             Contains("big.yaml:5: field 'ranks': the layer is too large: core G2 has more than 67108864 elements"));
  CHECK_THAT(error_of("format: bt\nbatch: 4\nout_modes: [2]\nin_modes: [2]\nranks: [2]\nterms: 1000000\n"),
             Contains("big.yaml:6: field 'terms': 1000000 (allowed: integers 1 .. 1024)"));
  CHECK_THAT(error_of("format: tt\nbatch: 4\nout_modes: [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]\n"
                      "in_modes: [2]\nranks: [1, 2, 1]\n"),
             Contains("big.yaml:3: field 'out_modes': 17 entries (allowed: at most 16)"));
  // Every shipped layer is inside the budget.
  for (const char* name : {"tt_transformer_768", "ttm_transformer_768", "tr_transformer_768", "ht_transformer_768",
                           "bt_transformer_768", "tt_fetta_example", "tt_atis", "tt_wmt_long", "ttm_ucf11", "ht_ucf11",
                           "tr_ucf11", "bt_ucf11"})
    CHECK_NOTHROW(load_layer(std::string(FETTA_SOURCE_DIR) + "configs/layers/" + name + ".yaml"));
}
