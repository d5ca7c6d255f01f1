#include "flows/power.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_set>
#include <stdexcept>

#include "flows/run.hpp"
#include "flows/sta.hpp"
#include "flows/synth_tools.hpp"

namespace fetta::flows::power {
namespace {

using synth::read_text;
using synth::write_text;

// A name as an OpenSTA pattern that matches only itself, braced for Tcl.
std::string tcl_name(const std::string& name) {
  std::string s = "{";
  for (char c : name) {
    if (c == '[' || c == ']' || c == '*' || c == '?' || c == '\\') s += '\\';
    s += c;
  }
  return s + "}";
}


constexpr const char* kProcs = R"tcl(# fetta: power from recorded activity (docs/power.md).
proc fetta_input {name rate duty} {
  set p [get_ports -quiet $name]
  if {[llength $p] != 1 || [get_property $p direction] ne "input"} { return 0 }
  set_power_activity -input_ports $p -activity $rate -duty $duty
  return 1
}
set fetta_inputs 0
set fetta_act [dict create]
)tcl";

// Every leaf cell that has recorded or known activity gets it on its pins:
// - a flip-flop whose name the activity holds on all its pins: the state (IQN, IQNN) and the
//   output (QN carries the complement's duty) and the data input (the next state: the same
//   sequence a cycle earlier); not the clock pin, which OpenSTA sets from its net's driver (the
//   clock port's 2 transitions per cycle, 0 when stopped, or a clock gate's, below). Annotating
//   the inputs keeps OpenSTA 2.0.17 from seeding the register's state again from its D pin's
//   propagated estimate (docs/power.md); flip-flops without a name are listed and left to that;
// - a tie cell's output: no toggles, its constant's duty;
// - an SRAM macro's read-data bit, on its power view's twin input: the activity of the net it
//   drives, which is the RTL's read-data register (the macro absorbed it).
// - an integrated clock gate's gated clock, on its power view's twin input: 2 transitions in each
//   cycle its latch held 1 (rtl_gen's clock gate `<gate>`, the cell inside it, its latch
//   `<gate>.en_latched` traced); the full clock when the trace lacks the latch (listed). OpenSTA
//   carries a driver's activity onto every load of its net, overwriting what a load pin was given,
//   so the flip-flops on the gated clock take it from there; they are counted by their clock net
//   `<gate>_gclk`.
constexpr const char* kAnnotateCells = R"tcl(proc fetta_gate_activity {gate} {
  upvar #0 fetta_act act fetta_clock_activity clk
  set key "[string map {/ .} $gate].en_latched_reg"
  if {![dict exists $act $key]} { return {} }
  set duty [lindex [dict get $act $key] 1]
  return [list [expr {$clk * $duty}] [expr {0.5 * $duty}]]
}
proc fetta_on_gated_clock {p} {
  set net [get_nets -quiet -of_objects $p]
  if {$net eq ""} { return 0 }
  set n [get_full_name $net]
  return [expr {[string match *_gclk $n] && [fetta_gate_activity [string range $n 0 end-5]] ne ""}]
}
set fetta_gated_flops 0
set fetta_clock_gates 0
proc fetta_macro_outputs {c buses} {
  upvar #0 fetta_act act fetta_macro_bits bits fetta_macro_annotated found
  set pins [dict create]
  foreach p [get_pins -of_objects $c] { dict set pins [get_property $p lib_pin_name] $p }
  dict for {pn p} $pins {
    if {[get_property $p direction] ne "output" || [lsearch -exact $buses [lindex [split $pn {[}] 0]] < 0} { continue }
    incr bits
    set net [get_nets -quiet -of_objects $p]
    if {$net eq "" || ![dict exists $pins fetta_pwr_$pn]} { continue }
    set key "[string map {/ .} [get_full_name $net]]_reg"
    if {![dict exists $act $key]} { continue }
    lassign [dict get $act $key] rate duty
    sta::set_power_pin_activity [dict get $pins fetta_pwr_$pn] $rate $duty
    incr found
  }
}
set fetta_flops 0
set fetta_logic_pins 0
set fetta_logic_annotated 0
set fetta_macro_bits 0
set fetta_macro_annotated 0
foreach c [get_cells -hierarchical *] {
  if {![$c is_leaf]} { continue }
  set lc [get_property [get_property $c liberty_cell] name]
  if {[dict exists $fetta_constant $lc]} {
    foreach p [get_pins -of_objects $c] {
      set pn [get_property $p lib_pin_name]
      if {[dict exists $fetta_constant $lc $pn]} { sta::set_power_pin_activity $p 0 [dict get $fetta_constant $lc $pn] }
    }
    continue
  }
  if {[dict exists $fetta_macro $lc]} { fetta_macro_outputs $c [dict get $fetta_macro $lc]; continue }
  if {[dict exists $fetta_logic $lc]} {
    set pins [dict create]
    foreach p [get_pins -of_objects $c] { dict set pins [get_property $p lib_pin_name] $p }
    foreach pn [dict get $fetta_logic $lc] {
      incr fetta_logic_pins
      # The gate-level trace names the pin's wire <instance>.<pin> (activity.txt adds _reg).
      set key "[string map {/ .} [get_full_name $c]].${pn}_reg"
      if {![dict exists $fetta_act $key] || ![dict exists $pins fetta_pwr_$pn]} { continue }
      lassign [dict get $fetta_act $key] rate duty
      sta::set_power_pin_activity [dict get $pins fetta_pwr_$pn] $rate $duty
      incr fetta_logic_annotated
    }
    continue
  }
  if {[dict exists $fetta_gate $lc]} {
    set gate [join [lrange [split [get_full_name $c] /] 0 end-1] /]
    set a [fetta_gate_activity $gate]
    if {$a eq ""} { puts "fetta-untraced-gate $gate"; set a [list $fetta_clock_activity 0.5] } else { incr fetta_clock_gates }
    foreach pn [dict get $fetta_gate $lc] { sta::set_power_pin_activity [get_pins [get_full_name $c]/fetta_pwr_$pn] {*}$a }
    continue
  }
  if {![string match *DFF* $lc]} { continue }
  set name [string map {/ .} [get_full_name $c]]
  if {![dict exists $fetta_act $name]} { puts "fetta-unmatched $name"; continue }
  lassign [dict get $fetta_act $name] rate duty
  foreach p [get_pins -of_objects $c] {
    set pn [get_property $p lib_pin_name]
    if {$pn eq "CLK"} { incr fetta_gated_flops [fetta_on_gated_clock $p]; continue }
    set d $duty
    if {$pn eq "QN" || $pn eq "IQN"} { set d [expr {1.0 - $duty}] }
    sta::set_power_pin_activity $p $rate $d
  }
  incr fetta_flops
}
)tcl";

}  // namespace

