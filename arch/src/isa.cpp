#include "arch/isa.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>

namespace fetta::arch {

namespace {

int clog2(int64_t v) {
  int b = 0;
  while ((int64_t{1} << b) < v) ++b;
  return b;
}

void put(Words& w, int lsb, int width, uint64_t v) {
  for (int i = 0; i < width; ++i)
    if ((v >> i) & 1U) w[static_cast<size_t>((lsb + i) / 32)] |= uint32_t{1} << ((lsb + i) % 32);
}

// Writes a field's value, rejecting one that does not fit: "<instr>: <name> = v does not fit ...".
void put_checked(Words& w, const IsaField& f, const std::string& instr, const std::string& name, uint64_t v) {
  if (f.width < 64 && v >> f.width)
    throw IsaError(fmt::format("{}: {} = {} does not fit its {} bits; allowed: 0 .. {}", instr, name, v, f.width,
                               (uint64_t{1} << f.width) - 1));
  put(w, f.lsb, f.width, v);
}

}  // namespace

SystemTiming system_timing(const ArchConfig& cfg) {
  SystemTiming t;
  const int L = clog2(cfg.network.lanes);
  const int pe = cfg.network.dist_pipeline_every;
  const bool fixed = cfg.network.topology == NetworkTopology::fixed;  // wires: no network latency
  // The butterfly's registers, and one at its output unless the last of those is already there.
  const bool ends_registered = pe > 0 && (L + 1) % pe == 0;
  t.dist_latency = fixed ? 0 : (pe == 0 ? 0 : (L + 1) / pe) + (cfg.network.dist_output_register && !ends_registered ? 1 : 0);
  // A register after every level, and a binary32 adder's stages at every level with adders.
  const int adder_stages = cfg.dtype == DataType::bf16 ? cfg.arith.reduction_adder_stages : 0;
  t.red_latency = fixed ? 0 : L + 1 + adder_stages * (L - red_first_add_level(cfg));
  t.ctrl_delay = 1 + t.dist_latency;
  t.acc_delay = t.ctrl_delay + cfg.ce.rows * (cfg.ce.mac_pipeline_stages + 1) + cfg.ce.mac_product_stages + t.red_latency;
  // The last accumulator op's write lands accum_pipeline - 1 cycles after it.
  t.drain = t.acc_delay + 2 + (cfg.memory.accum_pipeline - 1);
  t.ib_top_load = 1 + (cfg.ce.rows - 1) * (cfg.ce.mac_pipeline_stages + 1);
  return t;
}

int red_first_add_level(const ArchConfig& cfg) {
  const int c = cfg.ce.cols;
  if (c <= 0 || (c & (c - 1)) != 0) return 0;
  return std::min(clog2(c), clog2(cfg.network.lanes));
}

std::string to_string(Opcode op) {
  switch (op) {
    case Opcode::gemm: return "gemm";
    case Opcode::red_cfg: return "red_cfg";
    case Opcode::flip: return "flip";
    case Opcode::store: return "store";
  }
  return "illegal";
}

IsaLayout::IsaLayout(const ArchConfig& cfg) {
  half_addr_bits_ = clog2(cfg.memory.unified_depth / 2);
  acc_addr_bits_ = clog2(cfg.memory.accum_depth);
  levels_ = clog2(cfg.network.lanes);
  banks_ = cfg.memory.banks;
  red_cfg_bits_ = (levels_ + 1) * cfg.network.lanes;
  const int C = count_bits(), G = group_bits(), A = half_addr_bits_, Q = acc_addr_bits_, L = levels_;
  int at = 4;
  auto add = [&](const std::string& name, int width) {
    gemm_.push_back({name, at, width});
    at += width;
  };
  add("m_m1", C);
  add("k_tiles_m1", C);
  add("n_tiles_m1", C);
  add("gn_m1", G);
  add("gk_m1", G);
  add("a_base", A);
  add("a_kt_stride", A);
  add("b_base", A);
  add("b_kt_stride", A);
  add("b_nt_stride", A);
  add("acc_base", Q);
  add("acc_nt_stride", Q);
  add("acc_accumulate", 1);
  add("ia_sel", L);
  add("ia_mask", L);
  add("ia_tr", 1);
  add("ib_sel", L);
  add("ib_mask", L);
  add("ib_tr", 1);
  add("ib_top", 1);
  // Only where the CEs can run it: an OS gemm elsewhere is an encoding error, not a silent WS one.
  if (cfg.has_dataflow(Dataflow::os)) add("os", 1);
  const int gemm_end = at;
  // STORE: a 4-level nest of 4 streams (accumulator row and lane, unified row and lane).
  at = 4;
  auto add_st = [&](const std::string& name, int width) {
    store_.push_back({"st_" + name, at, width});
    at += width;
  };
  for (int l = 0; l < StoreInstr::kLevels; ++l) {
    add_st(fmt::format("bound_m1_l{}", l), Q + 1);
    add_st(fmt::format("src_row_stride_l{}", l), Q);
    add_st(fmt::format("src_lane_stride_l{}", l), L);
    add_st(fmt::format("dst_row_stride_l{}", l), A);
    add_st(fmt::format("dst_lane_stride_l{}", l), L);
  }
  add_st("src_row_base", Q);
  add_st("src_lane_base", L);
  add_st("dst_row_base", A);
  add_st("dst_lane_base", L);
  add_st("count_m1", L);
  add_st("other_half", 1);
  add_st("diag", 1);
  for (int h = 0; h < bank_bits(); ++h) add_st(fmt::format("src_row_bank_stride_b{}", h), Q);
  for (int h = 0; h < bank_bits(); ++h) add_st(fmt::format("dst_row_bank_stride_b{}", h), A);
  if (cfg.dtype == DataType::bf16)
    add_st("pad_neg", 1);
  else
    add_st("shift", 6);
  bits_ = (std::max(gemm_end, at) + 31) / 32 * 32;
  other_ = {{"op", 0, 4}, {"chunk", 4, 8}, {"payload", 12, bits_ - 12}};
}

int IsaLayout::bank_bits() const { return clog2(banks_); }

bool IsaLayout::has_field(const std::string& name) const {
  for (const auto* v : {&gemm_, &store_, &other_})
    for (const auto& f : *v)
      if (f.name == name) return true;
  return false;
}

const IsaField& IsaLayout::field(const std::string& name) const {
  for (const auto& f : gemm_)
    if (f.name == name) return f;
  for (const auto& f : store_)
    if (f.name == name) return f;
  for (const auto& f : other_)
    if (f.name == name) return f;
  throw IsaError("isa: no field '" + name + "'");
}

Words encode_gemm(const IsaLayout& isa, const GemmInstr& g) {
  Words w(static_cast<size_t>(isa.words()), 0);
  put(w, 0, 4, static_cast<uint32_t>(Opcode::gemm));
  auto set = [&](const std::string& name, uint64_t v) { put_checked(w, isa.field(name), "gemm", name, v); };
  auto count = [&](const std::string& name, uint32_t v) {
    if (v == 0) throw IsaError(fmt::format("gemm: {} = 0; allowed: 1 .. 2^{}", name, isa.field(name + "_m1").width));
    set(name + "_m1", v - 1);
  };
  count("m", g.m);
  count("k_tiles", g.k_tiles);
  count("n_tiles", g.n_tiles);
  count("gn", g.gn);
  count("gk", g.gk);
  if (!std::has_single_bit(g.gn) || !std::has_single_bit(g.gk))
    throw IsaError(fmt::format("gemm: gn = {}, gk = {}; allowed: powers of two", g.gn, g.gk));
  set("a_base", g.a_base);
  set("a_kt_stride", g.a_kt_stride);
  set("b_base", g.b_base);
  set("b_kt_stride", g.b_kt_stride);
  set("b_nt_stride", g.b_nt_stride);
  set("acc_base", g.acc_base);
  set("acc_nt_stride", g.acc_nt_stride);
  set("acc_accumulate", g.acc_accumulate);
  set("ia_sel", g.ia_sel);
  set("ia_mask", g.ia_mask);
  set("ia_tr", g.ia_tr);
  set("ib_sel", g.ib_sel);
  set("ib_mask", g.ib_mask);
  set("ib_tr", g.ib_tr);
  set("ib_top", g.ib_top);
  if (isa.has_field("os"))
    set("os", g.os);
  else if (g.os)
    throw IsaError("gemm: os = 1, but this configuration's CEs have no output-stationary mode; allowed: 0 "
                   "(add os to ce.dataflows)");
  return w;
}

Words encode_red_cfg(const IsaLayout& isa, int chunk, const std::vector<uint8_t>& cfg_bits) {
  if (static_cast<int>(cfg_bits.size()) != isa.red_cfg_bits())
    throw IsaError(fmt::format("red_cfg: {} bits given; allowed: exactly {}", cfg_bits.size(), isa.red_cfg_bits()));
  if (chunk < 0 || chunk >= isa.red_chunks())
    throw IsaError(fmt::format("red_cfg: chunk = {}; allowed: 0 .. {}", chunk, isa.red_chunks() - 1));
  Words w(static_cast<size_t>(isa.words()), 0);
  put(w, 0, 4, static_cast<uint32_t>(Opcode::red_cfg));
  put(w, 4, 8, static_cast<uint64_t>(chunk));
  const int pb = isa.red_chunk_bits();
  for (int i = 0; i < pb; ++i) {
    const int src = chunk * pb + i;
    if (src < isa.red_cfg_bits() && cfg_bits[static_cast<size_t>(src)]) put(w, 12 + i, 1, 1);
  }
  return w;
}

Words encode_flip(const IsaLayout& isa) {
  Words w(static_cast<size_t>(isa.words()), 0);
  put(w, 0, 4, static_cast<uint32_t>(Opcode::flip));
  return w;
}

Words encode_store(const IsaLayout& isa, const StoreInstr& s) {
  Words w(static_cast<size_t>(isa.words()), 0);
  put(w, 0, 4, static_cast<uint32_t>(Opcode::store));
  auto set = [&](const std::string& name, uint64_t v) { put_checked(w, isa.field("st_" + name), "store", name, v); };
  auto wrapped = [&](const std::string& name, int64_t v) {  // a stride: modulo its field's range
    const IsaField& f = isa.field("st_" + name);
    put(w, f.lsb, f.width, static_cast<uint64_t>(v) & ((uint64_t{1} << f.width) - 1));
  };
  const int lanes = 1 << isa.levels();
  for (int l = 0; l < StoreInstr::kLevels; ++l) {
    const uint32_t b = s.bound[static_cast<size_t>(l)];
    const int bw = isa.field(fmt::format("st_bound_m1_l{}", l)).width;
    if (b == 0 || (uint64_t{b} - 1) >> bw)
      throw IsaError(fmt::format("store: bound[{}] = {}; allowed: 1 .. {}", l, b, uint64_t{1} << bw));
    set(fmt::format("bound_m1_l{}", l), b - 1);
    wrapped(fmt::format("src_row_stride_l{}", l), s.src_row_stride[static_cast<size_t>(l)]);
    wrapped(fmt::format("src_lane_stride_l{}", l), s.src_lane_stride[static_cast<size_t>(l)]);
    wrapped(fmt::format("dst_row_stride_l{}", l), s.dst_row_stride[static_cast<size_t>(l)]);
    wrapped(fmt::format("dst_lane_stride_l{}", l), s.dst_lane_stride[static_cast<size_t>(l)]);
  }
  set("src_row_base", s.src_row_base);
  set("src_lane_base", s.src_lane_base);
  set("dst_row_base", s.dst_row_base);
  set("dst_lane_base", s.dst_lane_base);
  if (s.count == 0 || s.count > static_cast<uint32_t>(lanes))
    throw IsaError(fmt::format("store: count = {}; allowed: 1 .. {} (the lanes)", s.count, lanes));
  if (s.diag && s.count > static_cast<uint32_t>(isa.banks()))
    throw IsaError(fmt::format("store: count = {} with diag = 1; allowed: 1 .. {} (one element per bank)", s.count,
                               isa.banks()));
  for (int h = 0; h < StoreInstr::kMaxBankBits; ++h) {
    const int64_t src = s.src_row_bank_stride[static_cast<size_t>(h)], dst = s.dst_row_bank_stride[static_cast<size_t>(h)];
    if ((src != 0 || dst != 0) && !s.diag)
      throw IsaError("store: a row bank stride with diag = 0; allowed: 0 (only diagonal moves address banks apart)");
    if ((src != 0 || dst != 0) && h >= isa.bank_bits())
      throw IsaError(fmt::format("store: a row bank stride for bank bit {}; allowed: bits 0 .. {} ({} banks)", h,
                                 isa.bank_bits() - 1, isa.banks()));
  }
  set("count_m1", s.count - 1);
  set("other_half", s.other_half);
  set("diag", s.diag);
  for (int h = 0; h < isa.bank_bits(); ++h) {
    wrapped(fmt::format("src_row_bank_stride_b{}", h), s.src_row_bank_stride[static_cast<size_t>(h)]);
    wrapped(fmt::format("dst_row_bank_stride_b{}", h), s.dst_row_bank_stride[static_cast<size_t>(h)]);
  }
  if (isa.has_field("st_pad_neg")) {
    if (s.shift != 0) throw IsaError(fmt::format("store: shift = {}; allowed: 0 (bf16 results are rounded, not shifted)", s.shift));
    set("pad_neg", s.pad_neg);
  } else {
    if (s.pad_neg) throw IsaError("store: pad_neg = 1; allowed: 0 (integer operands pad with 0)");
    set("shift", s.shift);
  }
  return w;
}

int64_t store_instr_cycles(const StoreInstr& s) { return s.moves() + 4; }

uint64_t field_value(const Words& words, const IsaField& f) {
  uint64_t v = 0;
  for (int i = 0; i < f.width && i < 64; ++i) {
    const int b = f.lsb + i;
    if ((words[static_cast<size_t>(b / 32)] >> (b % 32)) & 1U) v |= uint64_t{1} << i;
  }
  return v;
}

std::string disassemble(const IsaLayout& isa, const Words& words) {
  if (static_cast<int>(words.size()) != isa.words())
    throw IsaError(fmt::format("disassemble: {} words; allowed: exactly {}", words.size(), isa.words()));
  const uint64_t op = field_value(words, isa.field("op"));
  switch (static_cast<Opcode>(op)) {
    case Opcode::gemm: {
      std::string s = "gemm";
      for (const auto& f : isa.gemm_fields()) s += fmt::format(" {}={}", f.name, field_value(words, f));
      return s;
    }
    case Opcode::red_cfg: return fmt::format("red_cfg chunk={}", field_value(words, isa.field("chunk")));
    case Opcode::flip: return "flip";
    case Opcode::store: {
      std::string s = "store";
      for (const auto& f : isa.store_fields()) s += fmt::format(" {}={}", f.name.substr(3), field_value(words, f));
      return s;
    }
  }
  return fmt::format("illegal opcode {}", op);
}

}  // namespace fetta::arch
