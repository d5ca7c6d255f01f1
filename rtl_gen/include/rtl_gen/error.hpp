// Errors raised while building or checking a circuit. Every one names the signal (or module) at
// fault and the C++ source line that caused it, so a generator author can go straight there.
#pragma once

#include <source_location>
#include <stdexcept>
#include <string>

namespace fetta::rtl {

// A C++ source position, printed relative to the project root so messages and generated
// headers do not depend on where the tree is checked out.
struct SourceLoc {
  std::string file;
  int line = 0;

  static SourceLoc from(const std::source_location& l);
  std::string str() const;  // "hw/src/pe.cpp:42"
};

enum class ErrorKind {
  width,            // operand or assignment widths disagree
  type,             // signedness, aggregate shape, constant does not fit
  undriven,         // an output, wire, register or instance input nobody drives
  multiple_drivers, // two unconditional drivers, or driving a signal that is driven elsewhere
  comb_loop,        // a combinational cycle
  latch,            // a combinational signal not assigned on every path
  port,             // unknown, missing or mismatched instance port
  name,             // illegal, reserved or duplicate name
  usage,            // API misuse: driving an input, statements outside a module, ...
};

const char* to_string(ErrorKind k);

class RtlError : public std::runtime_error {
 public:
  RtlError(ErrorKind kind, const std::string& what_signal, const std::string& message, const SourceLoc& loc);
  ErrorKind kind() const { return kind_; }
  const std::string& signal() const { return signal_; }
  const SourceLoc& loc() const { return loc_; }

 private:
  ErrorKind kind_;
  std::string signal_;
  SourceLoc loc_;
};

}  // namespace fetta::rtl
