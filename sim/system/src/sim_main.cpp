// The entry point of a system-simulation executable: compiled once per Verilated top, with
// FETTA_TOP_HEADER / FETTA_TOP_CLASS naming the model (CMake for the test models, `fetta run`
// for the models it builds and caches) and FETTA_TRACE when the model was built with
// --trace-fst. Everything else lives in fetta_sim_system.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include FETTA_TOP_HEADER
#include "sim/system/runner.hpp"
#ifdef FETTA_TRACE
#include "verilated_fst_sc.h"
#endif

int sc_main(int argc, char** argv) {
  // SystemC prints its banner on stdout when the first object is built; --json output must be
  // JSON only.
  setenv("SYSC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  try {
    const fetta::sim::system::RunOptions opt = fetta::sim::system::parse_run_args(argc, argv);
#ifdef FETTA_TRACE
    if (!opt.trace.empty()) Verilated::traceEverOn(true);  // before the model is constructed
#endif
    FETTA_TOP_CLASS dut("dut");
    fetta::sim::system::TraceHooks hooks;
#ifdef FETTA_TRACE
    std::unique_ptr<VerilatedFstSc> fst;
    if (!opt.trace.empty()) {
      hooks.open = [&](const std::string& path) {
        if (!fst) {
          fst = std::make_unique<VerilatedFstSc>();
          dut.trace(fst.get(), 99);
        }
        fst->open(path.c_str());  // a sampled trace reopens it for every window
      };
      hooks.close = [&] { fst->close(); };
    }
#else
    if (!opt.trace.empty()) {
      std::fprintf(stderr, "error: --trace: this model was built without tracing; use `fetta run --trace FILE`\n");
      return 2;
    }
#endif
    return fetta::sim::system::run_system(dut, opt, hooks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
