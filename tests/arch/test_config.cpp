// The architecture configuration: defaults, the shipped file, and every kind of bad input.
#include <catch2/catch.hpp>

#include <limits>
#include <string>

#include "arch/config.hpp"
#include "yaml_input/strict.hpp"

using namespace fetta::arch;

TEST_CASE("configs/default.yaml is the published default", "[arch]") {
  ArchConfig c = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
  CHECK(c.name == "fetta_default");
  CHECK(c.dtype == DataType::bf16);
  CHECK(c.ce.count == 16);
  CHECK(c.ce.rows == 4);
  CHECK(c.ce.cols == 4);
  CHECK(c.total_pes() == 256);
  CHECK(c.network.lanes == 64);
  CHECK(c.memory.banks == 16);
  CHECK(c.memory.elems_per_bank == 4);
  CHECK(c.has_dataflow(Dataflow::os));
  CHECK(c.dram.capacity_mb == 4096);
  // The settings that close 1 GHz (docs/results.md), also the parser's defaults.
  CHECK(c.ce.mac_product_stages == 1);
  CHECK(c.arith.fp32_adder == Fp32Adder::two_path);
  CHECK(c.arith.prefix == PrefixAdder::sklansky);
  CHECK(c.arith.reduction_adder == Fp32Adder::basic);
  CHECK(c.arith.reduction_adder_stages == 1);
  CHECK(c.network.dist_output_register);
  CHECK(c.memory.accum_pipeline == 3);
  const ArchConfig d = parse_arch_config("name: fetta_default\n");
  CHECK(d.ce.mac_product_stages == c.ce.mac_product_stages);
  CHECK(d.arith.fp32_adder == c.arith.fp32_adder);
  CHECK(d.arith.reduction_adder == c.arith.reduction_adder);
  CHECK(d.arith.reduction_adder_stages == c.arith.reduction_adder_stages);
  CHECK(d.network.dist_output_register == c.network.dist_output_register);
  CHECK(d.memory.accum_pipeline == c.memory.accum_pipeline);
  // 512 KB unified memory, 128 KB accumulators.
  CHECK(c.memory.banks * c.memory.elems_per_bank * 2 * c.memory.unified_depth == 512 * 1024);
  CHECK(c.memory.banks * c.memory.elems_per_bank * 4 * c.memory.accum_depth == 128 * 1024);
}

TEST_CASE("partial files keep the defaults for what they omit", "[arch]") {
  ArchConfig c = parse_arch_config("dtype: int16\nce:\n  rows: 2\n  cols: 4\n  dataflows: [ws, os]\n");
  CHECK(c.dtype == DataType::int16);
  CHECK(c.ce.rows == 2);
  CHECK(c.ce.count == 16);
  CHECK(c.ce.dataflows == std::vector<Dataflow>{Dataflow::ws, Dataflow::os});
  CHECK(operand_bits(c.dtype) == 16);
  CHECK(accumulator_bits(c.dtype) == 48);
}

