// Writes the RTL of the CE configurations the tests Verilate (one directory per top) into OUT_DIR.
// The list is tests/hw/ce/ce_configs.hpp, shared with the tests so names cannot drift.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "../top_writer.hpp"
#include "ce_configs.hpp"
#include "hw/ce/ce.hpp"
#include "rtl_gen/rtl.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: ce_gen OUT_DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path out = argv[1];
    fetta::test::TopWriter emit(out);
    for (const auto& c : fetta::test::ce_test_configs()) emit(fetta::hw::Ce(c.params));
    emit(fetta::hw::Pe(fetta::test::ce_test_configs().front().params.pe));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ce_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
