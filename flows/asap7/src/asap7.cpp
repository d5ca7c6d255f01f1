#include "flows/asap7.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "flows/sram_macro.hpp"
#include "flows/synth_tools.hpp"
#include "flows/yosys_output.hpp"

namespace fetta::flows::synth {

namespace fs = std::filesystem;

namespace {

// The RVT TT libraries, by the prefix of their file names (the date suffix varies by release).
constexpr const char* kCombPrefixes[] = {"asap7sc7p5t_INVBUF_RVT_TT_", "asap7sc7p5t_SIMPLE_RVT_TT_",
                                         "asap7sc7p5t_AO_RVT_TT_", "asap7sc7p5t_OA_RVT_TT_"};
constexpr const char* kSeqPrefix = "asap7sc7p5t_SEQ_RVT_TT_";

std::string find_library(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0 && (n.ends_with(".lib.gz") || n.ends_with(".lib"))) found.push_back(e.path().string());
  }
  if (found.empty())
    throw std::runtime_error(fmt::format("ASAP7 library {}*.lib.gz not found in {} (see its README.md; --pdk DIR "
                                         "or $FETTA_ASAP7_DIR point elsewhere)",
                                         prefix, dir));
  std::sort(found.begin(), found.end());
  return found.back();  // the newest release when several are present
}

std::string load_library(const std::string& path) { return path.ends_with(".gz") ? gunzip_file(path) : read_text(path); }

// FNV-1a: a stable content key for the cache file names.
uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// Writes `text` to `path` through a temporary file and a rename, so that a concurrent reader
// never sees half a file. The temporary's name is unique per process and call: `fetta sweep
// --jobs N` synthesizes points on N threads of one process, which may all find the cache empty
// (with the pid alone, one thread's rename took the file another was still renaming).
void write_atomically(const std::string& path, const std::string& text) {
  static std::atomic<uint64_t> calls{0};
  std::string tmp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), calls++);
  write_text(tmp, text);
  fs::rename(tmp, path);
}

}  // namespace

Asap7Libraries prepare_asap7_libraries(const std::string& pdk_dir, const std::string& cache_dir) {
  if (!fs::is_directory(pdk_dir))
    throw std::runtime_error(fmt::format("ASAP7 PDK directory '{}' not found (pass --pdk DIR or set $FETTA_ASAP7_DIR)", pdk_dir));
  Asap7Libraries libs;
  libs.pdk_dir = fs::absolute(pdk_dir).lexically_normal().string();
  std::vector<std::string> comb_files;
  for (const char* p : kCombPrefixes) comb_files.push_back(find_library(libs.pdk_dir, p));
  std::string seq_file = find_library(libs.pdk_dir, kSeqPrefix);
  libs.sources = comb_files;
  libs.sources.push_back(seq_file);

  uint64_t key = fnv1a("fetta-asap7-merge-v1");
  for (const std::string& f : libs.sources) key = fnv1a(fs::path(f).filename().string() + read_text(f), key);
  std::string tag = fmt::format("{:016x}", key).substr(0, 12);
  fs::create_directories(cache_dir);
  std::string cache = fs::absolute(cache_dir).lexically_normal().string();
  libs.comb_lib = fmt::format("{}/asap7_rvt_tt_comb_{}.lib", cache, tag);
  libs.seq_lib = fmt::format("{}/asap7_rvt_tt_seq_{}.lib", cache, tag);

  if (!fs::exists(libs.comb_lib)) {
    std::vector<std::string> texts;
    for (const std::string& f : comb_files) texts.push_back(load_library(f));
    write_atomically(libs.comb_lib, merge_liberty(texts, "fetta_asap7sc7p5t_RVT_TT_comb"));
  }
  std::string seq_text;
  if (fs::exists(libs.seq_lib)) {
    seq_text = read_text(libs.seq_lib);
  } else {
    seq_text = load_library(seq_file);
    write_atomically(libs.seq_lib, seq_text);
  }
  libs.seq = parse_liberty(seq_text, libs.seq_lib);
  add_cells(libs.cells, libs.seq);
  add_cells(libs.cells, parse_liberty(read_text(libs.comb_lib), libs.comb_lib));
  for (const LibertyGroup* c : libs.seq.children("cell"))
    if (!c->children("ff").empty()) libs.seq_cells.push_back(c->args);  // flip-flops (not latches, clock gates)
  return libs;
}

