#include <fmt/core.h>

#include "hw/ce/delay_line.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/address_generator.hpp"
#include "hw/mem/bank_rows.hpp"
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

std::string Controller::module_name() const {
  const arch::CeConfig& ce = p.cfg.ce;
  const arch::IsaLayout isa(p.cfg);
  std::string variant = ce.ib_double_buffer ? "" : "_ib1";
  if (isa.has_field("os")) variant += ce.psum_double_buffer ? "_os" : "_os_ps1";
  if (p.cfg.memory.accum_pipeline != 2) variant += fmt::format("_r{}", p.cfg.memory.accum_pipeline);
  return fmt::format("controller_g{}_{}x{}_n{}_b{}_a{}_q{}_c{}_d{}{}", ce.count, ce.rows, ce.cols, p.cfg.network.lanes,
                     isa.banks(), isa.half_addr_bits(), isa.acc_addr_bits(), p.ctrl_delay, p.acc_delay, variant);
}

ParamList Controller::params() const {
  const arch::IsaLayout isa(p.cfg);
  return {{"ces", std::to_string(p.cfg.ce.count)},
          {"rows", std::to_string(p.cfg.ce.rows)},
          {"cols", std::to_string(p.cfg.ce.cols)},
          {"lanes", std::to_string(p.cfg.network.lanes)},
          {"banks", std::to_string(isa.banks())},
          {"instr_bits", std::to_string(isa.bits())},
          {"half_addr_bits", std::to_string(isa.half_addr_bits())},
          {"acc_addr_bits", std::to_string(isa.acc_addr_bits())},
          {"ctrl_delay", std::to_string(p.ctrl_delay)},
          {"acc_delay", std::to_string(p.acc_delay)},
          {"queue_depth", std::to_string(p.queue_depth)},
          {"accum_pipeline", std::to_string(p.cfg.memory.accum_pipeline)},
          {"ib_double_buffer", p.cfg.ce.ib_double_buffer ? "true" : "false"},
          {"output_stationary", isa.has_field("os") ? "true" : "false"}};
}

