// Contractions: the fp64 reference against Eigen's Tensor::contract, the order-exact bf16 flavour
// (hand-worked cases where the order changes the bits), and the integer flavours.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iostream>
#include <random>
#include <unsupported/Eigen/CXX11/Tensor>

#include "verif/contract.hpp"
#include "verif/numerics.hpp"

using namespace fetta::verif;

namespace {

template <int R>
using ETensor = Eigen::Tensor<double, R, Eigen::RowMajor>;
using Pair = Eigen::IndexPair<int>;

template <int R>
ETensor<R> to_eigen(const Tensor<double>& t) {
  REQUIRE(t.rank() == R);
  std::array<Eigen::Index, R> dims{};
  for (int i = 0; i < R; ++i) dims[static_cast<size_t>(i)] = t.shape()[static_cast<size_t>(i)];
  ETensor<R> e(dims);
  const std::vector<double> v = t.values();
  std::copy(v.begin(), v.end(), e.data());
  return e;
}

template <int R>
Tensor<double> from_eigen(const ETensor<R>& e, std::vector<std::string> labels) {
  std::vector<int64_t> shape;
  for (int i = 0; i < R; ++i) shape.push_back(e.dimension(i));
  return Tensor<double>(std::move(labels), shape, std::vector<double>(e.data(), e.data() + e.size()));
}

void check_close(const Tensor<double>& ours, const Tensor<double>& ref, double tol = 1e-12) {
  const Difference d = difference(ours, ref);
  INFO("max abs difference " << d.max_abs);
  CHECK(d.max_abs <= tol);
}

int64_t rnd(std::mt19937_64& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

}  // namespace

TEST_CASE("contract fp64 against Eigen: matrix products and permuted outputs", "[contract]") {
  const uint64_t seed = 0xC0A1;
  std::cout << "[contract] eigen matmul seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 20; ++rep) {
    const int64_t I = rnd(rng, 1, 7), J = rnd(rng, 1, 7), K = rnd(rng, 1, 9);
    const auto a = random_uniform({"i", "k"}, {I, K}, rng());
    const auto b = random_uniform({"k", "j"}, {K, J}, rng());
    const ETensor<2> ref = to_eigen<2>(a).contract(to_eigen<2>(b), std::array<Pair, 1>{Pair(1, 0)});
    check_close(contract(a, b, {"i", "j"}), from_eigen<2>(ref, {"i", "j"}));
    // The output order is honoured (difference() matches by label; also check the layout).
    const Tensor<double> ji = contract(a, b, {"j", "i"});
    CHECK(ji.labels() == std::vector<std::string>{"j", "i"});
    check_close(ji, from_eigen<2>(ref, {"i", "j"}));
    // Operand views (permuted, not contiguous) are read through their strides.
    check_close(contract(a.permute({"k", "i"}), b.permute({"j", "k"}), {"i", "j"}), from_eigen<2>(ref, {"i", "j"}));
  }
}

TEST_CASE("contract fp64 against Eigen: two contracted labels, outer products, single-operand sums", "[contract]") {
  const uint64_t seed = 0xC0A2;
  std::cout << "[contract] eigen patterns seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 10; ++rep) {
    const int64_t I = rnd(rng, 1, 5), J = rnd(rng, 1, 5), K = rnd(rng, 1, 5), L = rnd(rng, 1, 5);
    // A[i,k,l] B[l,j,k] -> [j,i]
    const auto a = random_uniform({"i", "k", "l"}, {I, K, L}, rng());
    const auto b = random_uniform({"l", "j", "k"}, {L, J, K}, rng());
    const ETensor<2> r1 = to_eigen<3>(a).contract(to_eigen<3>(b), std::array<Pair, 2>{Pair(1, 2), Pair(2, 0)});
    check_close(contract(a, b, {"j", "i"}), from_eigen<2>(r1, {"i", "j"}));
    // Outer product A[i,k] B[j] -> [j,i,k]
    const auto c = random_uniform({"i", "k"}, {I, K}, rng());
    const auto v = random_uniform({"j"}, {J}, rng());
    const ETensor<3> r2 = to_eigen<2>(c).contract(to_eigen<1>(v), std::array<Pair, 0>{});
    check_close(contract(c, v, {"j", "i", "k"}), from_eigen<3>(r2, {"i", "k", "j"}));
    // A label of one operand only, not in the output, is summed: A[i,k,l] v[j] -> [i,j]
    const ETensor<1> asum = to_eigen<3>(a).sum(std::array<int, 2>{1, 2});
    const ETensor<2> r3 = asum.contract(to_eigen<1>(v), std::array<Pair, 0>{});
    check_close(contract(a, v, {"i", "j"}), from_eigen<2>(r3, {"i", "j"}));
    // Full contraction to a scalar
    const auto a2 = random_uniform({"l", "k", "i"}, {L, K, I}, rng());
    const ETensor<0> r4 = to_eigen<3>(a).contract(to_eigen<3>(a2), std::array<Pair, 3>{Pair(0, 2), Pair(1, 1), Pair(2, 0)});
    check_close(contract(a, a2, {}), Tensor<double>({}, {}, {r4()}));
  }
}

