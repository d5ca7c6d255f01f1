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

// Builds the engine a part at a time: the ports, the descriptor queue, the head descriptor, the two
// address nests, the responses, the save's buffer, the external request and the host port.
class DmaBuilder {
 public:
  DmaBuilder(Module& m, const DmaParams& p)
      : m_(m), g_(p.geometry), layout_(g_), H(g_.lanes), W(g_.width), GB(g_.group_bits), D(g_.dram_beat_bits()),
        S(g_.slot_bits()), NW(layout_.words()), Q(p.queue_depth) {}

  void build() {
    const int GA = std::max(D, S);  // the request nest's width: both streams' low bits are exact
    m_.add_comment(fmt::format("DMA: {}-deep queue of {}-bit descriptors ({} words); {}-byte beats of {} x {} bits; "
                               "one descriptor at a time, in order (docs/dma.md).",
                               Q, layout_.bits(), NW, g_.beat_bytes(), H, W));
    ports();
    descriptor_queue();
    head_descriptor();
    nests(GA);
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
    const int wcb = clog2(NW), qb = clog2(Q);
    Sig wcount = m_.reg("wcount", UInt(wcb), reset_to(0));
    std::vector<Sig> wbuf;
    for (int w = 0; w + 1 < NW; ++w) wbuf.push_back(m_.reg(fmt::format("wbuf_{}", w), UInt(32)));
    count_ = m_.reg("count", UInt(qb + 1), reset_to(0));
    head_ = m_.reg("head", UInt(qb), reset_to(0));
    tail_ = m_.reg("tail", UInt(qb), reset_to(0));
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

  // The head descriptor stays in the queue while it runs, so its fields are stable for the nests.
  void head_descriptor() {
    std::vector<Expr> items(queue_.begin(), queue_.end());
    desc_ = m_.node("desc", select(items, head_));
    to_dram_ = m_.node("to_dram", field("to_dram"));
    Sig queued = m_.node("queued", count_ != 0);
    Sig other_half = m_.node("other_half", field("half") != compute_half_);
    host_half_busy_ <<= queued & other_half;
    busy_ <<= queued;
    running_ = m_.reg("running", UInt(1), reset_to(0));
    start_ = m_.node("start", (!running_) & queued & other_half);
  }

  Expr field(const std::string& name) const {
    const arch::IsaField& f = layout_.field(name);
    return desc_.bits(f.lsb + f.width - 1, f.lsb);
  }

  // Two nests over the same bounds: requests (DRAM beat, slot) and responses (slot).
  void nests(int GA) {
    req_gen_ = m_.instance(AddressGenerator({3, 2, GA, layout_.count_bits()}), "req_gen");
    rsp_gen_ = m_.instance(AddressGenerator({3, 1, S, layout_.count_bits()}), "rsp_gen");
    for (int l = 0; l < 3; ++l) {
      const Expr b = field(fmt::format("bound_m1_l{}", l));
      req_gen_->io("bound_m1")[l].sig() <<= b;
      rsp_gen_->io("bound_m1")[l].sig() <<= b;
      req_gen_->io("stride")[0][l].sig() <<= field(fmt::format("dram_stride_l{}", l)).zext(GA);
      req_gen_->io("stride")[1][l].sig() <<= field(fmt::format("slot_stride_l{}", l)).zext(GA);
      rsp_gen_->io("stride")[0][l].sig() <<= field(fmt::format("slot_stride_l{}", l));
    }
    req_gen_->io("base")[0].sig() <<= field("dram_base").zext(GA);
    req_gen_->io("base")[1].sig() <<= field("slot_base").zext(GA);
    rsp_gen_->io("base")[0].sig() <<= field("slot_base");
    req_gen_->io("start").sig() <<= start_;
    rsp_gen_->io("start").sig() <<= start_;
    req_valid_ = m_.node("req_valid", running_ & req_gen_->io("valid").sig());
    req_dram_ = m_.node("req_dram", req_gen_->io("addr")[0].sig().bits(D - 1, 0));
    req_slot_ = m_.node("req_slot", req_gen_->io("addr")[1].sig().bits(S - 1, 0));
  }

  // Responses are registered once before they are written (or counted, for a save's acks); the
  // last one finishes the descriptor.
  void responses() {
    rsp_q_ = m_.reg("rsp_q", UInt(1), reset_to(0));
    rsp_q_ <<= mem_->rsp_valid.sig();
    const GatedClock responding = m_.clock_gate("responding", mem_->rsp_valid.sig());  // clocked only by responses
    const std::vector<Expr> turned = turned_response();
    for (int j = 0; j < H; ++j) {
      rsp_data_.push_back(m_.reg(fmt::format("rsp_data_{}", j), UInt(W), clocked_by(responding)));
      rsp_data_.back() <<= turned[static_cast<size_t>(j)];
    }
    rsp_gen_->io("run").sig() <<= rsp_q_;
    Sig finish = m_.node("finish", running_ & rsp_gen_->io("done").sig());
    m_.when(start_, [&] { running_ <<= 1; }).elsewhen(finish, [&] { running_ <<= 0; });
    m_.when(push_ & !finish, [&] { count_ <<= count_ + 1; }).elsewhen(finish & !push_, [&] { count_ <<= count_ - 1; });
    m_.when(push_, [&] { tail_ <<= tail_ + 1; });
    m_.when(finish, [&] { head_ <<= head_ + 1; });
    Sig done_q = m_.reg("done_count_q", UInt(32), reset_to(0));
    m_.when(finish, [&] { done_q <<= done_q + 1; });
    done_count_ <<= done_q;
  }

  // A load's beat turned by lane_rot before it is registered (DRAM lane j -> unified lane j + rot):
  // a barrel rotator, one level per bit of the field, so a gather places a run of lanes anywhere.
  std::vector<Expr> turned_response() {
    std::vector<Expr> lanes;
    for (int j = 0; j < H; ++j) lanes.push_back(mem_->rsp_rdata[j].sig());
    if (!layout_.has_lane_rot()) return lanes;
    const Expr rot = field("lane_rot");
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
    fifo_n_ = m_.reg("fifo_n", UInt(2), reset_to(0));
    Sig inflight = m_.reg("inflight", UInt(1), reset_to(0));
    Sig inflight_dram = m_.reg("inflight_dram", UInt(D));
    Sig fifo_pop = m_.node("fifo_pop", (fifo_n_ != 0) & mem_->req_ready.sig());
    Sig room = m_.node("room", !((fifo_n_.zext(3) + inflight.zext(3) == 2) & !fifo_pop));
    read_issue_ = m_.node("read_issue", req_valid_ & to_dram_ & room);
    inflight <<= read_issue_;
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
    Sig load0_new = m_.node("fifo_load0_new", inflight & ((fifo_n_ == 0) | ((fifo_n_ == 1) & fifo_pop)));
    Sig load0_e1 = m_.node("fifo_load0_e1", fifo_pop & (fifo_n_ == 2));
    Sig load1_new = m_.node("fifo_load1_new", inflight & (((fifo_n_ == 1) & !fifo_pop) | (fifo_n_ == 2)));
    m_.when(load0_new, [&] { e_dram_[0] <<= inflight_dram; }).elsewhen(load0_e1, [&] { e_dram_[0] <<= e_dram_[1]; });
    m_.when(load1_new, [&] { e_dram_[1] <<= inflight_dram; });
    for (int j = 0; j < H; ++j) {
      const auto k = static_cast<size_t>(j);
      m_.when(load0_new, [&] { e_data0_[k] <<= um_->rdata[j].sig(); }).elsewhen(load0_e1, [&] {
        e_data0_[k] <<= e_data1[k];
      });
      m_.when(load1_new, [&] { e_data1[k] <<= um_->rdata[j].sig(); });
    }
    fifo_n_ <<= fifo_n_ + inflight.zext(2) - fifo_pop.zext(2);
  }

  // The external request: a load's DRAM beat straight from the nest, or the buffered save.
  void external_request() {
    const int SH = g_.beat_shift();
    Sig load_req = m_.node("load_req", req_valid_ & !to_dram_);
    req_gen_->io("run").sig() <<= mux(to_dram_, read_issue_, mem_->req_ready.sig());
    mem_->req_valid.sig() <<= mux(to_dram_, fifo_n_ != 0, load_req);
    mem_->req_write.sig() <<= to_dram_;
    Expr beat = mux(to_dram_, e_dram_[0], req_dram_);
    mem_->req_addr.sig() <<= SH == 0 ? beat : cat({beat, lit(0, SH)});
    for (int j = 0; j < H; ++j) mem_->req_wdata[j].sig() <<= e_data0_[static_cast<size_t>(j)];
  }

  // The unified-memory host port: a load writes each registered response at the response nest's
  // slot; a save reads at the request nest's slot.
  void host_port() {
    Sig slot = m_.node("um_slot", mux(to_dram_, req_slot_, rsp_gen_->io("addr")[0].sig()));
    um_->row.sig() <<= slot.bits(S - 1, GB);
    um_->group.sig() <<= GB == 0 ? lit(0, 1) : slot.bits(GB - 1, 0);
    um_->re.sig() <<= read_issue_;
    um_->we.sig() <<= rsp_q_ & !to_dram_ & running_;
    um_->wmask.sig() <<= field("lane_mask");
    for (int j = 0; j < H; ++j) um_->wdata[j].sig() <<= rsp_data_[static_cast<size_t>(j)];
  }

  Module& m_;
  const arch::DmaGeometry& g_;
  const arch::DmaLayout layout_;
  const int H, W, GB, D, S, NW, Q;  // lanes, lane bits, group bits, DRAM beat and slot bits, words, queue
  Sig desc_we_, desc_word_, desc_ready_, compute_half_, busy_, host_half_busy_, done_count_, error_;
  std::optional<DramPort> mem_;  // the DRAM port and the unified memory's host port, as declared
  std::optional<HostPort> um_;
  Sig count_, head_, tail_, push_, desc_, to_dram_, running_, start_;
  std::vector<Sig> queue_;
  std::optional<InstanceRef> req_gen_, rsp_gen_;
  Sig req_valid_, req_dram_, req_slot_, rsp_q_, fifo_n_, read_issue_;
  std::vector<Sig> rsp_data_, e_dram_, e_data0_;
};

}  // namespace

void Dma::build(Module& m) const { DmaBuilder(m, p).build(); }

}  // namespace fetta::hw
