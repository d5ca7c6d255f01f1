// The ISA layout, encoder and disassembler (docs/isa.md), and the timing contract.
#include <catch2/catch.hpp>

#include <random>

#include "arch/isa.hpp"
#include "shipped_config.hpp"

using namespace fetta::arch;
using fetta::test::cfg_named;
using Catch::Matchers::Contains;

TEST_CASE("ISA layout of the default configuration", "[isa]") {
  const IsaLayout isa(cfg_named("default"));
  CHECK(isa.half_addr_bits() == 11);  // 4096 rows / 2 halves
  CHECK(isa.acc_addr_bits() == 9);
  CHECK(isa.levels() == 6);
  CHECK(isa.bits() % 32 == 0);
  CHECK(isa.words() == isa.bits() / 32);
  CHECK(isa.red_cfg_bits() == 7 * 64);
  CHECK(isa.red_chunks() * isa.red_chunk_bits() >= isa.red_cfg_bits());
  // Fields tile the word from bit 4 on without overlap.
  int at = 4;
  for (const IsaField& f : isa.gemm_fields()) {
    CHECK(f.lsb == at);
    CHECK(f.width > 0);
    at += f.width;
  }
  CHECK(at <= isa.bits());
}

TEST_CASE("GEMM encoding round trip", "[isa]") {
  for (const char* name : {"default", "ce4x4_x4", "ce2x4_x8_int16"}) {
    const IsaLayout isa(cfg_named(name));
    std::mt19937_64 rng(11);
    const uint32_t seed_note = 11;
    INFO("config " << name << ", seed " << seed_note);
    for (int it = 0; it < 200; ++it) {
      auto any = [&](int bits) { return static_cast<uint32_t>(rng() & ((uint64_t{1} << bits) - 1)); };
      GemmInstr g;
      g.m = any(16) + 1;
      g.k_tiles = any(16) + 1;
      g.n_tiles = any(16) + 1;
      g.gn = 1U << (rng() % 5);
      g.gk = 1U << (rng() % 5);
      g.a_base = any(isa.half_addr_bits());
      g.a_kt_stride = any(isa.half_addr_bits());
      g.b_base = any(isa.half_addr_bits());
      g.b_kt_stride = any(isa.half_addr_bits());
      g.b_nt_stride = any(isa.half_addr_bits());
      g.acc_base = any(isa.acc_addr_bits());
      g.acc_nt_stride = any(isa.acc_addr_bits());
      g.acc_accumulate = rng() & 1;
      g.ia_sel = any(isa.levels());
      g.ia_mask = any(isa.levels());
      g.ib_sel = any(isa.levels());
      g.ib_mask = any(isa.levels());
      g.ia_tr = rng() & 1;
      g.ib_tr = rng() & 1;
      g.ib_top = rng() & 1;
      g.os = isa.has_field("os") && (rng() & 1);
      const Words w = encode_gemm(isa, g);
      REQUIRE(static_cast<int>(w.size()) == isa.words());
      CHECK(field_value(w, isa.field("op")) == static_cast<uint32_t>(Opcode::gemm));
      CHECK(field_value(w, isa.field("m_m1")) == g.m - 1);
      CHECK(field_value(w, isa.field("k_tiles_m1")) == g.k_tiles - 1);
      CHECK(field_value(w, isa.field("n_tiles_m1")) == g.n_tiles - 1);
      CHECK(field_value(w, isa.field("gn_m1")) == g.gn - 1);
      CHECK(field_value(w, isa.field("gk_m1")) == g.gk - 1);
      CHECK(field_value(w, isa.field("a_base")) == g.a_base);
      CHECK(field_value(w, isa.field("b_nt_stride")) == g.b_nt_stride);
      CHECK(field_value(w, isa.field("acc_nt_stride")) == g.acc_nt_stride);
      CHECK(field_value(w, isa.field("acc_accumulate")) == (g.acc_accumulate ? 1U : 0U));
      CHECK(field_value(w, isa.field("ib_mask")) == g.ib_mask);
      CHECK(field_value(w, isa.field("ib_tr")) == (g.ib_tr ? 1U : 0U));
      CHECK(field_value(w, isa.field("ib_top")) == (g.ib_top ? 1U : 0U));
      if (isa.has_field("os")) CHECK(field_value(w, isa.field("os")) == (g.os ? 1U : 0U));
      CHECK_THAT(disassemble(isa, w), Contains("gemm m_m1=" + std::to_string(g.m - 1)));
    }
  }
}