TEST_CASE("contract fp64 against Eigen: batch-like kept labels", "[contract]") {
  const uint64_t seed = 0xC0A3;
  std::cout << "[contract] eigen batch seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 10; ++rep) {
    const int64_t B = rnd(rng, 1, 4), I = rnd(rng, 1, 5), J = rnd(rng, 1, 5), K = rnd(rng, 1, 6);
    // A[b,i,k] B[k,b,j] -> [i,b,j]: b is shared and kept (a batch), k is summed.
    const auto a = random_uniform({"b", "i", "k"}, {B, I, K}, rng());
    const auto b = random_uniform({"k", "b", "j"}, {K, B, J}, rng());
    const ETensor<3> ea = to_eigen<3>(a);
    const ETensor<3> eb = to_eigen<3>(b);
    ETensor<3> ref(B, I, J);
    for (Eigen::Index x = 0; x < B; ++x) {
      const ETensor<2> sa = ea.chip<0>(x);
      const ETensor<2> sb = eb.chip<1>(x);
      ref.chip<0>(x) = sa.contract(sb, std::array<Pair, 1>{Pair(1, 0)});
    }
    check_close(contract(a, b, {"i", "b", "j"}), from_eigen<3>(ref, {"b", "i", "j"}));
    // Hadamard product: every label shared and kept.
    const auto h = random_uniform({"i", "b"}, {I, B}, rng());
    const auto g = random_uniform({"b", "i"}, {B, I}, rng());
    const ETensor<2> eh = to_eigen<2>(h).shuffle(std::array<int, 2>{1, 0});
    const ETensor<2> hadamard = eh * to_eigen<2>(g);
    check_close(contract(h, g, {"b", "i"}), from_eigen<2>(hadamard, {"b", "i"}));
  }
}

TEST_CASE("contract fp64 n-ary: chains and rings against Eigen", "[contract]") {
  const uint64_t seed = 0xC0A4;
  std::cout << "[contract] eigen n-ary seed=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int rep = 0; rep < 10; ++rep) {
    const int64_t I = rnd(rng, 1, 5), J = rnd(rng, 1, 5), K = rnd(rng, 1, 5), L = rnd(rng, 1, 5);
    const auto a = random_uniform({"i", "j"}, {I, J}, rng());
    const auto b = random_uniform({"j", "k"}, {J, K}, rng());
    const auto c = random_uniform({"k", "l"}, {K, L}, rng());
    const ETensor<2> chain = to_eigen<2>(a)
                                 .contract(to_eigen<2>(b), std::array<Pair, 1>{Pair(1, 0)})
                                 .contract(to_eigen<2>(c), std::array<Pair, 1>{Pair(1, 0)});
    check_close(contract({c, a, b}, {"l", "i"}), from_eigen<2>(chain, {"i", "l"}));
    // A ring (tensor-ring-like): G1[x,i,y] G2[y,j,z] G3[z,k,x] -> [i,j,k]
    const int64_t X = rnd(rng, 1, 3), Y = rnd(rng, 1, 3), Z = rnd(rng, 1, 3);
    const auto g1 = random_uniform({"x", "i", "y"}, {X, I, Y}, rng());
    const auto g2 = random_uniform({"y", "j", "z"}, {Y, J, Z}, rng());
    const auto g3 = random_uniform({"z", "k", "x"}, {Z, K, X}, rng());
    const ETensor<4> g12 = to_eigen<3>(g1).contract(to_eigen<3>(g2), std::array<Pair, 1>{Pair(2, 0)});  // x i j z
    const ETensor<3> ring = g12.contract(to_eigen<3>(g3), std::array<Pair, 2>{Pair(3, 0), Pair(0, 2)});  // i j k
    check_close(contract({g1, g2, g3}, {"i", "j", "k"}), from_eigen<3>(ring, {"i", "j", "k"}));
    // One operand: sums and permutes.
    const ETensor<1> rowsum = to_eigen<2>(a).sum(std::array<int, 1>{1});
    check_close(contract({a}, {"i"}), from_eigen<1>(rowsum, {"i"}));
  }
}

