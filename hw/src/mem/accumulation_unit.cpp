#include "hw/mem/accumulation_unit.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "hw/arith/arith.hpp"
#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

bool is_integer(arch::DataType t) { return t != arch::DataType::bf16; }

AccumBankParams checked(AccumBankParams p) {
  mem_check::pow2_in("AccumBank", "elems", p.elems, 1, 64);
  mem_check::pow2_in("AccumBank", "depth", p.depth, 2, 1 << 24);
  (void)accumulator_format(p.dtype);
  return p;
}

AccumulationUnitParams checked(AccumulationUnitParams p) {
  mem_check::pow2_in("AccumulationUnit", "banks", p.banks, 1, 256);
  mem_check::pow2_in("AccumulationUnit", "elems", p.elems, 1, 64);
  mem_check::pow2_in("AccumulationUnit", "depth", p.depth, 2, 1 << 24);
  (void)accumulator_format(p.dtype);
  return p;
}

Type lane_type(arch::DataType t) {
  const int w = mac_accumulator_bits(t);
  return is_integer(t) ? SInt(w) : UInt(w);
}

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

AccumBank::AccumBank(AccumBankParams params) : Generator(checked(params)) {}

std::string AccumBank::module_name() const {
  return fmt::format("accum_bank_t{}_d{}_{}", p.elems, p.depth, accumulator_format(p.dtype));
}

ParamList AccumBank::params() const {
  return {{"elems", std::to_string(p.elems)},
          {"depth", std::to_string(p.depth)},
          {"dtype", arch::to_string(p.dtype)}};
}

void AccumBank::build(Module& m) const {
  const int T = p.elems, aw = clog2(p.depth), w = mac_accumulator_bits(p.dtype);
  const bool sint = is_integer(p.dtype);
  const Type lane = lane_type(p.dtype);
  m.add_comment(fmt::format("{} rows x {} {} accumulators; op 0 idle, 1 write, 2 accumulate, 3 read.", p.depth, T,
                            accumulator_format(p.dtype)));
  m.add_comment("Stage 0 reads the row; stage 1 adds and writes it; the last write is forwarded (docs/memory.md).");
  Sig op = m.input("op", UInt(2));
  Sig addr = m.input("addr", UInt(aw));
  Sig mask = m.input("mask", UInt(T));
  Data data = m.input("data", Vec(lane, T));
  Sig rd_valid = m.output("rd_valid", UInt(1));
  Data rd_data = m.output("rd_data", Vec(lane, T));

  // Stage 0 -> 1 registers: the operation travels with the row read from memory.
  Sig op_q = m.reg("op_q", UInt(2), reset_to(static_cast<int>(AccumOp::idle)));
  op_q <<= op;
  Sig addr_q = m.reg("addr_q", UInt(aw));
  addr_q <<= addr;
  Sig mask_q = m.reg("mask_q", UInt(T));
  mask_q <<= mask;
  Sig reads = m.node("reads", op.bit(1));  // accumulate and read need the stored row
  Sig is_write_q = m.node("is_write_q", op_q == static_cast<int>(AccumOp::write));
  Sig is_acc_q = m.node("is_acc_q", op_q == static_cast<int>(AccumOp::accumulate));
  rd_valid <<= op_q == static_cast<int>(AccumOp::read);
  // The row the memory read missed: the write of the previous cycle, to the same address.
  Sig wb_addr_q = m.reg("wb_addr_q", UInt(aw));
  wb_addr_q <<= addr_q;
  Sig wb_hit = m.node("wb_hit", wb_addr_q == addr_q);

  const auto adder = make_adder(p.dtype, 0);
  for (int e = 0; e < T; ++e) {
    Sig data_q = m.reg(fmt::format("data_q_e{}", e), UInt(w));
    data_q <<= data[e].sig().as_unsigned();
    MemRef ram = m.memory(fmt::format("ram_e{}", e), UInt(w), p.depth);
    Sig stored = ram.read_port(fmt::format("stored_e{}", e), addr, reads);
    Sig wb_en_q = m.reg(fmt::format("wb_en_q_e{}", e), UInt(1), reset_to(0));
    Sig wb_data_q = m.reg(fmt::format("wb_data_q_e{}", e), UInt(w));
    // The row value as all earlier operations left it.
    Sig current = m.node(fmt::format("current_e{}", e), mux(wb_en_q & wb_hit, wb_data_q, stored));
    InstanceRef add = m.instance(*adder, fmt::format("add_e{}", e));
    add.io("a").sig() <<= sint ? current.as_signed() : Expr(current);
    add.io("b").sig() <<= sint ? data_q.as_signed() : Expr(data_q);
    Sig sum = m.node(fmt::format("sum_e{}", e), add.io("sum").sig().as_unsigned());
    Sig we = m.node(fmt::format("we_e{}", e), (is_write_q | is_acc_q) & mask_q.bit(e));
    Sig next = m.node(fmt::format("next_e{}", e), mux(is_write_q, data_q, sum));
    ram.write_port(addr_q, next, we);
    wb_en_q <<= we;
    wb_data_q <<= next;
    rd_data[e].sig() <<= sint ? current.as_signed() : Expr(current);
  }
}

// ---- AccumulationUnit

AccumulationUnit::AccumulationUnit(AccumulationUnitParams params) : Generator(checked(params)) {}

std::string AccumulationUnit::module_name() const {
  return fmt::format("accum_unit_b{}_t{}_d{}_{}", p.banks, p.elems, p.depth, accumulator_format(p.dtype));
}

ParamList AccumulationUnit::params() const {
  return {{"banks", std::to_string(p.banks)},
          {"elems", std::to_string(p.elems)},
          {"depth", std::to_string(p.depth)},
          {"dtype", arch::to_string(p.dtype)}};
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
  const AccumBank bank_gen({T, p.depth, p.dtype});
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
