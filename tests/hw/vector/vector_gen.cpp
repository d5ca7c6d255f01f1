// Writes the RTL of the vector-unit configurations the tests Verilate or lint: <out>/<top>/*.sv.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "../top_writer.hpp"
#include "hw/vector/vector_unit.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: vector_gen OUT_DIR\n");
    return 2;
  }
  using namespace fetta::hw;
  fetta::test::TopWriter emit(argv[1]);
  try {
    emit(VectorUnit({.elems = 4, .lanes = 4, .tag_bits = 6}));    // vector_unit_n4_t6: simulated
    emit(VectorUnit({.elems = 2, .lanes = 2, .tag_bits = 1}));    // vector_unit_n2_t1: the one-step reduce
    emit(VectorUnit({.elems = 8, .lanes = 2, .tag_bits = 4}));    // vector_unit_n8_l2_t4: rows of four beats
    emit(VectorUnit({.elems = 64, .lanes = 64, .tag_bits = 12}));  // vector_unit_n64_t12: the default top's
    emit(VectorUnit({.elems = 64, .lanes = 32, .tag_bits = 12}));  // vector_unit_n64_l32_t12: vector.lanes 32
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vector_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
