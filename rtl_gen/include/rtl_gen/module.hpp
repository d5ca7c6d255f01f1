// The builder API: a Module is built by running C++ code against it. Ports, wires and
// registers are declared with a type; statements (connects, when/elsewhen/otherwise,
// switch/is) go into the module's current block; instances of other generators are
// elaborated through the Design (deduplicated by parameters).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <vector>

#include "rtl_gen/expr.hpp"
#include "rtl_gen/ir.hpp"
#include "rtl_gen/type.hpp"

namespace fetta::rtl {

class Design;
class Module;
class GeneratorBase;

// A typed handle on signals: a ground signal, or an aggregate whose leaves are ground signals.
class Data {
 public:
  Data() = default;
  Data(Type t, std::vector<SignalPtr> leaves, std::vector<bool> flips, std::string name);

  const Type& type() const { return type_; }
  const std::string& name() const { return name_; }
  Data operator[](const std::string& field) const;  // bundle field
  Data operator[](int index) const;                 // vec element (constant index)
  Data field(const std::string& name) const { return (*this)[name]; }
  // The bundle field, or an empty Data (valid() false) when the bundle has none of that name: for
  // the views of bundles whose fields depend on parameters.
  Data field_if_any(const std::string& name) const;
  bool valid() const { return !leaves_.empty(); }
  int size() const;                                 // vec element count
  Sig sig() const;                                  // the ground signal (throws for aggregates)
  operator Sig() const { return sig(); }            // NOLINT: ground Data is usable as an Expr
  const std::vector<SignalPtr>& leaves() const { return leaves_; }
  const std::vector<bool>& flips() const { return flips_; }

 private:
  Type type_;
  std::vector<SignalPtr> leaves_;
  std::vector<bool> flips_;  // per leaf: flipped relative to this handle's root
  std::string name_;
};

// Bulk connection of two aggregates of the same type: unflipped leaves flow source -> sink,
// flipped leaves sink -> source (Chisel's `<>` for bundles with ready/valid style fields).
void connect(const Data& sink, const Data& source, std::source_location l = std::source_location::current());

// A clock that runs only in cycles whose enable is 1 (Module::clock_gate). Registers clocked by
// it load only then, as if enabled by it; how that is built depends on the design's ClockGating.
struct GatedClock {
  size_t index = 0;  // the module's gate
  const Module* owner = nullptr;
};

struct RegOptions {
  std::optional<int64_t> reset;  // synchronous, active-high `rst`; none: no reset
  Expr reset_constant;           // the named constant the reset value was given as, if any
  Expr enable;                   // load only when enable is 1; none: every cycle
  std::optional<GatedClock> clock;  // clocked by a gated clock; none: the module's clock

  RegOptions& reset_to(int64_t v) { reset = v; return *this; }
  // A reset value given as a constant (lit() or Module::constant(), printed by its name).
  RegOptions& reset_to(const Expr& constant);
  RegOptions& enabled_by(const Expr& e) { enable = e; return *this; }
  RegOptions& clocked_by(const GatedClock& g) { clock = g; return *this; }
};
// m.reg("cnt", UInt(8), reset_to(0)), m.reg("q", UInt(8), enabled_by(en)), or both chained.
inline RegOptions reset_to(int64_t v) { return RegOptions{}.reset_to(v); }
inline RegOptions reset_to(const Expr& constant) { return RegOptions{}.reset_to(constant); }
inline RegOptions enabled_by(const Expr& e) { return RegOptions{}.enabled_by(e); }
inline RegOptions clocked_by(const GatedClock& g) { return RegOptions{}.clocked_by(g); }

class WhenChain {
 public:
  WhenChain(Module* m, Stmt* s) : m_(m), stmt_(s) {}
  WhenChain elsewhen(const Expr& cond, const std::function<void()>& body,
                     std::source_location l = std::source_location::current());
  void otherwise(const std::function<void()>& body);

 private:
  Module* m_;
  Stmt* stmt_;
};

class SwitchChain {
 public:
  SwitchChain(Module* m, Stmt* s) : m_(m), stmt_(s) {}
  SwitchChain is(int64_t value, const std::function<void()>& body,
                 std::source_location l = std::source_location::current());
  SwitchChain is(std::initializer_list<int64_t> values, const std::function<void()>& body,
                 std::source_location l = std::source_location::current());
  // A case labelled by a constant expression; a named constant (Module::constant) keeps its name.
  SwitchChain is(const Expr& value, const std::function<void()>& body,
                 std::source_location l = std::source_location::current());
  void otherwise(const std::function<void()>& body, std::source_location l = std::source_location::current());

