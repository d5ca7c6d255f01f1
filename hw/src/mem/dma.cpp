#include "hw/mem/dma.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/mem/address_generator.hpp"
#include "hw/mem/check.hpp"
#include "hw/ports.hpp"

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

Dma::Dma(DmaParams params) : IdentifiedGenerator(checked(params)) {}

Identity Dma::identity() const {
  const arch::DmaGeometry& g = p.geometry;
  return Identity("dma")
      .param("row_bits", g.row_bits, fmt::format("_r{}", g.row_bits))
      .param("group_bits", g.group_bits, fmt::format("_g{}", g.group_bits))
      .param("lanes", g.lanes, fmt::format("_n{}", g.lanes))
      .param("width", g.width, fmt::format("_w{}", g.width))
      .param("addr_bits", g.addr_bits, fmt::format("_a{}", g.addr_bits))
      .param("queue_depth", p.queue_depth, fmt::format("_q{}", p.queue_depth));
}

namespace {

// Builds the engine a part at a time: the ports, the descriptor queue, which descriptors run, the
// request nest, a response nest per queue entry, the responses, the save's buffer, the external
// request and the host port.
//
// Every queued descriptor may be in flight: the oldest (the head) waiting for its responses, the
// newest making its requests, so that a run of descriptors waits out the memory's latency once
// rather than once each. The request side moves to the next descriptor once the current one's
// requests are all taken; each queue entry's response nest follows its descriptor, the head's
// taking the responses until its last, so responses need no tag. A save does not start while a
// load is in flight: it would read the unified memory on the port the load writes, perhaps the
// very slots.
class DmaBuilder {
 public:
  DmaBuilder(Module& m, const DmaParams& p)
      : m_(m), g_(p.geometry), layout_(g_), H(g_.lanes), W(g_.width), GB(g_.group_bits), D(g_.dram_beat_bits()),
        S(g_.slot_bits()), NW(layout_.words()), Q(p.queue_depth), QB(clog2(Q)) {}

  void build() {
    const int GA = std::max(D, S);  // the request nest's width: both streams' low bits are exact
    m_.add_comment(fmt::format("DMA: {}-deep queue of {}-bit descriptors ({} words); {}-byte beats of {} x {} bits; "
                               "in order, up to {} in flight: one making requests beside the earlier ones' "
                               "responses (docs/dma.md).",
                               Q, layout_.bits(), NW, g_.beat_bytes(), H, W, Q));
    ports();
    descriptor_queue();
    in_flight();
    request_nest(GA);
    response_nests();
    responses();
    save_buffer();
    external_request();
    host_port();
  }

 private:
  void ports() {
    const WordPort desc = m_.input(Dma::kDesc, WordPort::type());
    desc_we_ = desc.we;
    desc_word_ = desc.word;
    desc_ready_ = desc.ready;
    compute_half_ = m_.input("compute_half", UInt(1));
    busy_ = m_.output("busy", UInt(1));
    host_half_busy_ = m_.output("host_half_busy", UInt(1));
    done_count_ = m_.output("done_count", UInt(32));
    error_ = m_.output("error", UInt(1));
    mem_.emplace(m_.output(Dma::kMem, DramPort::type(g_)));
    um_.emplace(m_.output(Dma::kUm, HostPort::type(host_port_shape(g_))));
  }

