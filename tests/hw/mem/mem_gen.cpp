// Writes the RTL of every memory-system configuration the tests Verilate or lint:
// <out>/<top>/*.sv. The default configuration's blocks come from the YAML given.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "../top_writer.hpp"
#include "hw/mem/dma.hpp"
#include "hw/mem/mem.hpp"
#include "hw/mem/result_writer.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mem_gen OUT_DIR DEFAULT_CONFIG_YAML\n");
    return 2;
  }
  using namespace fetta::hw;
  using fetta::arch::DataType;
  const std::filesystem::path out = argv[1];
  fetta::test::TopWriter emit(out);
  try {
    // Both storage forms of the unified memory's banks (docs/memory.md §1).
    constexpr auto two_copies = BankStorage::two_copies;
    emit(MemBank({16, 2, 16}));                                   // mem_bank_d16_t2_w16
    emit(MemBank({16, 2, 16, two_copies}));                       // mem_bank_d16_t2_w16_2copy
    emit(UnifiedMemory({4, 2, 16, 16, 2}));                       // unified_mem_b4_t2_d16_w16_h2
    emit(UnifiedMemory({4, 2, 16, 16, 2, two_copies}));           // unified_mem_b4_t2_d16_w16_h2_2copy
    emit(AccumulationUnit({4, 2, 8, DataType::int8}));            // accum_unit_b4_t2_d8_int32
    emit(AccumulationUnit({2, 2, 8, DataType::bf16}));            // accum_unit_b2_t2_d8_fp32
    emit(AccumulationUnit({2, 1, 4, DataType::int16}));           // accum_unit_b2_t1_d4_int48
    // The three-stage read-modify-write (pipeline 3), fp32 with the two-path adder.
    constexpr auto two_path = Fp32AddArch::two_path;
    constexpr auto sk = PrefixKind::sklansky;
    emit(AccumulationUnit({4, 2, 8, DataType::int8, 3}));         // accum_unit_b4_t2_d8_int32_p3
    emit(AccumulationUnit({2, 2, 8, DataType::bf16, 3, two_path, sk}));  // accum_unit_b2_t2_d8_fp32_p3_twopath_sk
    emit(AccumulationUnit({2, 1, 4, DataType::int16, 3}));        // accum_unit_b2_t1_d4_int48_p3
    emit(AddressGenerator({6, 3, 7, 3}));                         // addr_gen_l6_s3_a7_c3
    emit(AddressGenerator({1, 1, 4, 4}));                         // addr_gen_l1_s1_a4_c4
    emit(ResultWriter({8, 4, 4, DataType::bf16}));                // result_writer_n8_b4_a4_bf16
    emit(ResultWriter({8, 2, 4, DataType::int16}));               // result_writer_n8_b2_a4_int16
    emit(ResultWriter({4, 4, 3, DataType::int8}));                // result_writer_n4_b4_a3_int8
    // The DMA: two groups of 4 one-byte lanes; one group of 2 two-byte lanes with a deeper queue.
    emit(Dma({{4, 1, 4, 8, 12}, 2}));                             // dma_r4_g1_n4_w8_a12_q2
    emit(Dma({{3, 0, 2, 16, 10}, 4}));                            // dma_r3_g0_n2_w16_a10_q4
    // Edge configurations, linted only: one element, one bank, 1-bit elements, the widest nest.
    emit(UnifiedMemory({2, 1, 4, 1, 2}));                         // unified_mem_b2_t1_d4_w1_h2
    emit(AccumulationUnit({1, 1, 2, DataType::int16}));           // accum_unit_b1_t1_d2_int48
    emit(AccumulationUnit({1, 1, 2, DataType::int16, 3}));        // accum_unit_b1_t1_d2_int48_p3
    emit(AddressGenerator({16, 8, 32, 32}));                      // addr_gen_l16_s8_a32_c32
    emit(AddressGenerator({1, 1, 1, 1}));                         // addr_gen_l1_s1_a1_c1
    emit(ResultWriter({4, 1, 3, DataType::int8}));                // result_writer_n4_b1_a3_int8
    emit(Dma({{1, 0, 1, 8, 4}, 16}));                             // dma_r1_g0_n1_w8_a4_q16: one-byte beats
    const auto cfg = fetta::arch::load_arch_config(argv[2]);
    emit(UnifiedMemory(unified_memory_params(cfg)));              // unified_mem_b16_t4_d4096_w16_h4
    emit(Dma(dma_params(cfg)));                                   // dma_r11_g2_n16_w16_a32_q4
    // The default unified memory with two copies per lane, and one bank half of it in both
    // forms: the tops docs/memory.md §1-§2 synthesize (`fetta synth --rtl <dir> --target asap7 --modules top`).
    UnifiedMemoryParams um2 = unified_memory_params(cfg);
    um2.storage = two_copies;
    emit(UnifiedMemory(um2));                                     // unified_mem_b16_t4_d4096_w16_h4_2copy
    emit(MemBank({um2.depth / 2, um2.elems, um2.width}));         // mem_bank_d2048_t4_w16
    emit(MemBank({um2.depth / 2, um2.elems, um2.width, two_copies}));  // mem_bank_d2048_t4_w16_2copy
    // The default accumulator (pipeline 3, two-path adder) and its two-stage, basic-adder form.
    const AccumulationUnitParams acc3 = accumulator_params(cfg);
    emit(AccumulationUnit(acc3));                                 // accum_unit_b16_t4_d512_fp32_p3_twopath_sk
    AccumulationUnitParams acc2 = acc3;
    acc2.pipeline = 2;
    acc2.adder_arch = Fp32AddArch::basic;
    emit(AccumulationUnit(acc2));                                 // accum_unit_b16_t4_d512_fp32
    // One bank of the default unit in the four combinations docs/memory.md §3 times
    // (`fetta synth --rtl <dir> --target asap7 --modules top`).
    for (const int pipeline : {2, 3})
      for (const auto arch : {Fp32AddArch::basic, two_path})
        emit(AccumBank({acc3.elems, acc3.depth, acc3.dtype, pipeline, arch, sk}));  // accum_bank_t4_d512_fp32[_p3][_twopath_sk]
    emit(AddressGenerator(address_generator_params(cfg)));        // addr_gen_l6_s3_a15_c16
    emit(ResultWriter({cfg.network.lanes, unified_memory_params(cfg).banks, fetta::rtl::clog2(cfg.memory.unified_depth / 2),
                       cfg.dtype}));                              // result_writer_n64_b16_a11_bf16
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mem_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
