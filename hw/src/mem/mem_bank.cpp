#include "hw/mem/mem_bank.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

MemBankParams checked(MemBankParams p) {
  mem_check::pow2_in("MemBank", "depth", p.depth, 2, 1 << 24);
  mem_check::pow2_in("MemBank", "elems", p.elems, 1, 64);
  mem_check::in_range("MemBank", "width", p.width, 1, 64);
  bank_storage_name(p.storage, "MemBank: storage");
  return p;
}

}  // namespace

std::string bank_storage_name(BankStorage s, const std::string& what) {
  switch (s) {
    case BankStorage::shared_port: return "shared_port";
    case BankStorage::two_copies: return "two_copies";
  }
  throw std::invalid_argument(fmt::format("{} = {} is not a bank storage; allowed: shared_port, two_copies", what,
                                          static_cast<int>(s)));
}

MemBank::MemBank(MemBankParams params) : IdentifiedGenerator(checked(params)) {}

Identity MemBank::identity() const {
  Identity id("mem_bank");
  id.param("depth", p.depth, fmt::format("_d{}", p.depth))
      .param("elems", p.elems, fmt::format("_t{}", p.elems))
      .param("width", p.width, fmt::format("_w{}", p.width));
  if (p.storage != MemBankParams{}.storage)
    id.param("storage", bank_storage_name(p.storage), p.storage == BankStorage::two_copies ? "_2copy" : "");
  return id;
}

int MemBank::addr_bits() const { return clog2(p.depth); }

void MemBank::build(Module& m) const {
  const int aw = addr_bits();
  const bool shared = p.storage == BankStorage::shared_port;
  m.add_comment(fmt::format("{} rows x {} elements x {} bits; 2 registered read ports, 1 masked write port.",
                            p.depth, p.elems, p.width));
  if (shared) {
    m.add_comment("Each element lane is one RAM: read port A, and port B that reads or writes (1R1RW, docs/memory.md).");
    m.add_comment("Rule: never a write and a port-B read in one cycle; if both come, the write is done and rd_b_data holds.");
  } else {
    m.add_comment("Each element lane is two 1W1R RAMs (one per read port) written together (docs/memory.md).");
  }
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

  if (shared) {
    // Port B: one address for the RAM's read and write port, so that synthesis sees one shared
    // address (a read/write port); its read is suppressed while it writes.
    Sig port_b_addr = m.node("port_b_addr", mux(wr_en, wr_addr, rd_b_addr));
    Sig port_b_rd = m.node("port_b_rd", rd_b_en & ~wr_en);
    for (int e = 0; e < p.elems; ++e) {
      Sig we = m.node(fmt::format("wr_en_e{}", e), wr_en & wr_mask.bit(e));
      MemRef ram = m.memory(fmt::format("ram_e{}", e), UInt(p.width), p.depth);
      ram.write_port(port_b_addr, wr_data[e].sig(), we);
      rd_a_data[e].sig() <<= ram.read_port(fmt::format("rd_a_q_e{}", e), rd_a_addr, rd_a_en);
      rd_b_data[e].sig() <<= ram.read_port(fmt::format("rd_b_q_e{}", e), port_b_addr, port_b_rd);
    }
    return;
  }
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
