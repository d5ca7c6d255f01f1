#include "hw/mem/accumulation_unit.hpp"

#include <fmt/core.h>

#include <memory>
#include <stdexcept>

#include "hw/arith/arith.hpp"
#include "hw/arith/fp_add.hpp"
#include "hw/arith/int_arith.hpp"
#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

bool is_integer(arch::DataType t) { return t != arch::DataType::bf16; }

// pipeline, adder_arch and adder_prefix, shared by AccumBankParams and AccumulationUnitParams:
// checked, then the adder choice normalized (integer types have no binary32 adder, a basic adder
// no prefix networks), so that equal hardware has one name and one parameter list.
template <typename P>
void check_pipeline_and_adder(const char* gen, P& p) {
  if (p.pipeline != 2 && p.pipeline != 3)
    throw std::invalid_argument(fmt::format("{}: pipeline = {} is not allowed; allowed: 2, 3", gen, p.pipeline));
  fp32_add_arch_name(p.adder_arch, fmt::format("{}: adder_arch", gen));
  prefix_tag(p.adder_prefix, fmt::format("{}: adder_prefix", gen));
  if (is_integer(p.dtype)) p.adder_arch = P{}.adder_arch;
  if (p.adder_arch == Fp32AddArch::basic) p.adder_prefix = P{}.adder_prefix;
}

// The non-default parameters, and their module-name tail ("", "_p3", "_twopath_sk", "_p3_twopath_sk"):
// the default unit's header is the one it had before these parameters existed.
template <typename P>
void add_variant(const P& p, Identity& id) {
  if (p.pipeline != P{}.pipeline) id.param("pipeline", p.pipeline, fmt::format("_p{}", p.pipeline));
  if (p.adder_arch != Fp32AddArch::basic)
    id.param("adder_arch", fp32_add_arch_name(p.adder_arch), adder_name_tag({p.adder_arch, p.adder_prefix}))
        .param("adder_prefix", prefix_name(p.adder_prefix));
}

AccumBankParams checked(AccumBankParams p) {
  mem_check::pow2_in("AccumBank", "elems", p.elems, 1, 64);
  mem_check::pow2_in("AccumBank", "depth", p.depth, 2, 1 << 24);
  (void)accumulator_format(p.dtype);
  check_pipeline_and_adder("AccumBank", p);
  return p;
}

AccumulationUnitParams checked(AccumulationUnitParams p) {
  mem_check::pow2_in("AccumulationUnit", "banks", p.banks, 1, 256);
  mem_check::pow2_in("AccumulationUnit", "elems", p.elems, 1, 64);
  mem_check::pow2_in("AccumulationUnit", "depth", p.depth, 2, 1 << 24);
  (void)accumulator_format(p.dtype);
  check_pipeline_and_adder("AccumulationUnit", p);
  return p;
}

// The adder of every element: Fp32Add (combinational, the chosen datapath) or IntAdd.
std::unique_ptr<GeneratorBase> lane_adder(const AccumBankParams& p) {
  return make_adder(p.dtype, 0, {p.adder_arch, p.adder_prefix});
}

Type lane_type(arch::DataType t) {
  const int w = mac_accumulator_bits(t);
  return is_integer(t) ? SInt(w) : UInt(w);
}

// What both pipelines share: the ports, and stage 0's registers (the operation travels with the
// row read from memory) and read enable.
// The registers of an idle stage clock not at all (docs/memory.md, "Clock gating"): addresses
// and masks only behind an operation, data only behind a write or an accumulate.
struct BankFront {
  Sig op, addr, mask;
  Data data;
  Sig rd_valid;
  Data rd_data;
  Sig op_q, addr_q, mask_q;
  Sig reads;  // accumulate and read need the stored row
  GatedClock data_clock;  // stage 0's data registers: a write or an accumulate issued
};

// A write or an accumulate: the operations that take data.
Expr takes_data(const Expr& op) {
  return (op == static_cast<int>(AccumOp::write)) | (op == static_cast<int>(AccumOp::accumulate));
}