TEST_CASE("GEMM fields out of range name the field and the range", "[isa]") {
  const IsaLayout isa(cfg_named("default"));
  GemmInstr g;
  g.m = 0;
  CHECK_THROWS_WITH(encode_gemm(isa, g), Contains("m = 0") && Contains("allowed: 1 .."));
  g = GemmInstr{};
  g.a_base = 2048;
  CHECK_THROWS_WITH(encode_gemm(isa, g), Contains("a_base = 2048") && Contains("allowed: 0 .. 2047"));
  g = GemmInstr{};
  g.gn = 3;
  CHECK_THROWS_WITH(encode_gemm(isa, g), Contains("powers of two"));
  g = GemmInstr{};
  g.m = 65537;
  CHECK_THROWS_WITH(encode_gemm(isa, g), Contains("m_m1 = 65536"));
}

TEST_CASE("The os bit exists only where the CEs have output-stationary", "[isa]") {
  const IsaLayout with(cfg_named("default")), without(cfg_named("ce2x4_x8"));
  REQUIRE(with.has_field("os"));
  CHECK(with.field("os").lsb == with.field("ib_top").lsb + 1);
  CHECK_FALSE(without.has_field("os"));
  GemmInstr g;
  g.os = true;
  CHECK(field_value(encode_gemm(with, g), with.field("os")) == 1U);
  CHECK_THROWS_WITH(encode_gemm(without, g), Contains("os = 1") && Contains("no output-stationary mode") &&
                                                 Contains("allowed: 0"));
  g.os = false;
  CHECK_NOTHROW(encode_gemm(without, g));
  CHECK(with.bits() == 320);  // the widest format is still the STORE
}

TEST_CASE("RED_CFG chunks carry the register image in order", "[isa]") {
  const IsaLayout isa(cfg_named("default"));
  std::vector<uint8_t> img(static_cast<size_t>(isa.red_cfg_bits()));
  std::mt19937 rng(5);
  for (auto& b : img) b = rng() & 1;
  for (int c = 0; c < isa.red_chunks(); ++c) {
    const Words w = encode_red_cfg(isa, c, img);
    CHECK(field_value(w, isa.field("op")) == static_cast<uint32_t>(Opcode::red_cfg));
    CHECK(field_value(w, isa.field("chunk")) == static_cast<uint64_t>(c));
    for (int i = 0; i < isa.red_chunk_bits(); ++i) {
      const int src = c * isa.red_chunk_bits() + i;
      const uint64_t bit = field_value(w, IsaField{"", 12 + i, 1});
      CHECK(bit == (src < isa.red_cfg_bits() ? img[static_cast<size_t>(src)] : 0U));
    }
  }
  CHECK_THROWS_WITH(encode_red_cfg(isa, isa.red_chunks(), img), Contains("chunk ="));
  CHECK_THROWS_WITH(encode_red_cfg(isa, 0, {1, 0}), Contains("exactly 448"));
  CHECK(disassemble(isa, encode_flip(isa)) == "flip");
}

TEST_CASE("Timing contract of the generated top", "[isa]") {
  const SystemTiming d = system_timing(cfg_named("default"));
  CHECK(d.dist_latency == 1);  // the output register
  // log2(64) levels + the transpose level, a register after each; + one stage inside the adder
  // of each of the 4 levels that add (levels 2..5)
  CHECK(d.red_latency == 7 + 4);
  CHECK(d.ctrl_delay == 2);
  CHECK(d.acc_delay == 2 + 4 + 1 + 11);  // + the CE column, the product stage, the reduction network
  CHECK(d.drain == d.acc_delay + 4);    // the 3-stage accumulator's write lands 2 cycles after its op
  const SystemTiming s = system_timing(cfg_named("ce2x4_x8"));
  CHECK(s.dist_latency == 3);  // (log2(32) + 1) / 2
  CHECK(s.ctrl_delay == 4);
  CHECK(s.acc_delay == 4 + 2 + 6);
  CHECK(s.drain == s.acc_delay + 3);  // combinational MAC, 2-stage accumulator
}
