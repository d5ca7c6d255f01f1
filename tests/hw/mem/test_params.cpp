// Parameter checks (every bad value names the generator, the field and what is allowed), module
// names, the configuration entry points and deterministic emission.
#include <catch2/catch.hpp>

#include <string>

#include "hw/mem/mem.hpp"
#include "hw/mem/result_writer.hpp"

using namespace fetta::hw;
using fetta::arch::DataType;
using Catch::Matchers::Contains;

namespace {

// The message of the std::invalid_argument that `f` throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

std::string emit_all(const fetta::rtl::GeneratorBase& g) {
  fetta::rtl::Design d;
  auto top = d.elaborate(g);
  std::string text;
  for (const auto& m : d.hierarchy(top->name())) text += fetta::rtl::emit_module(*m);
  return text;
}

}  // namespace

TEST_CASE("MemBank rejects bad parameters", "[mem_params]") {
  CHECK(error_of([] { MemBank({1, 4, 16}); }) ==
        "MemBank: depth = 1 is not allowed; allowed: a power of two, 2 .. 16777216");
  CHECK_THAT(error_of([] { MemBank({24, 4, 16}); }), Contains("MemBank: depth = 24") && Contains("a power of two"));
  CHECK_THAT(error_of([] { MemBank({16, 3, 16}); }), Contains("MemBank: elems = 3") && Contains("a power of two, 1 .. 64"));
  CHECK_THAT(error_of([] { MemBank({16, 0, 16}); }), Contains("MemBank: elems = 0"));
  CHECK_THAT(error_of([] { MemBank({16, 128, 16}); }), Contains("MemBank: elems = 128"));
  CHECK(error_of([] { MemBank({16, 4, 0}); }) == "MemBank: width = 0 is out of range; allowed: 1 .. 64");
  CHECK_THAT(error_of([] { MemBank({16, 4, 65}); }), Contains("MemBank: width = 65"));
  CHECK(error_of([] { MemBank({16, 4, 16}); }).empty());
}

TEST_CASE("UnifiedMemory rejects bad parameters", "[mem_params]") {
  CHECK(error_of([] { UnifiedMemory({1, 4, 4096, 16}); }) ==
        "UnifiedMemory: banks = 1 is not allowed; allowed: a power of two, 2 .. 256");
  CHECK_THAT(error_of([] { UnifiedMemory({12, 4, 4096, 16}); }), Contains("UnifiedMemory: banks = 12"));
  CHECK_THAT(error_of([] { UnifiedMemory({16, 6, 4096, 16}); }),
             Contains("UnifiedMemory: elems = 6") && Contains("a power of two, 1 .. 64"));
  // Two halves of at least two rows each.
  CHECK(error_of([] { UnifiedMemory({16, 4, 2, 16}); }) ==
        "UnifiedMemory: depth = 2 is not allowed; allowed: a power of two, 4 .. 16777216");
  CHECK_THAT(error_of([] { UnifiedMemory({16, 4, 3000, 16}); }), Contains("UnifiedMemory: depth = 3000"));
  CHECK_THAT(error_of([] { UnifiedMemory({16, 4, 4096, 0}); }), Contains("UnifiedMemory: width = 0") && Contains("1 .. 64"));
  CHECK(error_of([] { UnifiedMemory({16, 4, 4096, 16, 32}); }) ==
        "UnifiedMemory: host_banks = 32 is not allowed; allowed: a power of two, 1 .. 16");
  CHECK_THAT(error_of([] { UnifiedMemory({16, 4, 4096, 16, 3}); }), Contains("UnifiedMemory: host_banks = 3"));
  CHECK_THAT(error_of([] { UnifiedMemory({16, 4, 4096, 16, 0}); }), Contains("UnifiedMemory: host_banks = 0"));
}