 private:
  Module* m_;
  Stmt* stmt_;
};

// A port of a generator's module, named once where the generator declares it (a static member
// of the generator, say), so that neither the generator nor a parent spells the name again.
// Module::input/output and InstanceRef::io take it and return a View: a struct of typed handles
// on the port's fields, constructed from the port's Data (Data itself by default).
template <class View = Data>
struct Port {
  const char* name;
};

// An instance of a child module, seen from the parent.
class InstanceRef {
 public:
  InstanceRef(Instance* inst, const Module* def) : inst_(inst), def_(def) {}
  // The parent-side handle of child port `port` (inputs are driven, outputs read).
  Data io(const std::string& port, std::source_location l = std::source_location::current()) const;
  template <class View>
  View io(const Port<View>& port, std::source_location l = std::source_location::current()) const {
    return View(io(std::string(port.name), l));
  }
  // The same port as one handle, for rtl::connect.
  template <class View>
  Data io_whole(const Port<View>& port, std::source_location l = std::source_location::current()) const {
    return io(std::string(port.name), l);
  }
  const std::string& name() const { return inst_->name; }

 private:
  Instance* inst_;
  const Module* def_;
};

class MemRef {
 public:
  explicit MemRef(Module* m, Memory* mem) : m_(m), mem_(mem) {}
  // Registered read: data appears one cycle after `enable` with `addr`.
  Sig read_port(const std::string& name, const Expr& addr, const Expr& enable,
                std::source_location l = std::source_location::current());
  void write_port(const Expr& addr, const Expr& data, const Expr& enable,
                  std::source_location l = std::source_location::current());
  int addr_width() const { return mem_->addr_width; }

 private:
  Module* m_;
  Memory* mem_;
};

struct PortDecl {
  std::string name;
  Type type;
  bool is_input = false;  // declared with input() (leaves may still be flipped)
  Data data;
};

// (key, value) pairs describing a generator's parameters, in a stable order.
using ParamList = std::vector<std::pair<std::string, std::string>>;

class Module {
 public:
  Module(std::string name, Design* design);
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // ---- declarations
  Data input(const std::string& name, const Type& t, std::source_location l = std::source_location::current());
  Data output(const std::string& name, const Type& t, std::source_location l = std::source_location::current());
  template <class View>
  View input(const Port<View>& port, const Type& t, std::source_location l = std::source_location::current()) {
    return View(input(std::string(port.name), t, l));
  }
  template <class View>
  View output(const Port<View>& port, const Type& t, std::source_location l = std::source_location::current()) {
    return View(output(std::string(port.name), t, l));
  }
  Data wire(const std::string& name, const Type& t, std::source_location l = std::source_location::current());
  Sig reg(const std::string& name, const Type& t, RegOptions opt = {},
          std::source_location l = std::source_location::current());
  MemRef memory(const std::string& name, const Type& elem, int depth,
                std::source_location l = std::source_location::current());
  InstanceRef instance(const GeneratorBase& gen, const std::string& name,
                       std::source_location l = std::source_location::current());
  // A named constant: printed by its name wherever it is used (expressions, case labels) and
  // declared as a `localparam` when the module uses it. For FSM states, opcodes, bit patterns.
  Expr constant(const std::string& name, uint64_t value, int width,
                std::source_location l = std::source_location::current());
  // A gated clock for the registers that load only when `enable` is 1 (RegOptions::clocked_by):
  // with ClockGating::cells an integrated clock gate `cg_<name>` (ClockGateCell: a latch holds
  // the enable while the clock is low, so the gated clock cannot glitch) for its registers
  // without reset, and `cg_<name>_rst`, which opens during reset too, for those with one (each
  // made when a register first needs it); with ClockGating::enables no gate, and the registers
  // keep the module's clock with the enable as a load enable (FPGA fabrics, and the simulation
  // view: no derived clocks). The same bits every cycle either way.
  GatedClock clock_gate(const std::string& name, const Expr& enable,
                        std::source_location l = std::source_location::current());
  // The module's clock as an input port (a primitive whose body is text: ClockGateCell).
  Sig clock_input(std::source_location l = std::source_location::current());
  // A primitive's body, given as SystemVerilog text in place of statements; its ports are
  // declared as usual and its outputs are driven by the text.
  void set_verbatim_body(std::string text) { verbatim_ = std::move(text); }
  const std::string& verbatim_body() const { return verbatim_; }
  // Convenience: a wire driven by `value` right away.
  Sig node(const std::string& name, const Expr& value, std::source_location l = std::source_location::current());