  // Descriptor words assembled and queued (the controller's instruction queue, docs/isa.md §4).
  void descriptor_queue() {
    const int wcb = clog2(NW);
    Sig wcount = m_.reg("wcount", UInt(wcb), reset_to(0));
    std::vector<Sig> wbuf;
    for (int w = 0; w + 1 < NW; ++w) wbuf.push_back(m_.reg(fmt::format("wbuf_{}", w), UInt(32)));
    count_ = m_.reg("count", UInt(QB + 1), reset_to(0));
    head_ = m_.reg("head", UInt(QB), reset_to(0));
    tail_ = m_.reg("tail", UInt(QB), reset_to(0));
    for (int q = 0; q < Q; ++q) queue_.push_back(m_.reg(fmt::format("queue_{}", q), UInt(32 * NW)));
    Sig full = m_.node("full", count_ == Q);
    Sig last_word = m_.node("last_word", NW == 1 ? lit(1, 1) : Expr(wcount == NW - 1));
    push_ = m_.node("push", desc_we_ & last_word & !full);
    Sig overflow = m_.node("overflow", desc_we_ & last_word & full);
    desc_ready_ <<= !full;
    // A dropped descriptor is consumed whole: the next word begins a new one.
    if (NW > 1) m_.when(desc_we_, [&] { wcount <<= mux(last_word, lit(0, wcb), wcount + 1); });
    for (int w = 0; w + 1 < NW; ++w)
      m_.when(desc_we_ & (wcount == w), [&] { wbuf[static_cast<size_t>(w)] <<= desc_word_; });
    std::vector<Expr> words_msb_first{desc_word_};
    for (int w = NW - 2; w >= 0; --w) words_msb_first.push_back(wbuf[static_cast<size_t>(w)]);
    Expr assembled = NW == 1 ? Expr(desc_word_) : cat(words_msb_first);
    for (int q = 0; q < Q; ++q) m_.when(push_ & (tail_ == q), [&] { queue_[static_cast<size_t>(q)] <<= assembled; });
    Sig err = m_.reg("error_q", UInt(1), reset_to(0));
    m_.when(overflow, [&] { err <<= 1; });
    error_ <<= err;
  }

  // A descriptor stays in the queue until its last response, so every field stays stable for the
  // nests; `entry` picks the queue entry a part of the engine reads.
  Expr descriptor(const std::string& name, const Expr& entry) {
    std::vector<Expr> items(queue_.begin(), queue_.end());
    return m_.node(name, select(items, entry));
  }
  Expr field(const Expr& desc, const std::string& name) const {
    const arch::IsaField& f = layout_.field(name);
    return desc.bits(f.lsb + f.width - 1, f.lsb);
  }

  // Which descriptors run: `live` of them started and not finished (the head first), the next
  // queued one starting when the request side is free and its half is not the compute half; a
  // save only while no load is in flight.
  void in_flight() {
    live_ = m_.reg("live", UInt(QB + 1), reset_to(0));
    req_entry_ = m_.reg("req_entry", UInt(QB), reset_to(0));
    req_live_ = m_.reg("req_live", UInt(1), reset_to(0));
    const Expr head_desc = descriptor("head_desc", head_);
    next_entry_ = m_.node("next_entry", (head_.zext(QB + 1) + live_).bits(QB - 1, 0));
    next_desc_ = descriptor("next_desc", next_entry_);
    Sig queued = m_.node("queued", count_ != 0);
    host_half_busy_ <<= queued & (field(head_desc, "half") != compute_half_);
    busy_ <<= queued;
    Sig waiting = m_.node("waiting", count_ != live_);  // a queued descriptor not started
    // Entry e is in flight when it is among the `live` entries from the head on.
    std::vector<Expr> loading;
    for (int e = 0; e < Q; ++e) {
      const Expr from_head = (lit(e, QB + 1) - head_.zext(QB + 1)).bits(QB - 1, 0).zext(QB + 1);
      loading.push_back(m_.node(fmt::format("loading_{}", e), (from_head < live_) & !field(queue_[static_cast<size_t>(e)], "to_dram")));
    }
    Sig load_in_flight = m_.node("load_in_flight", cat(loading).or_reduce());
    Sig next_save = m_.node("next_save", field(next_desc_, "to_dram"));
    Sig free_half = m_.node("next_free_half", field(next_desc_, "half") != compute_half_);
    Sig req_free = m_.node("req_free", !req_live_);
    start_ = m_.node("start", req_free & waiting & !(next_save & load_in_flight) & free_half);
    m_.when(start_, [&] { req_entry_ <<= next_entry_; });
  }

