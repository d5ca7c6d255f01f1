#include <fmt/core.h>

#include <map>
#include <optional>

#include "hw/ce/delay_line.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/address_generator.hpp"
#include "hw/mem/bank_rows.hpp"
#include "hw/ports.hpp"
#include "hw/sys/system.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

int bits_for(int64_t v) {  // ceil(log2(v)), 0 for 1
  int b = 0;
  while ((int64_t{1} << b) < v) ++b;
  return b;
}

}  // namespace

Identity Controller::identity() const {
  const arch::CeConfig& ce = p.cfg.ce;
  const arch::IsaLayout isa(p.cfg);
  const bool os = isa.has_field("os");
  return Identity("controller")
      .param("ces", ce.count, fmt::format("_g{}", ce.count))
      .param("rows", ce.rows, fmt::format("_{}", ce.rows))
      .param("cols", ce.cols, fmt::format("x{}", ce.cols))
      .param("lanes", p.cfg.network.lanes, fmt::format("_n{}", p.cfg.network.lanes))
      .param("banks", isa.banks(), fmt::format("_b{}", isa.banks()))
      .param("half_addr_bits", isa.half_addr_bits(), fmt::format("_a{}", isa.half_addr_bits()))
      .param("acc_addr_bits", isa.acc_addr_bits(), fmt::format("_q{}", isa.acc_addr_bits()))
      .param("ctrl_delay", p.ctrl_delay, fmt::format("_c{}", p.ctrl_delay))
      .param("acc_delay", p.acc_delay, fmt::format("_d{}", p.acc_delay))
      .flag("ib_double_buffer", ce.ib_double_buffer, ce.ib_double_buffer ? "" : "_ib1")
      .flag("output_stationary", os, os ? "_os" : "")
      .flag("psum_double_buffer", ce.psum_double_buffer, os && !ce.psum_double_buffer ? "_ps1" : "")
      .param("accum_pipeline", p.cfg.memory.accum_pipeline,
             p.cfg.memory.accum_pipeline != 2 ? fmt::format("_r{}", p.cfg.memory.accum_pipeline) : "")
      .param("instr_bits", isa.bits())
      .param("queue_depth", p.queue_depth, p.queue_depth != arch::kTopInstrQueueDepth ? fmt::format("_iq{}", p.queue_depth) : "");
}

namespace {

// The controller's generator, one member per part of the hardware. The parts share the ports,
// the decoded instruction and the FSM state; they are built in the order their signals are
// declared in the emitted module.
class ControllerBuilder {
 public:
  ControllerBuilder(Module& m, const ControllerParams& p);
  void build();

 private:
  void check_params() const;
  void constants();
  void comments();
  void ports();
  void instruction_queue();
  void decoder();
  void gemm_generators();
  void fold_handshake();
  void read_outputs();
  void ce_control();
  void accumulator_ops();
  void store_sequencer();
  void accumulator_rows();
  void fsm();
  // An instruction field of the current instruction: a wire named cur_<field>, made at first use.
  Expr fld(const std::string& name);
  // Zero-extension to the address generators' width.
  Expr za(const Expr& e) const { return e.width() == GA_ ? e : e.zext(GA_); }

  Module& m_;
  const ControllerParams& p_;
  const arch::IsaLayout isa_;
  const int G_, R_, C_, N_, L_;
  const bool os_hw_;  // the CEs have the output-stationary mode: drive it
  const bool fp_;
  const int IW_, NW_, AW_, QW_, QD_, qb_;
  const int GA_;  // address generator width: unified or accumulator rows

  struct Ports {
    Sig instr_we, instr_word, instr_ready, busy, error, cycle_count, retired, compute_half, dma_hold;
    Sig ia_en, ia_row, ib_en, ib_row, ia_sel, ia_mask, ia_tr, ib_sel, ib_mask, ib_tr;
    Sig ce_active, ce_first, ce_ib_load, ce_ib_from_left, ce_os, ce_last;
    Sig acc_op;
    Data acc_row, red_sw_mode;
    Sig red_tr_sel;
    Sig st_valid, st_row, st_src_lane, st_dst_lane, st_count_m1, st_diag, st_row_bank_strides, st_other;
    Sig st_pad_neg, st_shift;
  } io_;

