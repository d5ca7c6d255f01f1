#include "hw/mem/unified_memory.hpp"

#include <fmt/core.h>

#include "hw/mem/check.hpp"
#include "hw/ports.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

UnifiedMemoryParams checked(UnifiedMemoryParams p) {
  mem_check::pow2_in("UnifiedMemory", "banks", p.banks, 2, 256);
  mem_check::pow2_in("UnifiedMemory", "elems", p.elems, 1, 64);
  mem_check::pow2_in("UnifiedMemory", "depth", p.depth, 4, 1 << 24);
  mem_check::in_range("UnifiedMemory", "width", p.width, 1, 64);
  mem_check::pow2_in("UnifiedMemory", "host_banks", p.host_banks, 1, p.banks);
  bank_storage_name(p.storage, "UnifiedMemory: storage");
  return p;
}

}  // namespace

UnifiedMemory::UnifiedMemory(UnifiedMemoryParams params) : IdentifiedGenerator(checked(params)) {}

Identity UnifiedMemory::identity() const {
  Identity id("unified_mem");
  id.param("banks", p.banks, fmt::format("_b{}", p.banks))
      .param("elems", p.elems, fmt::format("_t{}", p.elems))
      .param("depth", p.depth, fmt::format("_d{}", p.depth))
      .param("width", p.width, fmt::format("_w{}", p.width))
      .param("host_banks", p.host_banks, fmt::format("_h{}", p.host_banks));
  if (p.storage != UnifiedMemoryParams{}.storage)
    id.param("storage", bank_storage_name(p.storage), p.storage == BankStorage::two_copies ? "_2copy" : "");
  return id;
}

int UnifiedMemory::row_bits() const { return clog2(p.depth / 2); }

void UnifiedMemory::build(Module& m) const {
  const int B = p.banks, T = p.elems, N = lanes(), W = p.width, hw = row_bits();
  const int P = p.host_banks, G = host_groups(), H = host_lanes(), gw = clog2(G);
  m.add_comment(fmt::format("{} banks x {} rows x {} elements x {} bits in two ping-pong halves of {} rows.", B,
                            p.depth, T, W, p.depth / 2));
  m.add_comment(fmt::format("The TCU ports address half compute_half; the host port the other half, {} bank row(s) "
                            "per cycle (docs/memory.md).",
                            P));
  if (p.storage == BankStorage::shared_port)
    m.add_comment("IB reads and TCU writes share port B of the compute half's banks: never both in one cycle.");
  Sig compute_half = m.input("compute_half", UInt(1));
  Sig ia_en = m.input("ia_en", UInt(B));
  Data ia_addr = m.input("ia_addr", Vec(UInt(hw), B));
  Sig ib_en = m.input("ib_en", UInt(B));
  Data ib_addr = m.input("ib_addr", Vec(UInt(hw), B));
  Sig wr_other = m.input("wr_other", UInt(1));
  Sig wr_en = m.input("wr_en", UInt(B));
  Data wr_addr = m.input("wr_addr", Vec(UInt(hw), B));
  Sig wr_mask = m.input("wr_mask", UInt(N));
  Data wr_data = m.input("wr_data", Vec(UInt(W), N));
  const HostPort host = m.input(kHost, HostPort::type({gw, hw, H, W}));
  Sig host_group = host.group, host_row = host.row, host_we = host.we, host_wmask = host.wmask, host_re = host.re;
  const Data &host_wdata = host.wdata, &host_rdata = host.rdata;
  Data ia_data = m.output("ia_data", Vec(UInt(W), N));
  Data ib_data = m.output("ib_data", Vec(UInt(W), N));
  Sig host_rvalid = m.output("host_rvalid", UInt(1));

  // Which half the read data of this cycle came from: the one compute_half named at the read.
  Sig compute_half_q = m.reg("compute_half_q", UInt(1), reset_to(0));
  compute_half_q <<= compute_half;
  Sig host_rvalid_q = m.reg("host_rvalid_q", UInt(1), reset_to(0));
  host_rvalid_q <<= host_re;
  host_rvalid <<= host_rvalid_q;
  Sig host_group_q = m.reg("host_group_q", UInt(gw), enabled_by(host_re));
  host_group_q <<= host_group;

  const MemBank bank_gen({p.depth / 2, T, W, p.storage});
  // host_half_data[lane][g]: host lane `lane` as group g's bank would return it (its non-compute half).
  std::vector<std::vector<Expr>> host_half_data(static_cast<size_t>(H));
  for (int b = 0; b < B; ++b) {
    const int g = b / P, k = b % P;  // host group, and the bank's place in it
    Sig host_sel = m.node(fmt::format("host_sel_b{}", b), G == 1 ? lit(1, 1) : Expr(host_group == g));
    Sig host_rd = m.node(fmt::format("host_rd_b{}", b), host_re & host_sel);
    Sig host_wr = m.node(fmt::format("host_wr_b{}", b), host_we & host_sel);
    std::vector<Data> rd_a(2);
    std::vector<Data> rd_b(2);
    for (int h = 0; h < 2; ++h) {
      InstanceRef u = m.instance(bank_gen, fmt::format("bank{}_half{}", b, h));
      // tcu: this half serves the TCU this cycle; otherwise it serves the host.
      Sig tcu = m.node(fmt::format("tcu_b{}_h{}", b, h), h == 0 ? Expr(~compute_half) : Expr(compute_half));
      u.io("rd_a_en").sig() <<= mux(tcu, ia_en.bit(b), host_rd);
      u.io("rd_a_addr").sig() <<= mux(tcu, ia_addr[b].sig(), host_row);
      u.io("rd_b_en").sig() <<= tcu & ib_en.bit(b);
      u.io("rd_b_addr").sig() <<= ib_addr[b].sig();
      // The TCU write port owns the compute half, or the host's half while wr_other is set.
      Sig tcu_wr = m.node(fmt::format("tcu_wr_b{}_h{}", b, h), tcu ^ wr_other);
      u.io("wr_en").sig() <<= mux(tcu_wr, wr_en.bit(b), (~tcu) & host_wr);
      u.io("wr_addr").sig() <<= mux(tcu_wr, wr_addr[b].sig(), host_row);
      u.io("wr_mask").sig() <<= mux(tcu_wr, wr_mask.bits(b * T + T - 1, b * T), host_wmask.bits(k * T + T - 1, k * T));
      Data wd = u.io("wr_data");
      for (int e = 0; e < T; ++e) wd[e].sig() <<= mux(tcu_wr, wr_data[b * T + e].sig(), host_wdata[k * T + e].sig());
      rd_a[h] = u.io("rd_a_data");
      rd_b[h] = u.io("rd_b_data");
    }
    for (int e = 0; e < T; ++e) {
      const int lane = b * T + e;
      ia_data[lane].sig() <<= mux(compute_half_q, rd_a[1][e].sig(), rd_a[0][e].sig());
      ib_data[lane].sig() <<= mux(compute_half_q, rd_b[1][e].sig(), rd_b[0][e].sig());
      host_half_data[static_cast<size_t>(k * T + e)].push_back(
          mux(compute_half_q, rd_a[0][e].sig(), rd_a[1][e].sig()));
    }
  }
  for (int l = 0; l < H; ++l) {
    const auto& by_group = host_half_data[static_cast<size_t>(l)];
    host_rdata[l].sig() <<= G == 1 ? by_group[0] : select(by_group, host_group_q);
  }
}

}  // namespace fetta::hw