void Controller::build(Module& m) const {
  const arch::IsaLayout isa(p.cfg);
  const int G = p.cfg.ce.count, R = p.cfg.ce.rows, C = p.cfg.ce.cols, N = p.cfg.network.lanes, L = isa.levels();
  const bool os_hw = isa.has_field("os");  // the CEs have the output-stationary mode: drive it
  const int IW = isa.bits(), NW = isa.words(), AW = isa.half_addr_bits(), QW = isa.acc_addr_bits();
  const int QD = p.queue_depth, qb = bits_for(QD);
  const int GA = std::max(AW, QW);  // address generator width: unified or accumulator rows
  if (QD < 2 || (QD & (QD - 1)) != 0)
    throw std::invalid_argument(fmt::format("Controller: queue_depth = {}; allowed: a power of two >= 2", QD));
  if (p.ctrl_delay < 1 || p.acc_delay <= p.ctrl_delay)
    throw std::invalid_argument(fmt::format("Controller: ctrl_delay = {}, acc_delay = {}; allowed: 1 <= ctrl_delay < acc_delay",
                                            p.ctrl_delay, p.acc_delay));
  m.add_comment(fmt::format("Instruction queue ({} x {} bits, written as {} 32-bit words), decoder and the GEMM loop FSM.",
                            QD, IW, NW));
  m.add_comment("ISA and timing: docs/isa.md. IB loads of fold f+1 start once fold f streams (double-buffered IB);");
  m.add_comment("they come from the left (C cycles per CE group) or, with the gemm's ib_top bit, from the top (all CEs).");
  if (os_hw)
    m.add_comment("A gemm with the os bit streams IA and IB together (output-stationary) and drains R rows per fold.");

  // ---- host side: word assembly into the queue
  Sig instr_we = m.input("instr_we", UInt(1));
  Sig instr_word = m.input("instr_word", UInt(32));
  Sig instr_ready = m.output("instr_ready", UInt(1));
  Sig busy = m.output("busy", UInt(1));
  Sig error = m.output("error", UInt(1));
  Sig cycle_count = m.output("cycle_count", UInt(48));
  Sig retired = m.output("retired", UInt(32));
  Sig compute_half = m.output("compute_half", UInt(1));
  // ---- datapath control
  Sig ia_en = m.output("ia_en", UInt(1));
  Sig ia_row = m.output("ia_row", UInt(AW));
  Sig ib_en = m.output("ib_en", UInt(1));
  Sig ib_row = m.output("ib_row", UInt(AW));
  Sig ia_sel = m.output("ia_sel", UInt(L));
  Sig ia_mask = m.output("ia_mask", UInt(L));
  Sig ia_tr = m.output("ia_tr", UInt(1));
  Sig ib_sel = m.output("ib_sel", UInt(L));
  Sig ib_mask = m.output("ib_mask", UInt(L));
  Sig ib_tr = m.output("ib_tr", UInt(1));
  Sig ce_active = m.output("ce_active", UInt(1));
  Sig ce_first = m.output("ce_first", UInt(1));
  Sig ce_ib_load = m.output("ce_ib_load", UInt(G));
  Sig ce_ib_from_left = m.output("ce_ib_from_left", UInt(1));
  Sig ce_os = os_hw ? m.output("ce_os", UInt(1)) : Sig();
  Sig ce_last = os_hw ? m.output("ce_last", UInt(1)) : Sig();
  Sig acc_op = m.output("acc_op", UInt(2));
  Data acc_row = m.output("acc_row", Vec(UInt(QW), isa.banks()));  // per bank: a diagonal STORE reads each at its own
  Data red_sw_mode = m.output("red_sw_mode", Vec(UInt(N), L));
  Sig red_tr_sel = m.output("red_tr_sel", UInt(N));
  // STORE: one move per cycle to the ResultWriter, in step with the accumulator's read data.
  const bool fp = p.cfg.dtype == arch::DataType::bf16;
  Sig st_valid = m.output("st_valid", UInt(1));
  Sig st_row = m.output("st_row", UInt(AW));
  Sig st_src_lane = m.output("st_src_lane", UInt(L));
  Sig st_dst_lane = m.output("st_dst_lane", UInt(L));
  Sig st_count_m1 = m.output("st_count_m1", UInt(L));
  Sig st_diag = m.output("st_diag", UInt(1));
  // Per bank bit, packed (bit h in [h*AW +: AW]); no port with one bank.
  Sig st_row_bank_strides = isa.banks() > 1 ? m.output("st_row_bank_strides", UInt(AW * isa.bank_bits())) : Sig();
  Sig st_other = m.output("st_other", UInt(1));
  Sig st_pad_neg = fp ? m.output("st_pad_neg", UInt(1)) : Sig();
  Sig st_shift = fp ? Sig() : m.output("st_shift", UInt(6));

  const int wcb = std::max(1, bits_for(NW));
  Sig wcount = m.reg("wcount", UInt(wcb), reset_to(0));
  std::vector<Sig> wbuf;
  for (int w = 0; w + 1 < NW; ++w) wbuf.push_back(m.reg(fmt::format("wbuf_{}", w), UInt(32)));
  Sig count = m.reg("count", UInt(qb + 1), reset_to(0));
  Sig head = m.reg("head", UInt(qb), reset_to(0));
  Sig tail = m.reg("tail", UInt(qb), reset_to(0));
  std::vector<Sig> queue;
  for (int q = 0; q < QD; ++q) queue.push_back(m.reg(fmt::format("queue_{}", q), UInt(IW)));

  Sig full = m.node("full", count == QD);
  Sig last_word = m.node("last_word", wcount == NW - 1);
  Sig push = m.node("push", instr_we & last_word & !full);
  Sig overflow = m.node("overflow", instr_we & last_word & full);
  instr_ready <<= !full;
  m.when(instr_we & !overflow, [&] { wcount <<= mux(last_word, lit(0, wcb), wcount + 1); });
  for (int w = 0; w + 1 < NW; ++w) m.when(instr_we & (wcount == w), [&] { wbuf[static_cast<size_t>(w)] <<= instr_word; });
  std::vector<Expr> words_msb_first{instr_word};
  for (int w = NW - 2; w >= 0; --w) words_msb_first.push_back(wbuf[static_cast<size_t>(w)]);
  Expr assembled = NW == 1 ? Expr(instr_word) : cat(words_msb_first);
  for (int q = 0; q < QD; ++q) m.when(push & (tail == q), [&] { queue[static_cast<size_t>(q)] <<= assembled; });

  // ---- decode
  constexpr int kIdle = 0, kStart = 1, kGemm = 2, kDrain = 3, kStore = 4;
  Sig state = m.reg("state", UInt(3), reset_to(kIdle));
  std::vector<Expr> q_items(queue.begin(), queue.end());
  Sig q_head = m.node("q_head", select(q_items, head));
  Sig head_op = m.node("head_op", q_head.bits(3, 0));
  Sig pop = m.node("pop", (state == kIdle) & (count != 0));
  m.when(push & !pop, [&] { count <<= count + 1; }).elsewhen(pop & !push, [&] { count <<= count - 1; });
  m.when(push, [&] { tail <<= tail + 1; });
  m.when(pop, [&] { head <<= head + 1; });

  const int op_gemm = static_cast<int>(arch::Opcode::gemm), op_store = static_cast<int>(arch::Opcode::store);
  Sig cur = m.reg("cur", UInt(IW), RegOptions{}.enabled_by(pop & ((head_op == op_gemm) | (head_op == op_store))));
  cur <<= q_head;
  Sig cur_is_store = m.node("cur_is_store", cur.bits(3, 0) == op_store);
  // The dataflow of the last gemm, held through STOREs: the CEs' mode changes only at a gemm's pop,
  // when the one before has drained.
  Expr os = lit(0, 1);
  if (os_hw) {
    const arch::IsaField& f = isa.field("os");
    Sig os_mode = m.reg("os_mode", UInt(1), RegOptions{}.reset_to(0).enabled_by(pop & (head_op == op_gemm)));
    os_mode <<= q_head.bits(f.lsb, f.lsb);
    os = os_mode;
  }
  auto fld = [&](const std::string& name) -> Expr {
    const arch::IsaField& f = isa.field(name);
    return cur.bits(f.lsb + f.width - 1, f.lsb);
  };

  Sig error_r = m.reg("error_r", UInt(1), reset_to(0));
  const Expr legal = (head_op == op_gemm) | (head_op == static_cast<int>(arch::Opcode::red_cfg)) |
                     (head_op == static_cast<int>(arch::Opcode::flip)) | (head_op == op_store);
  m.when((pop & !legal) | overflow, [&] { error_r <<= 1; });
  error <<= error_r;

  Sig half = m.reg("half", UInt(1), reset_to(0));
  m.when(pop & (head_op == static_cast<int>(arch::Opcode::flip)), [&] { half <<= !half; });
  compute_half <<= half;

  // RED_CFG: chunk registers, concatenated into the reduction network's control.
  const int pb = isa.red_chunk_bits(), nchunks = isa.red_chunks();
  const arch::IsaField& chunk_f = isa.field("chunk");
  std::vector<Expr> chunks_msb_first;
  for (int c = nchunks - 1; c >= 0; --c) {
    Sig r = m.reg(fmt::format("red_chunk_{}", c), UInt(pb), reset_to(0));
    m.when(pop & (head_op == static_cast<int>(arch::Opcode::red_cfg)) &
               (q_head.bits(chunk_f.lsb + chunk_f.width - 1, chunk_f.lsb) == c),
           [&] { r <<= q_head.bits(IW - 1, 12); });
    chunks_msb_first.push_back(r);
  }
  Sig red_cfg = m.node("red_cfg", nchunks == 1 ? chunks_msb_first[0] : cat(chunks_msb_first));
  for (int k = 0; k < L; ++k) red_sw_mode[k].sig() <<= red_cfg.bits(k * N + N - 1, k * N);
  red_tr_sel <<= red_cfg.bits(L * N + N - 1, L * N);

  // ---- GEMM: two address generators (IA stream + accumulator rows; IB loads + CE group). In OS
  // the first one runs alone: its levels are (k, M tile, N tile), stream 1 gives the accumulator
  // row of a fold's first drained row and stream 2 the IB row streamed beside IA.
  Sig start = m.node("start", (state == kStart) & !cur_is_store);
  const AddressGenerator ag_ia(AddressGeneratorParams{3, os_hw ? 3 : 2, GA, 16});
  const AddressGenerator ag_ib(AddressGeneratorParams{4, 2, GA, 16});
  InstanceRef ia_gen = m.instance(ag_ia, "ia_gen");
  InstanceRef ib_gen = m.instance(ag_ib, "ib_gen");
  auto za = [&](const Expr& e) { return e.width() == GA ? e : e.zext(GA); };
  const Expr one = lit(1, GA), zero = lit(0, GA);
  {
    Data bound = ia_gen.io("bound_m1");
    bound[0].sig() <<= fld("m_m1");
    bound[1].sig() <<= fld("k_tiles_m1");
    bound[2].sig() <<= fld("n_tiles_m1");
    Data base = ia_gen.io("base");
    base[0].sig() <<= za(fld("a_base"));
    base[1].sig() <<= za(fld("acc_base"));
    Data stride = ia_gen.io("stride");
    stride[0][0].sig() <<= one;
    stride[0][1].sig() <<= za(fld("a_kt_stride"));
    stride[0][2].sig() <<= zero;
    stride[1][0].sig() <<= os_hw ? Expr(mux(os, zero, one)) : one;
    stride[1][1].sig() <<= os_hw ? Expr(mux(os, lit(static_cast<uint64_t>(R), GA), zero)) : zero;
    stride[1][2].sig() <<= za(fld("acc_nt_stride"));
    if (os_hw) {
      base[2].sig() <<= za(fld("b_base"));
      stride[2][0].sig() <<= one;
      stride[2][1].sig() <<= zero;
      stride[2][2].sig() <<= za(fld("b_nt_stride"));
    }
  }
  // A load from the left: C cycles per CE group, column C-1 first (docs/ce.md). From the top:
  // Lt = 1 + (R-1)s cycles for every CE at once, tile row Lt-1-i in cycle i (rows past R-1 are
  // read but ignored by the CE), so levels 0 and 1 become (Lt cycles, one "group").
  const int Lt = arch::system_timing(p.cfg).ib_top_load;
  Sig ib_top = m.node("ib_top", fld("ib_top"));
  {
    Data bound = ib_gen.io("bound_m1");
    bound[0].sig() <<= mux(ib_top, lit(static_cast<uint64_t>(Lt - 1), 16), lit(static_cast<uint64_t>(C - 1), 16));
    bound[1].sig() <<= mux(ib_top, lit(0, 16), fld("gn_m1").zext(16));
    bound[2].sig() <<= fld("k_tiles_m1");
    bound[3].sig() <<= fld("n_tiles_m1");
    Data base = ib_gen.io("base");
    base[0].sig() <<= za(fld("b_base")) + mux(ib_top, lit(static_cast<uint64_t>(Lt - 1), GA),
                                               lit(static_cast<uint64_t>(C - 1), GA));
    base[1].sig() <<= zero;
    Data stride = ib_gen.io("stride");
    stride[0][0].sig() <<= lit((uint64_t{1} << GA) - 1, GA);  // -1
    stride[0][1].sig() <<= lit(static_cast<uint64_t>(C), GA);
    stride[0][2].sig() <<= za(fld("b_kt_stride"));
    stride[0][3].sig() <<= za(fld("b_nt_stride"));
    stride[1][0].sig() <<= zero;
    stride[1][1].sig() <<= za(fld("gk_m1").zext(GA)) + one;  // group base = gn * Gk
    stride[1][2].sig() <<= zero;
    stride[1][3].sig() <<= zero;
  }
  ia_gen.io("start").sig() <<= start;
  ib_gen.io("start").sig() <<= os_hw ? start & !os : Expr(start);

  // Fold handshake: a fold streams once its IB load is complete; the next load starts once the
  // fold streams (double-buffered IB) or has streamed (single buffer).
  Sig loads_done = m.reg("loads_done", UInt(32), reset_to(0));
  Sig streams_started = m.reg("streams_started", UInt(32), reset_to(0));
  Sig streams_ended = m.reg("streams_ended", UInt(32), reset_to(0));
  Sig ia_first = ia_gen.io("first").sig();
  Sig ia_last = ia_gen.io("last").sig();
  Sig ib_last = ib_gen.io("last").sig();
  Sig gate = p.cfg.ce.ib_double_buffer ? streams_started : streams_ended;
  Sig run_ib = m.node("run_ib", (state == kGemm) & ib_gen.io("valid").sig() & (gate >= loads_done));
  // OS: a fold may start once the one before has started R cycles ago (the drain must have passed
  // the top rows; single-buffered Psums: once it has drained, K + R - 1 cycles).
  Expr fold_may_start = loads_done > streams_started;
  if (os_hw) {
    Sig os_gap = m.reg("os_gap", UInt(17), reset_to(0));
    const Expr gap_init = p.cfg.ce.psum_double_buffer
                              ? Expr(lit(static_cast<uint64_t>(R - 1), 17))
                              : fld("m_m1").zext(17) + lit(static_cast<uint64_t>(R - 1), 17);
    m.when(start, [&] { os_gap <<= 0; })
        .elsewhen((state == kGemm) & os & ia_gen.io("valid").sig() & ia_first.bit(0) & (os_gap == 0), [&] {
          os_gap <<= gap_init;
        })
        .elsewhen(os_gap != 0, [&] { os_gap <<= os_gap - 1; });
    fold_may_start = mux(os, os_gap == 0, fold_may_start);
  }
  Sig run_ia = m.node("run_ia", (state == kGemm) & ia_gen.io("valid").sig() & ((!ia_first.bit(0)) | fold_may_start));
  ib_gen.io("run").sig() <<= run_ib;
  ia_gen.io("run").sig() <<= run_ia;
  m.when(start, [&] { loads_done <<= 0; }).elsewhen(run_ib & ib_last.bit(0) & ib_last.bit(1), [&] {
    loads_done <<= loads_done + 1;
  });
  m.when(start, [&] { streams_started <<= 0; }).elsewhen(run_ia & ia_first.bit(0), [&] {
    streams_started <<= streams_started + 1;
  });
  m.when(start, [&] { streams_ended <<= 0; }).elsewhen(run_ia & ia_last.bit(0), [&] {
    streams_ended <<= streams_ended + 1;
  });

  Data ia_addr = ia_gen.io("addr");
  Data ib_addr = ib_gen.io("addr");
  ia_en <<= run_ia;
  ia_row <<= ia_addr[0].sig().bits(AW - 1, 0);
  if (os_hw) {
    ib_en <<= mux(os, run_ia, run_ib);
    ib_row <<= mux(os, ia_addr[2].sig(), ib_addr[0].sig()).bits(AW - 1, 0);
  } else {
    ib_en <<= run_ib;
    ib_row <<= ib_addr[0].sig().bits(AW - 1, 0);
  }
  ia_sel <<= fld("ia_sel");
  ia_mask <<= fld("ia_mask");
  ia_tr <<= fld("ia_tr");
  ib_sel <<= fld("ib_sel");
  ib_mask <<= fld("ib_mask");
  ib_tr <<= fld("ib_tr");

  // CE control at issue time, delayed to meet the data: IB loads from the left go to the CEs of
  // one group, from the top to all of them.
  Sig grp = m.node("grp", ib_addr[1].sig());
  Sig gk_mask = m.node("gk_mask", ~za(fld("gk_m1").zext(GA)));
  std::vector<Expr> load_bits;  // CE G-1 first
  for (int g = G - 1; g >= 0; --g)
    load_bits.push_back(run_ib & (ib_top | ((lit(static_cast<uint64_t>(g), GA) & gk_mask) == grp)));
  Sig os_last = os_hw ? m.node("os_last", run_ia & ia_last.bit(0) & os) : Sig();  // a fold's last vector (OS)
  std::vector<Expr> ctl_parts{run_ia, run_ia & ia_first.bit(0)};
  if (os_hw) ctl_parts.push_back(os_last);
  ctl_parts.push_back(G == 1 ? load_bits[0] : cat(load_bits));
  const int CW = G + (os_hw ? 3 : 2);
  InstanceRef ctl_dly = m.instance(DelayLine({CW, p.ctrl_delay, true}), "ctl_delay");
  ctl_dly.io("in").sig() <<= cat(ctl_parts);
  Sig ctl_out = ctl_dly.io("out").sig();
  ce_active <<= ctl_out.bit(CW - 1);
  ce_first <<= ctl_out.bit(CW - 2);
  if (os_hw) {
    ce_last <<= ctl_out.bit(G);
    ce_os <<= os;
  }
  ce_ib_load <<= ctl_out.bits(G - 1, 0);
  // Quasi-static for an instruction: it changes at a pop, long after the last load of the one
  // before has passed the CEs (its drain), and before the first load of this one reaches them.
  ce_ib_from_left <<= !ib_top;

  // Accumulator op travels with the IA vector: write on the first K tile, else accumulate.
  Expr op_now = mux(run_ia, mux(fld("acc_accumulate") | !ia_first.bit(1), lit(2, 2), lit(1, 2)), lit(0, 2));
  Expr acc_row_now = ia_addr[1].sig().bits(QW - 1, 0);
  if (os_hw) {
    // OS: a fold's R rows leave the CEs bottom row first, one per cycle, the first as far behind
    // its last vector as a stationary result row is behind its vector (s = 1), so the ops enter
    // the same delay line in the cycles t_last .. t_last + R - 1.
    const Expr os_op = mux(fld("acc_accumulate"), lit(2, 2), lit(1, 2));
    const Expr bottom = lit(static_cast<uint64_t>(R - 1), QW);
    Expr seq_op = lit(0, 2), seq_row = acc_row_now;
    if (R > 1) {
      const int rb = bits_for(R);
      Sig dr_row = m.reg("os_drain_row", UInt(rb), reset_to(0));  // row j of the drain in progress; 0: none
      Sig dr_base = m.reg("os_drain_base", UInt(QW), enabled_by(os_last));
      dr_base <<= acc_row_now;
      m.when(os_last, [&] { dr_row <<= 1; }).elsewhen(dr_row != 0, [&] { dr_row <<= dr_row + 1; });
      seq_op = mux(dr_row != 0, os_op, lit(0, 2));
      seq_row = dr_base + bottom - dr_row.zext(QW);
    }
    op_now = mux(os, mux(os_last, os_op, seq_op), op_now);
    acc_row_now = mux(os, mux(os_last, acc_row_now + bottom, seq_row), acc_row_now);
  }
  InstanceRef acc_dly = m.instance(DelayLine({2 + QW, p.acc_delay, true}), "acc_delay");
  acc_dly.io("in").sig() <<= cat({op_now, acc_row_now});
  Sig acc_out = acc_dly.io("out").sig();

  // ---- STORE: a 4-level nest of four streams (accumulator row, its lane; unified row, its lane).
  // Addresses wrap modulo each field's range, so the low bits of a GA-bit sum are exact.
  if (L > GA) throw std::invalid_argument("Controller: more lane bits than address bits");
  const int SL = arch::StoreInstr::kLevels;
  InstanceRef st_gen = m.instance(AddressGenerator(AddressGeneratorParams{SL, 4, GA, QW + 1}), "st_gen");
  {
    Data bound = st_gen.io("bound_m1");
    Data base = st_gen.io("base");
    Data stride = st_gen.io("stride");
    const char* streams[4] = {"src_row", "src_lane", "dst_row", "dst_lane"};
    for (int l = 0; l < SL; ++l) bound[l].sig() <<= fld(fmt::format("st_bound_m1_l{}", l));
    for (int s2 = 0; s2 < 4; ++s2) {
      base[s2].sig() <<= za(fld(fmt::format("st_{}_base", streams[s2])));
      for (int l = 0; l < SL; ++l) stride[s2][l].sig() <<= za(fld(fmt::format("st_{}_stride_l{}", streams[s2], l)));
    }
  }
  st_gen.io("start").sig() <<= (state == kStart) & cur_is_store;
  Sig st_issue = m.node("st_issue", (state == kStore) & st_gen.io("valid").sig());
  st_gen.io("run").sig() <<= st_issue;
  Data st_addr = st_gen.io("addr");
  // The accumulator returns a row one cycle after its read: the move's destination waits as long.
  Sig st_valid_q = m.reg("st_valid_q", UInt(1), reset_to(0));
  st_valid_q <<= st_issue;
  Sig st_row_q = m.reg("st_row_q", UInt(AW), enabled_by(st_issue));
  st_row_q <<= st_addr[2].sig().bits(AW - 1, 0);
  Sig st_src_q = m.reg("st_src_lane_q", UInt(L), enabled_by(st_issue));
  st_src_q <<= st_addr[1].sig().bits(L - 1, 0);
  Sig st_dst_q = m.reg("st_dst_lane_q", UInt(L), enabled_by(st_issue));
  st_dst_q <<= st_addr[3].sig().bits(L - 1, 0);
  st_valid <<= st_valid_q;
  st_row <<= st_row_q;
  st_src_lane <<= st_src_q;
  st_dst_lane <<= st_dst_q;
  st_count_m1 <<= fld("st_count_m1");
  st_diag <<= fld("st_diag");
  if (isa.banks() > 1) {
    std::vector<Expr> strides;  // bit LB-1 first: cat puts parts[0] in the MSBs
    for (int h = isa.bank_bits() - 1; h >= 0; --h) strides.push_back(fld(fmt::format("st_dst_row_bank_stride_b{}", h)));
    st_row_bank_strides <<= strides.size() == 1 ? strides[0] : cat(strides);
  }
  // Only while the STORE runs (its last write is in the DRAIN cycle): the host port owns that
  // half again as soon as the controller is idle.
  st_other <<= fld("st_other_half") & cur_is_store & (state != kIdle);
  if (fp)
    st_pad_neg <<= fld("st_pad_neg");
  else
    st_shift <<= fld("st_shift");

  acc_op <<= mux(st_issue, lit(static_cast<int>(AccumOp::read), 2), acc_out.bits(QW + 1, QW));
  // A diagonal move's element in accumulator bank b goes to unified bank b + k (k the bank
  // distance from src_lane to dst_lane), whose row picks the accumulator row it reads.
  const int B = isa.banks(), LT = L - isa.bank_bits();
  std::vector<Expr> st_rows{st_addr[0].sig().bits(QW - 1, 0)};
  if (B > 1) {
    Sig neg_k = m.node("st_bank_rot", st_addr[1].sig().bits(L - 1, LT) - st_addr[3].sig().bits(L - 1, LT));
    std::vector<Expr> strides;
    for (int h = 0; h < isa.bank_bits(); ++h)
      strides.push_back(m.node(fmt::format("st_acc_bank_stride_b{}", h),
                               mux(fld("st_diag"), fld(fmt::format("st_src_row_bank_stride_b{}", h)), lit(0, QW))));
    st_rows = diagonal_bank_rows(m, "st_acc_row", st_rows[0], strides, neg_k, B);
  }
  for (int b = 0; b < B; ++b)
    acc_row[b].sig() <<= mux(st_issue, st_rows[static_cast<size_t>(b)], acc_out.bits(QW - 1, 0));

  // ---- FSM
  // After the last accumulator op its write takes accum_pipeline - 1 cycles to land.
  const int settle = p.cfg.memory.accum_pipeline - 1;
  const int DB = bits_for(p.acc_delay + 2 + settle + R) + 1;
  Sig drain = m.reg("drain", UInt(DB), reset_to(0));
  Sig gens_done = m.node("gens_done", ia_gen.io("done").sig() & (os_hw ? ib_gen.io("done").sig() | os
                                                                          : Expr(ib_gen.io("done").sig())));
  Sig retired_r = m.reg("retired_r", UInt(32), reset_to(0));
  m.switch_on(state)
      .is(kIdle, [&] {
        m.when(pop & ((head_op == op_gemm) | (head_op == op_store)), [&] { state <<= kStart; })
            .elsewhen(pop, [&] { retired_r <<= retired_r + 1; });
      })
      .is(kStart, [&] { state <<= mux(cur_is_store, lit(kStore, 3), lit(kGemm, 3)); })
      .is(kStore, [&] {
        m.when(st_gen.io("done").sig(), [&] {
          state <<= kDrain;
          drain <<= lit(0, DB);  // the last move's write is on the memory port in the DRAIN cycle
        });
      })
      .is(kGemm, [&] {
        m.when(gens_done, [&] {
          state <<= kDrain;
          // OS: the last fold's drain issues R - 1 accumulator ops after its last vector.
          const Expr ws_drain = lit(static_cast<uint64_t>(p.acc_delay + 1 + settle), DB);
          drain <<= os_hw ? Expr(mux(os, lit(static_cast<uint64_t>(p.acc_delay + 1 + settle + R - 1), DB), ws_drain))
                          : ws_drain;
        });
      })
      .is(kDrain, [&] {
        m.when(drain == 0, [&] {
          state <<= kIdle;
          retired_r <<= retired_r + 1;
        }).otherwise([&] { drain <<= drain - 1; });
      });
  retired <<= retired_r;
  busy <<= (state != kIdle) | (count != 0);
  Sig cycles = m.reg("cycles", UInt(48), reset_to(0));
  m.when((state != kIdle) | (count != 0), [&] { cycles <<= cycles + 1; });
  cycle_count <<= cycles;
}

std::string elaborate_controller(Design& design, const arch::ArchConfig& cfg) {
  arch::validate(cfg);
  const arch::SystemTiming t = hw::system_timing(cfg);
  return design.elaborate(Controller(ControllerParams{cfg, t.ctrl_delay, t.acc_delay, 4}))->name();
}

}  // namespace fetta::hw