  // The request nest (DRAM beat, slot) over the descriptor the request side runs.
  void request_nest(int GA) {
    fifo_n_ = m_.reg("fifo_n", UInt(2), reset_to(0));  // the save's buffer (save_buffer), which a save drains first
    inflight_ = m_.reg("inflight", UInt(1), reset_to(0));
    const Expr desc = descriptor("req_desc", req_entry_);
    req_save_ = m_.node("req_save", field(desc, "to_dram"));
    req_gen_ = m_.instance(AddressGenerator({3, 2, GA, layout_.count_bits()}), "req_gen");
    for (int l = 0; l < 3; ++l) {
      req_gen_->io("bound_m1")[l].sig() <<= field(desc, fmt::format("bound_m1_l{}", l));
      req_gen_->io("stride")[0][l].sig() <<= field(desc, fmt::format("dram_stride_l{}", l)).zext(GA);
      req_gen_->io("stride")[1][l].sig() <<= field(desc, fmt::format("slot_stride_l{}", l)).zext(GA);
    }
    // The nest samples its bases at start, before req_entry names the descriptor: the next one's.
    req_gen_->io("base")[0].sig() <<= field(next_desc_, "dram_base").zext(GA);
    req_gen_->io("base")[1].sig() <<= field(next_desc_, "slot_base").zext(GA);
    req_gen_->io("start").sig() <<= start_;
    req_valid_ = m_.node("req_valid", req_gen_->io("valid").sig());
    req_dram_ = m_.node("req_dram", req_gen_->io("addr")[0].sig().bits(D - 1, 0));
    req_slot_ = m_.node("req_slot", req_gen_->io("addr")[1].sig().bits(S - 1, 0));
  }

  // A response nest (slot) per queue entry, over that entry's descriptor.
  void response_nests() {
    for (int e = 0; e < Q; ++e) {
      const Expr& desc = queue_[static_cast<size_t>(e)];
      rsp_gen_.push_back(m_.instance(AddressGenerator({3, 1, S, layout_.count_bits()}), fmt::format("rsp_gen_{}", e)));
      const InstanceRef& gen = rsp_gen_.back();
      for (int l = 0; l < 3; ++l) {
        gen.io("bound_m1")[l].sig() <<= field(desc, fmt::format("bound_m1_l{}", l));
        gen.io("stride")[0][l].sig() <<= field(desc, fmt::format("slot_stride_l{}", l));
      }
      gen.io("base")[0].sig() <<= field(desc, "slot_base");
      gen.io("start").sig() <<= start_ & (next_entry_ == e);
    }
  }

