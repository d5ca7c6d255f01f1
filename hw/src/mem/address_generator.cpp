#include "hw/mem/address_generator.hpp"

#include <fmt/core.h>

#include "hw/mem/check.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

AddressGeneratorParams checked(AddressGeneratorParams p) {
  mem_check::in_range("AddressGenerator", "levels", p.levels, 1, 16);
  mem_check::in_range("AddressGenerator", "streams", p.streams, 1, 8);
  mem_check::in_range("AddressGenerator", "addr_bits", p.addr_bits, 1, 32);
  mem_check::in_range("AddressGenerator", "count_bits", p.count_bits, 1, 32);
  return p;
}

}  // namespace

AddressGenerator::AddressGenerator(AddressGeneratorParams params) : IdentifiedGenerator(checked(params)) {}

Identity AddressGenerator::identity() const {
  return Identity("addr_gen")
      .param("levels", p.levels, fmt::format("_l{}", p.levels))
      .param("streams", p.streams, fmt::format("_s{}", p.streams))
      .param("addr_bits", p.addr_bits, fmt::format("_a{}", p.addr_bits))
      .param("count_bits", p.count_bits, fmt::format("_c{}", p.count_bits));
}

void AddressGenerator::build(Module& m) const {
  const int L = p.levels, S = p.streams, A = p.addr_bits, C = p.count_bits;
  m.add_comment(fmt::format("{}-level affine loop nest, {} address stream(s) of {} bits; level 0 innermost.", L, S, A));
  m.add_comment("addr[s] = base[s] + sum_l i_l * stride[s][l] mod 2^addr_bits (docs/memory.md).");
  Sig start = m.input("start", UInt(1));
  Sig run = m.input("run", UInt(1));
  Data bound_m1 = m.input("bound_m1", Vec(UInt(C), L));
  Data base = m.input("base", Vec(UInt(A), S));
  Data stride = m.input("stride", Vec(Vec(UInt(A), L), S));
  Sig valid = m.output("valid", UInt(1));
  Data addr = m.output("addr", Vec(UInt(A), S));
  Sig first = m.output("first", UInt(L));
  Sig last = m.output("last", UInt(L));
  Sig done = m.output("done", UInt(1));

  Sig busy = m.reg("busy", UInt(1), reset_to(0));
  Sig finished = m.reg("finished", UInt(1), reset_to(0));
  Sig advance = m.node("advance", busy & run & !start);

  // Index counters and their flags.
  std::vector<Sig> idx, is_last;
  std::vector<Expr> first_bits, last_bits;  // level L-1 first (cat: parts[0] is the MSB)
  for (int l = 0; l < L; ++l) {
    idx.push_back(m.reg(fmt::format("idx_l{}", l), UInt(C), reset_to(0)));
    is_last.push_back(m.node(fmt::format("last_l{}", l), idx[l] == bound_m1[l].sig()));
  }
  for (int l = L - 1; l >= 0; --l) {
    first_bits.push_back(idx[l] == 0);
    last_bits.push_back(is_last[l]);
  }
  // step_l: level l moves this cycle (every level below it is at its last index).
  std::vector<Sig> step;
  Expr below_last = advance;
  for (int l = 0; l < L; ++l) {
    step.push_back(m.node(fmt::format("step_l{}", l), below_last));
    below_last = below_last & is_last[l];
  }
  Sig wrap_all = m.node("wrap_all", below_last);  // the last address is consumed

  m.when(start, [&] {
    busy <<= 1;
    finished <<= 0;
  }).elsewhen(wrap_all, [&] {
    busy <<= 0;
    finished <<= 1;
  });
  for (int l = 0; l < L; ++l)
    m.when(start, [&] { idx[l] <<= 0; }).elsewhen(step[l], [&] {
      idx[l] <<= mux(is_last[l], lit(0, C), idx[l] + 1);
    });

  // Per stream, pos[l] = base + sum_{k >= l} i_k * stride[k]: the address at the start of the
  // current iteration of level l. When level c moves, pos[c] += stride[c] and every level below
  // restarts from the new pos[c]; after the last address all of them return to base.
  for (int s = 0; s < S; ++s) {
    std::vector<Sig> pos;
    for (int l = 0; l < L; ++l) pos.push_back(m.reg(fmt::format("pos_s{}_l{}", s, l), UInt(A)));
    std::vector<Expr> next(L + 1);
    next[L] = base[s].sig();
    for (int l = L - 1; l >= 0; --l)
      next[l] = m.node(fmt::format("next_s{}_l{}", s, l), mux(is_last[l], next[l + 1], pos[l] + stride[s][l].sig()));
    for (int l = 0; l < L; ++l)
      m.when(start, [&] { pos[l] <<= base[s].sig(); }).elsewhen(step[l], [&] { pos[l] <<= next[l]; });
    addr[s].sig() <<= pos[0];
  }

  valid <<= busy;
  done <<= finished;
  first <<= L == 1 ? first_bits[0] : cat(first_bits);
  last <<= L == 1 ? last_bits[0] : cat(last_bits);
}

}  // namespace fetta::hw
