#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "flows/fpga.hpp"
#include "flows/synth_tools.hpp"
#include "flows/yosys_output.hpp"

namespace fetta::flows::synth {

namespace fs = std::filesystem;

namespace {
// The families Yosys 0.23's synth_xilinx accepts.
const std::vector<std::string> kFamilies{"xcup", "xcu", "xc7", "xc6v", "xc5v", "xc4v", "xc6s", "xc3sda",
                                         "xc3sa", "xc3se", "xc3s", "xc2vp", "xc2v", "xcve", "xcv"};

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
}  // namespace

void check_xilinx_family(const std::string& family) {
  if (std::find(kFamilies.begin(), kFamilies.end(), family) == kFamilies.end())
    throw std::invalid_argument(fmt::format("--device: unknown Xilinx family '{}'; allowed: {} (xcup = UltraScale+, "
                                            "the Alveo U50's)",
                                            family, fmt::join(kFamilies, ", ")));
}

XilinxMetrics xilinx_metrics(const std::map<std::string, long long>& cells) {
  XilinxMetrics x;
  for (const auto& [type, n] : cells) {
    if (starts(type, "LUT") && type.size() == 4) x.luts += n;  // LUT1..LUT6
    else if (starts(type, "RAMB36")) x.ramb36 += n;
    else if (starts(type, "RAMB18")) x.ramb18 += n;
    else if (starts(type, "RAM")) x.lutram_cells += n;  // RAM32M, RAM64X1D, RAM32M16, ...
    else if (starts(type, "SRL")) x.srls += n;
    else if (starts(type, "FD")) x.ffs += n;
    else if (starts(type, "DSP")) x.dsps += n;
    else if (starts(type, "CARRY")) x.carries += n;
  }
  x.brams = static_cast<double>(x.ramb36) + 0.5 * static_cast<double>(x.ramb18);
  return x;
}

ModuleResult synth_xilinx_module(const DesignDir& design, const DesignModule& module, const std::string& family,
                                 const std::string& work_dir, std::vector<std::string>* commands) {
  fs::create_directories(work_dir);
  std::string s;
  s += fmt::format("# fetta synth --target xilinx: module {} out of context ({}), flattened, no I/O buffers\n",
                   module.name, family);
  s += fmt::format("read_verilog -sv {}\n", fmt::join(design.files, " "));
  s += fmt::format("synth_xilinx -family {} -top {} -flatten -noiopad -noclkbuf\n", family, module.name);
  s += fmt::format("tee -q -o {}/stat.txt stat\n", work_dir);
  s += fmt::format("write_verilog -noattr {}/netlist.v\n", work_dir);
  write_text(work_dir + "/synth.ys", s);
  run_checked(fmt::format("Yosys (xilinx, module {})", module.name), "yosys -q -l yosys.log -s synth.ys", work_dir,
              commands);

  ModuleResult r = module_result_for(design, module, work_dir);
  StatResult stat = parse_stat(read_text(work_dir + "/stat.txt"));
  r.cells_by_type = stat.cells;
  for (const auto& [type, n] : stat.cells)
    if (starts(type, "$")) r.notes.push_back(fmt::format("{} cells of Yosys type {} left unmapped", n, type));
  r.xilinx = xilinx_metrics(stat.cells);
  r.warnings = split_warnings(read_text(work_dir + "/yosys.log")).kept;
  return r;
}

}  // namespace fetta::flows::synth
