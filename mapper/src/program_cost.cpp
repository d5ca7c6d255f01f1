// The program's costs known before it runs (mapper/program.hpp): its contractions and compute
// cycles, the DRAM traffic of each step, and the end-to-end bound.
#include "mapper/program.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "arch/config.hpp"
#include "arch/dma.hpp"

namespace fetta::mapper {

ProgramCost program_cost(const Program& p) {
  ProgramCost cost;
  int64_t operand_bytes = 0;
  std::set<std::pair<int, std::string>> inputs;  // a layer input has a tensor per view; count it once
  for (const ProgramTensor& t : p.tensors) {
    if (t.kind != ProgramTensor::Kind::input) continue;
    operand_bytes = t.dram_bytes;
    if (inputs.insert({t.layer, t.input}).second) cost.least_dram_bytes += t.numel() * t.dram_bytes;
  }
  for (const ProgramLayer& l : p.layers) cost.repeats += l.repeats;
  for (const ProgramStep& s : p.steps) {
    ++cost.contractions;
    cost.compute_cycles += s.predicted;
    cost.macs += s.macs;
    if (s.step + 1 == s.steps && s.term + 1 == s.terms) cost.least_dram_bytes += s.m * s.n * operand_bytes;
  }
  return cost;
}

std::vector<StepTraffic> program_traffic(const Program& p, const arch::ArchConfig& cfg) {
  std::vector<StepTraffic> t(p.steps.size());
  const int64_t H = arch::host_port_lanes(cfg), operand = arch::operand_bits(cfg.dtype) / 8;
  const arch::DmaLayout dma(arch::dma_geometry(cfg));
  const auto bytes_of = [&](int32_t id) {
    const ProgramTensor& pt = p.tensors.at(static_cast<size_t>(id));
    return pt.numel() * pt.dram_bytes;
  };
  for (const Op& o : p.ops) {
    if (o.report < 0) continue;
    StepTraffic& s = t.at(static_cast<size_t>(o.report));
    switch (o.code) {
      case OpCode::fetch: s.read += bytes_of(o.tensor); break;
      case OpCode::store: s.written += bytes_of(o.tensor); break;
      case OpCode::preload_image:  // whole beats per row; a gathers' pad beat is their traffic (Account::none)
        if (o.account != Account::none) s.read += o.b * ((o.c + H - 1) / H * H) * operand;
        break;
      case OpCode::dma: {
        const arch::Words w(p.words.begin() + o.a, p.words.begin() + o.a + o.b);
        if (arch::decode_dma(dma, w).to_dram)  // a save: the pushing step's writes, read back or not
          s.written += arch::dma_bytes(dma, w);
        else if (o.tensor >= 0)  // a gather: a DRAM burst per beat
          s.read += arch::dma_bytes(dma, w);
        break;
      }
      case OpCode::read_saved:
        if (o.host_counted) s.read += o.b * o.c * operand;
        break;
      default: break;
    }
  }
  return t;
}

int64_t end_to_end_bound(const ProgramCost& c, const arch::ArchConfig& cfg) {
  const double bytes_per_cycle = arch::dram_bytes_per_cycle(cfg);
  return std::max(c.compute_cycles, static_cast<int64_t>(std::ceil(static_cast<double>(c.least_dram_bytes) / bytes_per_cycle)));
}

IntermediateFates intermediate_fates(const Program& p) {
  IntermediateFates f;
  for (const ProgramStep& s : p.steps) {
    if (s.fate == Fate::result) continue;
    ++f.intermediates;
    ++f.count[static_cast<size_t>(s.fate)];
    f.pretiled += s.pretiled();
  }
  return f;
}

std::string fates_text(const IntermediateFates& f) {
  std::string text = fmt::format("intermediates: {} of {} stay on chip", f.of(Fate::on_chip), f.intermediates);
  std::string leave;
  for (int i = 0; i < kFates; ++i) {
    const auto fate = static_cast<Fate>(i);
    if (fate == Fate::result || fate == Fate::on_chip || f.of(fate) == 0) continue;
    leave += fmt::format("{}{} {}", leave.empty() ? "" : ", ", f.of(fate), describe(fate));
  }
  if (leave.empty()) return text;
  text += "; the others leave through DRAM: " + leave;
  return f.pretiled == 0 ? text : text + fmt::format(" ({} of them saved in their reader's layout)", f.pretiled);
}

}  // namespace fetta::mapper