BankFront bank_front(Module& m, const AccumBankParams& p) {
  const int T = p.elems, aw = clog2(p.depth);
  const Type lane = lane_type(p.dtype);
  BankFront f;
  f.op = m.input("op", UInt(2));
  f.addr = m.input("addr", UInt(aw));
  f.mask = m.input("mask", UInt(T));
  f.data = m.input("data", Vec(lane, T));
  f.rd_valid = m.output("rd_valid", UInt(1));
  f.rd_data = m.output("rd_data", Vec(lane, T));
  f.op_q = m.reg("op_q", UInt(2), reset_to(static_cast<int>(AccumOp::idle)));
  f.op_q <<= f.op;
  const GatedClock issued = m.clock_gate("issued", f.op != static_cast<int>(AccumOp::idle));
  f.addr_q = m.reg("addr_q", UInt(aw), clocked_by(issued));
  f.addr_q <<= f.addr;
  f.mask_q = m.reg("mask_q", UInt(T), clocked_by(issued));
  f.mask_q <<= f.mask;
  f.reads = m.node("reads", f.op.bit(1));
  f.data_clock = m.clock_gate("data", takes_data(f.op));
  return f;
}

// An element as the lane's adder and rd_data take it: signed for the integer formats.
Expr as_lane(const Sig& v, bool sint) { return sint ? v.as_signed() : Expr(v); }

}  // namespace

std::string accumulator_format(arch::DataType dtype) {
  switch (dtype) {
    case arch::DataType::bf16: return "fp32";
    case arch::DataType::int8: return "int32";
    case arch::DataType::int16: return "int48";
  }
  throw std::invalid_argument(
      fmt::format("dtype: unknown data type {}; allowed: bf16, int8, int16", static_cast<int>(dtype)));
}

// ---- AccumBank

AccumBank::AccumBank(AccumBankParams params) : IdentifiedGenerator(checked(params)) {}

Identity AccumBank::identity() const {
  Identity id("accum_bank");
  id.param("elems", p.elems, fmt::format("_t{}", p.elems))
      .param("depth", p.depth, fmt::format("_d{}", p.depth))
      .param("dtype", arch::to_string(p.dtype), fmt::format("_{}", accumulator_format(p.dtype)));
  add_variant(p, id);
  return id;
}

void AccumBank::build(Module& m) const {
  if (p.pipeline == 3) return build_pipeline3(m);
  const int T = p.elems, aw = clog2(p.depth), w = mac_accumulator_bits(p.dtype);
  const bool sint = is_integer(p.dtype);
  m.add_comment(fmt::format("{} rows x {} {} accumulators; op 0 idle, 1 write, 2 accumulate, 3 read.", p.depth, T,
                            accumulator_format(p.dtype)));
  m.add_comment("Stage 0 reads the row; stage 1 adds and writes it; the last write is forwarded (docs/memory.md).");
  BankFront f = bank_front(m, p);
  const Sig addr = f.addr, op_q = f.op_q, addr_q = f.addr_q, mask_q = f.mask_q, reads = f.reads;
  Data data = f.data, rd_data = f.rd_data;
  Sig is_write_q = m.node("is_write_q", op_q == static_cast<int>(AccumOp::write));
  Sig is_acc_q = m.node("is_acc_q", op_q == static_cast<int>(AccumOp::accumulate));
  f.rd_valid <<= op_q == static_cast<int>(AccumOp::read);
  // The row the memory read missed: the write of the previous cycle, to the same address.
  const GatedClock writes = m.clock_gate("writeback", is_write_q | is_acc_q);
  Sig wb_addr_q = m.reg("wb_addr_q", UInt(aw), clocked_by(writes));
  wb_addr_q <<= addr_q;
  Sig wb_hit = m.node("wb_hit", wb_addr_q == addr_q);

  const auto adder = lane_adder(p);
  for (int e = 0; e < T; ++e) {
    Sig data_q = m.reg(fmt::format("data_q_e{}", e), UInt(w), clocked_by(f.data_clock));
    data_q <<= data[e].sig().as_unsigned();
    MemRef ram = m.memory(fmt::format("ram_e{}", e), UInt(w), p.depth);
    Sig stored = ram.read_port(fmt::format("stored_e{}", e), addr, reads);
    Sig wb_en_q = m.reg(fmt::format("wb_en_q_e{}", e), UInt(1), reset_to(0));
    Sig wb_data_q = m.reg(fmt::format("wb_data_q_e{}", e), UInt(w), clocked_by(writes));
    // The row value as all earlier operations left it.
    Sig current = m.node(fmt::format("current_e{}", e), mux(wb_en_q & wb_hit, wb_data_q, stored));
    InstanceRef add = m.instance(*adder, fmt::format("add_e{}", e));
    add.io("a").sig() <<= as_lane(current, sint);
    add.io("b").sig() <<= as_lane(data_q, sint);
    Sig sum = m.node(fmt::format("sum_e{}", e), add.io("sum").sig().as_unsigned());
    Sig we = m.node(fmt::format("we_e{}", e), (is_write_q | is_acc_q) & mask_q.bit(e));
    Sig next = m.node(fmt::format("next_e{}", e), mux(is_write_q, data_q, sum));
    ram.write_port(addr_q, next, we);
    wb_en_q <<= we;
    wb_data_q <<= next;
    rd_data[e].sig() <<= as_lane(current, sint);
  }
}