  // ---- statements
  void assign(const Sig& target, const Operand& value);
  WhenChain when(const Expr& cond, const std::function<void()>& body,
                 std::source_location l = std::source_location::current());
  SwitchChain switch_on(const Expr& subject, std::source_location l = std::source_location::current());

  // ---- metadata, for the header and manifest
  void set_origin(std::string generator, ParamList params, SourceLoc loc);
  const std::string& generator() const { return generator_; }
  const ParamList& params() const { return params_; }
  // Where the generator's build() declares its first signal (file:line for the header).
  const SourceLoc& origin() const { return origin_; }
  void add_comment(std::string text) { comments_.push_back(std::move(text)); }
  const std::vector<std::string>& comments() const { return comments_; }
  // A generator that builds this module differently in the simulation view says how (the header
  // and the manifest carry it) and the latency both views share (an equivalence proof compares
  // outputs from that cycle on); empty: the module is the same in both views.
  void set_simulation_view(std::string how, int latency) {
    simulation_view_ = std::move(how);
    view_latency_ = latency;
  }
  const std::string& simulation_view() const { return simulation_view_; }
  int view_latency() const { return view_latency_; }

  // ---- read access for checks and the emitter
  const std::vector<PortDecl>& ports() const { return ports_; }
  const std::vector<SignalPtr>& signals() const { return signals_; }  // every signal, declaration order
  const Block& body() const { return body_; }
  const std::vector<std::unique_ptr<Instance>>& instances() const { return instances_; }
  const std::vector<std::unique_ptr<Memory>>& memories() const { return memories_; }
  const std::vector<ExprPtr>& constants() const { return constants_; }  // declaration order
  SignalPtr clock() const { return clk_; }
  SignalPtr reset() const { return rst_; }
  Design* design() const { return design_; }
  bool sealed() const { return sealed_; }
  // Combinational paths input port -> output port (names of leaves), filled by the checks.
  std::map<std::string, std::vector<std::string>> comb_paths;

  // Used by Sig/When/Switch: statement insertion into the current block.
  void push_stmt(std::unique_ptr<Stmt> s);
  void with_block(Block* b, const std::function<void()>& body);
  void seal() { sealed_ = true; }
  void check_expr_owner(const Expr& e, const std::string& what, const SourceLoc& loc) const;

 private:
  SignalPtr make_signal(const std::string& name, int width, bool is_signed, SigKind kind, const SourceLoc& loc);
  Data declare(const std::string& name, const Type& t, SigKind unflipped, SigKind flipped_kind, const SourceLoc& loc);
  void claim_name(const std::string& name, const SourceLoc& loc);
  void ensure_clock(const SourceLoc& loc);
  void ensure_reset(const SourceLoc& loc);

  std::string name_;
  Design* design_;
  std::string generator_;
  ParamList params_;
  SourceLoc origin_;
  std::vector<std::string> comments_;
  std::string simulation_view_;
  int view_latency_ = 0;
  std::vector<PortDecl> ports_;
  std::vector<SignalPtr> signals_;
  std::map<std::string, SourceLoc> names_;
  Block body_;
  std::vector<Block*> block_stack_;
  std::vector<std::unique_ptr<Instance>> instances_;
  std::vector<std::unique_ptr<Memory>> memories_;
  std::vector<ExprPtr> constants_;
  SignalPtr clk_, rst_;
  struct Gate {
    std::string name;
    ExprPtr enable;
    SignalPtr gclk[2];  // the gated clocks made so far: [0] plain, [1] opening during reset
  };
  SignalPtr gated_clock(Gate& g, bool opens_on_reset, const SourceLoc& loc);
  std::vector<Gate> gates_;
  std::string verbatim_;
  bool sealed_ = false;
  bool origin_from_build_ = false;
};

// A generator: a class with a parameter struct that knows its module name and builds it.
// Two generators that report the same module name must report the same parameters.
class GeneratorBase {
 public:
  virtual ~GeneratorBase() = default;
  virtual std::string generator_name() const = 0;  // "hw::Pe"
  virtual std::string module_name() const = 0;     // derived from the parameters, stable
  virtual ParamList params() const = 0;
  virtual void build(Module& m) const = 0;
};

template <typename P>
class Generator : public GeneratorBase {
 public:
  explicit Generator(P params) : p(std::move(params)) {}
  P p;
};

// A generator's identity, described once: the module name is the prefix followed by each
// parameter's part of it, in order, and the module's header lists every entry as key=value. A
// parameter is written down once, beside the part of the name it makes (docs/rtl_gen.md, "A
// complete generator"), so none can be left out of one and not the other.
class Identity {
 public:
  explicit Identity(std::string prefix) : prefix_size_(prefix.size()), name_(std::move(prefix)) {}
  // A parameter: `key=value` in the header, `part` appended to the module name (empty: the value
  // is elided from the name, as a default is, or another entry's part carries it).
  Identity& param(std::string key, std::string value, const std::string& part = {}) {
    params_.emplace_back(std::move(key), std::move(value));
    name_ += part;
    return *this;
  }
  Identity& param(std::string key, int64_t value, const std::string& part = {}) {
    return param(std::move(key), std::to_string(value), part);
  }
  Identity& flag(std::string key, bool value, const std::string& part = {}) {
    return param(std::move(key), value ? "true" : "false", part);
  }
  // Another generator's identity inside this one (a CE's PE): its parameters follow, and its name
  // less its prefix is this one's part.
  Identity& nest(const Identity& inner) {
    params_.insert(params_.end(), inner.params_.begin(), inner.params_.end());
    name_ += inner.name_.substr(inner.prefix_size_);
    return *this;
  }
  const std::string& module_name() const { return name_; }
  const ParamList& params() const { return params_; }

