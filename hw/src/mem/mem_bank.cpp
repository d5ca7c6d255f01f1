#include "hw/mem/mem_bank.hpp"

#include <fmt/core.h>

#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

MemBankParams checked(MemBankParams p) {
  mem_check::pow2_in("MemBank", "depth", p.depth, 2, 1 << 24);
  mem_check::pow2_in("MemBank", "elems", p.elems, 1, 64);
  mem_check::in_range("MemBank", "width", p.width, 1, 64);
  return p;
}

}  // namespace

MemBank::MemBank(MemBankParams params) : Generator(checked(params)) {}

std::string MemBank::module_name() const { return fmt::format("mem_bank_d{}_t{}_w{}", p.depth, p.elems, p.width); }

ParamList MemBank::params() const {
  return {{"depth", std::to_string(p.depth)}, {"elems", std::to_string(p.elems)}, {"width", std::to_string(p.width)}};
}

int MemBank::addr_bits() const { return clog2(p.depth); }

void MemBank::build(Module& m) const {
  const int aw = addr_bits();
  m.add_comment(fmt::format("{} rows x {} elements x {} bits; 2 registered read ports, 1 masked write port.",
                            p.depth, p.elems, p.width));
  m.add_comment("Each element lane is two 1W1R RAMs (one per read port) written together (docs/memory.md).");
  Sig rd_a_en = m.input("rd_a_en", UInt(1));
  Sig rd_a_addr = m.input("rd_a_addr", UInt(aw));
  Sig rd_b_en = m.input("rd_b_en", UInt(1));
  Sig rd_b_addr = m.input("rd_b_addr", UInt(aw));
  Sig wr_en = m.input("wr_en", UInt(1));
  Sig wr_addr = m.input("wr_addr", UInt(aw));
  Sig wr_mask = m.input("wr_mask", UInt(p.elems));
  Data wr_data = m.input("wr_data", Vec(UInt(p.width), p.elems));
  Data rd_a_data = m.output("rd_a_data", Vec(UInt(p.width), p.elems));
  Data rd_b_data = m.output("rd_b_data", Vec(UInt(p.width), p.elems));

  for (int e = 0; e < p.elems; ++e) {
    Sig we = m.node(fmt::format("wr_en_e{}", e), wr_en & wr_mask.bit(e));
    MemRef copy_a = m.memory(fmt::format("ram_e{}_a", e), UInt(p.width), p.depth);
    MemRef copy_b = m.memory(fmt::format("ram_e{}_b", e), UInt(p.width), p.depth);
    copy_a.write_port(wr_addr, wr_data[e].sig(), we);
    copy_b.write_port(wr_addr, wr_data[e].sig(), we);
    rd_a_data[e].sig() <<= copy_a.read_port(fmt::format("rd_a_q_e{}", e), rd_a_addr, rd_a_en);
    rd_b_data[e].sig() <<= copy_b.read_port(fmt::format("rd_b_q_e{}", e), rd_b_addr, rd_b_en);
  }
}

}  // namespace fetta::hw
