#include "corpus.hpp"

namespace corpus {

void Fifo::build(Module& m) const {
  const int aw = clog2(p.depth);
  const int cw = clog2(p.depth + 1);
  Sig push = m.input("push", UInt(1));
  Sig push_data = m.input("push_data", UInt(p.width));
  Sig pop = m.input("pop", UInt(1));
  Sig pop_data = m.output("pop_data", UInt(p.width));
  Sig full = m.output("full", UInt(1));
  Sig empty = m.output("empty", UInt(1));
  Sig count = m.output("count", UInt(cw));

  Sig rd_ptr = m.reg("rd_ptr", UInt(aw), reset_to(0));
  Sig wr_ptr = m.reg("wr_ptr", UInt(aw), reset_to(0));
  Sig used = m.reg("used", UInt(cw), reset_to(0));
  Sig do_push = m.node("do_push", push & (used != p.depth));
  Sig do_pop = m.node("do_pop", pop & (used != 0));

  std::vector<Expr> slots;
  for (int i = 0; i < p.depth; ++i) {
    Sig slot = m.reg(fmt::format("slot_{}", i), UInt(p.width), enabled_by(do_push & (wr_ptr == i)));
    slot <<= push_data;
    slots.push_back(slot);
  }
  auto next_ptr = [&](const Expr& ptr) { return mux(ptr == p.depth - 1, lit(0, aw), ptr + 1); };
  m.when(do_push, [&] { wr_ptr <<= next_ptr(wr_ptr); });
  m.when(do_pop, [&] { rd_ptr <<= next_ptr(rd_ptr); });
  m.when(do_push & !do_pop, [&] { used <<= used + 1; }).elsewhen(do_pop & !do_push, [&] { used <<= used - 1; });

  pop_data <<= select(slots, rd_ptr);
  full <<= used == p.depth;
  empty <<= used == 0;
  count <<= used;
}

void AddStage::build(Module& m) const {
  Sig a = m.input("a", UInt(p.width));
  Sig b = m.input("b", UInt(p.width));
  Sig sum = m.output("sum", UInt(p.width + 1));
  Sig q = m.reg("sum_q", UInt(p.width + 1), reset_to(0));
  q <<= a.zext(p.width + 1) + b.zext(p.width + 1);
  sum <<= q;
}

void AdderTree::build(Module& m) const {
  Data in = m.input("in", Vec(UInt(p.width), p.inputs));
  int levels = clog2(p.inputs);
  Sig out = m.output("sum", UInt(p.width + levels));
  std::vector<Expr> level;
  for (int i = 0; i < p.inputs; ++i) level.push_back(in[i].sig());
  for (int l = 0, w = p.width; level.size() > 1; ++l, ++w) {
    std::vector<Expr> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      InstanceRef add = m.instance(AddStage({w}), fmt::format("add_l{}_{}", l, i / 2));
      add.io("a").sig() <<= level[i];
      add.io("b").sig() <<= level[i + 1];
      next.push_back(add.io("sum").sig());
    }
    level = std::move(next);
  }
  out <<= level[0];
}

void ShiftReg::build(Module& m) const {
  Sig in = m.input("in", UInt(p.width));
  Sig en = m.input("en", UInt(1));
  Sig out = m.output("out", UInt(p.width));
  Expr prev = in;
  for (int i = 0; i < p.depth; ++i) {
    Sig stage = m.reg(fmt::format("stage_{}", i), UInt(p.width), reset_to(0).enabled_by(en));
    stage <<= prev;
    prev = stage;
  }
  out <<= prev;
}

void SeqDetect::build(Module& m) const {
  const int sw = clog2(p.length + 1);
  Sig bit = m.input("bit_in", UInt(1));
  Sig found = m.output("found", UInt(1));
  Sig state = m.reg("state", UInt(sw), reset_to(0));
  auto pattern_bit = [&](int i) { return (p.pattern >> (p.length - 1 - i)) & 1u; };
  // KMP-style transition: from `matched` prefix bits, seeing bit b, the longest prefix that is
  // a suffix of (prefix + b).
  auto next_state = [&](int matched, unsigned b) {
    std::vector<unsigned> seen;
    for (int i = 0; i < matched; ++i) seen.push_back(pattern_bit(i));
    seen.push_back(b);
    if (matched == p.length) seen.erase(seen.begin());
    for (int k = std::min<int>(seen.size(), p.length); k > 0; --k) {
      bool ok = true;
      for (int i = 0; i < k && ok; ++i) ok = seen[seen.size() - k + i] == pattern_bit(i);
      if (ok) return k;
    }
    return 0;
  };
  auto sw_chain = m.switch_on(state);
  for (int s = 0; s <= p.length; ++s)
    sw_chain = sw_chain.is(s, [&, s] {
      m.when(bit, [&] { state <<= next_state(s, 1); }).otherwise([&] { state <<= next_state(s, 0); });
    });
  found <<= state == p.length;
}

void DualPortRam::build(Module& m) const {
  const int aw = clog2(p.depth);
  Sig we = m.input("we", UInt(1));
  Sig waddr = m.input("waddr", UInt(aw));
  Sig wdata = m.input("wdata", UInt(p.width));
  Sig re = m.input("re", UInt(1));
  Sig raddr = m.input("raddr", UInt(aw));
  Sig rdata = m.output("rdata", UInt(p.width));
  MemRef mem = m.memory("mem", UInt(p.width), p.depth);
  mem.write_port(waddr, wdata, we);
  rdata <<= mem.read_port("rdata_q", raddr, re);
}

}  // namespace corpus
