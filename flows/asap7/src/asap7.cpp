#include "flows/asap7.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <set>
#include <stdexcept>

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

std::string asap7_yosys_script(const DesignDir& design, const std::string& module, const Asap7Libraries& libs,
                               double clock_mhz, Hierarchy hierarchy, const std::string& work_dir) {
  const double period_ps = 1e6 / clock_mhz;
  const bool flat = hierarchy == Hierarchy::flatten;
  std::string s;
  s += fmt::format("# fetta synth --target asap7: module {} out of context, {}, clock {:.3f} ps\n", module,
                   flat ? "flattened" : "each submodule mapped once, flattened after mapping", period_ps);
  s += fmt::format("read_verilog -sv {}\n", fmt::join(design.files, " "));
  // Generic synthesis up to the fine stage: memories stay $mem_v2 cells (memory -nomap), which
  // the flow black-boxes and sizes with the SRAM model instead of building them from flops.
  s += fmt::format("synth -top {}{} -run begin:fine\n", module, flat ? " -flatten" : "");
  s += "opt -fast -full\ntechmap\nopt -fast\n";
  // ASAP7 has plain D flip-flops only: sync resets and enables become logic in front of them.
  s += "dfflegalize -cell $_DFF_P_ x -cell $_DFF_N_ x -cell $_DFFSR_PNN_ x\n";
  s += fmt::format("dfflibmap -liberty {}\n", libs.seq_lib);
  s += "opt_clean\n";
  s += fmt::format("abc -D {:.3f} -constr {}/abc.constr -script {}/abc.script -liberty {}\n", period_ps, work_dir,
                   work_dir, libs.comb_lib);
  s += "opt_clean\n";
  s += "hilomap -singleton -hicell TIEHIx1_ASAP7_75t_R H -locell TIELOx1_ASAP7_75t_R L\n";
  s += "opt_clean -purge\n";
  // Kept hierarchy: the mapped modules are instantiated into one netlist, so the figures below
  // count every instance (the cells are already ASAP7's; flattening maps nothing again).
  if (!flat) s += "flatten\nopt_clean -purge\n";
  // The memories that survived, with their final width, depth and ports.
  s += fmt::format("tee -q -o {}/memories.txt dump t:$mem_v2 t:$mem\n", work_dir);
  s += fmt::format("tee -q -o {}/stat.txt stat -liberty {} -liberty {}\n", work_dir, libs.comb_lib, libs.seq_lib);
  s += fmt::format("write_verilog -noattr {}/netlist.v\n", work_dir);
  return s;
}

ModuleResult synth_asap7_module(const DesignDir& design, const DesignModule& module, const Asap7Libraries& libs,
                                double clock_mhz, const SramModel& sram, Hierarchy hierarchy,
                                const std::string& work_dir, std::vector<std::string>* commands) {
  fs::create_directories(work_dir);
  write_text(work_dir + "/abc.script", asap7_abc_script());
  write_text(work_dir + "/abc.constr",
             fmt::format("set_driving_cell {}\nset_load {}\n", kAsap7DriverCell, kAsap7OutputLoadFf));
  write_text(work_dir + "/synth.ys", asap7_yosys_script(design, module.name, libs, clock_mhz, hierarchy, work_dir));
  run_checked(fmt::format("Yosys (asap7, module {})", module.name), "yosys -q -l yosys.log -s synth.ys", work_dir,
              commands);
  const std::string log = read_text(work_dir + "/yosys.log");

  ModuleResult r = module_result_for(design, module, work_dir);

  StatResult stat = parse_stat(read_text(work_dir + "/stat.txt"));
  Asap7Metrics a;
  a.memories = parse_memory_dump(read_text(work_dir + "/memories.txt"));
  std::set<std::string> flops(libs.seq_cells.begin(), libs.seq_cells.end());
  for (const auto& [type, n] : stat.cells) {
    if (type.rfind("$mem", 0) == 0) continue;  // the black-boxed memories
    if (type.rfind("$", 0) == 0)
      throw std::runtime_error(fmt::format("module {}: {} cells of Yosys type {} were left unmapped", module.name, n, type));
    r.cells_by_type[type] = n;
    a.cells += n;
    if (flops.count(type)) a.flops += n;
  }
  for (const std::string& u : stat.unknown_area)
    if (u.rfind("$mem", 0) != 0)
      throw std::runtime_error(fmt::format("module {}: cell type {} has no area in the ASAP7 libraries", module.name, u));
  a.logic_area_um2 = stat.chip_area.value_or(0.0);
  for (MemoryMacro& m : a.memories) {
    m.area_um2 = sram.area_um2(m.bits(), m.rd_ports, m.wr_ports);
    a.sram_area_um2 += m.area_um2;
  }
  a.area_um2 = a.logic_area_um2 + a.sram_area_um2;

  std::optional<double> logic = parse_abc_delay_ps(log);
  a.logic_delay_ps = logic.value_or(0.0);
  a.flop_cell = parse_dfflibmap_cell(log);
  if (a.flop_cell.empty()) a.flop_cell = "DFFHQNx1_ASAP7_75t_R";
  FlopTiming ft = flop_timing(libs.seq, a.flop_cell, kAsap7FlopSlewPs, kAsap7FlopLoadFf);
  a.flop_overhead_ps = ft.clk_to_q_ps + ft.setup_ps;
  a.delay_ps = a.logic_delay_ps + a.flop_overhead_ps;
  a.slack_ps = 1e6 / clock_mhz - a.delay_ps;

  Warnings w = split_warnings(log);
  r.warnings = w.kept;
  if (!logic) r.notes.push_back("no combinational logic: ABC did not run, delay is the flip-flop overhead alone");
  if (hierarchy == Hierarchy::keep)
    r.notes.push_back("hierarchy kept: each submodule mapped once out of context; delay is the worst submodule's, "
                      "paths through module ports are not timed");
  if (!a.memories.empty())
    r.notes.push_back(fmt::format("{} memor{} black-boxed and sized with the SRAM model; their access time is not "
                                  "in delay_ps",
                                  a.memories.size(), a.memories.size() == 1 ? "y" : "ies"));
  if (w.scan_flop_skipped > 0)
    r.notes.push_back(fmt::format("{} Yosys warnings about scan flip-flops (SDF*) filtered: their next_state "
                                  "expressions are skipped and those cells are never used",
                                  w.scan_flop_skipped));
  r.asap7 = a;
  return r;
}

}  // namespace fetta::flows::synth