std::string asap7_abc_script() {
  // Yosys hands ABC the combinational logic between flops and ports (no -dff). A delay-oriented
  // script in the manner of the OpenROAD flow scripts' ASAP7 "speed" script: three rounds of
  // structural choices (&dch) or SOP balancing (&if -g, &synch2) each mapped by &nf against the
  // clock period {D}, then buffering and gate sizing for the constraint file's drivers and loads,
  // then `stime -p`, whose "Delay =" the flow reads. On the bf16 MAC and its fp32 adder this gives an
  // 18-27 % shorter path than Yosys' default area script for 10-15 % more area (docs/synthesis.md).
  return "&get -n\n&st\n&dch\n&nf {D}\n&put\n"
         "&get -n\n&st\n&syn2\n&if -g\n&st\n&synch2\n&nf {D}\n&put\n"
         "&get -n\n&st\n&dch\n&nf {D}\n&put\n"
         "buffer -p\nupsize {D}\ndnsize {D}\n"
         "stime -p\n";
}

std::string asap7_clock_gate_verilog() {
  return fmt::format(
      "// fetta synth --target asap7: rtl_gen's clock gate as the library's integrated clock gate.\n"
      "(* blackbox *)\nmodule {0} (input CLK, input ENA, input SE, output GCLK);\nendmodule\n\n"
      "module fetta_clock_gate (input clk, input en, input test_en, output gclk);\n"
      "  {0} icg (.CLK(clk), .ENA(en), .SE(test_en), .GCLK(gclk));\nendmodule\n",
      kAsap7ClockGateCell);
}

std::string asap7_coarse_script(const DesignDir& design, const std::string& module, Hierarchy hierarchy,
                                const std::string& work_dir) {
  const bool flat = hierarchy == Hierarchy::flatten;
  std::string s;
  s += fmt::format("# fetta synth --target asap7: module {} out of context, {}; generic part\n", module,
                   flat ? "flattened" : "each submodule mapped once, flattened after mapping");
  std::vector<std::string> files;  // the clock gate's model replaced by the library's cell
  const DesignModule* gate = design.find("fetta_clock_gate");
  for (const std::string& f : design.files)
    if (!gate || fs::path(f).filename() != gate->file) files.push_back(f);
  if (gate) {
    write_text(work_dir + "/clock_gate_asap7.v", asap7_clock_gate_verilog());
    files.push_back(work_dir + "/clock_gate_asap7.v");
  }
  s += fmt::format("read_verilog -sv {}\n", fmt::join(files, " "));
  // Generic synthesis up to the fine stage: memories stay $mem_v2 cells (memory -nomap), which
  // become SRAM macros (or flip-flops) in the map script.
  s += fmt::format("synth -top {}{} -run begin:fine\n", module, flat ? " -flatten" : "");
  // The undefined branch `proc` leaves in front of a write port's address and data (written only
  // when enabled) goes, so that a write port's address is the RTL's signal: a read and a write
  // port on one address signal are then recognisably one read/write port.
  s += "opt_expr -mux_undef\nopt_clean\n";
  s += fmt::format("tee -q -o {}/memories.txt dump t:$mem_v2 t:$mem\n", work_dir);
  s += fmt::format("write_rtlil {}/coarse.il\n", work_dir);
  // The address probe, on what is left of the design (the checkpoint is written): which read and
  // write ports of each memory share their address drivers (docs/synthesis.md).
  s += fmt::format("techmap -map {}/sram_probe.v t:$mem_v2\n", work_dir);
  s += fmt::format("tee -q -o {}/memory_addresses.txt dump t:fetta_mem_probe\n", work_dir);
  return s;
}

