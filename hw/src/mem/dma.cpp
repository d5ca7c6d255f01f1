#include "hw/mem/dma.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <stdexcept>

#include "hw/mem/address_generator.hpp"
#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

DmaParams checked(DmaParams p) {
  try {
    (void)arch::DmaLayout(p.geometry);
  } catch (const arch::IsaError& e) {
    throw std::invalid_argument(std::string("Dma: ") + e.what());
  }
  mem_check::pow2_in("Dma", "queue_depth", p.queue_depth, 2, 16);
  return p;
}

}  // namespace

DmaParams dma_params(const arch::ArchConfig& cfg) { return {arch::dma_geometry(cfg), arch::kTopDmaQueueDepth}; }

std::string elaborate_dma(Design& design, const arch::ArchConfig& cfg) { return design.elaborate(Dma(dma_params(cfg)))->name(); }

Dma::Dma(DmaParams params) : Generator(checked(params)) {}

std::string Dma::module_name() const {
  const arch::DmaGeometry& g = p.geometry;
  return fmt::format("dma_r{}_g{}_n{}_w{}_a{}_q{}", g.row_bits, g.group_bits, g.lanes, g.width, g.addr_bits,
                     p.queue_depth);
}

ParamList Dma::params() const {
  const arch::DmaGeometry& g = p.geometry;
  return {{"row_bits", std::to_string(g.row_bits)},   {"group_bits", std::to_string(g.group_bits)},
          {"lanes", std::to_string(g.lanes)},         {"width", std::to_string(g.width)},
          {"addr_bits", std::to_string(g.addr_bits)}, {"queue_depth", std::to_string(p.queue_depth)}};
}