TEST_CASE("AccumBank and AccumulationUnit reject bad parameters", "[mem_params]") {
  CHECK_THAT(error_of([] { AccumBank({3, 512, DataType::bf16}); }), Contains("AccumBank: elems = 3"));
  CHECK(error_of([] { AccumBank({4, 1, DataType::bf16}); }) ==
        "AccumBank: depth = 1 is not allowed; allowed: a power of two, 2 .. 16777216");
  CHECK(error_of([] { AccumBank({4, 512, static_cast<DataType>(9)}); }) ==
        "dtype: unknown data type 9; allowed: bf16, int8, int16");
  CHECK(error_of([] { AccumulationUnit({3, 4, 512, DataType::int8}); }) ==
        "AccumulationUnit: banks = 3 is not allowed; allowed: a power of two, 1 .. 256");
  CHECK_THAT(error_of([] { AccumulationUnit({16, 5, 512, DataType::int8}); }), Contains("AccumulationUnit: elems = 5"));
  CHECK_THAT(error_of([] { AccumulationUnit({16, 4, 100, DataType::int8}); }), Contains("AccumulationUnit: depth = 100"));
  CHECK_THAT(error_of([] { AccumulationUnit({16, 4, 512, static_cast<DataType>(-1)}); }),
             Contains("dtype") && Contains("allowed: bf16, int8, int16"));
  // pipeline, adder_arch, adder_prefix (also checked for the integer types, which ignore the adder)
  CHECK(error_of([] { AccumBank({4, 512, DataType::bf16, 4}); }) ==
        "AccumBank: pipeline = 4 is not allowed; allowed: 2, 3");
  CHECK(error_of([] { AccumulationUnit({16, 4, 512, DataType::int8, 1}); }) ==
        "AccumulationUnit: pipeline = 1 is not allowed; allowed: 2, 3");
  CHECK(error_of([] { AccumBank({4, 512, DataType::bf16, 3, static_cast<Fp32AddArch>(5)}); }) ==
        "AccumBank: adder_arch = 5 is not an adder architecture; allowed: basic, two_path");
  CHECK(error_of([] { AccumulationUnit({16, 4, 512, DataType::int16, 2, static_cast<Fp32AddArch>(-1)}); }) ==
        "AccumulationUnit: adder_arch = -1 is not an adder architecture; allowed: basic, two_path");
  CHECK(error_of([] {
          AccumulationUnit({16, 4, 512, DataType::bf16, 3, Fp32AddArch::two_path, static_cast<PrefixKind>(3)});
        }) == "AccumulationUnit: adder_prefix = 3 is not a prefix adder; allowed: kogge_stone, sklansky, brent_kung");
  CHECK_THAT(error_of([] { AccumBank({4, 512, DataType::bf16, 2, Fp32AddArch::basic, static_cast<PrefixKind>(7)}); }),
             Contains("AccumBank: adder_prefix = 7"));
  CHECK(error_of([] { AccumBank({4, 512, DataType::int8, 3, Fp32AddArch::two_path, PrefixKind::brent_kung}); }).empty());
}

TEST_CASE("ResultWriter rejects bad parameters", "[mem_params]") {
  CHECK(error_of([] { ResultWriter({1, 1, 11, DataType::bf16}); }) ==
        "ResultWriter: lanes = 1 is not allowed; allowed: a power of two, 2 .. 1024");
  CHECK_THAT(error_of([] { ResultWriter({48, 16, 11, DataType::bf16}); }), Contains("ResultWriter: lanes = 48"));
  CHECK(error_of([] { ResultWriter({64, 3, 11, DataType::bf16}); }) ==
        "ResultWriter: banks = 3 is not allowed; allowed: a power of two, 1 .. 64");
  CHECK_THAT(error_of([] { ResultWriter({8, 16, 11, DataType::bf16}); }), Contains("ResultWriter: banks = 16") && Contains("1 .. 8"));
  CHECK_THAT(error_of([] { ResultWriter({64, 0, 11, DataType::bf16}); }), Contains("ResultWriter: banks = 0"));
  CHECK_THAT(error_of([] { ResultWriter({64, 16, 0, DataType::int16}); }), Contains("ResultWriter: row_bits = 0") && Contains("1 .. 24"));
  CHECK_THAT(error_of([] { ResultWriter({64, 16, 11, static_cast<DataType>(7)}); }), Contains("allowed: bf16, int8, int16"));
  CHECK(error_of([] { ResultWriter({64, 16, 11, DataType::int8}); }).empty());
  CHECK(error_of([] { ResultWriter({64, 1, 11, DataType::int8}); }).empty());
  CHECK(error_of([] { ResultWriter({64, 64, 11, DataType::int8}); }).empty());
}