 private:
  size_t prefix_size_;
  std::string name_;
  ParamList params_;
};

// A generator whose module name and header parameters both come from its Identity.
template <typename P>
class IdentifiedGenerator : public Generator<P> {
 public:
  using Generator<P>::Generator;
  virtual Identity identity() const = 0;
  std::string module_name() const final { return identity().module_name(); }
  ParamList params() const final { return identity().params(); }
};

// Which form of each module a design is elaborated in. A generator may give a module a
// simulation view: the same name, ports, latency and bits as its synthesis view, written so a
// simulator evaluates it in fewer operations (a behavioural datapath for a gate-structured one).
// The two views of a module are proven equal by formal equivalence (docs/rtl_gen.md, "Views");
// generators without a simulation view build the same module in both.
enum class View { synthesis, simulation };
std::string to_string(View v);
View parse_view(const std::string& s);  // throws std::invalid_argument naming the allowed values

// How registers on a gated clock (Module::clock_gate) are built: clock-gate cells (ASIC
// synthesis: the technology's integrated clock gate) or load enables on the module's clock
// (FPGA fabrics; the simulation view). By default the synthesis view gates with cells and the
// simulation view with enables.
enum class ClockGating { cells, enables };
std::string to_string(ClockGating g);
ClockGating parse_clock_gating(const std::string& s);  // throws std::invalid_argument naming the allowed values

// The set of elaborated modules. Elaborating the same generator parameters twice returns the
// same module (one definition, many instances).
class Design {
 public:
  Design() = default;
  explicit Design(View view)
      : view_(view), gating_(view == View::synthesis ? ClockGating::cells : ClockGating::enables) {}
  Design(View view, ClockGating gating) : view_(view), gating_(gating) {}
  View view() const { return view_; }
  ClockGating clock_gating() const { return gating_; }
  std::shared_ptr<const Module> elaborate(const GeneratorBase& gen,
                                          std::source_location l = std::source_location::current());
  const std::vector<std::shared_ptr<Module>>& modules() const { return modules_; }  // children first
  std::shared_ptr<const Module> find(const std::string& name) const;
  // Modules reachable from `top`, children before parents.
  std::vector<std::shared_ptr<const Module>> hierarchy(const std::string& top) const;

 private:
  std::vector<std::shared_ptr<Module>> modules_;
  std::vector<std::string> building_;
  View view_ = View::synthesis;
  ClockGating gating_ = ClockGating::cells;
};

// The integrated clock gate Module::clock_gate instantiates (module `fetta_clock_gate`: clk, en,
// test_en -> gclk). Its text is the behavioural model Verilator and Icarus run: a latch that is
// transparent while the clock is low holds en | test_en through the high phase, and the gated
// clock is the clock ANDed with it. The ASAP7 flow replaces it with the library's ICG cell.
class ClockGateCell : public GeneratorBase {
 public:
  static constexpr const char* kModule = "fetta_clock_gate";
  std::string generator_name() const override { return "rtl::ClockGateCell"; }
  std::string module_name() const override { return kModule; }
  ParamList params() const override { return {}; }
  void build(Module& m) const override;
};

}  // namespace fetta::rtl