void Dma::build(Module& m) const {
  const arch::DmaGeometry& g = p.geometry;
  const arch::DmaLayout layout(g);
  const int H = g.lanes, W = g.width, A = g.addr_bits, HW = g.row_bits, GB = g.group_bits, gw = std::max(1, GB);
  const int D = g.dram_beat_bits(), S = g.slot_bits(), SH = g.beat_shift();
  const int NW = layout.words(), DW = layout.bits(), Q = p.queue_depth, qb = clog2(Q);
  const int GA = std::max(D, S);  // the request nest's width: both streams' low bits are exact
  m.add_comment(fmt::format("DMA: {}-deep queue of {}-bit descriptors ({} words); {}-byte beats of {} x {} bits; "
                            "one descriptor at a time, in order (docs/dma.md).",
                            Q, DW, NW, g.beat_bytes(), H, W));

  Sig desc_we = m.input("desc_we", UInt(1));
  Sig desc_word = m.input("desc_word", UInt(32));
  Sig desc_ready = m.output("desc_ready", UInt(1));
  Sig compute_half = m.input("compute_half", UInt(1));
  Sig busy = m.output("busy", UInt(1));
  Sig host_half_busy = m.output("host_half_busy", UInt(1));
  Sig done_count = m.output("done_count", UInt(32));
  Sig error = m.output("error", UInt(1));
  Sig mem_req_valid = m.output("mem_req_valid", UInt(1));
  Sig mem_req_ready = m.input("mem_req_ready", UInt(1));
  Sig mem_req_write = m.output("mem_req_write", UInt(1));
  Sig mem_req_addr = m.output("mem_req_addr", UInt(A));
  Data mem_req_wdata = m.output("mem_req_wdata", Vec(UInt(W), H));
  Sig mem_rsp_valid = m.input("mem_rsp_valid", UInt(1));
  Data mem_rsp_rdata = m.input("mem_rsp_rdata", Vec(UInt(W), H));
  Sig um_group = m.output("um_group", UInt(gw));
  Sig um_row = m.output("um_row", UInt(HW));
  Sig um_we = m.output("um_we", UInt(1));
  Sig um_wmask = m.output("um_wmask", UInt(H));
  Data um_wdata = m.output("um_wdata", Vec(UInt(W), H));
  Sig um_re = m.output("um_re", UInt(1));
  Data um_rdata = m.input("um_rdata", Vec(UInt(W), H));

  // ---- Descriptor words assembled and queued (the controller's instruction queue, docs/isa.md §4).
  const int wcb = clog2(NW);
  Sig wcount = m.reg("wcount", UInt(wcb), reset_to(0));
  std::vector<Sig> wbuf;
  for (int w = 0; w + 1 < NW; ++w) wbuf.push_back(m.reg(fmt::format("wbuf_{}", w), UInt(32)));
  Sig count = m.reg("count", UInt(qb + 1), reset_to(0));
  Sig head = m.reg("head", UInt(qb), reset_to(0));
  Sig tail = m.reg("tail", UInt(qb), reset_to(0));
  std::vector<Sig> queue;
  for (int q = 0; q < Q; ++q) queue.push_back(m.reg(fmt::format("queue_{}", q), UInt(32 * NW)));
  Sig full = m.node("full", count == Q);
  Sig last_word = m.node("last_word", NW == 1 ? lit(1, 1) : Expr(wcount == NW - 1));
  Sig push = m.node("push", desc_we & last_word & !full);
  Sig overflow = m.node("overflow", desc_we & last_word & full);
  desc_ready <<= !full;
  // A dropped descriptor is consumed whole: the next word begins a new one.
  if (NW > 1) m.when(desc_we, [&] { wcount <<= mux(last_word, lit(0, wcb), wcount + 1); });
  for (int w = 0; w + 1 < NW; ++w) m.when(desc_we & (wcount == w), [&] { wbuf[static_cast<size_t>(w)] <<= desc_word; });
  std::vector<Expr> words_msb_first{desc_word};
  for (int w = NW - 2; w >= 0; --w) words_msb_first.push_back(wbuf[static_cast<size_t>(w)]);
  Expr assembled = NW == 1 ? Expr(desc_word) : cat(words_msb_first);
  for (int q = 0; q < Q; ++q) m.when(push & (tail == q), [&] { queue[static_cast<size_t>(q)] <<= assembled; });
  Sig err = m.reg("error_q", UInt(1), reset_to(0));
  m.when(overflow, [&] { err <<= 1; });
  error <<= err;

  // The head descriptor stays in the queue while it runs, so its fields are stable for the nests.
  std::vector<Expr> items(queue.begin(), queue.end());
  Sig desc = m.node("desc", select(items, head));
  auto fld = [&](const std::string& name) -> Expr {
    const arch::IsaField& f = layout.field(name);
    return desc.bits(f.lsb + f.width - 1, f.lsb);
  };
  Sig to_dram = m.node("to_dram", fld("to_dram"));
  Sig queued = m.node("queued", count != 0);
  Sig other_half = m.node("other_half", fld("half") != compute_half);
  host_half_busy <<= queued & other_half;
  busy <<= queued;

  Sig running = m.reg("running", UInt(1), reset_to(0));
  Sig start = m.node("start", (!running) & queued & other_half);

  // ---- Two nests over the same bounds: requests (DRAM beat, slot) and responses (slot).
  InstanceRef req_gen = m.instance(AddressGenerator({3, 2, GA, layout.count_bits()}), "req_gen");
  InstanceRef rsp_gen = m.instance(AddressGenerator({3, 1, S, layout.count_bits()}), "rsp_gen");
  for (int l = 0; l < 3; ++l) {
    const Expr b = fld(fmt::format("bound_m1_l{}", l));
    req_gen.io("bound_m1")[l].sig() <<= b;
    rsp_gen.io("bound_m1")[l].sig() <<= b;
    req_gen.io("stride")[0][l].sig() <<= fld(fmt::format("dram_stride_l{}", l)).zext(GA);
    req_gen.io("stride")[1][l].sig() <<= fld(fmt::format("slot_stride_l{}", l)).zext(GA);
    rsp_gen.io("stride")[0][l].sig() <<= fld(fmt::format("slot_stride_l{}", l));
  }
  req_gen.io("base")[0].sig() <<= fld("dram_base").zext(GA);
  req_gen.io("base")[1].sig() <<= fld("slot_base").zext(GA);
  rsp_gen.io("base")[0].sig() <<= fld("slot_base");
  req_gen.io("start").sig() <<= start;
  rsp_gen.io("start").sig() <<= start;
  Sig req_valid = m.node("req_valid", running & req_gen.io("valid").sig());
  Sig req_dram = m.node("req_dram", req_gen.io("addr")[0].sig().bits(D - 1, 0));
  Sig req_slot = m.node("req_slot", req_gen.io("addr")[1].sig().bits(S - 1, 0));

  // Responses are registered once before they are written (or counted, for a save's acks).
  Sig rsp_q = m.reg("rsp_q", UInt(1), reset_to(0));
  rsp_q <<= mem_rsp_valid;
  std::vector<Sig> rsp_data;
  const GatedClock responding = m.clock_gate("responding", mem_rsp_valid);  // clocked only by responses
  for (int j = 0; j < H; ++j) {
    rsp_data.push_back(m.reg(fmt::format("rsp_data_{}", j), UInt(W), clocked_by(responding)));
    rsp_data.back() <<= mem_rsp_rdata[j].sig();
  }
  rsp_gen.io("run").sig() <<= rsp_q;
  Sig finish = m.node("finish", running & rsp_gen.io("done").sig());
  m.when(start, [&] { running <<= 1; }).elsewhen(finish, [&] { running <<= 0; });
  m.when(push & !finish, [&] { count <<= count + 1; }).elsewhen(finish & !push, [&] { count <<= count - 1; });
  m.when(push, [&] { tail <<= tail + 1; });
  m.when(finish, [&] { head <<= head + 1; });
  Sig done_q = m.reg("done_count_q", UInt(32), reset_to(0));
  m.when(finish, [&] { done_q <<= done_q + 1; });
  done_count <<= done_q;

  // ---- Save: unified-memory reads into a two-entry buffer, its head presented as a write request.
  // A read is issued while the buffer, with the read in flight, will still have room after this
  // cycle's request: one beat per cycle when the port is always ready.
  Sig fifo_n = m.reg("fifo_n", UInt(2), reset_to(0));
  Sig inflight = m.reg("inflight", UInt(1), reset_to(0));
  Sig inflight_dram = m.reg("inflight_dram", UInt(D));
  Sig fifo_pop = m.node("fifo_pop", (fifo_n != 0) & mem_req_ready);
  Sig room = m.node("room", !((fifo_n.zext(3) + inflight.zext(3) == 2) & !fifo_pop));
  Sig read_issue = m.node("read_issue", req_valid & to_dram & room);
  inflight <<= read_issue;
  m.when(read_issue, [&] { inflight_dram <<= req_dram; });
  std::vector<Sig> e_dram, e_data0, e_data1;
  e_dram.push_back(m.reg("fifo_dram_0", UInt(D)));
  e_dram.push_back(m.reg("fifo_dram_1", UInt(D)));
  for (int j = 0; j < H; ++j) {
    e_data0.push_back(m.reg(fmt::format("fifo_data0_{}", j), UInt(W)));
    e_data1.push_back(m.reg(fmt::format("fifo_data1_{}", j), UInt(W)));
  }
  // Entry 0 is the head. It takes the new beat when it is empty or popped with nothing behind it,
  // entry 1's beat when popped with two inside; entry 1 takes the new beat when it is the tail.
  Sig load0_new = m.node("fifo_load0_new", inflight & ((fifo_n == 0) | ((fifo_n == 1) & fifo_pop)));
  Sig load0_e1 = m.node("fifo_load0_e1", fifo_pop & (fifo_n == 2));
  Sig load1_new = m.node("fifo_load1_new", inflight & (((fifo_n == 1) & !fifo_pop) | (fifo_n == 2)));
  m.when(load0_new, [&] { e_dram[0] <<= inflight_dram; }).elsewhen(load0_e1, [&] { e_dram[0] <<= e_dram[1]; });
  m.when(load1_new, [&] { e_dram[1] <<= inflight_dram; });
  for (int j = 0; j < H; ++j) {
    m.when(load0_new, [&] { e_data0[static_cast<size_t>(j)] <<= um_rdata[j].sig(); }).elsewhen(load0_e1, [&] {
      e_data0[static_cast<size_t>(j)] <<= e_data1[static_cast<size_t>(j)];
    });
    m.when(load1_new, [&] { e_data1[static_cast<size_t>(j)] <<= um_rdata[j].sig(); });
  }
  fifo_n <<= fifo_n + inflight.zext(2) - fifo_pop.zext(2);

  // ---- The external request: a load's DRAM beat straight from the nest, or the buffered save.
  Sig load_req = m.node("load_req", req_valid & !to_dram);
  req_gen.io("run").sig() <<= mux(to_dram, read_issue, mem_req_ready);
  mem_req_valid <<= mux(to_dram, fifo_n != 0, load_req);
  mem_req_write <<= to_dram;
  Expr beat = mux(to_dram, e_dram[0], req_dram);
  mem_req_addr <<= SH == 0 ? beat : cat({beat, lit(0, SH)});
  for (int j = 0; j < H; ++j) mem_req_wdata[j].sig() <<= e_data0[static_cast<size_t>(j)];

  // ---- The unified-memory host port: a load writes each registered response at the response
  // nest's slot; a save reads at the request nest's slot.
  Sig slot = m.node("um_slot", mux(to_dram, req_slot, rsp_gen.io("addr")[0].sig()));
  um_row <<= slot.bits(S - 1, GB);
  um_group <<= GB == 0 ? lit(0, 1) : slot.bits(GB - 1, 0);
  um_re <<= read_issue;
  um_we <<= rsp_q & !to_dram & running;
  um_wmask <<= fld("lane_mask");
  for (int j = 0; j < H; ++j) um_wdata[j].sig() <<= rsp_data[static_cast<size_t>(j)];
}

}  // namespace fetta::hw
