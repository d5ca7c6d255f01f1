// The circuit IR: what the builder API produces, the checks analyse and the emitter prints.
// Generator code does not touch these nodes directly; it uses expr.hpp and module.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rtl_gen/bitvec.hpp"
#include "rtl_gen/error.hpp"

namespace fetta::rtl {

class Module;
struct Instance;
struct Memory;

enum class SigKind {
  input,     // module input port
  output,    // module output port
  wire,      // combinational internal signal
  reg,       // register (always_ff)
  inst_in,   // parent-side wire feeding an instance input
  inst_out,  // parent-side wire driven by an instance output
  mem_read,  // registered read data of a memory port
};

struct ExprNode;
using ExprPtr = std::shared_ptr<const ExprNode>;

struct SignalNode {
  std::string name;
  int width = 0;
  bool is_signed = false;
  SigKind kind = SigKind::wire;
  SourceLoc decl;
  Module* owner = nullptr;
  // Registers: synchronous reset value and enable (both optional).
  std::optional<BitVec> reset;
  std::string reset_name;  // the named constant the reset value was given as, or empty
  ExprPtr enable;
  std::shared_ptr<SignalNode> clock;  // a gated clock (Module::clock_gate with cells); null: the module's clock
  // Instance ports: which instance, and the child's port name.
  Instance* inst = nullptr;
  std::string port;
  // Memory read ports.
  Memory* mem = nullptr;
};
using SignalPtr = std::shared_ptr<SignalNode>;

enum class Op {
  constant, ref,
  bit_not, neg, logic_not,
  bit_and, bit_or, bit_xor, add, sub, mul,
  shl, shr, shl_dyn, shr_dyn,
  eq, ne, lt, le, gt, ge,
  red_and, red_or, red_xor,
  mux, slice, cat, repl, zext, sext, as_signed, as_unsigned,
};

struct ExprNode {
  Op op = Op::constant;
  int width = 0;
  bool is_signed = false;
  std::vector<ExprPtr> args;  // mux: {sel, when_true, when_false}
  SignalPtr sig;              // ref
  BitVec value;               // constant
  std::string const_name;     // constant: the name of a Module::constant (a localparam), or empty
  const Module* const_owner = nullptr;  // the module that declares the named constant
  int hi = 0, lo = 0;         // slice bounds, shift amount (hi), replication count (hi)
};

struct Stmt;
using Block = std::vector<std::unique_ptr<Stmt>>;

struct SwitchCase {
  std::vector<BitVec> values;
  std::vector<std::string> names;  // per value: the named constant it was given as, or empty
  Block body;
  SourceLoc loc;
};

struct Stmt {
  enum class Kind { connect, when, switch_ } kind = Kind::connect;
  SourceLoc loc;
  // connect
  SignalPtr target;
  ExprPtr value;
  // when
  ExprPtr cond;
  Block then_body, else_body;
  // switch
  ExprPtr subject;
  std::vector<SwitchCase> cases;
  Block default_body;
  bool has_default = false;
};

struct Instance {
  std::string name;
  std::shared_ptr<const Module> def;
  std::vector<SignalPtr> ports;  // parent-side signals, one per child port leaf, in child port order
  SourceLoc loc;
};

struct MemWritePort {
  ExprPtr addr, data, enable;
  SourceLoc loc;
};

struct MemReadPort {
  SignalPtr data;  // registered read data
  ExprPtr addr, enable;
  SourceLoc loc;
};

struct Memory {
  std::string name;
  int width = 0;
  int depth = 0;
  int addr_width = 0;
  SourceLoc loc;
  std::vector<MemWritePort> writes;
  std::vector<MemReadPort> reads;
};

}  // namespace fetta::rtl