Breakdown& Breakdown::operator+=(const Breakdown& o) {
  internal_w += o.internal_w;
  switching_w += o.switching_w;
  leakage_w += o.leakage_w;
  return *this;
}

std::string activity_list(const Activity& a, const std::string& clock_port) {
  // Data, not commands: read whole by power.tcl (OpenSTA's `source` takes minutes for 10^5 lines).
  // One Tcl list element per line: {flip-flop name} {toggle rate} {duty} {1 = input port}.
  std::string s;
  for (const BitActivity& b : a.bits) {
    if (b.port && b.name == clock_port) continue;  // the clock's activity is set apart
    // A register bit under the flip-flop name it would have; a bus port's bit as `name[i]`
    // (OpenSTA's bus-bit syntax).
    s += fmt::format("{{{}{}}} {:.9g} {:.9g} {}\n", b.name, b.port ? "" : "_reg", b.toggle_rate, b.duty, b.port ? 1 : 0);
  }
  return s;
}

std::string power_script(const Run& run, const std::vector<std::string>& libraries, const std::vector<PowerView>& views) {
  std::string s = kProcs;
  s += "set fetta_constant [dict create]\nset fetta_macro [dict create]\nset fetta_logic [dict create]\nset fetta_gate [dict create]\n";
  for (const PowerView& v : views) {
    for (const ConstantOutput& c : v.constants)
      s += fmt::format("dict set fetta_constant {{{}}} {{{}}} {}\n", c.cell, c.pin, c.value ? 1 : 0);
    for (const MacroOutput& m : v.macro_outputs) s += fmt::format("dict lappend fetta_macro {{{}}} {{{}}}\n", m.cell, m.pin);
    for (const MacroOutput& m : v.logic_outputs) s += fmt::format("dict lappend fetta_logic {{{}}} {{{}}}\n", m.cell, m.pin);
    for (const MacroOutput& m : v.clock_gates) s += fmt::format("dict lappend fetta_gate {{{}}} {{{}}}\n", m.cell, m.pin);
  }
  for (const std::string& lib : libraries) s += fmt::format("read_liberty {}\n", sta::tcl_path(lib));
  s += fmt::format("read_verilog {}\n", sta::tcl_path(std::filesystem::absolute(run.netlist).string()));
  s += fmt::format("link_design {}\n", run.top);
  // The activities' time base is a virtual clock of the run's period, and the clock port an
  // ordinary annotated input: its arrival reaches every gate through the power views' combinational
  // register arcs, and OpenSTA scales a pin's activity by the period of the clock that reaches it.
  s += fmt::format("create_clock -name fetta_activity_clock -period {:.3f}\n", run.clock_period_ps);
  s += "set_input_delay 0 -clock fetta_activity_clock [all_inputs]\nset_output_delay 0 -clock fetta_activity_clock [all_outputs]\n";
  s += run.port_constraints;
  s += fmt::format("set fetta_clock_activity {}\n", run.clock_stopped ? 0 : 2);
  s += fmt::format("set_power_activity -input_ports [get_ports -quiet {}] -activity $fetta_clock_activity -duty 0.5\n",
                   tcl_name(run.clock_port));
  // What neither the annotation nor the propagation reaches gets no activity instead of the
  // 10 % default (counted as idle cells).
  s += "set_power_activity -input -activity 0 -duty 0.5\n";
  s += R"tcl(set fetta_file [open activity.txt]
foreach {name rate duty port} [read $fetta_file] {
  if {$port} { incr fetta_inputs [fetta_input $name $rate $duty] } else { dict set fetta_act $name [list $rate $duty] }
}
close $fetta_file
)tcl";
  s += kAnnotateCells;
  s += "puts \"fetta-annotated $fetta_flops $fetta_inputs\"\n";
  s += "puts \"fetta-macro $fetta_macro_annotated $fetta_macro_bits\"\n";
  s += "puts \"fetta-gated $fetta_gated_flops $fetta_clock_gates\"\n";
  s += "puts \"fetta-logic $fetta_logic_annotated $fetta_logic_pins\"\n";
  // Every leaf cell's power, summed per block in Tcl (a top has ~10^5 cells; one line per block).
  s += fmt::format(R"tcl(set fetta_corner [sta::cmd_corner]
array set fetta_sum {{}}
set fetta_idle 0
foreach c [get_cells -hierarchical *] {{
  if {{![$c is_leaf]}} {{ continue }}
  set parts [split [string map {{/ .}} [get_full_name $c]] .]
  set b [join [lrange $parts 0 end-1] .]
  if {{$b eq ""}} {{ set b "(top)" }} else {{ set b [join [lrange [split $b .] 0 {}] .] }}
  set flop [string match *DFF* [get_property [get_property $c liberty_cell] name]]
  set pw [sta::instance_power $c $fetta_corner]
  if {{[lindex $pw 0] + [lindex $pw 1] == 0}} {{ incr fetta_idle }}
  if {{![info exists fetta_sum($b)]}} {{ set fetta_sum($b) {{0 0 0.0 0.0 0.0}} }}
  lassign $fetta_sum($b) n f i sw l
  set fetta_sum($b) [list [expr {{$n + 1}}] [expr {{$f + $flop}}] [expr {{$i + [lindex $pw 0]}}] [expr {{$sw + [lindex $pw 1]}}] [expr {{$l + [lindex $pw 2]}}]]
}}
foreach b [lsort [array names fetta_sum]] {{ puts "fetta-block $b $fetta_sum($b)" }}
puts "fetta-idle $fetta_idle"
report_power -digits 9
)tcl",
                   run.block_depth - 1);
  return s;
}

