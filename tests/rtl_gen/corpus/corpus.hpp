// A small corpus of generators written with rtl_gen, used to prove the library on real
// circuits: each is simulated in Verilator against a C++ model (corpus_sim_test.cpp).
#pragma once

#include <fmt/core.h>

#include "rtl_gen/rtl.hpp"

namespace corpus {

using namespace fetta::rtl;

struct FifoParams {
  int width = 8;
  int depth = 4;
};
// Fall-through FIFO: pop_data shows the head whenever not empty. Push when full and pop when
// empty are ignored; push and pop in the same cycle both happen.
class Fifo : public Generator<FifoParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::Fifo"; }
  std::string module_name() const override { return fmt::format("fifo_w{}_d{}", p.width, p.depth); }
  ParamList params() const override { return {{"width", std::to_string(p.width)}, {"depth", std::to_string(p.depth)}}; }
  void build(Module& m) const override;
};

struct AdderParams {
  int width = 8;
};
// One registered adder stage: sum = a + b with one extra bit, one cycle later.
class AddStage : public Generator<AdderParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::AddStage"; }
  std::string module_name() const override { return fmt::format("add_stage_w{}", p.width); }
  ParamList params() const override { return {{"width", std::to_string(p.width)}}; }
  void build(Module& m) const override;
};

struct AdderTreeParams {
  int inputs = 8;  // power of two
  int width = 8;
};
// Pipelined adder tree of AddStage instances: log2(inputs) cycles of latency, full precision.
class AdderTree : public Generator<AdderTreeParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::AdderTree"; }
  std::string module_name() const override { return fmt::format("adder_tree_n{}_w{}", p.inputs, p.width); }
  ParamList params() const override {
    return {{"inputs", std::to_string(p.inputs)}, {"width", std::to_string(p.width)}};
  }
  void build(Module& m) const override;
};

struct ShiftRegParams {
  int width = 8;
  int depth = 3;
};
// Shift register with enable: out is the input of `depth` enabled cycles ago (0 after reset).
class ShiftReg : public Generator<ShiftRegParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::ShiftReg"; }
  std::string module_name() const override { return fmt::format("shift_reg_w{}_d{}", p.width, p.depth); }
  ParamList params() const override { return {{"width", std::to_string(p.width)}, {"depth", std::to_string(p.depth)}}; }
  void build(Module& m) const override;
};

struct SeqDetectParams {
  unsigned pattern = 0b1011;
  int length = 4;
};
// Moore FSM: `found` is 1 in the cycle after the last `length` input bits equal `pattern`
// (overlapping matches count). The state is the length of the longest matched prefix.
class SeqDetect : public Generator<SeqDetectParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::SeqDetect"; }
  std::string module_name() const override { return fmt::format("seq_detect_{}b_{:x}", p.length, p.pattern); }
  ParamList params() const override {
    return {{"pattern", fmt::format("0x{:x}", p.pattern)}, {"length", std::to_string(p.length)}};
  }
  void build(Module& m) const override;
};

struct DualPortRamParams {
  int width = 16;
  int depth = 32;
};
// One write port and one registered read port (read-before-write on the same address).
class DualPortRam : public Generator<DualPortRamParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::DualPortRam"; }
  std::string module_name() const override { return fmt::format("dp_ram_w{}_d{}", p.width, p.depth); }
  ParamList params() const override { return {{"width", std::to_string(p.width)}, {"depth", std::to_string(p.depth)}}; }
  void build(Module& m) const override;
};

// Counter with enable and synchronous clear (golden-text emission test).
struct Counter : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::Counter"; }
  std::string module_name() const override { return fmt::format("counter_w{}", p); }
  ParamList params() const override { return {{"width", std::to_string(p)}}; }
  void build(Module& m) const override {
    Sig en = m.input("en", UInt(1));
    Sig clear = m.input("clear", UInt(1));
    Sig count = m.output("count", UInt(p));
    Sig wrap = m.output("wrap", UInt(1));
    Sig value = m.reg("value", UInt(p), reset_to(0).enabled_by(en | clear));
    m.when(clear, [&] { value <<= 0; }).otherwise([&] { value <<= value + 1; });
    count <<= value;
    wrap <<= value.and_reduce() & en;
  }
};

