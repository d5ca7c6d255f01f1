// Writes the small designs the synthesis-flow tests run (<out>/<top>/), next to the rtl_gen
// corpus: two multipliers for DSP mapping, a flop bank too big for a small iCE40, the
// arithmetic units of hw/arith whose figures docs/synthesis.md reports, and a unified-memory
// bank half in both storage forms (a read and a write port on one address: a 1R1RW macro; two
// copies: two 1R1W macros).
#include <fmt/core.h>

#include <cstdio>
#include <exception>
#include <filesystem>

#include "hw/arith/arith.hpp"
#include "hw/mem/mem_bank.hpp"
#include "rtl_gen/rtl.hpp"

namespace {

using namespace fetta::rtl;

// Two independent registered signed products: two DSP slices on an FPGA, never one.
struct MulPair : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "tests::MulPair"; }
  std::string module_name() const override { return fmt::format("mul_pair_s{}", p); }
  ParamList params() const override { return {{"width", std::to_string(p)}}; }
  void build(Module& m) const override {
    for (int i = 0; i < 2; ++i) {
      Sig a = m.input(fmt::format("a{}", i), SInt(p));
      Sig b = m.input(fmt::format("b{}", i), SInt(p));
      Sig y = m.output(fmt::format("p{}", i), SInt(2 * p));
      Sig q = m.reg(fmt::format("p{}_q", i), SInt(2 * p));
      q <<= a * b;
      y <<= q;
    }
  }
};

struct ShiftBankParams {
  int width = 8;
  int depth = 64;
};
// width x depth flip-flops in a shift chain: few ports, many flops (a device-capacity test).
struct ShiftBank : Generator<ShiftBankParams> {
  using Generator::Generator;
  std::string generator_name() const override { return "tests::ShiftBank"; }
  std::string module_name() const override { return fmt::format("shift_bank_w{}_d{}", p.width, p.depth); }
  ParamList params() const override {
    return {{"width", std::to_string(p.width)}, {"depth", std::to_string(p.depth)}};
  }
  void build(Module& m) const override {
    Sig in = m.input("in", UInt(p.width));
    Sig en = m.input("en", UInt(1));
    Sig out = m.output("out", UInt(p.width));
    Expr prev = in;
    for (int i = 0; i < p.depth; ++i) {
      Sig stage = m.reg(fmt::format("stage_{}", i), UInt(p.width), enabled_by(en));
      stage <<= prev;
      prev = stage;
    }
    out <<= prev;
  }
};

// Two registers of one clock: `slow_q` behind a width x width multiplier, `fast_q` behind an XOR.
// The sign-off timing tests know which one must fail at a fast clock.
struct TimingPair : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "tests::TimingPair"; }
  std::string module_name() const override { return fmt::format("timing_pair_w{}", p); }
  ParamList params() const override { return {{"width", std::to_string(p)}}; }
  void build(Module& m) const override {
    Sig a = m.input("a", UInt(p));
    Sig b = m.input("b", UInt(p));
    Sig slow = m.output("slow", UInt(2 * p));
    Sig fast = m.output("fast", UInt(p));
    Sig slow_q = m.reg("slow_q", UInt(2 * p));
    Sig fast_q = m.reg("fast_q", UInt(p));
    slow_q <<= a * b;
    fast_q <<= a ^ b;
    slow <<= slow_q;
    fast <<= fast_q;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: synth_designs OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  auto emit = [&](const GeneratorBase& g) {
    Design d;
    auto m = d.elaborate(g);
    write_design(d, m->name(), out / m->name());
  };
  try {
    emit(MulPair(8));                                // mul_pair_s8
    emit(ShiftBank({8, 64}));                        // shift_bank_w8_d64
    emit(TimingPair(16));                            // timing_pair_w16
    emit(fetta::hw::IntMac({8, 32, 2}));             // int_mac_i8_acc32_s2
    emit(fetta::hw::FpMac({0}));                     // fp_mac_bf16_fp32_s0
    emit(fetta::hw::FpMac({2}));                     // fp_mac_bf16_fp32_s2
    emit(fetta::hw::MemBank({32, 1, 16}));           // mem_bank_d32_t1_w16
    emit(fetta::hw::MemBank({32, 1, 16, fetta::hw::BankStorage::two_copies}));  // mem_bank_d32_t1_w16_2copy
  } catch (const std::exception& e) {
    std::fprintf(stderr, "synth_designs: %s\n", e.what());
    return 1;
  }
  return 0;
}