std::vector<BlockPower> parse_blocks(const std::string& text, const std::string& what) {
  std::vector<BlockPower> out;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("fetta-block ", 0) != 0) continue;
    std::istringstream in(line.substr(12));
    BlockPower b;
    if (!(in >> b.block >> b.cells >> b.flops >> b.power.internal_w >> b.power.switching_w >> b.power.leakage_w))
      throw std::runtime_error(fmt::format("{}: unreadable block line '{}'", what, line));
    out.push_back(b);
  }
  if (out.empty()) throw std::runtime_error(fmt::format("{}: no block power (no cells?)", what));
  return out;
}

Breakdown parse_total(const std::string& text, const std::string& what, const std::string& group) {
  for (const std::string& line : lines_of(text)) {
    if (line.rfind(group + " ", 0) != 0) continue;
    std::istringstream in(line.substr(group.size() + 1));
    Breakdown b;
    double total = 0;
    if (in >> b.internal_w >> b.switching_w >> b.leakage_w >> total) return b;
  }
  throw std::runtime_error(fmt::format("{}: no '{}' line from report_power", what, group));
}

Run run_for_synthesized(const std::string& module_dir, const std::string& top, const std::string& work_dir) {
  Run run;
  run.top = top;
  run.work_dir = work_dir;
  // Kept hierarchy: the netlist before flattening, whose gates sit in their blocks.
  run.netlist = module_dir + (std::ifstream(module_dir + "/hierarchical.v") ? "/hierarchical.v" : "/netlist.v");
  run.sdc = module_dir + "/constraints.sdc";
  if (std::ifstream(module_dir + "/macros.txt")) run.macros = module_dir + "/macros.txt";
  run.flat_netlist = module_dir + "/netlist.v";
  std::ifstream in(module_dir + "/sta.tcl");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("read_liberty {", 0) == 0 && line.back() == '}') run.liberty.push_back(line.substr(14, line.size() - 15));
  for (const std::string& f : {run.netlist, run.sdc})
    if (!std::ifstream(f))
      throw std::runtime_error(fmt::format("{}: missing; synthesize {} for asap7 first (fetta synth --target asap7)", f, top));
  if (run.liberty.empty())
    throw std::runtime_error(fmt::format("{}/sta.tcl: no read_liberty line; synthesize {} for asap7 first", module_dir, top));
  std::ifstream sdc(run.sdc);
  for (std::string line; std::getline(sdc, line);) {
    const size_t at = line.find(" -period ");
    if (line.rfind("create_clock", 0) == 0 && at != std::string::npos) run.clock_period_ps = std::stod(line.substr(at + 9));
    // The ports' electrical context (driver, load) is the sign-off timing's.
    if (line.rfind("set_driving_cell ", 0) == 0 || line.rfind("set_load ", 0) == 0) run.port_constraints += line + "\n";
  }
  return run;
}