// The three-stage read-modify-write (docs/memory.md §3). Op issued in cycle t:
//   t    stage 0: the memory reads the row (registered, read-first); op, addr, mask, data
//                 registered (*_q);
//   t+1  stage 1: current1 = the row read, with the write of the op issued in t-2 forwarded in
//                 (the memory took it at the end of t, after the read; the forwarding register
//                 wb_* holds it now); a read returns current1. Beside it, stage 2 computes the
//                 write of the op issued in t-1 (`next`); current_q takes current1 with that
//                 write merged in (fwd2), and the op moves on (*_q2);
//   t+2  stage 2: current_q is the row as all earlier operations left it; next = data or
//                 current_q + data; the memory and the forwarding register wb_* take next.
// The distance-1 forwarding is the mux in front of current_q (after the adder of the op ahead,
// retimed from in front of this op's adder), so the adder's operands come straight from
// flip-flops (current_q, data_q2) and its sum goes through one 2:1 mux to the memory's write
// data: the SRAM's read data ends at current_q, and the select of every mux is known early
// (register outputs, the row compare of stage 1 and 2). The accumulate loop
// current_q -> adder -> next -> current_q is one cycle.
void AccumBank::build_pipeline3(Module& m) const {
  const int T = p.elems, aw = clog2(p.depth), w = mac_accumulator_bits(p.dtype);
  const bool sint = is_integer(p.dtype);
  m.add_comment(fmt::format("{} rows x {} {} accumulators; op 0 idle, 1 write, 2 accumulate, 3 read.", p.depth, T,
                            accumulator_format(p.dtype)));
  m.add_comment("Three stages: stage 0 reads the row; stage 1 forwards the writes of the two operations ahead and");
  m.add_comment("returns reads; stage 2 adds and writes (docs/memory.md).");
  m.add_comment("A read does not see a write or accumulate of the same row issued in the cycle right before it.");
  BankFront f = bank_front(m, p);
  const Sig addr = f.addr, op_q = f.op_q, addr_q = f.addr_q, mask_q = f.mask_q, reads = f.reads;
  Data data = f.data, rd_data = f.rd_data;
  f.rd_valid <<= op_q == static_cast<int>(AccumOp::read);
  // Stage 1 -> 2 registers.
  Sig op_q2 = m.reg("op_q2", UInt(2), reset_to(static_cast<int>(AccumOp::idle)));
  op_q2 <<= op_q;
  const GatedClock issued1 = m.clock_gate("issued_q", op_q != static_cast<int>(AccumOp::idle));
  Sig addr_q2 = m.reg("addr_q2", UInt(aw), clocked_by(issued1));
  addr_q2 <<= addr_q;
  Sig mask_q2 = m.reg("mask_q2", UInt(T), clocked_by(issued1));
  mask_q2 <<= mask_q;
  Sig is_write_q2 = m.node("is_write_q2", op_q2 == static_cast<int>(AccumOp::write));
  Sig is_acc_q2 = m.node("is_acc_q2", op_q2 == static_cast<int>(AccumOp::accumulate));
  const GatedClock data_clock1 = m.clock_gate("data_q", takes_data(op_q));
  // current_q feeds only an accumulate's adder.
  const GatedClock accumulates1 = m.clock_gate("accumulate_q", op_q == static_cast<int>(AccumOp::accumulate));
  // The forwarding register: the write stage 2 did in the cycle before (per element enable).
  const GatedClock writes = m.clock_gate("writeback", is_write_q2 | is_acc_q2);
  Sig wb_addr_q = m.reg("wb_addr_q", UInt(aw), clocked_by(writes));
  wb_addr_q <<= addr_q2;
  // Stage 1: the write of two operations ahead (in the forwarding register) went to this row.
  Sig wb_hit1 = m.node("wb_hit1", wb_addr_q == addr_q);
  // Stage 1: the write of the operation ahead (in stage 2 now) goes to this row.
  Sig hit2 = m.node("hit2", addr_q2 == addr_q);

  const auto adder = lane_adder(p);
  for (int e = 0; e < T; ++e) {
    Sig data_q = m.reg(fmt::format("data_q_e{}", e), UInt(w), clocked_by(f.data_clock));
    data_q <<= data[e].sig().as_unsigned();
    Sig data_q2 = m.reg(fmt::format("data_q2_e{}", e), UInt(w), clocked_by(data_clock1));
    data_q2 <<= data_q;
    MemRef ram = m.memory(fmt::format("ram_e{}", e), UInt(w), p.depth);
    Sig stored = ram.read_port(fmt::format("stored_e{}", e), addr, reads);
    Sig wb_en_q = m.reg(fmt::format("wb_en_q_e{}", e), UInt(1), reset_to(0));
    Sig wb_data_q = m.reg(fmt::format("wb_data_q_e{}", e), UInt(w), clocked_by(writes));
    Sig current_q = m.reg(fmt::format("current_q_e{}", e), UInt(w), clocked_by(accumulates1));
    // Stage 2: the operation ahead of the one in stage 1.
    InstanceRef add = m.instance(*adder, fmt::format("add_e{}", e));
    add.io("a").sig() <<= as_lane(current_q, sint);
    add.io("b").sig() <<= as_lane(data_q2, sint);
    Sig sum = m.node(fmt::format("sum_e{}", e), add.io("sum").sig().as_unsigned());
    Sig we = m.node(fmt::format("we_e{}", e), (is_write_q2 | is_acc_q2) & mask_q2.bit(e));
    Sig next = m.node(fmt::format("next_e{}", e), mux(is_write_q2, data_q2, sum));
    ram.write_port(addr_q2, next, we);
    wb_en_q <<= we;
    wb_data_q <<= next;
    // Stage 1: the row value as the operations issued two or more cycles before left it ...
    Sig current1 = m.node(fmt::format("current1_e{}", e), mux(wb_en_q & wb_hit1, wb_data_q, stored));
    rd_data[e].sig() <<= as_lane(current1, sint);
    // ... and with the write of the operation ahead merged in: as all earlier ones leave it.
    Sig fwd2 = m.node(fmt::format("fwd2_e{}", e), we & hit2);
    current_q <<= mux(fwd2, next, current1);
  }
}

