// Writes the RTL of every arithmetic unit configuration the tests Verilate: <out>/<top>/*.sv.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "../top_writer.hpp"
#include "hw/arith/arith.hpp"
#include "prefix_units.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: arith_gen OUT_DIR\n");
    return 2;
  }
  using namespace fetta::hw;
  const std::filesystem::path out = argv[1];
  fetta::test::TopWriter emit(out);
  try {
    emit(Bf16Mul({}));                         // fp_mul_e8m7_o23
    emit(Bf16Mul({5, 2, 5}));                  // fp_mul_e5m2_o5: fp8 E5M2, swept exhaustively
    emit(Fp32Add({}));                         // fp32_add_s0
    emit(Fp32Add({5, 0}));                     // fp32_add_s5: every inner cut plus one output stage
    // The near/far adder with each carry network, and pipelined with every inner cut + 1.
    constexpr auto two_path = Fp32AddArch::two_path;
    emit(Fp32Add({0, 0, two_path, PrefixKind::sklansky}));     // fp32_add_twopath_sk_s0
    emit(Fp32Add({0, 0, two_path, PrefixKind::kogge_stone}));  // fp32_add_twopath_ks_s0
    emit(Fp32Add({0, 0, two_path, PrefixKind::brent_kung}));   // fp32_add_twopath_bk_s0
    emit(Fp32Add({5, 0, two_path, PrefixKind::sklansky}));     // fp32_add_twopath_sk_s5
    emit(Fp32ToBf16({}));                      // fp32_to_bf16
    emit(Fp32MulBf16({}));                     // fp32_mul_bf16: the vector unit's multiplier
    emit(FpMac({0}));                          // fp_mac_bf16_fp32_s0
    emit(FpMac({6}));                          // fp_mac_bf16_fp32_s6: product register + fp32_add_s5
    emit(FpMac({0, two_path, PrefixKind::sklansky}));  // fp_mac_bf16_fp32_twopath_sk_s0
    emit(FpMac({6, two_path, PrefixKind::sklansky}));  // fp_mac_bf16_fp32_twopath_sk_s6
    emit(IntMac({8, 32, 0}));                  // int_mac_i8_acc32_s0
    emit(IntMac({16, 48, 0}));                 // int_mac_i16_acc48_s0
    emit(IntMac({16, 48, 4}));                 // int_mac_i16_acc48_s4: A/B, M, P and one more
    emit(IntAdd({32}));                        // int_add_w32
    emit(IntAdd({48}));                        // int_add_w48
    // The prefix adders, compound adders and leading-zero counts at many widths, per kind.
    for (auto kind : {PrefixKind::kogge_stone, PrefixKind::sklansky, PrefixKind::brent_kung})
      emit(arith_test::PrefixUnits({kind}));   // prefix_units_ks, _sk, _bk
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arith_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