namespace {

// A bit's name and its signal's: "a.b[3]" and "a.b"; "a.mem[2][7]" and "a.mem[2]".
void add_signal_names(std::unordered_set<std::string>& out, const std::string& name) {
  out.insert(name);
  if (!name.empty() && name.back() == ']') out.insert(name.substr(0, name.rfind('[')));
}

}  // namespace

SignalFilter power_signals(const Run& run) {
  auto names = std::make_shared<std::unordered_set<std::string>>();
  std::ifstream in(run.flat_netlist);
  if (!in) throw std::runtime_error(fmt::format("{}: missing; synthesize {} for asap7 first (fetta synth --target asap7)",
                                                run.flat_netlist, run.top));
  // Cell lines: "  <type> <name> (", a flip-flop's type holding DFF (as power.tcl matches them),
  // and the clock gates' cells (`<gate>.icg`), whose traced latch `<gate>.en_latched` gives their
  // clocks' activity.
  for (std::string line; std::getline(in, line);) {
    const bool gate = line.find("ICG") != std::string::npos;
    if (line.find("DFF") == std::string::npos && !gate) continue;
    std::istringstream cell(line);
    std::string type, name;
    if (!(cell >> type >> name)) continue;
    if (name[0] == '\\') name.erase(0, 1);
    if (gate && type.rfind("ICG", 0) == 0 && name.size() > 4 && name.compare(name.size() - 4, 4, ".icg") == 0) {
      names->insert(name.substr(0, name.size() - 4) + ".en_latched");
      continue;
    }
    if (type.find("DFF") == std::string::npos) continue;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, "_reg") != 0) continue;
    add_signal_names(*names, name.substr(0, name.size() - 4));
  }
  if (!run.macros.empty()) {
    std::istringstream dump(read_text(run.macros));
    for (std::string line; std::getline(dump, line);) {
      std::istringstream tokens(line);
      std::string keyword, port, value;
      if (!(tokens >> keyword >> port) || keyword != "connect") continue;
      std::getline(tokens, value);
      for (const std::string& bit : dump_connection_bits(value))
        if (bit[0] != '\'') add_signal_names(*names, bit);
    }
  }
  return [names](const std::string& signal) { return names->count(signal) > 0; };
}

Activity gate_level_activity(const Activity& gl) {
  Activity a = gl;
  a.bits.clear();
  static const std::string state = "_reg.IQN";
  for (const BitActivity& b : gl.bits) {
    if (b.name.size() > state.size() && b.name.compare(b.name.size() - state.size(), state.size(), state) == 0)
      a.bits.push_back({b.name.substr(0, b.name.size() - state.size()), b.toggle_rate, 1.0 - b.duty, false});
    else if (b.port || b.name.find("_reg.") == std::string::npos)
      a.bits.push_back(b);
  }
  std::sort(a.bits.begin(), a.bits.end(), [](const BitActivity& x, const BitActivity& y) { return x.name < y.name; });
  return a;
}