// ---- AccumulationUnit

AccumulationUnit::AccumulationUnit(AccumulationUnitParams params) : IdentifiedGenerator(checked(params)) {}

Identity AccumulationUnit::identity() const {
  Identity id("accum_unit");
  id.param("banks", p.banks, fmt::format("_b{}", p.banks))
      .param("elems", p.elems, fmt::format("_t{}", p.elems))
      .param("depth", p.depth, fmt::format("_d{}", p.depth))
      .param("dtype", arch::to_string(p.dtype), fmt::format("_{}", accumulator_format(p.dtype)));
  add_variant(p, id);
  return id;
}

AccumBankParams AccumulationUnit::bank_params() const {
  return {p.elems, p.depth, p.dtype, p.pipeline, p.adder_arch, p.adder_prefix};
}

void AccumulationUnit::build(Module& m) const {
  const int B = p.banks, T = p.elems, N = lanes(), aw = clog2(p.depth);
  const Type lane = lane_type(p.dtype);
  m.add_comment(fmt::format("{} accumulator banks of {} rows x {} {} elements.", B, p.depth, T,
                            accumulator_format(p.dtype)));
  Data op = m.input("op", Vec(UInt(2), B));
  Data addr = m.input("addr", Vec(UInt(aw), B));
  Sig mask = m.input("mask", UInt(N));
  Data data = m.input("data", Vec(lane, N));
  Sig rd_valid = m.output("rd_valid", UInt(B));
  Data rd_data = m.output("rd_data", Vec(lane, N));
  const AccumBank bank_gen(bank_params());
  std::vector<Expr> valid_bits;  // bank B-1 first: cat puts parts[0] in the MSBs
  for (int b = B - 1; b >= 0; --b) valid_bits.push_back(Expr());
  for (int b = 0; b < B; ++b) {
    InstanceRef u = m.instance(bank_gen, fmt::format("bank{}", b));
    u.io("op").sig() <<= op[b].sig();
    u.io("addr").sig() <<= addr[b].sig();
    u.io("mask").sig() <<= mask.bits(b * T + T - 1, b * T);
    Data din = u.io("data");
    Data dout = u.io("rd_data");
    for (int e = 0; e < T; ++e) {
      din[e].sig() <<= data[b * T + e].sig();
      rd_data[b * T + e].sig() <<= dout[e].sig();
    }
    valid_bits[B - 1 - b] = u.io("rd_valid").sig();
  }
  rd_valid <<= B == 1 ? valid_bits[0] : cat(valid_bits);
}

}  // namespace fetta::hw
