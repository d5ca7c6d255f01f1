// The architecture configuration: defaults, the shipped file, and every kind of bad input.
#include <catch2/catch.hpp>

#include "arch/config.hpp"

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
  CHECK(c.network.dist_output_register);
  CHECK(c.memory.accum_pipeline == 3);
  const ArchConfig d = parse_arch_config("name: fetta_default\n");
  CHECK(d.ce.mac_product_stages == c.ce.mac_product_stages);
  CHECK(d.arith.fp32_adder == c.arith.fp32_adder);
  CHECK(d.network.dist_output_register == c.network.dist_output_register);
  CHECK(d.memory.accum_pipeline == c.memory.accum_pipeline);
  // 512 KB unified memory, 128 KB accumulators.
  CHECK(c.memory.banks * c.memory.elems_per_bank * 2 * c.memory.unified_depth == 512 * 1024);
  CHECK(c.memory.banks * c.memory.elems_per_bank * 4 * c.memory.accum_depth == 128 * 1024);
}

TEST_CASE("partial files keep the defaults for what they omit", "[arch]") {
  ArchConfig c = parse_arch_config("dtype: int16\nce:\n  rows: 2\n  cols: 8\n  dataflows: [os]\n");
  CHECK(c.dtype == DataType::int16);
  CHECK(c.ce.rows == 2);
  CHECK(c.ce.count == 16);
  CHECK(c.ce.dataflows == std::vector<Dataflow>{Dataflow::os});
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
                    Contains("x.yaml:2: ce.rows: 0 is out of range; allowed: 1..256"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  dataflows: [ws, xs]\n", "x.yaml"),
                    Contains("ce.dataflows: unknown value 'xs'; allowed: is, os, ws"));
  CHECK_THROWS_WITH(parse_arch_config("ce:\n  dataflows: [ws, ws]\n", "x.yaml"), Contains("'ws' is listed twice"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  lanes: 32\n", "x.yaml"),
                    Contains("x.yaml:2: network.lanes: 32 lanes do not match memory.banks x memory.elems_per_bank = 16 x 4 = 64"));
  CHECK_THROWS_WITH(parse_arch_config("network:\n  lanes: 48\nmemory:\n  banks: 12\n", "x.yaml"),
                    Contains("network.lanes: 48 is not a power of two"));
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
                    Contains("x.yaml:2: arith.adder: unknown key; allowed keys here: fp32_adder, prefix"));
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