TEST_CASE("bad configurations name the file, line, field and what is allowed", "[arch][errors]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  rows: 4\n  colz: 4\n", "x.yaml"),
                    Contains("x.yaml:3: ce.colz: unknown key; allowed keys here: rows, cols, count"));
  CHECK_THROWS_WITH(parse_arch_config("dtype: fp8\n", "x.yaml"),
                    Contains("x.yaml:1: dtype: unknown value 'fp8'; allowed: bf16, int16, int8"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  rows: four\n", "x.yaml"),
                    Contains("x.yaml:2: ce.rows: expected an integer, got 'four'"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  rows: 0\n", "x.yaml"),
                    Contains("x.yaml:2: ce.rows: 0 is not allowed; allowed: a power of two, 1..256"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  dataflows: [ws, xs]\n", "x.yaml"),
                    Contains("ce.dataflows: unknown value 'xs'; allowed: is, os, ws"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  dataflows: [ws, ws]\n", "x.yaml"), Contains("'ws' is listed twice"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  lanes: 32\n", "x.yaml"),
                    Contains("x.yaml:2: network.lanes: 32 lanes do not match memory.banks x memory.elems_per_bank = 16 x 4 = 64"));
  CHECK_THROWS_WITH(parse_arch_config("memory:\n  banks: 12\n", "x.yaml"),
                    Contains("x.yaml:2: memory.banks: 12 is not allowed; allowed: a power of two, 2..256"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  lanes: 48\nmemory:\n  banks: 16\n", "x.yaml"),
                    Contains("x.yaml:2: network.lanes: 48 is not allowed; allowed: a power of two, 2..1024"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  lanes: 8\nmemory:\n  banks: 2\n", "x.yaml"),
                    Contains("cannot hold one 4x4 transpose block"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  mac_pipeline_stages: 2\n", "x.yaml"),
                    Contains("x.yaml:2: ce.mac_pipeline_stages: 2 stages cannot be combined with os in ce.dataflows"));
  CHECK_NOTHROW(parse_arch_config("ce:\n  mac_pipeline_stages: 2\n  dataflows: [ws, is]\n", "x.yaml"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  mac_product_stages: 5\n", "x.yaml"),
                    Contains("x.yaml:2: ce.mac_product_stages: 5 is out of range; allowed: 0..4"));
  CHECK_THROWS_WITH(parse_arch_config("arith:\n  fp32_adder: fast\n", "x.yaml"),
                    Contains("x.yaml:2: arith.fp32_adder: unknown value 'fast'; allowed: basic, two_path"));
  CHECK_THROWS_WITH(parse_arch_config("arith:\n  prefix: ripple\n", "x.yaml"),
                    Contains("arith.prefix: unknown value 'ripple'; allowed: brent_kung, kogge_stone, sklansky"));
  CHECK_THROWS_WITH(parse_arch_config("arith:\n  adder: basic\n", "x.yaml"),
                    Contains("x.yaml:2: arith.adder: unknown key; allowed keys here: fp32_adder, prefix, "
                             "reduction_adder, reduction_adder_stages"));
  CHECK_THROWS_WITH(parse_arch_config("arith:\n  reduction_adder: fast\n", "x.yaml"),
                    Contains("x.yaml:2: arith.reduction_adder: unknown value 'fast'; allowed: basic, two_path"));
  CHECK_THROWS_WITH(parse_arch_config("arith:\n  reduction_adder_stages: 5\n", "x.yaml"),
                    Contains("x.yaml:2: arith.reduction_adder_stages: 5 is out of range; allowed: 0..4"));
  CHECK_THROWS_WITH(parse_arch_config("memory:\n  accum_pipeline: 4\n", "x.yaml"),
                    Contains("x.yaml:2: memory.accum_pipeline: 4 is out of range; allowed: 2..3"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  dist_output_register: maybe\n", "x.yaml"),
                    Contains("network.dist_output_register"));
  CHECK_THROWS_WITH(parse_arch_config("dram:\n  capacity_mb: 0\n", "x.yaml"),
                    Contains("x.yaml:2: dram.capacity_mb: 0 is out of range; allowed: 1..1048576"));
  CHECK_THROWS_WITH(parse_arch_config("ce: [1, 2]\n", "x.yaml"), Contains("ce: expected a mapping of keys"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  rows: [4\n", "x.yaml"), Contains("x.yaml:"));
  CHECK_THROWS_WITH(load_arch_config("/nonexistent.yaml"), Contains("cannot open the configuration file"));
}

// Every limit a generator, the ISA or the simulator relies on is refused at the parse, with the
// field's line, the same way for every part (issue: a depth of 2 used to fail only in --part top,
// deep inside elaboration, with no file or field).
TEST_CASE("limits of the generators and the ISA are checked when the file is parsed", "[arch][errors]") {
  using Catch::Contains;
  auto refused = [](const std::string& yaml) {
    try {
      parse_arch_config(yaml, "x.yaml");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused("memory:\n  unified_depth: 2\n"),
             Contains("x.yaml:2: memory.unified_depth: 2 is not allowed; allowed: a power of two, 4..131072"));
  CHECK_THAT(refused("memory:\n  unified_depth: 3\n"), Contains("x.yaml:2: memory.unified_depth: 3 is not allowed"));
  CHECK_THAT(refused("memory:\n  unified_depth: 262144\n"), Contains("memory.unified_depth: 262144 is not allowed"));
  CHECK_THAT(refused("memory:\n  accum_depth: 384\n"), Contains("x.yaml:2: memory.accum_depth: 384 is not allowed"));
  // Found by tests/fuzz: the controller's OS drain needs a row per CE row.
  CHECK_THAT(refused("memory:\n  accum_depth: 2\n"),
             Contains("x.yaml:2: memory.accum_depth: 2 rows cannot take an output-stationary fold's 4 result rows"));
  CHECK(refused("ce:\n  dataflows: [ws, is]\nmemory:\n  accum_depth: 2\n") == "accepted");
  CHECK_THAT(refused("ce:\n  count: 12\n"),
             Contains("x.yaml:2: ce.count: 12 is not allowed; allowed: a power of two, 1..1024"));
  CHECK_THAT(refused("ce:\n  rows: 3\n"), Contains("x.yaml:2: ce.rows: 3 is not allowed; allowed: a power of two"));
  CHECK_THAT(refused("ce:\n  dataflows: [os]\n"), Contains("x.yaml:2: ce.dataflows:") && Contains("contains ws"));
  CHECK_THAT(refused("ce:\n  count: 32\n"), Contains("network.lanes: 64 lanes cannot feed 32 CEs x 4 rows"));
  CHECK_THAT(refused("network:\n  dist_pipeline_every: 8\n"),
             Contains("x.yaml:2: network.dist_pipeline_every: 8 is out of range; allowed: 0..7 (0: combinational"));
  CHECK_THAT(refused("network:\n  lanes: 2048\n"), Contains("network.lanes: 2048 is not allowed; allowed: a power of two, 2..1024"));
  // Physical values: finite and plausible.
  CHECK_THAT(refused("clock_mhz: 1e-300\n"),
             Contains("x.yaml:1: clock_mhz: 1e-300 is out of range; allowed: a finite number >= 1 and <= 10000"));
  CHECK_THAT(refused("clock_mhz: .inf\n"), Contains("x.yaml:1: clock_mhz: .inf is out of range"));
  CHECK_THAT(refused("clock_mhz: .nan\n"), Contains("x.yaml:1: clock_mhz: .nan is out of range"));
  CHECK_THAT(refused("dram:\n  latency_ns: 1e300\n"), Contains("x.yaml:2: dram.latency_ns: 1e300 is out of range"));
  CHECK_THAT(refused("dram:\n  latency_ns: -1\n"), Contains("dram.latency_ns: -1 is out of range"));
  CHECK_THAT(refused("dram:\n  bandwidth_gbps: 0\n"), Contains("dram.bandwidth_gbps: 0 is out of range"));
  CHECK_THAT(refused("energy:\n  mac_pj: .inf\n"), Contains("x.yaml:2: energy.mac_pj: .inf is out of range"));
  CHECK_THAT(refused("energy:\n  dram_read_pj_per_byte: null\n"), Contains("x.yaml:2: energy.dram_read_pj_per_byte: expected a number"));
  CHECK_THAT(refused("energy:\n  static_mw: -1\n"), Contains("x.yaml:2: energy.static_mw: -1 is out of range"));
  // Built structs (sweeps) go through the same rules, without a line.
  ArchConfig c;
  c.memory.unified_depth = 2;
  CHECK_THROWS_WITH(validate(c), Contains("memory.unified_depth: 2 is not allowed"));
  c = ArchConfig{};
  c.dram.latency_ns = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(validate(c), Contains("dram.latency_ns: inf is out of range"));
  CHECK_NOTHROW(validate(ArchConfig{}));
}

TEST_CASE("a config file is exactly one YAML document with each key once", "[arch][errors]") {
  using Catch::Contains;
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  rows: 4\n  cols: 4\n  rows: 8\n", "x.yaml"),
                    Contains("x.yaml:4: ce.rows: given twice (first at line 2)"));
  CHECK_THROWS_WITH(parse_arch_config("dtype: bf16\nclock_mhz: 500\ndtype: int8\n", "x.yaml"),
                    Contains("x.yaml:3: dtype: given twice (first at line 1)"));
  CHECK_THROWS_WITH(parse_arch_config("", "x.yaml"), Contains("x.yaml: <file>: the file holds no YAML document"));
  CHECK_THROWS_WITH(parse_arch_config("# only a comment\n", "x.yaml"), Contains("holds no YAML document"));
  CHECK_THROWS_WITH(parse_arch_config("dtype: bf16\n---\ndtype: int8\n", "x.yaml"),
                    Contains("x.yaml:3: <file>: 2 YAML documents (separated by ---); allowed: exactly one"));
  CHECK_NOTHROW(parse_arch_config("---\ndtype: int8\n", "x.yaml"));
}

TEST_CASE("to_yaml writes every field: the file reads back to the same architecture", "[arch]") {
  // Every field away from its default, so a field the writer forgets cannot come back by default.
  ArchConfig c;
  c.name = "odd \"name\" [ce.rows=2, x\\y]";
  c.dtype = DataType::int16;
  c.clock_mhz = 812.5;
  c.ce.rows = 2;
  c.ce.cols = 8;
  c.ce.count = 4;
  c.ce.dataflows = {Dataflow::is, Dataflow::ws};
  c.ce.ib_double_buffer = false;
  c.ce.psum_double_buffer = false;
  c.ce.mac_pipeline_stages = 2;
  c.ce.mac_product_stages = 0;
  c.arith.fp32_adder = Fp32Adder::basic;
  c.arith.prefix = PrefixAdder::brent_kung;
  c.arith.reduction_adder = Fp32Adder::two_path;
  c.arith.reduction_adder_stages = 2;
  c.network.lanes = 32;
  c.network.dist_pipeline_every = 3;
  c.network.dist_output_register = false;
  c.network.topology = NetworkTopology::fixed;
  c.memory.banks = 8;
  c.memory.unified_depth = 1024;
  c.memory.accum_depth = 128;
  c.memory.accum_pipeline = 2;
  c.vector.lanes = 8;
  c.dram.bandwidth_gbps = 12.8000001;
  c.dram.latency_ns = 0.1;
  c.dram.capacity_mb = 17;
  c.energy = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7};
  validate(c);
  const ArchConfig back = parse_arch_config(to_yaml(c), "round-trip");
  CHECK(back.same_architecture(c));
  CHECK(back.name == c.name);
  CHECK(back.dram.bandwidth_gbps == c.dram.bandwidth_gbps);
  CHECK(to_yaml(back) == to_yaml(c));
  CHECK(parse_arch_config(to_yaml(ArchConfig{})).same_architecture(ArchConfig{}));
  CHECK_FALSE(back.same_architecture(ArchConfig{}));
}

TEST_CASE("vector.lanes: one lane per element of a row by default, fewer in beats, checked against the row", "[arch]") {
  const ArchConfig d = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml");
  CHECK(d.vector.lanes == 0);
  CHECK(vector_lanes(d) == 64);
  CHECK(vector_lanes(parse_arch_config("vector:\n  lanes: 32\n")) == 32);
  CHECK(vector_lanes(parse_arch_config("vector:\n  lanes: 2\n")) == 2);
  // A smaller row: the default follows it.
  CHECK(vector_lanes(load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/ce4x4_x4.yaml")) == 16);
  CHECK_THROWS_WITH(parse_arch_config("vector:\n  lanes: 128\n", "v.yaml"),
                    "v.yaml:2: vector.lanes: 128 is not allowed; allowed: 0 (one lane per element of a row) or a power of "
                    "two, 2..64 (a row is memory.banks x memory.elems_per_bank = 64 elements)");
  CHECK_THROWS_WITH(parse_arch_config("vector:\n  lanes: 24\n", "v.yaml"), Catch::Contains("v.yaml:2: vector.lanes: 24 is not allowed"));
  CHECK_THROWS_WITH(parse_arch_config("vector:\n  lanes: 1\n", "v.yaml"), Catch::Contains("v.yaml:2: vector.lanes: 1 is not allowed"));
  CHECK_THROWS_WITH(parse_arch_config("vector:\n  lanes: -2\n", "v.yaml"), Catch::Contains("v.yaml:2: vector.lanes"));
  CHECK_THROWS_WITH(parse_arch_config("vector:\n  width: 2\n", "v.yaml"), Catch::Contains("v.yaml:2: vector.width"));
}

TEST_CASE("memory.store_reorder: on by default, off in the TPU-Offchip baseline, a boolean", "[arch]") {
  CHECK(load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/default.yaml").memory.store_reorder);
  const ArchConfig off = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/baseline_tpu_offchip.yaml");
  CHECK_FALSE(off.memory.store_reorder);
  // The same hardware as baseline_tpu in everything else.
  ArchConfig tpu = load_arch_config(std::string(FETTA_SOURCE_DIR) + "configs/baseline_tpu.yaml");
  tpu.name = off.name;
  tpu.source = off.source;
  tpu.memory.store_reorder = false;
  CHECK(tpu.same_architecture(off));
  CHECK(parse_arch_config(to_yaml(off), "round.yaml").memory.store_reorder == false);
  CHECK_THROWS_WITH(parse_arch_config("memory:\n  store_reorder: maybe\n", "x.yaml"),
                    Catch::Contains("x.yaml:2: memory.store_reorder") && Catch::Contains("true or false"));
}

TEST_CASE("two versions of an input file: the first line that differs", "[arch]") {
  using fetta::yaml_input::first_difference;
  CHECK_FALSE(first_difference("a: 1\nb: 2\n", "a: 1\nb: 2\n"));
  const auto d = first_difference("a: 1\nb: 2\nc: 3\n", "a: 1\nb: 5\nc: 3\n");
  REQUIRE(d);
  CHECK(d->line == 2);
  CHECK(d->a == "b: 2");
  CHECK(d->b == "b: 5");
  const auto longer = first_difference("a: 1\n", "a: 1\nb: 2\n");  // one text ends first
  REQUIRE(longer);
  CHECK(longer->line == 2);
  CHECK(longer->a == "(end of file)");
  CHECK(longer->b == "b: 2");
  const auto newline = first_difference("a: 1", "a: 1\n");  // only the last newline differs
  REQUIRE(newline);
  CHECK(newline->line == 2);
  CHECK(newline->a == newline->b);
}
