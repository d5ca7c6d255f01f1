// The main job on one Verilated accelerator: for every layer and phase, search the contraction
// sequence, compile every contraction, run it on the RTL through the host interface, and compare
// every result with the golden model (bit-exact, order-exact emulation) and the final results
// with the fp64 reference. Prints a table per phase (or JSON) and returns the exit code.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "verif/layer.hpp"

namespace fetta::sim::system {

struct RunOptions {
  arch::ArchConfig cfg;
  std::vector<std::string> layers;  // layer YAML files
  std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  uint64_t seed = 1;
  std::string dump_dir;  // every input and output tensor as .npy plus manifest.json; empty: none
  bool json = false;     // JSON report on stdout instead of the tables
  std::string trace;     // FST waveform file (models built with tracing only); empty: none
  bool check_model = false;     // a contraction whose RTL cycles differ from the model's is an error
  bool terms_separately = false; // a sum of terms (BT): read and check each term, no sum in the accumulator
  bool through_host = false;    // no intermediate kept on chip: every one through the host and DRAM
  bool map_end_to_end = false;  // mappings minimize cycles + data movement, not cycles (mapper::MapFor)
  bool inject_mismatch = false; // self-check of the scoreboard: flip one result bit of the first contraction
  bool inject_illegal = false;  // self-check of the controller: push an instruction with opcode 0 first
  int64_t timeout_cycles = 200'000'000;
};

// bf16 results: relative L2 error of a final result against the fp64 reference of the same
// (bf16-rounded) inputs. Intermediates are rounded to bf16 between contractions, so the error is
// a few bf16 ulps; 2^-5 leaves a wide margin while still catching a wrong element or order.
inline constexpr double kBf16RelTolerance = 1.0 / 32;

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
  int64_t stored_mismatches = 0;  // elements of that image (read back by the scoreboard) not as the golden model's
  int64_t store_cycles = 0, store_predicted = 0;  // the controller's busy cycles for those STOREs, and the model's
  std::string through_host_because;  // an intermediate not kept on chip: why
  std::string store;                 // one kept on chip: its STORE program in words
};

// Parses the command line of a system-simulation executable (--config, --layer (repeatable),
// --phases, --seed, --dump-dir, --json). Throws std::invalid_argument with the reason.
RunOptions parse_run_args(int argc, char** argv);

// Plans (searches and compiles) every contraction of every layer and phase without simulating:
// bad layers, contractions that do not fit and unroutable patterns fail here, before any RTL runs.
void preflight(const RunOptions& opt);

// Waveform hooks: `start` runs once the SystemC design is elaborated (sc_start(SC_ZERO_TIME)),
// `stop` after the simulation.
struct TraceHooks {
  std::function<void()> start, stop;
};

// Runs everything on `dut` (a Verilated top of opt.cfg); returns 0 when every result matches,
// 1 on a mismatch, 2 when the run could not complete (messages on stderr).
int run_system(sc_core::sc_module& dut, const RunOptions& opt, const TraceHooks& hooks = {});

}  // namespace fetta::sim::system
