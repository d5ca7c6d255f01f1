// Writes the networks under test into OUT_DIR: <net>/ (the network alone, for lint) and
// tb_<net>/ (the flat-port harness top, for Verilator) for every test configuration.
// With --cost, writes the cost-study configurations instead: N = 16, 64, 256 with 32-bit
// elements (distribution: full and cheap control; reduction: int32), and binary32 reduction at
// N = 16 and 64 (all combinational except the reduction's default register after every stage).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "../top_writer.hpp"
#include "flat.hpp"

int main(int argc, char** argv) {
  using namespace fetta;
  bool cost = argc == 3 && std::string(argv[1]) == "--cost";
  if (argc != 2 && !cost) {
    std::fprintf(stderr, "usage: net_rtl_gen [--cost] OUT_DIR\n");
    return 2;
  }
  try {
    const std::filesystem::path out = argv[argc - 1];
    fetta::test::TopWriter emit(out);
    if (cost) {
      for (int n : {16, 64, 256}) {
        emit(hw::DistNet({n, 32, 4, hw::DistControlPorts::full, 0}));
        emit(hw::DistNet({n, 32, 4, hw::DistControlPorts::cheap, 0}));
        emit(hw::RedNet({n, hw::RedElem::int32, 4, 1, {}}));
        if (n <= 64) emit(hw::RedNet({n, hw::RedElem::fp32, 4, 1, {}}));
      }
      return 0;
    }
    for (const auto& p : nettest::dist_test_configs()) {
      emit(hw::DistNet(p));
      emit(nettest::FlatDist(p));
    }
    for (const auto& p : nettest::red_test_configs()) {
      emit(hw::RedNet(p));
      emit(nettest::FlatRed(p));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "net_rtl_gen: %s\n", e.what());
    return 1;
  }
  return 0;
}