std::string asap7_map_script(const std::string& module, const Asap7Libraries& libs, double period_ps,
                             Hierarchy hierarchy, const std::string& checkpoint, const std::string& sram_dir,
                             const std::string& work_dir) {
  const bool flat = hierarchy == Hierarchy::flatten;
  std::string s;
  s += fmt::format("# fetta synth --target asap7: module {}, mapped for a clock of {:.3f} ps\n", module, period_ps);
  s += fmt::format("read_rtlil {}\n", checkpoint);
  if (!sram_dir.empty()) {
    s += fmt::format("read_verilog -lib {}/sram_stubs.v\n", sram_dir);
    s += fmt::format("techmap -map {}/sram_map.v t:$mem_v2\n", sram_dir);
  }
  s += "memory_map\n";  // what no macro can take: flip-flops and multiplexers
  s += "opt -fast -full\ntechmap\nopt -fast\n";
  // ASAP7 has plain D flip-flops only: sync resets and enables become logic in front of them.
  s += "dfflegalize -cell $_DFF_P_ x -cell $_DFF_N_ x -cell $_DFFSR_PNN_ x\n";
  // Flip-flops named after the register they hold (`psum[3]_reg`), so that timing paths and
  // activity annotation read in RTL names.
  s += "rename -wire -suffix _reg t:$_DFF_*\n";
  s += fmt::format("dfflibmap -liberty {}\n", libs.seq_lib);
  s += "opt_clean\n";
  s += fmt::format("abc -D {:.3f} -constr {}/abc.constr -script {}/abc.script -liberty {}\n", period_ps, work_dir,
                   work_dir, libs.comb_lib);
  s += "opt_clean\n";
  s += "hilomap -singleton -hicell TIEHIx1_ASAP7_75t_R H -locell TIELOx1_ASAP7_75t_R L\n";
  s += "opt_clean -purge\n";
  // Kept hierarchy: the mapped modules are instantiated into one netlist, so the figures below
  // count every instance and OpenSTA times paths across module ports (nothing is re-mapped).
  if (!flat) s += "design -save fetta_hierarchical\nflatten\n";
  // One wire per bit, so that the aliases multi-bit wires leave behind merge away, then a buffer
  // where a port is still another net's alias (a constant or a copied output): the netlist has
  // no `assign`, which OpenSTA's Verilog reader does not take in concatenated form.
  const std::string clean = fmt::format("splitnets\nopt_clean -purge\ninsbuf -buf {} A Y\nopt_clean -purge\n", kAsap7DriverCell);
  s += clean;
  s += fmt::format("tee -q -o {}/macros.txt dump t:fetta_sram_*\n", work_dir);
  s += fmt::format("tee -q -o {}/stat.txt stat -liberty {} -liberty {}\n", work_dir, libs.comb_lib, libs.seq_lib);
  s += fmt::format("write_verilog -noattr {}/mapped.v\n", work_dir);
  // The same mapping before flattening, for power per block: flattening renames every mapped
  // cell but the flip-flops (`_123_`), so only this netlist says which block a gate belongs to.
  if (!flat) s += "design -load fetta_hierarchical\n" + clean + fmt::format("write_verilog -noattr {}/hierarchical.v\n", work_dir);
  return s;
}

sta::Constraints asap7_constraints(const Asap7Libraries& libs, const std::string& flop_cell, double period_ps,
                                   bool has_clock) {
  FlopTiming ft = flop_timing(libs.seq, flop_cell, kAsap7FlopSlewPs, kAsap7FlopLoadFf);
  sta::Constraints c;
  c.clock_port = has_clock ? "clk" : "";
  c.period_ps = period_ps;
  c.input_delay_ps = ft.clk_to_q_ps;
  c.output_delay_ps = ft.setup_ps;
  c.driving_cell = kAsap7DriverCell;
  c.load_ff = kAsap7OutputLoadFf;
  return c;
}