  // Entry-indexed outputs of the response nests.
  std::vector<Expr> nest_outputs(const std::string& port) const {
    std::vector<Expr> v;
    for (const InstanceRef& g : rsp_gen_) v.push_back(port == "addr" ? Expr(g.io("addr")[0].sig()) : Expr(g.io(port).sig()));
    return v;
  }
  // A response belongs to the head's nest until that nest has taken its last, then to the next
  // entry's (the head finishes the cycle after, so no later one is owed a response yet). It is
  // turned by its descriptor's lane_rot and registered with its slot and lane mask; the head's
  // nest done finishes the head.
  void responses() {
    Sig head_next = m_.node("head_next", (head_ + 1).bits(QB - 1, 0));
    Sig head_taking = m_.node("head_taking", select(nest_outputs("valid"), head_));
    Sig owner = m_.node("rsp_owner", mux(head_taking, head_, head_next));
    const Expr rsp_valid = mem_->rsp_valid.sig();
    for (int e = 0; e < Q; ++e) rsp_gen_[static_cast<size_t>(e)].io("run").sig() <<= rsp_valid & (owner == e);
    const Expr rsp_desc = descriptor("rsp_desc", owner);
    auto owned = [&](const std::string& name) { return m_.node("rsp_" + name, field(rsp_desc, name)); };
    const Sig load = m_.node("rsp_load", !owned("to_dram"));
    rsp_write_q_ = m_.reg("rsp_write_q", UInt(1), reset_to(0));
    rsp_write_q_ <<= rsp_valid & load;
    const GatedClock responding = m_.clock_gate("responding", rsp_valid);  // clocked only by responses
    rsp_slot_q_ = m_.reg("rsp_slot_q", UInt(S), clocked_by(responding));
    rsp_slot_q_ <<= select(nest_outputs("addr"), owner);
    rsp_mask_q_ = m_.reg("rsp_mask_q", UInt(H), clocked_by(responding));
    rsp_mask_q_ <<= owned("lane_mask");
    const std::vector<Expr> turned = turned_response(layout_.has_lane_rot() ? owned("lane_rot") : Expr(lit(0, 1)));
    for (int j = 0; j < H; ++j) {
      rsp_data_.push_back(m_.reg(fmt::format("rsp_data_{}", j), UInt(W), clocked_by(responding)));
      rsp_data_.back() <<= turned[static_cast<size_t>(j)];
    }
    Sig finish = m_.node("finish", (live_ != 0) & select(nest_outputs("done"), head_));
    Sig req_drained = m_.node("req_drained", req_gen_->io("done").sig() & !(req_save_ & ((fifo_n_ != 0) | inflight_)));
    m_.when(start_, [&] { req_live_ <<= 1; }).elsewhen(req_live_ & req_drained, [&] { req_live_ <<= 0; });
    m_.when(start_ & !finish, [&] { live_ <<= live_ + 1; }).elsewhen(finish & !start_, [&] { live_ <<= live_ - 1; });
    m_.when(push_ & !finish, [&] { count_ <<= count_ + 1; }).elsewhen(finish & !push_, [&] { count_ <<= count_ - 1; });
    m_.when(push_, [&] { tail_ <<= tail_ + 1; });
    m_.when(finish, [&] { head_ <<= head_ + 1; });
    Sig done_q = m_.reg("done_count_q", UInt(32), reset_to(0));
    m_.when(finish, [&] { done_q <<= done_q + 1; });
    done_count_ <<= done_q;
  }

  // A load's beat turned by lane_rot before it is registered (DRAM lane j -> unified lane j + rot):
  // a barrel rotator, one level per bit of the field, so a gather places a run of lanes anywhere.
  std::vector<Expr> turned_response(const Expr& rot) {
    std::vector<Expr> lanes;
    for (int j = 0; j < H; ++j) lanes.push_back(mem_->rsp_rdata[j].sig());
    if (!layout_.has_lane_rot()) return lanes;
    for (int b = 0; (1 << b) < H; ++b) {
      std::vector<Expr> next;
      for (int j = 0; j < H; ++j) {
        const Expr& from = lanes[static_cast<size_t>((j - (1 << b) + H) % H)];
        next.push_back(m_.node(fmt::format("rsp_turn{}_{}", b, j), mux(rot.bit(b), from, lanes[static_cast<size_t>(j)])));
      }
      lanes = std::move(next);
    }
    return lanes;
  }

  // Save: unified-memory reads into a two-entry buffer, its head presented as a write request.
  // A read is issued while the buffer, with the read in flight, will still have room after this
  // cycle's request: one beat per cycle when the port is always ready.
  void save_buffer() {
    Sig fifo_pop = m_.node("fifo_pop", (fifo_n_ != 0) & mem_->req_ready.sig());
    Sig inflight_dram = m_.reg("inflight_dram", UInt(D));
    Sig room = m_.node("room", !((fifo_n_.zext(3) + inflight_.zext(3) == 2) & !fifo_pop));
    read_issue_ = m_.node("read_issue", req_valid_ & req_save_ & room);
    inflight_ <<= read_issue_;
    m_.when(read_issue_, [&] { inflight_dram <<= req_dram_; });
    std::vector<Sig> e_data1;
    e_dram_.push_back(m_.reg("fifo_dram_0", UInt(D)));
    e_dram_.push_back(m_.reg("fifo_dram_1", UInt(D)));
    for (int j = 0; j < H; ++j) {
      e_data0_.push_back(m_.reg(fmt::format("fifo_data0_{}", j), UInt(W)));
      e_data1.push_back(m_.reg(fmt::format("fifo_data1_{}", j), UInt(W)));
    }
    // Entry 0 is the head. It takes the new beat when it is empty or popped with nothing behind it,
    // entry 1's beat when popped with two inside; entry 1 takes the new beat when it is the tail.
    Sig load0_new = m_.node("fifo_load0_new", inflight_ & ((fifo_n_ == 0) | ((fifo_n_ == 1) & fifo_pop)));
    Sig load0_e1 = m_.node("fifo_load0_e1", fifo_pop & (fifo_n_ == 2));
    Sig load1_new = m_.node("fifo_load1_new", inflight_ & (((fifo_n_ == 1) & !fifo_pop) | (fifo_n_ == 2)));
    m_.when(load0_new, [&] { e_dram_[0] <<= inflight_dram; }).elsewhen(load0_e1, [&] { e_dram_[0] <<= e_dram_[1]; });
    m_.when(load1_new, [&] { e_dram_[1] <<= inflight_dram; });
    for (int j = 0; j < H; ++j) {
      const auto k = static_cast<size_t>(j);
      m_.when(load0_new, [&] { e_data0_[k] <<= um_->rdata[j].sig(); }).elsewhen(load0_e1, [&] {
        e_data0_[k] <<= e_data1[k];
      });
      m_.when(load1_new, [&] { e_data1[k] <<= um_->rdata[j].sig(); });
    }
    fifo_n_ <<= fifo_n_ + inflight_.zext(2) - fifo_pop.zext(2);
  }

