// Elaboration checks, run on every module when the Design finishes building it:
// undriven signals, multiple drivers, latches, combinational loops, memory port sanity.
// Width and type rules are checked earlier, when expressions and connects are built.
#pragma once

#include "rtl_gen/module.hpp"

namespace fetta::rtl {

// Throws RtlError on the first problem; fills m.comb_paths on success.
void check_module(Module& m);

// Signals an expression reads, in first-use order (each once).
std::vector<SignalPtr> referenced_signals(const ExprPtr& e);

}  // namespace fetta::rtl
