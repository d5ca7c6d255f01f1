// The einsum front end and network validation: every error message.
#include <catch2/catch.hpp>

#include "mapper/einsum.hpp"
#include "mapper/problem.hpp"
#include "reference.hpp"

using namespace fetta::mapper;

TEST_CASE("einsum text parses into a tensor network", "[einsum]") {
  const auto net = parse_einsum(" ab, bc ,cd -> ad", "a=4, b=8,c=8,d=4");
  REQUIRE(net.nodes.size() == 3);
  CHECK(net.nodes[0].name == "T0");
  CHECK(net.nodes[2].labels == std::vector<std::string>{"c", "d"});
  CHECK(net.output_labels == std::vector<std::string>{"a", "d"});
  CHECK(net.dims.at("b") == 8);
  CHECK(make_problem(net).text() == "ab,bc,cd->ad");

  SECTION("implicit output: labels seen once, alphabetical") {
    CHECK(parse_einsum("ba,cb", "a=2,b=3,c=4").output_labels == std::vector<std::string>{"a", "c"});
  }
  SECTION("scalar output") { CHECK(parse_einsum("ab,ab->", "a=2,b=3").output_labels.empty()); }
  SECTION("unused sizes are ignored") { CHECK(parse_einsum("ab->a", "a=2,b=3,z=9").dims.count("z") == 0); }
}

TEST_CASE("einsum errors name the offending item", "[einsum]") {
  const std::string d = "a=4,b=8,c=8,d=4";
  CHECK_THROWS_WITH(parse_einsum("ab,bc,cb->a", "a=2,b=2,c=2"),
                    "label 'b' appears in three or more operands (a hyperedge); each label may join at most two");
  CHECK_THROWS_WITH(parse_einsum("ab,bc->ae", d), "output label 'e' does not appear in any input");
  CHECK_THROWS_WITH(parse_einsum("ab,bc->aa", d), "output label 'a' appears twice");
  CHECK_THROWS_WITH(parse_einsum("ab,bc,cd->ad", "a=4,b=8,d=4"), "label 'c' has no size (add c=N to --dims)");
  CHECK_THROWS_WITH(parse_einsum("aab,bc->c", d), "label 'a' is repeated in operand 0 'aab'");
  CHECK_THROWS_WITH(parse_einsum("", d), "malformed einsum: the expression is empty");
  CHECK_THROWS_WITH(parse_einsum("ab,,cd->ad", d), "malformed einsum 'ab,,cd->ad': operand 1 is empty");
  CHECK_THROWS_WITH(parse_einsum("->a", d), "malformed einsum '->a': operand 0 is empty");
  CHECK_THROWS_WITH(parse_einsum("ab,bc->a->c", d), "malformed einsum 'ab,bc->a->c': more than one '->'");
  CHECK_THROWS_WITH(parse_einsum("ab,b1->a", d), "malformed einsum 'ab,b1->a': '1' in operand 1 is not a letter");
  CHECK_THROWS_WITH(parse_einsum("ab,bc>ac", d), "malformed einsum 'ab,bc>ac': '>' in operand 1 is not a letter");
  CHECK_THROWS_WITH(parse_einsum("ab,bc->a.", d), "malformed einsum 'ab,bc->a.': '.' in the output is not a letter");
  std::map<std::string, int64_t> zero{{"a", 4}, {"b", 0}};
  CHECK_THROWS_WITH(parse_einsum("ab->a", zero), "size of label 'b' must be positive, got 0");
}

TEST_CASE("--dims errors name the offending entry", "[einsum]") {
  CHECK(parse_dims("").empty());
  CHECK(parse_dims("a=4,B=16").at("B") == 16);
  CHECK_THROWS_WITH(parse_dims("a=4,b"), "malformed --dims entry 'b' (expected label=size, e.g. a=4)");
  CHECK_THROWS_WITH(parse_dims("a=4,,b=2"), "malformed --dims entry '' (expected label=size, e.g. a=4)");
  CHECK_THROWS_WITH(parse_dims("=4"), "malformed --dims entry '=4' (expected label=size, e.g. a=4)");
  CHECK_THROWS_WITH(parse_dims("a=4=5"), "malformed --dims entry 'a=4=5' (expected label=size, e.g. a=4)");
  CHECK_THROWS_WITH(parse_dims("ab=4"), "--dims label 'ab' is not a single letter");
  CHECK_THROWS_WITH(parse_dims("a=x"), "size of label 'a' is not an integer: 'x'");
  CHECK_THROWS_WITH(parse_dims("a=4k"), "size of label 'a' is not an integer: '4k'");
  CHECK_THROWS_WITH(parse_dims("a=0"), "size of label 'a' must be positive, got 0");
  CHECK_THROWS_WITH(parse_dims("a=-3"), "size of label 'a' must be positive, got -3");
  CHECK_THROWS_WITH(parse_dims("a=99999999999999999999"), "size of label 'a' is too large: 99999999999999999999");
  CHECK_THROWS_WITH(parse_dims("a=4,a=5"), "--dims gives label 'a' twice");
}

TEST_CASE("tensor network validation names the offending node or label", "[einsum]") {
  using test::network;
  CHECK_THROWS_WITH(make_problem(fetta::verif::TensorNetwork{}), "the tensor network has no nodes");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {"r1", "m"}}}, {}, {{"m", 2}})),
                    "label 'r1' (in node 'G1') has no size");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {"r1"}}}, {}, {{"r1", -1}})),
                    "size of label 'r1' must be positive, got -1");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {"r1", "r1"}}}, {}, {{"r1", 2}})),
                    "label 'r1' appears twice in node 'G1'");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {"r1"}}}, {"b"}, {{"r1", 2}, {"b", 2}})),
                    "output label 'b' does not appear in any input");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {"r1"}}}, {"r1", "r1"}, {{"r1", 2}})),
                    "output label 'r1' appears twice");
  CHECK_THROWS_WITH(make_problem(network({{"G1", {""}}}, {}, {})), "node 'G1' has an empty label");
  fetta::verif::TensorNetwork big;
  for (int i = 0; i < kMaxNodes + 1; ++i) big.nodes.push_back({"N", {}});
  CHECK_THROWS_WITH(make_problem(big), "the tensor network has 21 nodes; the exact search handles at most 20");
}