namespace {

// Whether module `top` of a gate-level netlist has an input port named clk.
bool netlist_has_clock(const std::string& netlist, const std::string& top) {
  size_t m = netlist.find("module " + top + "(");
  if (m == std::string::npos) m = netlist.find("module " + top + " (");
  if (m == std::string::npos) return false;
  size_t e = netlist.find("endmodule", m);
  std::string body = netlist.substr(m, e == std::string::npos ? std::string::npos : e - m);
  return body.find("input clk;") != std::string::npos;
}

struct Mapping {
  double period_ps = 0;  // the clock ABC mapped for
  Asap7Metrics metrics;
  std::map<std::string, long long> cells_by_type;
  std::string log;
  std::string dir;
};

// One mapping of the checkpoint at `period_ps` into `dir`, measured and timed.
Mapping map_and_time(const DesignDir& design, const DesignModule& module, const Asap7Libraries& libs,
                     const Asap7Run& run, const std::vector<MemoryMacro>& macros_by_shape, const std::string& sram_dir,
                     const std::string& checkpoint, double period_ps, const std::string& dir,
                     std::vector<std::string>* commands) {
  (void)design;
  fs::create_directories(dir);
  write_text(dir + "/abc.script", asap7_abc_script());
  write_text(dir + "/abc.constr", fmt::format("set_driving_cell {}\nset_load {}\n", kAsap7DriverCell, kAsap7OutputLoadFf));
  write_text(dir + "/synth.ys", asap7_map_script(module.name, libs, period_ps, run.hierarchy, checkpoint, sram_dir, dir));
  run_checked(fmt::format("Yosys (asap7, module {})", module.name), "yosys -q -l yosys.log -s synth.ys", dir, commands);

  Mapping out;
  out.period_ps = period_ps;
  out.dir = dir;
  out.log = read_text(dir + "/yosys.log");
  Asap7Metrics& a = out.metrics;
  StatResult stat = parse_stat(read_text(dir + "/stat.txt"));
  std::set<std::string> flops(libs.seq_cells.begin(), libs.seq_cells.end());
  for (const auto& [type, n] : stat.cells) {
    if (type.rfind("fetta_sram_", 0) == 0) continue;  // the macros
    if (type.rfind("$", 0) == 0)
      throw std::runtime_error(fmt::format("module {}: {} cells of Yosys type {} were left unmapped", module.name, n, type));
    out.cells_by_type[type] = n;
    a.cells += n;
    if (flops.count(type)) a.flops += n;
    if (type == kAsap7ClockGateCell) a.clock_gates += n;
  }
  for (const std::string& u : stat.unknown_area)
    if (u.rfind("fetta_sram_", 0) != 0)
      throw std::runtime_error(fmt::format("module {}: cell type {} has no area in the ASAP7 libraries", module.name, u));
  a.logic_area_um2 = stat.chip_area.value_or(0.0);
  std::map<std::string, MemoryMacro> shape;
  for (const MemoryMacro& m : macros_by_shape) shape[m.cell] = m;
  for (const auto& [cell, name] : parse_macro_instances(read_text(dir + "/macros.txt"))) {
    auto it = shape.find(cell);
    if (it == shape.end()) throw std::runtime_error(fmt::format("module {}: unknown macro cell {}", module.name, cell));
    MemoryMacro m = it->second;
    m.name = name;
    a.sram_area_um2 += m.area_um2;
    a.memories.push_back(m);
  }
  a.area_um2 = a.logic_area_um2 + a.sram_area_um2;

  std::optional<double> logic = parse_abc_delay_ps(out.log);
  a.abc_logic_delay_ps = logic.value_or(0.0);
  a.flop_cell = parse_dfflibmap_cell(out.log);
  if (a.flop_cell.empty()) a.flop_cell = "DFFHQNx1_ASAP7_75t_R";
  FlopTiming ft = flop_timing(libs.seq, a.flop_cell, kAsap7FlopSlewPs, kAsap7FlopLoadFf);
  a.flop_overhead_ps = ft.clk_to_q_ps + ft.setup_ps;
  a.abc_delay_ps = a.abc_logic_delay_ps + a.flop_overhead_ps;
  a.abc_slack_ps = period_ps - a.abc_delay_ps;

  // Fanout repair (docs/synthesis.md): buffer trees on the nets no single cell can drive, then
  // sign-off timing of the repaired netlist, macros included.
  const std::string netlist = dir + "/netlist.v";
  CellLibrary cells = libs.cells;
  if (!sram_dir.empty()) add_cells(cells, parse_liberty(read_text(sram_dir + "/sram.lib"), sram_dir + "/sram.lib"));
  FanoutRepairStats fr = repair_fanout(dir + "/mapped.v", netlist, module.name, "clk", cells, run.fanout);
  a.fanout_buffers = fr.buffers;
  a.fanout_nets = fr.nets_repaired;
  a.worst_fanout = fr.worst_fanout;
  a.worst_fanout_net = fr.worst_net;
  a.cells += fr.buffers;
  a.logic_area_um2 += fr.buffer_area_um2;
  a.area_um2 += fr.buffer_area_um2;
  if (fr.buffers > 0) out.cells_by_type[run.fanout.buffer_cell] += fr.buffers;
  sta::Constraints c = asap7_constraints(libs, a.flop_cell, 1e6 / run.clock_mhz, netlist_has_clock(read_text(netlist), module.name));
  write_text(dir + "/constraints.sdc", sta::write_sdc(c));
  sta::Run sr;
  sr.liberty = {libs.comb_lib, libs.seq_lib};
  if (!sram_dir.empty()) sr.liberty.push_back(sram_dir + "/sram.lib");
  sr.netlist = netlist;
  sr.top = module.name;
  sr.sdc = dir + "/constraints.sdc";
  sr.work_dir = dir;
  a.sta = sta::run_sta(sr, c.period_ps, commands);
  a.sta_constraints = sr.sdc;
  return out;
}

}  // namespace