PowerResult run_power(const Run& run, const Activity& a) {
  sta::require_sta();
  if (!(run.clock_period_ps > 0))
    throw std::invalid_argument(fmt::format("clock period: {} ps; allowed: > 0 (the SDC's create_clock)", run.clock_period_ps));
  if (run.block_depth < 1) throw std::invalid_argument(fmt::format("block_depth: {}; allowed: >= 1", run.block_depth));
  std::vector<std::string> libraries;
  std::vector<PowerView> views;
  for (const std::string& lib : run.liberty) {
    views.push_back(power_view(read_text(lib), lib, run.gate_level));
    // OpenSTA runs in work_dir: the script names every file by its absolute path.
    libraries.push_back(fmt::format("{}/power_view_{}.lib", std::filesystem::absolute(run.work_dir).string(), libraries.size()));
    write_text(libraries.back(), views.back().liberty);
    views.back().liberty.clear();
  }
  write_text(run.work_dir + "/activity.txt", activity_list(a, run.clock_port));
  write_text(run.work_dir + "/power.tcl", power_script(run, libraries, views));
  const CommandResult res = run_command("sta -no_splash -exit power.tcl", run.work_dir);
  write_text(run.work_dir + "/power.log", res.output);
  const std::string what = run.work_dir + "/power.log";
  if (res.exit_code != 0)
    throw std::runtime_error(fmt::format("OpenSTA failed on {} (exit code {}; script {}/power.tcl, log {})", run.top,
                                         res.exit_code, run.work_dir, what));
  if (const std::string line = sta::first_failure(res.output); !line.empty())
    throw std::runtime_error(fmt::format("OpenSTA failed on {} ({}; script {}/power.tcl, log {}): {}", run.top,
                                         run.netlist, run.work_dir, what, line));
  PowerResult r;
  for (const std::string& line : lines_of(res.output)) {
    if (line.rfind("fetta-unmatched ", 0) == 0) r.unmatched.push_back(line.substr(16));
    if (line.rfind("fetta-untraced-gate ", 0) == 0) r.untraced_gates.push_back(line.substr(20));
    if (line.rfind("fetta-annotated ", 0) == 0) {
      std::istringstream in(line.substr(16));
      in >> r.flops_annotated >> r.inputs_annotated;
    }
    if (line.rfind("fetta-macro ", 0) == 0) {
      std::istringstream in(line.substr(12));
      in >> r.macro_bits_annotated >> r.macro_bits;
    }
    if (line.rfind("fetta-idle ", 0) == 0) r.idle_cells = std::stoll(line.substr(11));
    if (line.rfind("fetta-gated ", 0) == 0) {
      std::istringstream in(line.substr(12));
      in >> r.gated_flops >> r.clock_gates;
    }
    if (line.rfind("fetta-logic ", 0) == 0) {
      std::istringstream in(line.substr(12));
      in >> r.logic_pins_annotated >> r.logic_pins;
    }
  }
  r.blocks = parse_blocks(res.output, what);
  r.total = parse_total(res.output, what);
  r.sequential = parse_total(res.output, what, "Sequential");
  r.combinational = parse_total(res.output, what, "Combinational");
  for (const BlockPower& b : r.blocks) {
    r.cells += b.cells;
    r.flops += b.flops;
  }
  if (!run.macros.empty()) r.sram = sram_accesses(read_text(run.macros), a);
  return r;
}

double PowerResult::sram_access_w(const std::string& block, int block_depth, double seconds) const {
  double j = 0;
  for (const MacroAccesses& m : sram.macros)
    if (block_of(m.instance, block_depth) == block) j += m.joules;
  return seconds > 0 ? j / seconds : 0.0;
}

double PowerReport::seconds() const { return static_cast<double>(activity_cycles) * run.clock_period_ps * 1e-12; }

double PowerReport::sample_scale() const {
  if (!sample.sampled()) return 1.0;
  return static_cast<double>(sample.run_cycles) / static_cast<double>(sample.traced_cycles());
}

std::string PowerReport::sample_check_text() const {
  if (!sample.sampled() || traced_busy < 0 || !work || work->busy_cycles < 0 || work->sim_cycles <= 0) return {};
  const double run_busy = static_cast<double>(work->busy_cycles) / static_cast<double>(work->sim_cycles);
  // The core's power follows the mix of busy and waiting cycles; a few hundred windows match the
  // run's mix to tenths of a point (docs/power.md, "Sampled activity").
  const double off = 100 * std::abs(traced_busy - run_busy);
  return fmt::format("sample check: the controller was busy {:.1f} % of the traced cycles and {:.1f} % of the run's: {}",
                     100 * traced_busy, 100 * run_busy,
                     off <= kSampleBusyTolerancePoints
                         ? std::string("the windows are representative")
                         : fmt::format("off by {:.1f} points, so the core's power is misjudged; take more windows (a "
                                       "smaller N) or trace the run whole",
                                       off));
}

std::string PowerReport::activity_text() const {
  std::string s = fmt::format("{} cycles of {}", activity_cycles, activity_source);
  if (sample.sampled())
    s += fmt::format(" (sampled: the first {} of every {} of the run's {} cycles, {} windows)", sample.window, sample.every,
                     sample.run_cycles, sample.windows);
  return s;
}

double PowerReport::sram_access_w() const { return seconds() > 0 ? result.sram.joules / seconds() : 0.0; }

RunWork run_work_from_json(const nlohmann::json& j, const std::string& what) {
  auto bad = [&](const std::string& field) {
    return std::runtime_error(fmt::format("{}: not a `fetta run --json` report (field '{}')", what, field));
  };
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_array()) throw bad("steps");
  if (!j.contains("sim_cycles") || !j["sim_cycles"].is_number_integer()) throw bad("sim_cycles");
  RunWork w;
  w.source = what;
  w.sim_cycles = j["sim_cycles"].get<int64_t>();
  if (j.contains("controller_busy_cycles") && j["controller_busy_cycles"].is_number_integer())
    w.busy_cycles = j["controller_busy_cycles"].get<int64_t>();
  auto add_once = [](std::vector<std::string>& v, const std::string& x) {
    if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
  };
  for (const nlohmann::json& step : j["steps"]) {
    for (const char* f : {"macs", "cycles", "host_cycles"})
      if (!step.contains(f) || !step[f].is_number_integer()) throw bad(std::string("steps[].") + f);
    for (const char* f : {"layer", "phase"})
      if (!step.contains(f) || !step[f].is_string()) throw bad(std::string("steps[].") + f);
    w.macs += step["macs"].get<int64_t>();
    w.compute_cycles += step["cycles"].get<int64_t>();
    w.host_cycles += step["host_cycles"].get<int64_t>();
    add_once(w.layers, step["layer"].get<std::string>());
    add_once(w.phases, step["phase"].get<std::string>());
  }
  if (w.macs <= 0) throw bad("steps (no MACs)");
  for (const char* f : {"bytes_read", "bytes_written"})
    if (!j.contains("dram") || !j["dram"].contains(f) || !j["dram"][f].is_number_integer()) throw bad(std::string("dram.") + f);
  w.dram_bytes_read = j["dram"]["bytes_read"].get<int64_t>();
  w.dram_bytes_written = j["dram"]["bytes_written"].get<int64_t>();
  return w;
}