TEST_CASE("contract: label rule violations are errors", "[contract]") {
  const auto a = random_uniform({"i", "k"}, {2, 3}, 1);
  const auto b = random_uniform({"k", "j"}, {3, 4}, 2);
  const auto c = random_uniform({"k"}, {3}, 3);
  CHECK_THROWS_WITH(contract({a, b, c}, {"i", "j"}), Catch::Contains("label 'k' appears in operands 0, 1, 2"));
  CHECK_THROWS_WITH(contract(a, random_uniform({"k"}, {4}, 4), {"i"}), Catch::Contains("label 'k' has size 3"));
  CHECK_THROWS_WITH(contract(a, b, {"i", "z"}), Catch::Contains("output label 'z' is in no operand"));
  CHECK_THROWS_WITH(contract(a, b, {"i", "i"}), Catch::Contains("repeated"));
  CHECK_THROWS_AS(contract(std::vector<Tensor<double>>{}, {}), ContractError);
}

TEST_CASE("evaluate a network with the fp64 reference", "[contract]") {
  TensorNetwork net;
  net.nodes = {{"X", {"b", "n"}}, {"G", {"n", "r"}}, {"H", {"r", "m"}}};
  net.output_labels = {"b", "m"};
  net.dims = {{"b", 2}, {"n", 3}, {"r", 2}, {"m", 4}};
  CHECK(net.to_string() == "bn,nr,rm->bm");
  std::map<std::string, Tensor<double>> t;
  t.emplace("X", random_uniform({"b", "n"}, {2, 3}, 5));
  t.emplace("G", random_uniform({"r", "n"}, {2, 3}, 6));  // any label order
  t.emplace("H", random_uniform({"r", "m"}, {2, 4}, 7));
  const Tensor<double> y = evaluate(net, t);
  CHECK(y.labels() == std::vector<std::string>{"b", "m"});
  check_close(y, contract(contract(t.at("X"), t.at("G"), {"b", "r"}), t.at("H"), {"b", "m"}));
  net.dims["r"] = 5;
  CHECK_THROWS_WITH(evaluate(net, t), Catch::Contains("size 2 for 'r', the network says 5"));
  net.dims["r"] = 2;
  t.erase("H");
  CHECK_THROWS_WITH(evaluate(net, t), Catch::Contains("no tensor for node 'H'"));
  TensorNetwork bad = net;
  bad.nodes.push_back({"K", {"n"}});
  CHECK_THROWS_AS(validate(bad), NetworkError);
  TensorNetwork multi;
  multi.nodes = {{"X", {"b", "n1"}}, {"G1", {"n1", "r1"}}};
  multi.output_labels = {"b", "r1"};
  CHECK(multi.to_string() == "b n1, n1 r1 -> b r1");
}

// ------------------------------------------------------------------------------------------------