TEST_CASE("AddressGenerator rejects bad parameters", "[mem_params]") {
  CHECK(error_of([] { AddressGenerator({0, 3, 15, 16}); }) ==
        "AddressGenerator: levels = 0 is out of range; allowed: 1 .. 16");
  CHECK_THAT(error_of([] { AddressGenerator({17, 3, 15, 16}); }), Contains("AddressGenerator: levels = 17"));
  CHECK(error_of([] { AddressGenerator({6, 0, 15, 16}); }) ==
        "AddressGenerator: streams = 0 is out of range; allowed: 1 .. 8");
  CHECK_THAT(error_of([] { AddressGenerator({6, 9, 15, 16}); }), Contains("AddressGenerator: streams = 9"));
  CHECK(error_of([] { AddressGenerator({6, 3, 0, 16}); }) ==
        "AddressGenerator: addr_bits = 0 is out of range; allowed: 1 .. 32");
  CHECK_THAT(error_of([] { AddressGenerator({6, 3, 33, 16}); }), Contains("AddressGenerator: addr_bits = 33"));
  CHECK(error_of([] { AddressGenerator({6, 3, 15, 0}); }) ==
        "AddressGenerator: count_bits = 0 is out of range; allowed: 1 .. 32");
  CHECK_THAT(error_of([] { AddressGenerator({6, 3, 15, 33}); }), Contains("AddressGenerator: count_bits = 33"));
}

TEST_CASE("Module names derive from every parameter", "[mem_params]") {
  CHECK(MemBank({4096, 4, 16}).module_name() == "mem_bank_d4096_t4_w16");
  CHECK(UnifiedMemory({16, 4, 4096, 16, 4}).module_name() == "unified_mem_b16_t4_d4096_w16_h4");
  CHECK(AccumBank({4, 512, DataType::bf16}).module_name() == "accum_bank_t4_d512_fp32");
  CHECK(AccumulationUnit({16, 4, 512, DataType::int8}).module_name() == "accum_unit_b16_t4_d512_int32");
  CHECK(AccumulationUnit({16, 4, 512, DataType::int16}).module_name() == "accum_unit_b16_t4_d512_int48");
  CHECK(AddressGenerator({6, 3, 15, 16}).module_name() == "addr_gen_l6_s3_a15_c16");
}

TEST_CASE("MemBank and UnifiedMemory: the storage in the name, the parameter list and the banks", "[mem_params]") {
  using fetta::rtl::ParamList;
  const auto two = BankStorage::two_copies;
  // The default (one RAM per lane, port B read/write) keeps the names and lists; two copies is tagged.
  CHECK(MemBank({4096, 4, 16, BankStorage::shared_port}).module_name() == "mem_bank_d4096_t4_w16");
  CHECK(MemBank({4096, 4, 16}).params() == ParamList{{"depth", "4096"}, {"elems", "4"}, {"width", "16"}});
  CHECK(MemBank({4096, 4, 16, two}).module_name() == "mem_bank_d4096_t4_w16_2copy");
  CHECK(MemBank({4096, 4, 16, two}).params() ==
        ParamList{{"depth", "4096"}, {"elems", "4"}, {"width", "16"}, {"storage", "two_copies"}});
  CHECK(UnifiedMemory({16, 4, 4096, 16, 4, two}).module_name() == "unified_mem_b16_t4_d4096_w16_h4_2copy");
  CHECK(UnifiedMemory({16, 4, 4096, 16, 4, two}).params().back() == std::pair<std::string, std::string>{"storage", "two_copies"});
  CHECK(UnifiedMemory({16, 4, 4096, 16, 4}).params().size() == 5);
  CHECK(error_of([] { MemBank({16, 4, 16, static_cast<BankStorage>(7)}); }) ==
        "MemBank: storage = 7 is not a bank storage; allowed: shared_port, two_copies");
  CHECK(error_of([] { UnifiedMemory({16, 4, 4096, 16, 4, static_cast<BankStorage>(-1)}); }) ==
        "UnifiedMemory: storage = -1 is not a bank storage; allowed: shared_port, two_copies");
  // The unified memory instantiates the bank of its storage; the shared form has one RAM per
  // lane with two read ports (A, and B at the write's address), the two-copy form two per lane.
  fetta::rtl::Design d;
  d.elaborate(UnifiedMemory({4, 2, 16, 16, 2}));
  REQUIRE(d.find("mem_bank_d8_t2_w16") != nullptr);
  CHECK(d.find("mem_bank_d8_t2_w16")->memories().size() == 2);
  fetta::rtl::Design d2;
  d2.elaborate(UnifiedMemory({4, 2, 16, 16, 2, two}));
  REQUIRE(d2.find("mem_bank_d8_t2_w16_2copy") != nullptr);
  CHECK(d2.find("mem_bank_d8_t2_w16_2copy")->memories().size() == 4);
  CHECK(d2.find("mem_bank_d8_t2_w16") == nullptr);
  const std::string rtl = emit_all(MemBank({16, 2, 16}));
  CHECK_THAT(rtl, Contains("assign port_b_addr = wr_en ? wr_addr : rd_b_addr;"));
  CHECK_THAT(rtl, Contains("ram_e0[port_b_addr] <= wr_data_0;"));
  CHECK_THAT(rtl, Contains("rd_b_q_e0 <= ram_e0[port_b_addr];"));
}