void require_same_run(const PowerReport& r) {
  const RunWork& w = r.work.value();
  // The trace starts with the reset; a run of another length is another run. A window holds
  // part of the run. A sampled trace knows its run's length.
  if (r.sample.sampled()) {
    if (std::abs(r.sample.run_cycles - w.sim_cycles) > 4)
      throw std::invalid_argument(fmt::format("{}: a run of {} cycles, but the sampled trace {} is of a run of {}; give the "
                                              "report of the traced run (fetta run --trace DIR --trace-sample W/N --json)",
                                              w.source, w.sim_cycles, r.activity_source, r.sample.run_cycles));
    return;
  }
  const auto sim = static_cast<double>(w.sim_cycles), traced = static_cast<double>(r.activity_cycles);
  const bool whole = r.activity_window.empty();
  if ((whole && std::abs(traced - sim) > 4 + 0.01 * sim) || (!whole && traced > sim + 4))
    throw std::invalid_argument(fmt::format("{}: a run of {} cycles, but the trace {} records {}; give the report of the "
                                            "traced run (fetta run --trace FILE --json)",
                                            w.source, w.sim_cycles, r.activity_source, r.activity_cycles));
}

void require_traced_flops(const PowerResult& r, const std::string& trace, const std::string& design, const std::string& scope) {
  if (r.flops_annotated == 0)
    throw std::runtime_error(fmt::format("--fst {}: none of the {} flip-flops of {} is named in scope '{}' of the trace; "
                                         "give the design's scope with --scope (and the trace of this design)",
                                         trace, r.flops, design, scope));
  const double unmatched =
      r.flops > 0 ? static_cast<double>(r.flops - r.flops_annotated) / static_cast<double>(r.flops) : 0.0;
  if (unmatched > kMaxUnmatchedFlops)
    throw std::runtime_error(fmt::format("--fst {}: {} of the {} flip-flops of {} ({:.1f} %) are not named in scope '{}' of "
                                         "the trace (allowed: at most {:.0f} %); give the trace of this design, and its "
                                         "scope with --scope",
                                         trace, r.flops - r.flops_annotated, r.flops, design, 100 * unmatched, scope,
                                         100 * kMaxUnmatchedFlops));
}

Energy energy_of(const PowerReport& r) {
  require_same_run(r);
  const RunWork& w = *r.work;
  Energy e;
  // A sampled trace's power stands for the whole run (within a --while window: for the run's
  // cycles in it), its SRAM accesses for the run's share of them.
  const bool whole_run = r.sample.sampled() && r.activity_window.empty();
  e.cycles = whole_run ? r.sample.run_cycles : std::llround(static_cast<double>(r.activity_cycles) * r.sample_scale());
  e.seconds = whole_run ? static_cast<double>(r.sample.run_cycles) * r.run.clock_period_ps * 1e-12 : r.seconds() * r.sample_scale();
  e.core_j = r.result.total.total_w() * e.seconds;
  e.sram_j = r.result.sram.joules * r.sample_scale();
  e.dram_included = r.activity_window.empty();
  if (e.dram_included)
    e.dram_j = (static_cast<double>(w.dram_bytes_read) * r.dram.read_pj_per_byte +
                static_cast<double>(w.dram_bytes_written) * r.dram.write_pj_per_byte) * 1e-12;
  e.joules = e.core_j + e.sram_j + e.dram_j;
  e.pj_per_mac = e.joules * 1e12 / static_cast<double>(w.macs);
  e.tops_per_w = e.joules > 0 ? 2.0 * static_cast<double>(w.macs) / e.joules * 1e-12 : 0.0;
  e.edp_js = e.joules * e.seconds;
  return e;
}