  // named constants: FSM states, opcodes, accumulator ops (localparams in the RTL)
  Expr s_idle_, s_start_, s_gemm_, s_drain_, s_store_;
  Expr op_gemm_, op_red_cfg_, op_flip_, op_store_;
  Expr acc_write_, acc_add_, acc_read_;
  std::map<std::string, Sig> fields_;
  // queue and decoder
  Sig count_, push_, overflow_, state_, q_head_, head_op_, pop_, dma_wait_, cur_, cur_is_store_;
  Expr os_ = lit(0, 1);  // the dataflow of the last gemm (OS when 1)
  // GEMM
  std::optional<InstanceRef> ia_gen_, ib_gen_;
  Sig start_, ib_top_, ia_first_, ia_last_, ib_last_, run_ia_, run_ib_, os_last_;
  Data ia_addr_, ib_addr_;
  Sig acc_out_;
  // STORE
  std::optional<InstanceRef> st_gen_;
  Sig st_issue_;
  Data st_addr_;
};

ControllerBuilder::ControllerBuilder(Module& m, const ControllerParams& p)
    : m_(m),
      p_(p),
      isa_(p.cfg),
      G_(p.cfg.ce.count),
      R_(p.cfg.ce.rows),
      C_(p.cfg.ce.cols),
      N_(p.cfg.network.lanes),
      L_(isa_.levels()),
      os_hw_(isa_.has_field("os")),
      fp_(p.cfg.dtype == arch::DataType::bf16),
      IW_(isa_.bits()),
      NW_(isa_.words()),
      AW_(isa_.half_addr_bits()),
      QW_(isa_.acc_addr_bits()),
      QD_(p.queue_depth),
      qb_(bits_for(p.queue_depth)),
      GA_(std::max(AW_, QW_)) {}

void ControllerBuilder::build() {
  check_params();
  comments();
  ports();
  constants();
  instruction_queue();
  decoder();
  gemm_generators();
  fold_handshake();
  read_outputs();
  ce_control();
  accumulator_ops();
  store_sequencer();
  accumulator_rows();
  fsm();
}

void ControllerBuilder::check_params() const {
  if (QD_ < 2 || (QD_ & (QD_ - 1)) != 0)
    throw std::invalid_argument(fmt::format("Controller: queue_depth = {}; allowed: a power of two >= 2", QD_));
  if (p_.ctrl_delay < 1 || p_.acc_delay <= p_.ctrl_delay)
    throw std::invalid_argument(fmt::format("Controller: ctrl_delay = {}, acc_delay = {}; allowed: 1 <= ctrl_delay < acc_delay",
                                            p_.ctrl_delay, p_.acc_delay));
  if (L_ > GA_) throw std::invalid_argument("Controller: more lane bits than address bits");
}

void ControllerBuilder::comments() {
  m_.add_comment(fmt::format("Instruction queue ({} x {} bits, written as {} 32-bit words), decoder and the GEMM loop FSM.",
                             QD_, IW_, NW_));
  m_.add_comment("ISA and timing: docs/isa.md. IB loads of fold f+1 start once fold f streams (double-buffered IB);");
  m_.add_comment("they come from the left (C cycles per CE group) or, with the gemm's ib_top bit, from the top (all CEs).");
  if (os_hw_)
    m_.add_comment("A gemm with the os bit streams IA and IB together (output-stationary) and drains R rows per fold.");
}

void ControllerBuilder::ports() {
  Module& m = m_;
  Ports& io = io_;
  // ---- host side
  const WordPort instr = m.input(Controller::kInstr, WordPort::type());
  io.instr_we = instr.we;
  io.instr_word = instr.word;
  io.instr_ready = instr.ready;
  io.busy = m.output("busy", UInt(1));
  io.error = m.output("error", UInt(1));
  io.cycle_count = m.output("cycle_count", UInt(48));
  io.retired = m.output("retired", UInt(32));
  io.compute_half = m.output("compute_half", UInt(1));
  io.dma_hold = m.input("dma_hold", UInt(1));
  // ---- datapath control
  io.ia_en = m.output("ia_en", UInt(1));
  io.ia_row = m.output("ia_row", UInt(AW_));
  io.ib_en = m.output("ib_en", UInt(1));
  io.ib_row = m.output("ib_row", UInt(AW_));
  io.ia_sel = m.output("ia_sel", UInt(L_));
  io.ia_mask = m.output("ia_mask", UInt(L_));
  io.ia_tr = m.output("ia_tr", UInt(1));
  io.ib_sel = m.output("ib_sel", UInt(L_));
  io.ib_mask = m.output("ib_mask", UInt(L_));
  io.ib_tr = m.output("ib_tr", UInt(1));
  io.ce_active = m.output("ce_active", UInt(1));
  io.ce_first = m.output("ce_first", UInt(1));
  io.ce_ib_load = m.output("ce_ib_load", UInt(G_));
  io.ce_ib_from_left = m.output("ce_ib_from_left", UInt(1));
  if (os_hw_) {
    io.ce_os = m.output("ce_os", UInt(1));
    io.ce_last = m.output("ce_last", UInt(1));
  }
  io.acc_op = m.output("acc_op", UInt(2));
  io.acc_row = m.output("acc_row", Vec(UInt(QW_), isa_.banks()));  // per bank: a diagonal STORE reads each at its own
  io.red_sw_mode = m.output("red_sw_mode", Vec(UInt(N_), L_));
  io.red_tr_sel = m.output("red_tr_sel", UInt(N_));
  // STORE: one move per cycle to the ResultWriter, in step with the accumulator's read data.
  io.st_valid = m.output("st_valid", UInt(1));
  io.st_row = m.output("st_row", UInt(AW_));
  io.st_src_lane = m.output("st_src_lane", UInt(L_));
  io.st_dst_lane = m.output("st_dst_lane", UInt(L_));
  io.st_count_m1 = m.output("st_count_m1", UInt(L_));
  io.st_diag = m.output("st_diag", UInt(1));
  // Per bank bit, packed (bit h in [h*AW +: AW]); no port with one bank.
  if (isa_.banks() > 1) io.st_row_bank_strides = m.output("st_row_bank_strides", UInt(AW_ * isa_.bank_bits()));
  io.st_other = m.output("st_other", UInt(1));
  if (fp_)
    io.st_pad_neg = m.output("st_pad_neg", UInt(1));
  else
    io.st_shift = m.output("st_shift", UInt(6));
}

// FSM states; the opcodes of arch::Opcode (docs/isa.md); the accumulator ops of AccumOp.
void ControllerBuilder::constants() {
  Module& m = m_;
  s_idle_ = m.constant("S_IDLE", 0, 3);
  s_start_ = m.constant("S_START", 1, 3);
  s_gemm_ = m.constant("S_GEMM", 2, 3);
  s_drain_ = m.constant("S_DRAIN", 3, 3);
  s_store_ = m.constant("S_STORE", 4, 3);
  auto opcode = [&](const char* name, arch::Opcode o) { return m.constant(name, static_cast<uint64_t>(o), 4); };
  op_gemm_ = opcode("OP_GEMM", arch::Opcode::gemm);
  op_red_cfg_ = opcode("OP_RED_CFG", arch::Opcode::red_cfg);
  op_flip_ = opcode("OP_FLIP", arch::Opcode::flip);
  op_store_ = opcode("OP_STORE", arch::Opcode::store);
  auto acc_op = [&](const char* name, AccumOp o) { return m.constant(name, static_cast<uint64_t>(o), 2); };
  acc_write_ = acc_op("ACC_WRITE", AccumOp::write);
  acc_add_ = acc_op("ACC_ADD", AccumOp::accumulate);
  acc_read_ = acc_op("ACC_READ", AccumOp::read);
}

Expr ControllerBuilder::fld(const std::string& name) {
  auto it = fields_.find(name);
  if (it != fields_.end()) return it->second;
  const arch::IsaField& f = isa_.field(name);
  return fields_.emplace(name, m_.node("cur_" + name, cur_.bits(f.lsb + f.width - 1, f.lsb))).first->second;
}

// Host side: 32-bit words assembled into instructions, pushed into a QD-deep queue.
void ControllerBuilder::instruction_queue() {
  Module& m = m_;
  const int wcb = std::max(1, bits_for(NW_));
  Sig wcount = m.reg("wcount", UInt(wcb), reset_to(0));
  std::vector<Sig> wbuf;
  for (int w = 0; w + 1 < NW_; ++w) wbuf.push_back(m.reg(fmt::format("wbuf_{}", w), UInt(32)));
  count_ = m.reg("count", UInt(qb_ + 1), reset_to(0));
  Sig head = m.reg("head", UInt(qb_), reset_to(0));
  Sig tail = m.reg("tail", UInt(qb_), reset_to(0));
  std::vector<Sig> queue;
  for (int q = 0; q < QD_; ++q) queue.push_back(m.reg(fmt::format("queue_{}", q), UInt(IW_)));

  Sig full = m.node("full", count_ == QD_);
  Sig last_word = m.node("last_word", wcount == NW_ - 1);
  push_ = m.node("push", io_.instr_we & last_word & !full);
  overflow_ = m.node("overflow", io_.instr_we & last_word & full);
  io_.instr_ready <<= !full;
  m.when(io_.instr_we & !overflow_, [&] { wcount <<= mux(last_word, lit(0, wcb), wcount + 1); });
  for (int w = 0; w + 1 < NW_; ++w)
    m.when(io_.instr_we & (wcount == w), [&] { wbuf[static_cast<size_t>(w)] <<= io_.instr_word; });
  std::vector<Expr> words_msb_first{io_.instr_word};
  for (int w = NW_ - 2; w >= 0; --w) words_msb_first.push_back(wbuf[static_cast<size_t>(w)]);
  Expr assembled = NW_ == 1 ? Expr(io_.instr_word) : cat(words_msb_first);
  for (int q = 0; q < QD_; ++q) m.when(push_ & (tail == q), [&] { queue[static_cast<size_t>(q)] <<= assembled; });

  // The head of the queue, popped when the FSM is idle.
  state_ = m.reg("state", UInt(3), reset_to(s_idle_));
  std::vector<Expr> q_items(queue.begin(), queue.end());
  q_head_ = m.node("q_head", select(q_items, head));
  head_op_ = m.node("head_op", q_head_.bits(3, 0));
  // The DMA's head descriptor moves the host's half (docs/dma.md): a FLIP, or a STORE into that
  // half, waits until it is done, so the half never changes under the DMA.
  const arch::IsaField& other_f = isa_.field("st_other_half");
  dma_wait_ = m.node("dma_wait", (state_ == s_idle_) & (count_ != 0) & io_.dma_hold &
                                     ((head_op_ == op_flip_) |
                                      ((head_op_ == op_store_) & (q_head_.bits(other_f.lsb, other_f.lsb) == 1))));
  pop_ = m.node("pop", (state_ == s_idle_) & (count_ != 0) & !dma_wait_);
  m.when(push_ & !pop_, [&] { count_ <<= count_ + 1; }).elsewhen(pop_ & !push_, [&] { count_ <<= count_ - 1; });
  m.when(push_, [&] { tail <<= tail + 1; });
  m.when(pop_, [&] { head <<= head + 1; });
}

// The popped instruction: gemm and store are held in `cur` while they run; flip and red_cfg
// take effect at the pop; anything else raises `error`.
void ControllerBuilder::decoder() {
  Module& m = m_;
  // Clocked only when a gemm or store is popped (a few cycles per instruction).
  cur_ = m.reg("cur", UInt(IW_), clocked_by(m.clock_gate("pop_cur", pop_ & ((head_op_ == op_gemm_) | (head_op_ == op_store_)))));
  cur_ <<= q_head_;
  cur_is_store_ = m.node("cur_is_store", cur_.bits(3, 0) == op_store_);
  // The dataflow of the last gemm, held through STOREs: the CEs' mode changes only at a gemm's pop,
  // when the one before has drained.
  if (os_hw_) {
    const arch::IsaField& f = isa_.field("os");
    Sig os_mode = m.reg("os_mode", UInt(1), RegOptions{}.reset_to(0).enabled_by(pop_ & (head_op_ == op_gemm_)));
    os_mode <<= q_head_.bits(f.lsb, f.lsb);
    os_ = os_mode;
  }

  Sig error_r = m.reg("error_r", UInt(1), reset_to(0));
  const Expr legal = (head_op_ == op_gemm_) | (head_op_ == op_red_cfg_) | (head_op_ == op_flip_) | (head_op_ == op_store_);
  m.when((pop_ & !legal) | overflow_, [&] { error_r <<= 1; });
  io_.error <<= error_r;

  Sig half = m.reg("half", UInt(1), reset_to(0));
  m.when(pop_ & (head_op_ == op_flip_), [&] { half <<= !half; });
  io_.compute_half <<= half;

  // RED_CFG: chunk registers, concatenated into the reduction network's control.
  const int pb = isa_.red_chunk_bits(), nchunks = isa_.red_chunks();
  const arch::IsaField& chunk_f = isa_.field("chunk");
  std::vector<Expr> chunks_msb_first;
  for (int c = nchunks - 1; c >= 0; --c) {
    Sig r = m.reg(fmt::format("red_chunk_{}", c), UInt(pb), reset_to(0));
    m.when(pop_ & (head_op_ == op_red_cfg_) &
               (q_head_.bits(chunk_f.lsb + chunk_f.width - 1, chunk_f.lsb) == c),
           [&] { r <<= q_head_.bits(IW_ - 1, 12); });
    chunks_msb_first.push_back(r);
  }
  Sig red_cfg = m.node("red_cfg", nchunks == 1 ? chunks_msb_first[0] : cat(chunks_msb_first));
  for (int k = 0; k < L_; ++k) io_.red_sw_mode[k].sig() <<= red_cfg.bits(k * N_ + N_ - 1, k * N_);
  io_.red_tr_sel <<= red_cfg.bits(L_ * N_ + N_ - 1, L_ * N_);
}

// ---- GEMM: two address generators (IA stream + accumulator rows; IB loads + CE group). In OS
// the first one runs alone: its levels are (k, M tile, N tile), stream 1 gives the accumulator
// row of a fold's first drained row and stream 2 the IB row streamed beside IA.
void ControllerBuilder::gemm_generators() {
  Module& m = m_;
  start_ = m.node("start", (state_ == s_start_) & !cur_is_store_);
  const AddressGenerator ag_ia(AddressGeneratorParams{3, os_hw_ ? 3 : 2, GA_, 16});
  const AddressGenerator ag_ib(AddressGeneratorParams{4, 2, GA_, 16});
  ia_gen_ = m.instance(ag_ia, "ia_gen");
  ib_gen_ = m.instance(ag_ib, "ib_gen");
  const Expr one = lit(1, GA_), zero = lit(0, GA_);
  {
    Data bound = ia_gen_->io("bound_m1");
    bound[0].sig() <<= fld("m_m1");
    bound[1].sig() <<= fld("k_tiles_m1");
    bound[2].sig() <<= fld("n_tiles_m1");
    Data base = ia_gen_->io("base");
    base[0].sig() <<= za(fld("a_base"));
    base[1].sig() <<= za(fld("acc_base"));
    Data stride = ia_gen_->io("stride");
    stride[0][0].sig() <<= one;
    stride[0][1].sig() <<= za(fld("a_kt_stride"));
    stride[0][2].sig() <<= zero;
    stride[1][0].sig() <<= os_hw_ ? Expr(mux(os_, zero, one)) : one;
    stride[1][1].sig() <<= os_hw_ ? Expr(mux(os_, lit(static_cast<uint64_t>(R_), GA_), zero)) : zero;
    stride[1][2].sig() <<= za(fld("acc_nt_stride"));
    if (os_hw_) {
      base[2].sig() <<= za(fld("b_base"));
      stride[2][0].sig() <<= one;
      stride[2][1].sig() <<= zero;
      stride[2][2].sig() <<= za(fld("b_nt_stride"));
    }
  }
  // A load from the left: C cycles per CE group, column C-1 first (docs/ce.md). From the top:
  // Lt = 1 + (R-1)s cycles for every CE at once, tile row Lt-1-i in cycle i (rows past R-1 are
  // read but ignored by the CE), so levels 0 and 1 become (Lt cycles, one "group").
  const int Lt = arch::system_timing(p_.cfg).ib_top_load;
  ib_top_ = m.node("ib_top", fld("ib_top"));
  {
    Data bound = ib_gen_->io("bound_m1");
    bound[0].sig() <<= mux(ib_top_, lit(static_cast<uint64_t>(Lt - 1), 16), lit(static_cast<uint64_t>(C_ - 1), 16));
    bound[1].sig() <<= mux(ib_top_, lit(0, 16), fld("gn_m1").zext(16));
    bound[2].sig() <<= fld("k_tiles_m1");
    bound[3].sig() <<= fld("n_tiles_m1");
    Data base = ib_gen_->io("base");
    base[0].sig() <<= za(fld("b_base")) + mux(ib_top_, lit(static_cast<uint64_t>(Lt - 1), GA_),
                                               lit(static_cast<uint64_t>(C_ - 1), GA_));
    base[1].sig() <<= zero;
    Data stride = ib_gen_->io("stride");
    stride[0][0].sig() <<= lit((uint64_t{1} << GA_) - 1, GA_);  // -1
    stride[0][1].sig() <<= lit(static_cast<uint64_t>(C_), GA_);
    stride[0][2].sig() <<= za(fld("b_kt_stride"));
    stride[0][3].sig() <<= za(fld("b_nt_stride"));
    stride[1][0].sig() <<= zero;
    stride[1][1].sig() <<= za(fld("gk_m1").zext(GA_)) + one;  // group base = gn * Gk
    stride[1][2].sig() <<= zero;
    stride[1][3].sig() <<= zero;
  }
  ia_gen_->io("start").sig() <<= start_;
  ib_gen_->io("start").sig() <<= os_hw_ ? start_ & !os_ : Expr(start_);
}

// Fold handshake: a fold streams once its IB load is complete; the next load starts once the
// fold streams (double-buffered IB) or has streamed (single buffer).
void ControllerBuilder::fold_handshake() {
  Module& m = m_;
  Sig loads_done = m.reg("loads_done", UInt(32), reset_to(0));
  Sig streams_started = m.reg("streams_started", UInt(32), reset_to(0));
  Sig streams_ended = m.reg("streams_ended", UInt(32), reset_to(0));
  ia_first_ = ia_gen_->io("first").sig();
  ia_last_ = ia_gen_->io("last").sig();
  ib_last_ = ib_gen_->io("last").sig();
  Sig gate = p_.cfg.ce.ib_double_buffer ? streams_started : streams_ended;
  run_ib_ = m.node("run_ib", (state_ == s_gemm_) & ib_gen_->io("valid").sig() & (gate >= loads_done));
  // OS: a fold may start once the one before has started R cycles ago (the drain must have passed
  // the top rows; single-buffered Psums: once it has drained, K + R - 1 cycles).
  Expr fold_may_start = loads_done > streams_started;
  if (os_hw_) {
    Sig os_gap = m.reg("os_gap", UInt(17), reset_to(0));
    const Expr gap_init = p_.cfg.ce.psum_double_buffer
                              ? Expr(lit(static_cast<uint64_t>(R_ - 1), 17))
                              : fld("m_m1").zext(17) + lit(static_cast<uint64_t>(R_ - 1), 17);
    m.when(start_, [&] { os_gap <<= 0; })
        .elsewhen((state_ == s_gemm_) & os_ & ia_gen_->io("valid").sig() & ia_first_.bit(0) & (os_gap == 0), [&] {
          os_gap <<= gap_init;
        })
        .elsewhen(os_gap != 0, [&] { os_gap <<= os_gap - 1; });
    fold_may_start = mux(os_, os_gap == 0, fold_may_start);
  }
  run_ia_ = m.node("run_ia", (state_ == s_gemm_) & ia_gen_->io("valid").sig() & ((!ia_first_.bit(0)) | fold_may_start));
  ib_gen_->io("run").sig() <<= run_ib_;
  ia_gen_->io("run").sig() <<= run_ia_;
  m.when(start_, [&] { loads_done <<= 0; }).elsewhen(run_ib_ & ib_last_.bit(0) & ib_last_.bit(1), [&] {
    loads_done <<= loads_done + 1;
  });
  m.when(start_, [&] { streams_started <<= 0; }).elsewhen(run_ia_ & ia_first_.bit(0), [&] {
    streams_started <<= streams_started + 1;
  });
  m.when(start_, [&] { streams_ended <<= 0; }).elsewhen(run_ia_ & ia_last_.bit(0), [&] {
    streams_ended <<= streams_ended + 1;
  });
}

// The unified memory's IA and IB reads and the distribution networks' settings.
void ControllerBuilder::read_outputs() {
  ia_addr_ = ia_gen_->io("addr");
  ib_addr_ = ib_gen_->io("addr");
  io_.ia_en <<= run_ia_;
  io_.ia_row <<= ia_addr_[0].sig().bits(AW_ - 1, 0);
  if (os_hw_) {
    io_.ib_en <<= mux(os_, run_ia_, run_ib_);
    io_.ib_row <<= mux(os_, ia_addr_[2].sig(), ib_addr_[0].sig()).bits(AW_ - 1, 0);
  } else {
    io_.ib_en <<= run_ib_;
    io_.ib_row <<= ib_addr_[0].sig().bits(AW_ - 1, 0);
  }
  io_.ia_sel <<= fld("ia_sel");
  io_.ia_mask <<= fld("ia_mask");
  io_.ia_tr <<= fld("ia_tr");
  io_.ib_sel <<= fld("ib_sel");
  io_.ib_mask <<= fld("ib_mask");
  io_.ib_tr <<= fld("ib_tr");
}

// CE control at issue time, delayed to meet the data: IB loads from the left go to the CEs of
// one group, from the top to all of them.
void ControllerBuilder::ce_control() {
  Module& m = m_;
  Sig grp = m.node("grp", ib_addr_[1].sig());
  Sig gk_mask = m.node("gk_mask", ~za(fld("gk_m1").zext(GA_)));
  std::vector<Expr> load_bits;  // CE G-1 first
  for (int g = G_ - 1; g >= 0; --g)
    load_bits.push_back(run_ib_ & (ib_top_ | ((lit(static_cast<uint64_t>(g), GA_) & gk_mask) == grp)));
  if (os_hw_) os_last_ = m.node("os_last", run_ia_ & ia_last_.bit(0) & os_);  // a fold's last vector (OS)
  std::vector<Expr> ctl_parts{run_ia_, run_ia_ & ia_first_.bit(0)};
  if (os_hw_) ctl_parts.push_back(os_last_);
  ctl_parts.push_back(G_ == 1 ? load_bits[0] : cat(load_bits));
  const int CW = G_ + (os_hw_ ? 3 : 2);
  InstanceRef ctl_dly = m.instance(DelayLine({CW, p_.ctrl_delay, true}), "ctl_delay");
  ctl_dly.io("in").sig() <<= cat(ctl_parts);
  Sig ctl_out = ctl_dly.io("out").sig();
  io_.ce_active <<= ctl_out.bit(CW - 1);
  io_.ce_first <<= ctl_out.bit(CW - 2);
  if (os_hw_) {
    io_.ce_last <<= ctl_out.bit(G_);
    io_.ce_os <<= os_;
  }
  io_.ce_ib_load <<= ctl_out.bits(G_ - 1, 0);
  // Quasi-static for an instruction: it changes at a pop, long after the last load of the one
  // before has passed the CEs (its drain), and before the first load of this one reaches them.
  io_.ce_ib_from_left <<= !ib_top_;
}

// Accumulator op travels with the IA vector: write on the first K tile, else accumulate.
void ControllerBuilder::accumulator_ops() {
  Module& m = m_;
  Expr op_now = mux(run_ia_, mux(fld("acc_accumulate") | !ia_first_.bit(1), acc_add_, acc_write_), lit(0, 2));
  Expr acc_row_now = ia_addr_[1].sig().bits(QW_ - 1, 0);
  if (os_hw_) {
    // OS: a fold's R rows leave the CEs bottom row first, one per cycle, the first as far behind
    // its last vector as a stationary result row is behind its vector (s = 1), so the ops enter
    // the same delay line in the cycles t_last .. t_last + R - 1.
    const Expr os_op = mux(fld("acc_accumulate"), acc_add_, acc_write_);
    const Expr bottom = lit(static_cast<uint64_t>(R_ - 1), QW_);
    Expr seq_op = lit(0, 2), seq_row = acc_row_now;
    if (R_ > 1) {
      const int rb = bits_for(R_);
      Sig dr_row = m.reg("os_drain_row", UInt(rb), reset_to(0));  // row j of the drain in progress; 0: none
      Sig dr_base = m.reg("os_drain_base", UInt(QW_), enabled_by(os_last_));
      dr_base <<= acc_row_now;
      m.when(os_last_, [&] { dr_row <<= 1; }).elsewhen(dr_row != 0, [&] { dr_row <<= dr_row + 1; });
      seq_op = mux(dr_row != 0, os_op, lit(0, 2));
      seq_row = dr_base + bottom - dr_row.zext(QW_);
    }
    op_now = mux(os_, mux(os_last_, os_op, seq_op), op_now);
    acc_row_now = mux(os_, mux(os_last_, acc_row_now + bottom, seq_row), acc_row_now);
  }
  InstanceRef acc_dly = m.instance(DelayLine({2 + QW_, p_.acc_delay, true}), "acc_delay");
  acc_dly.io("in").sig() <<= cat({op_now, acc_row_now});
  acc_out_ = acc_dly.io("out").sig();
}

// ---- STORE: a 4-level nest of four streams (accumulator row, its lane; unified row, its lane).
// Addresses wrap modulo each field's range, so the low bits of a GA-bit sum are exact.
void ControllerBuilder::store_sequencer() {
  Module& m = m_;
  const int SL = arch::StoreInstr::kLevels;
  st_gen_ = m.instance(AddressGenerator(AddressGeneratorParams{SL, 4, GA_, QW_ + 1}), "st_gen");
  {
    Data bound = st_gen_->io("bound_m1");
    Data base = st_gen_->io("base");
    Data stride = st_gen_->io("stride");
    const char* streams[4] = {"src_row", "src_lane", "dst_row", "dst_lane"};
    for (int l = 0; l < SL; ++l) bound[l].sig() <<= fld(fmt::format("st_bound_m1_l{}", l));
    for (int s2 = 0; s2 < 4; ++s2) {
      base[s2].sig() <<= za(fld(fmt::format("st_{}_base", streams[s2])));
      for (int l = 0; l < SL; ++l) stride[s2][l].sig() <<= za(fld(fmt::format("st_{}_stride_l{}", streams[s2], l)));
    }
  }
  st_gen_->io("start").sig() <<= (state_ == s_start_) & cur_is_store_;
  st_issue_ = m.node("st_issue", (state_ == s_store_) & st_gen_->io("valid").sig());
  st_gen_->io("run").sig() <<= st_issue_;
  st_addr_ = st_gen_->io("addr");
  // The accumulator returns a row one cycle after its read: the move's destination waits as long.
  Sig st_valid_q = m.reg("st_valid_q", UInt(1), reset_to(0));
  st_valid_q <<= st_issue_;
  Sig st_row_q = m.reg("st_row_q", UInt(AW_), enabled_by(st_issue_));
  st_row_q <<= st_addr_[2].sig().bits(AW_ - 1, 0);
  Sig st_src_q = m.reg("st_src_lane_q", UInt(L_), enabled_by(st_issue_));
  st_src_q <<= st_addr_[1].sig().bits(L_ - 1, 0);
  Sig st_dst_q = m.reg("st_dst_lane_q", UInt(L_), enabled_by(st_issue_));
  st_dst_q <<= st_addr_[3].sig().bits(L_ - 1, 0);
  io_.st_valid <<= st_valid_q;
  io_.st_row <<= st_row_q;
  io_.st_src_lane <<= st_src_q;
  io_.st_dst_lane <<= st_dst_q;
  io_.st_count_m1 <<= fld("st_count_m1");
  io_.st_diag <<= fld("st_diag");
  if (isa_.banks() > 1) {
    std::vector<Expr> strides;  // bit LB-1 first: cat puts parts[0] in the MSBs
    for (int h = isa_.bank_bits() - 1; h >= 0; --h) strides.push_back(fld(fmt::format("st_dst_row_bank_stride_b{}", h)));
    io_.st_row_bank_strides <<= strides.size() == 1 ? strides[0] : cat(strides);
  }
  // Only while the STORE runs (its last write is in the DRAIN cycle): the host port owns that
  // half again as soon as the controller is idle.
  io_.st_other <<= fld("st_other_half") & cur_is_store_ & (state_ != s_idle_);
  if (fp_)
    io_.st_pad_neg <<= fld("st_pad_neg");
  else
    io_.st_shift <<= fld("st_shift");
}

// The accumulator's op and rows: the STORE's reads while it issues, else the GEMM's delayed ops.
void ControllerBuilder::accumulator_rows() {
  Module& m = m_;
  io_.acc_op <<= mux(st_issue_, acc_read_, acc_out_.bits(QW_ + 1, QW_));
  // A diagonal move's element in accumulator bank b goes to unified bank b + k (k the bank
  // distance from src_lane to dst_lane), whose row picks the accumulator row it reads.
  const int B = isa_.banks(), LT = L_ - isa_.bank_bits();
  std::vector<Expr> st_rows{st_addr_[0].sig().bits(QW_ - 1, 0)};
  if (B > 1) {
    Sig neg_k = m.node("st_bank_rot", st_addr_[1].sig().bits(L_ - 1, LT) - st_addr_[3].sig().bits(L_ - 1, LT));
    std::vector<Expr> strides;
    for (int h = 0; h < isa_.bank_bits(); ++h)
      strides.push_back(m.node(fmt::format("st_acc_bank_stride_b{}", h),
                               mux(fld("st_diag"), fld(fmt::format("st_src_row_bank_stride_b{}", h)), lit(0, QW_))));
    st_rows = diagonal_bank_rows(m, "st_acc_row", st_rows[0], strides, neg_k, B);
  }
  for (int b = 0; b < B; ++b)
    io_.acc_row[b].sig() <<= mux(st_issue_, st_rows[static_cast<size_t>(b)], acc_out_.bits(QW_ - 1, 0));
}

// ---- FSM: IDLE pops; START starts the generators; GEMM or STORE runs them; DRAIN waits for the
// last accumulator write to land, then retires the instruction.
void ControllerBuilder::fsm() {
  Module& m = m_;
  // After the last accumulator op its write takes accum_pipeline - 1 cycles to land.
  const int settle = p_.cfg.memory.accum_pipeline - 1;
  const int DB = bits_for(p_.acc_delay + 2 + settle + R_) + 1;
  Sig drain = m.reg("drain", UInt(DB), reset_to(0));
  Sig gens_done = m.node("gens_done", ia_gen_->io("done").sig() & (os_hw_ ? ib_gen_->io("done").sig() | os_
                                                                             : Expr(ib_gen_->io("done").sig())));
  Sig retired_r = m.reg("retired_r", UInt(32), reset_to(0));
  m.switch_on(state_)
      .is(s_idle_, [&] {
        m.when(pop_ & ((head_op_ == op_gemm_) | (head_op_ == op_store_)), [&] { state_ <<= s_start_; })
            .elsewhen(pop_, [&] { retired_r <<= retired_r + 1; });
      })
      .is(s_start_, [&] { state_ <<= mux(cur_is_store_, s_store_, s_gemm_); })
      .is(s_store_, [&] {
        m.when(st_gen_->io("done").sig(), [&] {
          state_ <<= s_drain_;
          drain <<= lit(0, DB);  // the last move's write is on the memory port in the DRAIN cycle
        });
      })
      .is(s_gemm_, [&] {
        m.when(gens_done, [&] {
          state_ <<= s_drain_;
          // OS: the last fold's drain issues R - 1 accumulator ops after its last vector.
          const Expr ws_drain = lit(static_cast<uint64_t>(p_.acc_delay + 1 + settle), DB);
          drain <<= os_hw_ ? Expr(mux(os_, lit(static_cast<uint64_t>(p_.acc_delay + 1 + settle + R_ - 1), DB), ws_drain))
                           : ws_drain;
        });
      })
      .is(s_drain_, [&] {
        m.when(drain == 0, [&] {
          state_ <<= s_idle_;
          retired_r <<= retired_r + 1;
        }).otherwise([&] { drain <<= drain - 1; });
      });
  io_.retired <<= retired_r;
  io_.busy <<= (state_ != s_idle_) | (count_ != 0);
  Sig cycles = m.reg("cycles", UInt(48), reset_to(0));
  // Cycles spent waiting for the DMA are not the instructions' own: cycle_count leaves them out.
  m.when(((state_ != s_idle_) | (count_ != 0)) & !dma_wait_, [&] { cycles <<= cycles + 1; });
  io_.cycle_count <<= cycles;
}

}  // namespace

void Controller::build(Module& m) const { ControllerBuilder(m, p).build(); }

std::string elaborate_controller(Design& design, const arch::ArchConfig& cfg) {
  arch::validate(cfg);
  const arch::SystemTiming t = hw::system_timing(cfg);
  return design.elaborate(Controller(ControllerParams{cfg, t.ctrl_delay, t.acc_delay, arch::kTopInstrQueueDepth}))->name();
}

}  // namespace fetta::hw