namespace {
constexpr uint16_t kOne = 0x3F80;  // 1.0
constexpr uint16_t kEps = 0x3380;  // 2^-24: half an ulp of 1.0 in binary32

std::string hex(uint32_t x) { return fmt::format("0x{:08X}", x); }

uint32_t scalar_of(const Tensor<uint32_t>& t) { return t.values().at(0); }
}  // namespace

TEST_CASE("contract_bf16: the accumulation order is honoured (hand-worked)", "[contract]") {
  // p = [1, e, e, e, e] with e = 2^-24 (every 1 + e is a tie).
  const Tensor<uint16_t> a({"k"}, {5}, {kOne, kEps, kEps, kEps, kEps});
  const Tensor<uint16_t> ones({"k"}, {5}, {kOne, kOne, kOne, kOne, kOne});
  // sequential: (((+0 + 1) + e) + e) ... each tie rounds to even 1.0
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, AccumulationOrder::sequential()))) == "0x3F800000");
  // tiled(3): [1, e, e] -> 1.0; [e, e] -> 2e; 1 + 2e = 1 + 2^-23 exactly
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, AccumulationOrder::tiled(3)))) == "0x3F800001");
  // tiled(2): [1, e] -> 1; [e, e] -> 2e; [e] -> e; 1 + 2e = 0x3F800001; + e: tie, odd -> 0x3F800002
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, AccumulationOrder::tiled(2)))) == "0x3F800002");
  // balanced tree: ((p0 + p1) + p2) + (p3 + p4) = (1 + e -> 1, + e -> 1) + 2e = 0x3F800001
  CHECK(SumTree::balanced(5).to_string() == "add(add(add(p0, p1), p2), add(p3, p4))");
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, AccumulationOrder::tree(SumTree::balanced(5))))) == "0x3F800001");
  // A caller's tree: p0 + (((p1 + p2) + p3) + p4) = 1 + 4e = 1 + 2^-22
  SumTree t;
  const int s12 = t.add(t.product(1), t.product(2));
  const int s123 = t.add(s12, t.product(3));
  const int s1234 = t.add(s123, t.product(4));
  t.add(t.product(0), s1234);
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, AccumulationOrder::tree(t)))) == "0x3F800002");
  // A callback: reverse sequential order.
  const auto reverse = AccumulationOrder::callback([](std::span<const uint32_t> p, std::span<const int64_t>) {
    uint32_t acc = 0;
    for (size_t k = p.size(); k-- > 0;) acc = fp32_add(acc, p[k]);
    return acc;
  });
  CHECK(hex(scalar_of(contract_bf16(a, ones, {}, reverse))) == "0x3F800002");
  // The fp64 reference is 1 + 4e for all of them.
  CHECK(contract(bf16_to_double(a), bf16_to_double(ones), {}).values()[0] == 1.0 + std::ldexp(1.0, -22));
}

TEST_CASE("contract_bf16: the linearization of the summed labels is honoured", "[contract]") {
  // a[x,y] = [[e, 1, e], [e, e, e]], b = ones.
  const Tensor<uint16_t> a({"x", "y"}, {2, 3}, {kEps, kOne, kEps, kEps, kEps, kEps});
  const Tensor<uint16_t> b({"x", "y"}, {2, 3}, {kOne, kOne, kOne, kOne, kOne, kOne});
  // x slowest (default: a's label order): e, 1, e, e, e, e -> e; 1 + e -> 1 (tie); then 1 each time.
  CHECK(hex(scalar_of(contract_bf16(a, b, {}, AccumulationOrder::sequential()))) == "0x3F800000");
  // y slowest: e, e, 1, e, e, e -> 2e; 1 + 2e; + e: tie (odd) -> 1 + 4e; + e: tie (even) stays; + e stays.
  CHECK(hex(scalar_of(contract_bf16(a, b, {}, AccumulationOrder::sequential().with_sum_labels({"y", "x"})))) ==
        "0x3F800002");
  CHECK_THROWS_AS(contract_bf16(a, b, {}, AccumulationOrder::sequential().with_sum_labels({"y"})), ContractError);
  const std::vector<uint32_t> p = bf16_products(a, b, {}, {}, {"y", "x"});
  CHECK(p == std::vector<uint32_t>{0x33800000, 0x33800000, 0x3F800000, 0x33800000, 0x33800000, 0x33800000});
}