ModuleResult synth_asap7_module(const DesignDir& design, const DesignModule& module, const Asap7Libraries& libs,
                                const Asap7Run& run, const std::string& work_dir, std::vector<std::string>* commands) {
  fs::create_directories(work_dir);
  const double period_ps = 1e6 / run.clock_mhz;
  write_text(work_dir + "/coarse.ys", asap7_coarse_script(design, module.name, run.hierarchy, work_dir));
  write_text(work_dir + "/sram_probe.v", address_probe_techmap());
  run_checked(fmt::format("Yosys (asap7, module {}, generic synthesis)", module.name),
              "yosys -q -l coarse.log -s coarse.ys", work_dir, commands);
  const std::string coarse_log = read_text(work_dir + "/coarse.log");

  // The memories, and a macro for every shape one can take.
  std::vector<MemoryMacro> found = parse_memory_dump(read_text(work_dir + "/memories.txt"));
  apply_address_probe(read_text(work_dir + "/memory_addresses.txt"), found);
  MacroLibrary lib = make_macro_library(found, run.sram);
  std::string sram_dir;
  if (!lib.cells.empty()) {
    sram_dir = work_dir + "/sram";
    fs::create_directories(sram_dir);
    write_text(sram_dir + "/sram.lib", lib.liberty);
    write_text(sram_dir + "/sram_stubs.v", lib.verilog_stubs);
    write_text(sram_dir + "/sram_map.v", lib.techmap);
  }
  const std::string checkpoint = work_dir + "/coarse.il";

  Mapping best = map_and_time(design, module, libs, run, lib.cells, sram_dir, checkpoint, period_ps, work_dir, commands);
  std::vector<std::pair<double, double>> tries{{period_ps, best.metrics.sta->min_period_ps().value_or(0)}};
  if (run.fmax && best.metrics.sta->min_period_ps()) {
    // Resynthesize for the period the last netlist needs: ABC maps differently for a looser or
    // tighter target. Stop when it no longer shortens the period by 1 %.
    double target = *best.metrics.sta->min_period_ps();
    for (int i = 1; i < run.fmax_runs; ++i) {
      target = std::max(1.0, std::round(target));
      Mapping m = map_and_time(design, module, libs, run, lib.cells, sram_dir, checkpoint, target,
                               fmt::format("{}/fmax_{}", work_dir, i), commands);
      std::optional<double> p = m.metrics.sta->min_period_ps();
      tries.emplace_back(target, p.value_or(0));
      if (!p) break;
      bool better = *p < 0.99 * *best.metrics.sta->min_period_ps();
      if (*p < *best.metrics.sta->min_period_ps()) best = std::move(m);
      if (!better) break;
      target = *p;
    }
  }

  ModuleResult r = module_result_for(design, module, work_dir);
  r.cells_by_type = best.cells_by_type;
  Asap7Metrics a = best.metrics;
  a.mapped_period_ps = best.period_ps;
  if (run.fmax)
    for (const auto& [t, p] : tries) a.fmax_search.push_back({t, p});
  for (const MemoryMacro& f : found)
    if (std::string why = macro_obstacle(f); !why.empty()) {
      a.memories_in_flops.push_back(f);
      r.notes.push_back(fmt::format("memory {} ({} x {} bits) built from flip-flops: {}", f.name, f.depth, f.width, why));
    }

  Warnings w = split_warnings(coarse_log + best.log);
  r.warnings = w.kept;
  if (!best.log.empty() && !parse_abc_delay_ps(best.log))
    r.notes.push_back("no combinational logic: ABC did not run, its delay estimate is the flip-flop overhead alone");
  if (run.hierarchy == Hierarchy::keep)
    r.notes.push_back("hierarchy kept: each submodule mapped once out of context, then flattened; OpenSTA times the "
                      "flattened netlist, paths through module ports included");
  if (!a.memories.empty())
    r.notes.push_back(fmt::format("{} memor{} mapped to SRAM macros (area from the SRAM model; timing and leakage "
                                  "FakeRAM-style, {}/sram.lib)",
                                  a.memories.size(), a.memories.size() == 1 ? "y" : "ies", sram_dir));
  if (run.fmax && best.period_ps != period_ps)
    r.notes.push_back(fmt::format("--fmax: the figures are of the netlist mapped for {:.0f} ps, the fastest found",
                                  best.period_ps));
  if (w.scan_flop_skipped > 0)
    r.notes.push_back(fmt::format("{} Yosys warnings about scan flip-flops (SDF*) filtered: their next_state "
                                  "expressions are skipped and those cells are never used",
                                  w.scan_flop_skipped));
  r.asap7 = a;
  return r;
}

}  // namespace fetta::flows::synth