TEST_CASE("AccumBank and AccumulationUnit name and list their pipeline and adder", "[mem_params]") {
  using fetta::rtl::ParamList;
  const auto two = Fp32AddArch::two_path;
  // The defaults keep the names and parameter lists they had before these parameters.
  CHECK(AccumBank({4, 512, DataType::bf16, 2, Fp32AddArch::basic, PrefixKind::sklansky}).module_name() ==
        "accum_bank_t4_d512_fp32");
  CHECK(AccumBank({4, 512, DataType::bf16}).params() ==
        ParamList{{"elems", "4"}, {"depth", "512"}, {"dtype", "bf16"}});
  CHECK(AccumulationUnit({16, 4, 512, DataType::bf16}).params() ==
        ParamList{{"banks", "16"}, {"elems", "4"}, {"depth", "512"}, {"dtype", "bf16"}});
  // Every non-default parameter is in the name and the list.
  CHECK(AccumBank({4, 512, DataType::bf16, 3}).module_name() == "accum_bank_t4_d512_fp32_p3");
  CHECK(AccumBank({4, 512, DataType::bf16, 2, two}).module_name() == "accum_bank_t4_d512_fp32_twopath_sk");
  CHECK(AccumBank({4, 512, DataType::bf16, 3, two}).module_name() == "accum_bank_t4_d512_fp32_p3_twopath_sk");
  CHECK(AccumBank({4, 512, DataType::bf16, 3, two, PrefixKind::kogge_stone}).module_name() ==
        "accum_bank_t4_d512_fp32_p3_twopath_ks");
  CHECK(AccumulationUnit({16, 4, 512, DataType::bf16, 3, two}).module_name() ==
        "accum_unit_b16_t4_d512_fp32_p3_twopath_sk");
  CHECK(AccumulationUnit({16, 4, 512, DataType::bf16, 2, two, PrefixKind::brent_kung}).module_name() ==
        "accum_unit_b16_t4_d512_fp32_twopath_bk");
  CHECK(AccumulationUnit({16, 4, 512, DataType::bf16, 3, two}).params() ==
        ParamList{{"banks", "16"}, {"elems", "4"}, {"depth", "512"}, {"dtype", "bf16"}, {"pipeline", "3"},
                  {"adder_arch", "two_path"}, {"adder_prefix", "sklansky"}});
  CHECK(AccumBank({4, 512, DataType::bf16, 3}).params() ==
        ParamList{{"elems", "4"}, {"depth", "512"}, {"dtype", "bf16"}, {"pipeline", "3"}});
  // A basic adder has no prefix networks; the integer types have no binary32 adder: the choice
  // is normalized away and the names and lists do not change with it.
  CHECK(AccumBank({4, 512, DataType::bf16, 2, Fp32AddArch::basic, PrefixKind::kogge_stone}).module_name() ==
        "accum_bank_t4_d512_fp32");
  CHECK(AccumBank({4, 512, DataType::bf16, 2, Fp32AddArch::basic, PrefixKind::kogge_stone}).params() ==
        AccumBank({4, 512, DataType::bf16}).params());
  CHECK(AccumulationUnit({16, 4, 512, DataType::int8, 2, two, PrefixKind::brent_kung}).module_name() ==
        "accum_unit_b16_t4_d512_int32");
  CHECK(AccumulationUnit({16, 4, 512, DataType::int16, 3, two}).module_name() == "accum_unit_b16_t4_d512_int48_p3");
  CHECK(AccumulationUnit({16, 4, 512, DataType::int16, 3, two}).params() ==
        ParamList{{"banks", "16"}, {"elems", "4"}, {"depth", "512"}, {"dtype", "int16"}, {"pipeline", "3"}});
  // The unit passes them to its banks, and the bank instantiates the adder it names.
  fetta::rtl::Design d;
  CHECK(d.elaborate(AccumulationUnit({16, 4, 512, DataType::bf16, 3, two}))->name() ==
        "accum_unit_b16_t4_d512_fp32_p3_twopath_sk");
  CHECK(d.find("accum_bank_t4_d512_fp32_p3_twopath_sk") != nullptr);
  CHECK(d.find("fp32_add_twopath_sk_s0") != nullptr);
  CHECK(d.find("fp32_add_s0") == nullptr);
  fetta::rtl::Design d8;
  d8.elaborate(AccumulationUnit({4, 2, 8, DataType::int8, 3, two}));
  CHECK(d8.find("accum_bank_t2_d8_int32_p3") != nullptr);
  CHECK(d8.find("int_add_w32") != nullptr);
}