TEST_CASE("contract_bf16: signed zeros and specials follow the MAC contract", "[contract]") {
  const Tensor<uint16_t> negz({"k"}, {2}, {0x8000, 0x8000});
  const Tensor<uint16_t> ones({"k"}, {2}, {kOne, kOne});
  // Every product is -0; the accumulator starts at +0: +0 + -0 = +0.
  CHECK(hex(scalar_of(contract_bf16(negz, ones, {}, AccumulationOrder::sequential()))) == "0x00000000");
  // A tree over the raw products keeps -0 + -0 = -0 (no +0 is ever added).
  CHECK(hex(scalar_of(contract_bf16(negz, ones, {}, AccumulationOrder::tree(SumTree::balanced(2))))) == "0x80000000");
  const Tensor<uint16_t> inf({"k"}, {2}, {0x7F80, 0xFF80});
  CHECK(scalar_of(contract_bf16(inf, ones, {}, AccumulationOrder::sequential())) == kFp32QuietNaN);
}

TEST_CASE("contract_bf16: random matrices, sequential equals a MAC loop; orders agree with fp64 within bounds",
          "[contract]") {
  const uint64_t seed = 0xB16C;
  std::cout << "[contract] bf16 random seed=" << seed << "\n";
  const int64_t I = 5, J = 4, K = 37;
  const auto a = random_bf16({"i", "k"}, {I, K}, seed);
  const auto b = random_bf16({"k", "j"}, {K, J}, seed + 1);
  const auto seq = contract_bf16(a, b, {"i", "j"}, AccumulationOrder::sequential());
  for (int64_t i = 0; i < I; ++i) {
    for (int64_t j = 0; j < J; ++j) {
      uint32_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc = fp32_mac(acc, a(i, k), b(k, j));
      REQUIRE(seq(i, j) == acc);
    }
  }
  const int64_t R = 4;
  const auto tiled = contract_bf16(a, b, {"i", "j"}, AccumulationOrder::tiled(R));
  const auto tiled_tree = contract_bf16(
      a, b, {"i", "j"},
      AccumulationOrder::tree([R](int64_t n) { return SumTree::chains_then_sequential(n, R); }));
  CHECK(compare_bits(tiled, tiled_tree).empty());
  const auto reduction = contract_bf16(
      a, b, {"i", "j"}, AccumulationOrder::tree([R](int64_t n) { return SumTree::chains_then_balanced(n, R); }));
  const auto balanced = contract_bf16(a, b, {"i", "j"}, AccumulationOrder::tree(SumTree::balanced(K)));

  // Each order is within the worst-case bound of the fp64 value: |err| <= K * 2^-24 * sum |a b|.
  const auto ad = bf16_to_double(a);
  const auto bd = bf16_to_double(b);
  const auto ref = contract(ad, bd, {"i", "j"});
  Tensor<double> absa = map_values<double>(ad, [](double x) { return std::fabs(x); });
  Tensor<double> absb = map_values<double>(bd, [](double x) { return std::fabs(x); });
  const auto mag = contract(absa, absb, {"i", "j"});
  int differ = 0;
  for (const auto* got : {&seq, &tiled, &reduction, &balanced}) {
    const auto d = fp32_to_double(*got);
    for (int64_t i = 0; i < I; ++i)
      for (int64_t j = 0; j < J; ++j)
        REQUIRE(std::fabs(d(i, j) - ref(i, j)) <= static_cast<double>(K) * std::ldexp(1.0, -24) * mag(i, j));
    if (got != &seq && !compare_bits(*got, seq).empty()) ++differ;
  }
  // On random data the orders give different bits somewhere (the order is not ignored).
  CHECK(differ >= 2);
  INFO(compare_bits(balanced, seq));
  CHECK_FALSE(compare_bits(balanced, seq).empty());

  // The callback sees every output index once, in C order.
  std::vector<std::vector<int64_t>> seen;
  contract_bf16(a, b, {"j", "i"}, AccumulationOrder::callback([&](std::span<const uint32_t> p, std::span<const int64_t> idx) {
                  seen.emplace_back(idx.begin(), idx.end());
                  return AccumulationOrder::sequential().reduce(p);
                }));
  REQUIRE(seen.size() == static_cast<size_t>(I * J));
  CHECK(seen[1] == std::vector<int64_t>{0, 1});
  CHECK(seen.back() == std::vector<int64_t>{J - 1, I - 1});

  // Rounding to bf16 makes results the next operands.
  const Tensor<uint16_t> next = round_to_bf16(seq);
  CHECK(next.labels() == seq.labels());
  CHECK(next(2, 3) == fp32_to_bf16(seq(2, 3)));
  const auto chained = contract_bf16(next, random_bf16({"j", "l"}, {J, 3}, seed + 2), {"i", "l"},
                                     AccumulationOrder::tiled(2));
  CHECK(chained.shape() == std::vector<int64_t>{I, 3});
}

