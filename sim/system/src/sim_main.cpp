// The entry point of a system-simulation executable: compiled once per Verilated top, with
// FETTA_TOP_HEADER / FETTA_TOP_CLASS naming the model (CMake for the test models, `fetta run`
// for the models it builds and caches). Everything else lives in fetta_sim_system.
#include <cstdio>
#include <exception>

#include FETTA_TOP_HEADER
#include "sim/system/runner.hpp"

int sc_main(int argc, char** argv) {
  try {
    const fetta::sim::system::RunOptions opt = fetta::sim::system::parse_run_args(argc, argv);
    FETTA_TOP_CLASS dut("dut");
    return fetta::sim::system::run_system(dut, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
