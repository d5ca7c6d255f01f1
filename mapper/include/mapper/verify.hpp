// The program verifier (docs/program.md, "Verification"): what a program file says is checked
// against the configuration, the memories and itself before anything runs, the way a compiler
// verifies its IR. A program whose files are intact (sha256) may still have been edited and
// rehashed, or written by another tool: every index, count, offset and row is checked with
// overflow-safe arithmetic, every operand must be written before it is read, and every step must be
// checked and finished exactly as the program claims, so that a run never crashes, never hangs in a
// wait nothing can end, and never reports a check that did not run.
#pragma once

#include <cstdint>
#include <string>

#include "arch/config.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

// The largest tensor a program may name, in elements (a host buffer of 8-byte words each).
inline constexpr int64_t kMaxProgramTensorElements = int64_t{1} << 28;

// Throws ProgramError naming `where` (the program's directory), the file, the record and the
// field, and what is allowed, at the first rule `p` breaks for configuration `cfg`.
void verify_program(const Program& p, const arch::ArchConfig& cfg, const std::string& where);

}  // namespace fetta::mapper