  // The external request: a load's DRAM beat straight from the nest, or the buffered save.
  void external_request() {
    const int SH = g_.beat_shift();
    Sig load_req = m_.node("load_req", req_valid_ & !req_save_);
    req_gen_->io("run").sig() <<= mux(req_save_, read_issue_, mem_->req_ready.sig());
    mem_->req_valid.sig() <<= mux(req_save_, fifo_n_ != 0, load_req);
    mem_->req_write.sig() <<= req_save_;
    Expr beat = mux(req_save_, e_dram_[0], req_dram_);
    mem_->req_addr.sig() <<= SH == 0 ? beat : cat({beat, lit(0, SH)});
    for (int j = 0; j < H; ++j) mem_->req_wdata[j].sig() <<= e_data0_[static_cast<size_t>(j)];
  }

  // The unified-memory host port: a load writes each registered response at its nest's slot; a
  // save reads at the request nest's slot (never both at once: a save does not overlap a load).
  void host_port() {
    Sig slot = m_.node("um_slot", mux(req_save_, req_slot_, rsp_slot_q_));
    um_->row.sig() <<= slot.bits(S - 1, GB);
    um_->group.sig() <<= GB == 0 ? lit(0, 1) : slot.bits(GB - 1, 0);
    um_->re.sig() <<= read_issue_;
    um_->we.sig() <<= rsp_write_q_;
    um_->wmask.sig() <<= rsp_mask_q_;
    for (int j = 0; j < H; ++j) um_->wdata[j].sig() <<= rsp_data_[static_cast<size_t>(j)];
  }

  Module& m_;
  const arch::DmaGeometry& g_;
  const arch::DmaLayout layout_;
  const int H, W, GB, D, S, NW, Q, QB;  // lanes, lane bits, group bits, DRAM beat and slot bits, words, queue, its bits
  Sig desc_we_, desc_word_, desc_ready_, compute_half_, busy_, host_half_busy_, done_count_, error_;
  std::optional<DramPort> mem_;  // the DRAM port and the unified memory's host port, as declared
  std::optional<HostPort> um_;
  Sig count_, head_, tail_, push_, start_, live_, next_entry_, req_entry_, req_live_, req_save_;
  Expr next_desc_;
  std::vector<Sig> queue_;
  std::optional<InstanceRef> req_gen_;
  std::vector<InstanceRef> rsp_gen_;
  Sig req_valid_, req_dram_, req_slot_, rsp_write_q_, rsp_slot_q_, rsp_mask_q_, read_issue_;
  Sig fifo_n_, inflight_;
  std::vector<Sig> rsp_data_, e_dram_, e_data0_;
};

}  // namespace

void Dma::build(Module& m) const { DmaBuilder(m, p).build(); }

}  // namespace fetta::hw