TEST_CASE("Configuration entry points elaborate the default and int configurations", "[mem_params]") {
  fetta::arch::ArchConfig cfg;  // the built-in default = configs/default.yaml
  fetta::rtl::Design d;
  CHECK(fetta::arch::host_port_banks(cfg) == 4);  // 25.6 GB/s at 1 GHz over 8-byte bank rows
  CHECK(elaborate_unified_memory(d, cfg) == "unified_mem_b16_t4_d4096_w16_h4");
  // The default accumulator: 3-stage read-modify-write, two-path adders (docs/memory.md §3).
  CHECK(elaborate_accumulator(d, cfg) == "accum_unit_b16_t4_d512_fp32_p3_twopath_sk");
  CHECK(elaborate_address_generator(d, cfg) == "addr_gen_l6_s3_a15_c16");
  // Each bank is one module definition, instanced 2 x 16 times.
  CHECK(d.find("mem_bank_d2048_t4_w16") != nullptr);
  CHECK(d.find("accum_bank_t4_d512_fp32_p3_twopath_sk") != nullptr);
  CHECK(d.find("fp32_add_twopath_sk_s0") != nullptr);

  cfg.dtype = DataType::int8;
  cfg.memory.banks = 8;
  cfg.memory.accum_depth = 8192;  // deeper than a unified half: sets the address width
  fetta::rtl::Design d8;
  CHECK(fetta::arch::host_port_banks(cfg) == 8);  // 4-byte rows: 25.6 B/cycle needs 7 -> 8 (all the banks)
  CHECK(elaborate_unified_memory(d8, cfg) == "unified_mem_b8_t4_d4096_w8_h8");
  CHECK(elaborate_accumulator(d8, cfg) == "accum_unit_b8_t4_d8192_int32_p3");  // no binary32 adder
  CHECK(elaborate_address_generator(d8, cfg) == "addr_gen_l6_s3_a16_c16");
  CHECK(d8.find("int_add_w32") != nullptr);

  cfg.memory.elems_per_bank = 3;
  fetta::rtl::Design bad;
  CHECK_THAT(error_of([&] { elaborate_unified_memory(bad, cfg); }), Contains("UnifiedMemory: elems = 3"));
}

TEST_CASE("Emission is deterministic", "[mem_params]") {
  CHECK(emit_all(UnifiedMemory({4, 2, 16, 16, 2})) == emit_all(UnifiedMemory({4, 2, 16, 16, 2})));
  CHECK(emit_all(UnifiedMemory({4, 2, 16, 16, 2, BankStorage::two_copies})) ==
        emit_all(UnifiedMemory({4, 2, 16, 16, 2, BankStorage::two_copies})));
  CHECK(emit_all(AccumulationUnit({2, 2, 8, DataType::bf16})) == emit_all(AccumulationUnit({2, 2, 8, DataType::bf16})));
  CHECK(emit_all(AccumulationUnit({2, 2, 8, DataType::bf16, 3, Fp32AddArch::two_path})) ==
        emit_all(AccumulationUnit({2, 2, 8, DataType::bf16, 3, Fp32AddArch::two_path})));
  CHECK(emit_all(AddressGenerator({6, 3, 7, 3})) == emit_all(AddressGenerator({6, 3, 7, 3})));
}