TEST_CASE("SumTree validation", "[contract]") {
  CHECK_NOTHROW(SumTree::balanced(7).validate(7));
  CHECK_NOTHROW(SumTree::chains_then_balanced(10, 4).validate(10));
  CHECK(SumTree::chains_then_balanced(10, 4).to_string() == "add(add(chain[0,4), chain[4,8)), chain[8,10))");
  CHECK_THROWS_WITH(SumTree::balanced(4).validate(5), Catch::Contains("product 4 is covered 0 times"));
  SumTree twice;
  twice.add(twice.product(0), twice.chain(0, 2));
  CHECK_THROWS_WITH(twice.validate(2), Catch::Contains("product 0 is covered 2 times"));
  SumTree dag;
  const int p = dag.product(0);
  dag.add(p, p);
  CHECK_THROWS_AS(dag.validate(1), ContractError);
  const Tensor<uint16_t> a({"k"}, {3}, {kOne, kOne, kOne});
  CHECK_THROWS_WITH(contract_bf16(a, a, {}, AccumulationOrder::tree(SumTree::balanced(2))),
                    Catch::Contains("does not fit the summed space [k] of 3 products"));
  CHECK_THROWS_AS(AccumulationOrder::tiled(0), ContractError);
}

TEST_CASE("contract_int8 and contract_int16: exact and wrapping", "[contract]") {
  const uint64_t seed = 0x1A78;
  std::cout << "[contract] integer seed=" << seed << "\n";
  const auto a = random_int8({"b", "i", "k"}, {3, 4, 50}, seed);
  const auto b = random_int8({"k", "j", "b"}, {50, 6, 3}, seed + 1);
  const auto r = contract_int8(a, b, {"b", "i", "j"});
  const auto ref = contract(cast<double>(a), cast<double>(b), {"b", "i", "j"});
  CHECK(difference(cast<double>(r), ref).max_abs == 0.0);
  const auto a16 = random_int16({"i", "k"}, {4, 40}, seed + 2);
  const auto b16 = random_int16({"k", "j"}, {40, 5}, seed + 3);
  const auto r16 = contract_int16(a16, b16, {"i", "j"});
  CHECK(difference(cast<double>(r16), contract(cast<double>(a16), cast<double>(b16), {"i", "j"})).max_abs == 0.0);

  // Wrap-around: K * 16384 > 2^31.
  const int64_t K = 140000;
  const Tensor<int8_t> m8({"k"}, {K}, std::vector<int8_t>(K, -128));
  const int64_t exact = K * 16384;
  CHECK(contract_int8(m8, m8, {}).values()[0] == static_cast<int32_t>(static_cast<uint32_t>(exact)));
  // int48: (2^17 + 5) * 2^30 > 2^47.
  const int64_t K16 = (int64_t{1} << 17) + 5;
  const Tensor<int16_t> m16({"k"}, {K16}, std::vector<int16_t>(static_cast<size_t>(K16), -32768));
  CHECK(contract_int16(m16, m16, {}).values()[0] == wrap48(K16 << 30));
  CHECK(wrap48(K16 << 30) < 0);
}
