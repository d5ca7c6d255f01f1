// The main job on one Verilated accelerator: execute a program (mapper/program.hpp: compiled from
// layer files here, or loaded from a `fetta compile` directory) through the host interface, and
// compare every result with the golden model (bit-exact, order-exact emulation) and the final
// results with the fp64 reference. Prints a table per phase (or JSON) and returns the exit code.
// The executor performs the program's operations and nothing else: every decision is the
// program's.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "sim/system/trace_windows.hpp"
#include "verif/layer.hpp"

namespace fetta::mapper {
struct Program;  // mapper/program.hpp (kept out of this header: sim_main includes it with few include paths)
}

namespace fetta::sim::system {

struct RunOptions {
  arch::ArchConfig cfg;      // the top's configuration (the program's, checked against it)
  std::shared_ptr<const mapper::Program> program;  // what runs
  uint64_t seed = 1;
  std::string inputs_dir;  // inputs from <layer>_in_<tensor>.npy files (as --dump-dir writes them); empty: random from seed
  std::string dump_dir;  // every input and output tensor as .npy plus manifest.json; empty: none
  bool json = false;     // JSON report on stdout instead of the tables
  std::string trace;     // FST waveform file (models built with tracing only); empty: none
  TraceSample trace_sample;  // sampled: `trace` is a directory of windows (trace_windows.hpp)
  bool check_model = false;     // a contraction whose RTL cycles differ from the model's is an error
  bool inject_mismatch = false; // self-check of the scoreboard: flip one result bit of the first contraction
  bool inject_illegal = false;  // self-check of the controller: push an instruction with opcode 0 first
  int64_t timeout_cycles = 200'000'000;
};

// bf16 results: relative L2 error of a final result against the fp64 reference of the same
// (bf16-rounded) inputs. Intermediates are rounded to bf16 between contractions, so the error is
// a few bf16 ulps; 2^-5 leaves a wide margin while still catching a wrong element or order.
inline constexpr double kBf16RelTolerance = 1.0 / 32;
// How far end to end may be from mapper::predict_wall under --check-model, in percent.
inline constexpr double kWallModelTolerancePercent = 2.0;

struct StepReport {
  std::string layer, phase, problem;
  size_t term = 0, terms = 1;
  int step = 0, steps = 0;
  std::string lhs, rhs, mapping;
  int64_t m = 0, k = 0, n = 0, macs = 0;
  int64_t cycles = 0, predicted = 0, host_cycles = 0;
  int64_t dram_cycles = 0, dram_bytes = 0;  // the operands read from and the result written to DRAM
  int64_t dram_bytes_read = 0, dram_bytes_written = 0;  // dram_bytes apart (their energies differ)
  int64_t elements = 0, mismatches = 0;
  double rel_error = -1;  // final steps of bf16 runs: vs fp64; -1: not applicable
  bool summed = false;    // a term of a sum formed in the accumulator (checked on the last term's row)
  bool on_chip = false;   // the result went by STORE into the next contraction's operand image
  bool saved = false;     // the result left by STORE and a DMA save, checked as the DRAM holds it
  int64_t index = 0;      // the program's step
  int64_t stored_mismatches = 0;  // elements of that image (read back by the scoreboard) not as the golden model's
  int64_t store_cycles = 0, store_predicted = 0;  // the controller's busy cycles for those STOREs, and the model's
  std::string through_host_because;  // an intermediate not kept on chip: why
  std::string fate;                  // mapper::Fate: on_chip, result, or why it leaves (shared, no_room, ...)
  std::string store;                 // one kept on chip: its STORE program in words
};

// Parses the command line of a system-simulation executable: either --program DIR (a compiled
// program; --config, when given, must be the configuration it was compiled for) or --config and
// --layer (repeatable) with the compiler's options (--phases, --map-for, --through-host,
// --terms-separately), compiled here; and --seed, --inputs, --dump-dir, --json. Throws
// std::invalid_argument (or mapper::ProgramError, mapper::CompileError) with the reason.
RunOptions parse_run_args(int argc, char** argv);

// Runs opt.program on `dut` (a Verilated top of opt.cfg); returns 0 when every result matches,
// 1 on a mismatch, 2 when the run could not complete (messages on stderr). `hooks` write the
// waveform when opt.trace names one (the model must be built with tracing).
int run_system(sc_core::sc_module& dut, const RunOptions& opt, const TraceHooks& hooks = {});

}  // namespace fetta::sim::system