std::string format_table(const PowerReport& r) {
  const PowerResult& p = r.result;
  const double seconds = r.seconds();
  const double sram_w = r.sram_access_w();
  const double total = p.total.total_w() + sram_w;
  std::string s = fmt::format(
      "Power of {} by {} (ASAP7 RVT TT 0.7 V 25 C, {}; clock {:.0f} ps per {}), activity: {} (scope {}{})\n",
      r.run.top, r.sta_version, r.run.netlist, r.run.clock_period_ps, r.run.sdc, r.activity_text(), r.activity_scope, r.activity_window.empty() ? "" : ", while " + r.activity_window);
  if (const std::string check = r.sample_check_text(); !check.empty()) s += check + "\n";
  s += fmt::format("annotated: flip-flops {} of {}, input bits {}, SRAM read-data bits {} of {}; the rest propagated by "
                   "OpenSTA{}; {} cells without activity\n",
                   p.flops_annotated, p.flops, p.inputs_annotated, p.macro_bits_annotated, p.macro_bits,
                   r.run.clock_stopped ? "; clock stopped" : "", p.idle_cells);
  if (p.clock_gates > 0)
    s += fmt::format("clock gating: {} flip-flops on the clocks of {} gate cells, clocked in the cycles their latches "
                     "held 1\n",
                     p.gated_flops, p.clock_gates);
  if (!p.untraced_gates.empty())
    s += fmt::format("clock gating: {} gate cells whose latch the trace lacks, priced at the full clock (first: {})\n",
                     p.untraced_gates.size(), p.untraced_gates.front());
  if (r.run.gate_level)
    s += fmt::format("gate-level: outputs of gates annotated from the trace {} of {}; nothing propagated\n",
                     p.logic_pins_annotated, p.logic_pins);
  if (!p.sram.macros.empty())
    s += fmt::format("SRAM access: {} macros, enable and mask bits {} of {} in the activity, energy per access from CACTI 7.0 "
                     "(22 nm, scaled to 0.7 V){}\n",
                     p.sram.macros.size(), p.sram.nets_found, p.sram.nets,
                     p.sram.outside ? fmt::format("; {} macros beyond its table (nearest point)", p.sram.outside) : "");
  s += fmt::format("\n{:<28} {:>8} {:>7} {:>11} {:>11} {:>11} {:>11} {:>11} {:>6}\n", "block", "cells", "flops",
                   "internal mW", "switch mW", "leak mW", "SRAM acc mW", "total mW", "%");
  auto row = [&](const std::string& name, long long cells, long long flops, const Breakdown& b, double access_w) {
    const double t = b.total_w() + access_w;
    return fmt::format("{:<28} {:>8} {:>7} {:>11.4f} {:>11.4f} {:>11.5f} {:>11.4f} {:>11.4f} {:>6.1f}\n", name, cells, flops,
                       b.internal_w * 1e3, b.switching_w * 1e3, b.leakage_w * 1e3, access_w * 1e3, t * 1e3,
                       total > 0 ? 100 * t / total : 0.0);
  };
  for (const BlockPower& b : p.blocks) s += row(b.block, b.cells, b.flops, b.power, p.sram_access_w(b.block, r.run.block_depth, seconds));
  s += row("total", p.cells, p.flops, p.total, sram_w);
  s += "(internal, switching, leakage: OpenSTA; SRAM access: CACTI per access x the run's accesses)\n";
  if (r.work) {
    const RunWork& w = *r.work;
    const Energy e = energy_of(r);
    s += fmt::format("\nenergy of the run ({}; {}){}: {:.4g} uJ over {} cycles (the run: {} computing, {} host transfers), "
                     "{} MACs: {:.3f} pJ/MAC, {:.3f} TOPS/W, EDP {:.4g} J s\n",
                     fmt::join(w.layers, ", "), fmt::join(w.phases, ","),
                     r.activity_window.empty() ? "" : " while " + r.activity_window, e.joules * 1e6, e.cycles,
                     w.compute_cycles, w.host_cycles, w.macs, e.pj_per_mac, e.tops_per_w, e.edp_js);
    s += fmt::format("  core {:.4g} uJ (logic and SRAM leakage), SRAM access {:.4g} uJ, ", e.core_j * 1e6, e.sram_j * 1e6);
    s += e.dram_included
             ? fmt::format("DRAM {:.4g} uJ ({} B read at {:.1f} pJ/B, {} B written at {:.1f} pJ/B: {})\n", e.dram_j * 1e6,
                           w.dram_bytes_read, r.dram.read_pj_per_byte, w.dram_bytes_written, r.dram.write_pj_per_byte,
                           r.dram.part)
             : std::string("DRAM not included (a window's share of the run's DRAM traffic is not known)\n");
  }
  return s;
}

