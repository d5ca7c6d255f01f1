// Formal equivalence of two emitted forms of one module, e.g. its synthesis and simulation views
// (docs/rtl_gen.md, "Views"). Yosys flattens each form, joins them in a miter (same inputs, every
// output compared) and its SAT solver proves that no input makes them differ. A module with a
// fixed latency L is unrolled over L + 1 cycles from any state and compared in the last: the
// output then depends only on the inputs of the first cycle, so the proof covers every input.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace fetta::flows {

struct EquivSide {
  std::string dir;  // an emitted design: filelist.f and its .sv files
  std::string top;  // the module to compare
};

struct EquivResult {
  bool available = false;  // yosys is installed
  bool proven = false;     // no input distinguishes the two
  std::string command;
  std::string output;          // what Yosys printed (the counterexample when not proven)
  std::string counterexample;  // the SAT model's input and output lines, when one was found
  double seconds = 0;
};

// Proves `gold` and `gate` equal from cycle `latency` on (0: combinational). Intermediate files go
// to `work_dir`. Both must have the same ports.
EquivResult prove_equivalent(const EquivSide& gold, const EquivSide& gate, int latency, const std::string& work_dir);

struct ViewProof {
  std::string module;
  int latency = 0;
  EquivResult result;
};

// Every module that the simulation view builds differently (manifest.json's `view` entries) proven
// equal to its synthesis view: `synthesis_dir` and `simulation_dir` are the same top emitted in
// each view. Work files go to work_dir/<module>/. Modules named in `skip` (proven already: a module
// name stands for one parameter set) are left out. An empty list: nothing left to prove.
std::vector<ViewProof> prove_views(const std::string& synthesis_dir, const std::string& simulation_dir,
                                   const std::string& work_dir, const std::set<std::string>& skip = {});

}  // namespace fetta::flows