// Signed arithmetic: products need full-width temporaries, sign extension, arithmetic shifts.
struct SignedMath : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::SignedMath"; }
  std::string module_name() const override { return "signed_math"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    Sig a = m.input("a", SInt(8)), b = m.input("b", SInt(8)), c = m.input("c", SInt(16));
    Sig sel = m.input("sel", UInt(2));
    Sig y = m.output("y", SInt(17));
    Sig hi = m.output("hi", UInt(4));
    Sig op = m.output("op", UInt(3));
    Sig prod = m.node("prod", a * b);
    y <<= (prod + c).sext(17) >> 1;
    hi <<= cat({(a * b).bits(15, 14), (a + b).bits(7, 6)});
    op <<= 0;
    m.switch_on(sel).is(0, [&] { op <<= 1; }).is({1, 2}, [&] { op <<= mux(a < b, lit(2, 3), lit(3, 3)); });
  }
};

// The emitter's readability features in one module (golden-text emission test): named states
// and opcodes as localparams (OP_NOP is never used, so it is not declared), a bit pattern in hex,
// a case labelled by names, and an expression long enough to be wrapped.
struct CommandFsm : Generator<int> {
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::CommandFsm"; }
  std::string module_name() const override { return "command_fsm"; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override {
    Sig cmd = m.input("cmd", UInt(2));
    Sig data = m.input("data", UInt(32));
    Sig match = m.output("match", UInt(1));
    Sig busy = m.output("busy", UInt(1));
    Sig parity = m.output("parity", UInt(1));
    m.constant("OP_NOP", 0, 2);
    const Expr op_load = m.constant("OP_LOAD", 1, 2), op_check = m.constant("OP_CHECK", 2, 2);
    const Expr s_idle = m.constant("S_IDLE", 0, 2), s_hold = m.constant("S_HOLD", 1, 2);
    const Expr s_check = m.constant("S_CHECK", 2, 2);
    const Expr quiet_nan = m.constant("QUIET_NAN", 0x7fc00000, 32);
    Sig state = m.reg("state", UInt(2), reset_to(s_idle));
    Sig held = m.reg("held", UInt(32), enabled_by((state == s_idle) & (cmd == op_load)));
    held <<= data;
    m.switch_on(state)
        .is(s_idle, [&] {
          m.when(cmd == op_load, [&] { state <<= s_hold; }).elsewhen(cmd == op_check, [&] { state <<= s_check; });
        })
        .is(s_hold, [&] { state <<= s_idle; })
        .is(s_check, [&] { state <<= s_idle; });
    match <<= (state == s_check) & ((held == quiet_nan) | (held == lit(0xffc00000, 32)));
    Expr p = held.bit(0) ^ data.bit(31);
    for (int i = 1; i < 32; ++i) p = p ^ (held.bit(i) & data.bit(31 - i));
    parity <<= p;
    busy <<= state != s_idle;
  }
};

// Registers on gated clocks (Module::clock_gate): two gates, one of whose registers has a reset
// (the gate opens during it) and one of which has an enable of its own, and a register that
// accumulates its own value; their data come from a counter on the ungated clock, updated on the
// same edges. Named after the design's ClockGating, which the corpus emits both ways.
struct GatedRegs : Generator<std::string> {
  using Generator::Generator;
  std::string generator_name() const override { return "corpus::GatedRegs"; }
  std::string module_name() const override { return "gated_regs_" + p; }
  ParamList params() const override { return {{"clock_gating", p}}; }
  void build(Module& m) const override {
    Sig en_a = m.input("en_a", UInt(1));
    Sig en_b = m.input("en_b", UInt(1));
    Sig own = m.input("own_en", UInt(1));
    Sig d = m.input("d", UInt(8));
    Sig cnt = m.output("cnt", UInt(8));
    Sig qa = m.output("qa", UInt(8));
    Sig qa2 = m.output("qa2", UInt(8));
    Sig qb = m.output("qb", UInt(8));
    Sig count = m.reg("count", UInt(8), reset_to(0));
    count <<= count + 1;
    const GatedClock a = m.clock_gate("a", en_a);
    const GatedClock b = m.clock_gate("b", en_b);
    Sig ra = m.reg("ra", UInt(8), reset_to(0).clocked_by(a));
    ra <<= d ^ count;
    Sig ra2 = m.reg("ra2", UInt(8), clocked_by(a).enabled_by(own));
    ra2 <<= d + count;
    Sig rb = m.reg("rb", UInt(8), clocked_by(b));
    rb <<= mux(count == 0, d, rb + d);  // no reset: known from the first load at a count of 0
    cnt <<= count;
    qa <<= ra;
    qa2 <<= ra2;
    qb <<= rb;
  }
};

}  // namespace corpus