namespace {

nlohmann::json energy_json(const PowerReport& r) {
  if (!r.work) return nullptr;
  const Energy e = energy_of(r);
  const RunWork& w = *r.work;
  nlohmann::json dram = nullptr;
  if (e.dram_included)
    dram = {{"joules", e.dram_j},
            {"bytes_read", w.dram_bytes_read},
            {"bytes_written", w.dram_bytes_written},
            {"model", r.dram.part},
            {"read_pj_per_byte", r.dram.read_pj_per_byte},
            {"write_pj_per_byte", r.dram.write_pj_per_byte},
            {"read_io_pj_per_byte", r.dram.read_io_pj_per_byte},
            {"write_io_pj_per_byte", r.dram.write_io_pj_per_byte},
            {"activate_pj_per_byte", r.dram.activate_pj_per_byte}};
  return {{"run", w.source},         {"layers", w.layers},       {"phases", w.phases},
          {"macs", w.macs},          {"cycles", e.cycles}, {"compute_cycles", w.compute_cycles},
          {"host_cycles", w.host_cycles}, {"seconds", e.seconds},  {"core_joules", e.core_j},
          {"sram_access_joules", e.sram_j}, {"dram", dram},      {"joules", e.joules},
          {"pj_per_mac", e.pj_per_mac}, {"tops_per_w", e.tops_per_w}, {"edp_js", e.edp_js},
          {"includes", e.dram_included ? "core logic and SRAM leakage (OpenSTA), SRAM access (CACTI), DRAM (LPDDR4 model)"
                                       : "core logic and SRAM leakage (OpenSTA), SRAM access (CACTI); not DRAM (a window)"}};
}

// The activity's sample with the check of it (sample_check_text); null for a whole trace.
nlohmann::json sample_json(const PowerReport& r) {
  if (!r.sample.sampled()) return nullptr;
  nlohmann::json j = to_json(r.sample);
  j["traced_busy_fraction"] = r.traced_busy;
  j["run_busy_fraction"] = r.work && r.work->busy_cycles >= 0
                               ? static_cast<double>(r.work->busy_cycles) / static_cast<double>(r.work->sim_cycles)
                               : -1.0;
  return j;
}

nlohmann::json sram_json(const PowerReport& r) {
  const SramAccesses& a = r.result.sram;
  nlohmann::json macros = nlohmann::json::array();
  for (const MacroAccesses& m : a.macros)
    macros.push_back({{"instance", m.instance}, {"cell", m.cell}, {"reads", m.reads}, {"bits_written", m.bits_written},
                      {"read_pj", m.energy.read_pj}, {"write_pj", m.energy.write_pj}, {"basis", m.energy.basis},
                      {"outside_table", m.energy.outside}, {"nets", m.nets}, {"nets_found", m.nets_found},
                      {"joules", m.joules}});
  const SramEnergyModel model;
  return {{"model", fmt::format("CACTI 7.0, 22 nm ITRS-HP, per access, x ({} V / {} V)^2", model.supply_v, model.cacti_supply_v)},
          {"joules", a.joules},
          {"watts", r.sram_access_w()},
          {"nets", a.nets},
          {"nets_found", a.nets_found},
          {"macros_outside_table", a.outside},
          {"macros", macros}};
}

}  // namespace

nlohmann::json to_json(const PowerReport& r) {
  auto bd = [](const Breakdown& b) {
    return nlohmann::json{{"internal_w", b.internal_w}, {"switching_w", b.switching_w}, {"leakage_w", b.leakage_w},
                          {"total_w", b.total_w()}};
  };
  nlohmann::json blocks = nlohmann::json::array();
  for (const BlockPower& b : r.result.blocks)
    blocks.push_back({{"block", b.block}, {"cells", b.cells}, {"flops", b.flops}, {"power", bd(b.power)},
                      {"sram_access_w", r.result.sram_access_w(b.block, r.run.block_depth, r.seconds())}});
  return {{"tool", r.sta_version},
          {"corner", "ASAP7 RVT TT, 0.7 V, 25 C (NLDM)"},
          {"top", r.run.top},
          {"netlist", r.run.netlist},
          {"sdc", r.run.sdc},
          {"clock_period_ps", r.run.clock_period_ps},
          {"clock_stopped", r.run.clock_stopped},
          {"activity", {{"source", r.activity_source}, {"scope", r.activity_scope}, {"window", r.activity_window},
                        {"cycles", r.activity_cycles},
                        {"sample", sample_json(r)}}},
          {"flops", r.result.flops},
          {"flops_annotated", r.result.flops_annotated},
          {"inputs_annotated", r.result.inputs_annotated},
          {"unmatched_flops", r.result.unmatched},
          {"sram_read_bits", r.result.macro_bits},
          {"sram_read_bits_annotated", r.result.macro_bits_annotated},
          {"idle_cells", r.result.idle_cells},
          {"gated_flops", r.result.gated_flops},
          {"clock_gates", r.result.clock_gates},
          {"untraced_clock_gates", r.result.untraced_gates},
          {"gate_level", r.run.gate_level},
          {"gate_outputs", r.result.logic_pins},
          {"gate_outputs_annotated", r.result.logic_pins_annotated},
          {"blocks", blocks},
          {"total", bd(r.result.total)},
          {"sram_access", sram_json(r)},
          {"total_with_sram_access_w", r.result.total.total_w() + r.sram_access_w()},
          {"energy", energy_json(r)}};
}

}  // namespace fetta::flows::power
