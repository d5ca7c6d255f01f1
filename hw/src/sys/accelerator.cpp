#include <fmt/core.h>

#include <bit>
#include <functional>
#include <optional>

#include "hw/ce/ce.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/mem.hpp"
#include "hw/mem/result_writer.hpp"
#include "hw/mem/unified_memory.hpp"
#include "hw/net/dist_net.hpp"
#include "hw/net/net.hpp"
#include "hw/net/red_net.hpp"
#include "hw/pe/pe.hpp"
#include "hw/sys/system.hpp"
#include "rtl_gen/emit.hpp"

namespace fetta::hw {

using namespace rtl;

arch::SystemTiming system_timing(const arch::ArchConfig& cfg) {
  const arch::SystemTiming t = arch::system_timing(cfg);
  const bool butterfly = cfg.network.topology == arch::NetworkTopology::butterfly;
  if (butterfly && (t.dist_latency != dist_net_latency(dist_net_params(cfg)) ||
                    t.red_latency != red_net_latency(red_net_params(cfg))))
    throw std::logic_error("system_timing: arch::system_timing disagrees with the generated networks' latencies");
  return t;
}

std::string Accelerator::module_name() const {
  const arch::ArchConfig& c = p.cfg;
  // The default variant (ws+is+os PEs, double buffers, a MAC with its product registered and a
  // two-path Sklansky binary32 adder, 4 elements per bank, butterfly networks with an output
  // register on the distribution side, a 3-stage accumulator) keeps the short name; every other
  // choice appends its tag, so two configurations that generate different RTL never share a
  // name (nor a hw_id).
  const PeParams pe = pe_params_from(c);
  std::string variant;
  if (dataflow_tag(pe) != "wsisos") variant += fmt::format("_{}", dataflow_tag(pe));
  if (!pe.ib_double_buffer) variant += "_ib1";
  if (!pe.psum_double_buffer) variant += "_ps1";
  if (pe.mac_stages > 0) variant += fmt::format("_s{}", pe.mac_stages);
  if (pe.product_stages != 1) variant += fmt::format("_pm{}", pe.product_stages);
  if (c.dtype == arch::DataType::bf16 && (c.arith.fp32_adder != arch::Fp32Adder::two_path ||
                                          c.arith.prefix != arch::PrefixAdder::sklansky))
    variant += c.arith.fp32_adder == arch::Fp32Adder::basic ? "_basic" : adder_name_tag(fp_adder_choice(c));
  if (c.memory.elems_per_bank != 4) variant += fmt::format("_t{}", c.memory.elems_per_bank);
  if (c.network.dist_pipeline_every > 0) variant += fmt::format("_p{}", c.network.dist_pipeline_every);
  if (!c.network.dist_output_register && c.network.topology == arch::NetworkTopology::butterfly) variant += "_nodo";
  if (c.memory.accum_pipeline != 3) variant += fmt::format("_r{}", c.memory.accum_pipeline);
  if (c.network.topology == arch::NetworkTopology::fixed) variant += "_fixed";
  return fmt::format("fetta_top_{}_g{}_{}x{}_n{}_d{}_a{}{}", arch::to_string(c.dtype), c.ce.count, c.ce.rows, c.ce.cols,
                     c.network.lanes, c.memory.unified_depth, c.memory.accum_depth, variant);
}

ParamList Accelerator::params() const {
  const arch::ArchConfig& c = p.cfg;
  const arch::SystemTiming t = hw::system_timing(c);
  return {{"dtype", arch::to_string(c.dtype)},
          {"ces", std::to_string(c.ce.count)},
          {"ce", fmt::format("{}x{} {}", c.ce.rows, c.ce.cols, dataflow_tag(pe_params_from(c)))},
          {"lanes", std::to_string(c.network.lanes)},
          {"topology", arch::to_string(c.network.topology)},
          {"banks", fmt::format("{} x {} elems", c.memory.banks, c.memory.elems_per_bank)},
          {"unified_depth", std::to_string(c.memory.unified_depth)},
          {"accum_depth", std::to_string(c.memory.accum_depth)},
          {"accum_pipeline", std::to_string(c.memory.accum_pipeline)},
          {"mac_product_stages", std::to_string(c.ce.mac_product_stages)},
          {"fp32_adder", arch::to_string(c.arith.fp32_adder)},
          {"adder_prefix", arch::to_string(c.arith.prefix)},
          {"dist_output_register", c.network.dist_output_register ? "true" : "false"},
          {"host_banks", std::to_string(host_banks_for(c))},
          {"ctrl_delay", std::to_string(t.ctrl_delay)},
          {"acc_delay", std::to_string(t.acc_delay)}};
}

void Accelerator::build(Module& m) const {
  const arch::ArchConfig& cfg = p.cfg;
  arch::validate(cfg);  // the rules of every part and subcommand (arch/src/config.cpp)
  const arch::SystemTiming tm = hw::system_timing(cfg);
  const arch::IsaLayout isa(cfg);
  const int G = cfg.ce.count, R = cfg.ce.rows, C = cfg.ce.cols, N = cfg.network.lanes;
  const int B = cfg.memory.banks, T = cfg.memory.elems_per_bank, L = isa.levels();
  const UnifiedMemoryParams ump = unified_memory_params(cfg);
  const AccumulationUnitParams acp = accumulator_params(cfg);
  const CeParams cep = ce_params_from(cfg);
  const int P = ump.host_banks, H = P * T, HG = B / P;
  const int gw = clog2(HG);
  const int hw = isa.half_addr_bits(), qw = isa.acc_addr_bits();
  const bool fp = cfg.dtype == arch::DataType::bf16;
  const int AB = arch::accumulator_bits(cfg.dtype);
  const Type acc_t = fp ? UInt(32) : SInt(AB);
  m.add_comment(fmt::format("{} CEs of {}x{} {} PEs, {}-lane distribution networks (IA, IB) and reduction network,", G, R,
                            C, arch::to_string(cfg.dtype), N));
  m.add_comment(fmt::format("unified memory {} banks x {} x {} rows (ping-pong halves), accumulator {} rows; docs/architecture.md.",
                            B, T, cfg.memory.unified_depth, cfg.memory.accum_depth));

  // ---- host interface: the controller's ports (instruction words, status) are the top's
  InstanceRef ctl = m.instance(Controller(ControllerParams{cfg, tm.ctrl_delay, tm.acc_delay, 4}), "ctl");
  for (const char* name : {"instr_we", "instr_word"}) ctl.io(name).sig() <<= m.input(name, ctl.io(name).type()).sig();
  for (const char* name : {"instr_ready", "busy", "error", "cycle_count", "retired"})
    m.output(name, ctl.io(name).type()).sig() <<= ctl.io(name).sig();
  Sig hw_id = m.output("hw_id", UInt(32));
  hw_id <<= lit(hardware_id(cfg), 32);
  // The unified memory's host port is the top's: the same ports, passed through.
  InstanceRef um = m.instance(UnifiedMemory(ump), "umem");
  for (const char* name : {"host_group", "host_row", "host_we", "host_wmask", "host_wdata", "host_re"})
    connect(um.io(name), m.input(name, um.io(name).type()));
  for (const char* name : {"host_rvalid", "host_rdata"}) connect(m.output(name, um.io(name).type()), um.io(name));
  Sig acc_re = m.input("acc_re", UInt(1));
  Sig acc_group = m.input("acc_group", UInt(gw));
  Sig acc_row = m.input("acc_row", UInt(qw));
  Sig acc_rvalid = m.output("acc_rvalid", UInt(1));
  Data acc_rdata = m.output("acc_rdata", Vec(acc_t, H));

  // ---- unified memory: TCU reads (same row in every bank), host port on the other half
  um.io("compute_half").sig() <<= ctl.io("compute_half").sig();
  um.io("ia_en").sig() <<= repl(ctl.io("ia_en").sig(), B);
  um.io("ib_en").sig() <<= repl(ctl.io("ib_en").sig(), B);
  for (int b = 0; b < B; ++b) {
    um.io("ia_addr")[b].sig() <<= ctl.io("ia_row").sig();
    um.io("ib_addr")[b].sig() <<= ctl.io("ib_row").sig();
  }

  // ---- distribution networks (cheap control from the instruction), or fixed wiring
  const bool fixed = cfg.network.topology == arch::NetworkTopology::fixed;
  std::function<Expr(int)> ia_lane, ib_lane;  // CE input lane -> its value
  std::optional<InstanceRef> red;
  if (!fixed) {
    DistNetParams dp = dist_net_params(cfg);
    dp.control = DistControlPorts::cheap;
    InstanceRef dist_ia = m.instance(DistNet(dp), "dist_ia");
    InstanceRef dist_ib = m.instance(DistNet(dp), "dist_ib");
    for (int i = 0; i < N; ++i) {
      dist_ia.io("in")[i].sig() <<= um.io("ia_data")[i].sig();
      dist_ib.io("in")[i].sig() <<= um.io("ib_data")[i].sig();
    }
    dist_ia.io("sel_vec").sig() <<= ctl.io("ia_sel").sig();
    dist_ia.io("idx_mask").sig() <<= ctl.io("ia_mask").sig();
    dist_ia.io("tr_en").sig() <<= ctl.io("ia_tr").sig();
    dist_ib.io("sel_vec").sig() <<= ctl.io("ib_sel").sig();
    dist_ib.io("idx_mask").sig() <<= ctl.io("ib_mask").sig();
    dist_ib.io("tr_en").sig() <<= ctl.io("ib_tr").sig();
    ia_lane = [=](int i) { return Expr(dist_ia.io("out")[i].sig()); };
    ib_lane = [=](int i) { return Expr(dist_ib.io("out")[i].sig()); };
    red = m.instance(RedNet(red_net_params(cfg)), "red");
  } else {
    ia_lane = [=](int i) { return Expr(um.io("ia_data")[i].sig()); };
    ib_lane = [=](int i) { return Expr(um.io("ib_data")[i].sig()); };
  }

  // ---- CE array: CE g row r reads lane g*R + r of both networks (IB from the left), column c
  // lane g*C + c of the IB network (IB from the top); output column c -> lane g*C + c
  const Ce ce_gen(cep);
  Sig ib_load = ctl.io("ce_ib_load").sig();
  std::vector<Expr> acc_in(static_cast<size_t>(N), fp ? lit(0, 32) : slit(0, AB));
  for (int g = 0; g < G; ++g) {
    InstanceRef ce = m.instance(ce_gen, fmt::format("ce{}", g));
    for (int r = 0; r < R; ++r) {
      ce.io("ia")[r].sig() <<= ia_lane(g * R + r);
      ce.io("ib_left")[r].sig() <<= ib_lane(g * R + r);
    }
    for (int c = 0; c < C; ++c) ce.io("ib_top")[c].sig() <<= ib_lane(g * C + c);
    Data cc = ce.io("ctrl");
    // arch::validate requires ws, so a CE with os has both modes and the controller drives it.
    if (cep.pe.both_modes()) cc["os"].sig() <<= ctl.io("ce_os").sig();
    cc["active"].sig() <<= ctl.io("ce_active").sig();
    if (cep.has_first_ctrl()) cc["first"].sig() <<= ctl.io("ce_first").sig();
    if (cep.pe.has_last()) cc["last"].sig() <<= ctl.io("ce_last").sig();
    cc["ib_load"].sig() <<= ib_load.bit(g);
    cc["ib_from_left"].sig() <<= ctl.io("ce_ib_from_left").sig();
    for (int c = 0; c < C; ++c) {
      Sig ps = ce.io("out")["psum"][c].sig();
      acc_in[static_cast<size_t>(g * C + c)] = fp ? Expr(ps) : ps.as_signed();
    }
  }
  if (red) {
    for (int i = 0; i < N; ++i) red->io("in")[i].sig() <<= acc_in[static_cast<size_t>(i)];
    for (int k = 0; k < L; ++k) red->io("sw_mode")[k].sig() <<= ctl.io("red_sw_mode")[k].sig();
    red->io("tr_sel").sig() <<= ctl.io("red_tr_sel").sig();
    for (int i = 0; i < N; ++i) acc_in[static_cast<size_t>(i)] = red->io("out")[i].sig();
  }

  // ---- accumulation unit: the controller's ops while busy, host reads of bank groups when idle
  InstanceRef acc = m.instance(AccumulationUnit(acp), "accum");
  Sig host_side = m.node("host_side", !ctl.io("busy").sig());
  for (int b = 0; b < B; ++b) {
    Expr host_op = mux(acc_re & (acc_group == static_cast<int>(b / P)), lit(3, 2), lit(0, 2));
    acc.io("op")[b].sig() <<= mux(host_side, host_op, ctl.io("acc_op").sig());
    acc.io("addr")[b].sig() <<= mux(host_side, acc_row, ctl.io("acc_row")[b].sig());
  }
  acc.io("mask").sig() <<= ~lit(0, N);
  for (int i = 0; i < N; ++i) acc.io("data")[i].sig() <<= acc_in[static_cast<size_t>(i)];
  // ---- STORE write-back: accumulator read data -> operand type -> unified memory (a row per
  // bank: the same in every bank but for diagonal moves; lanes by mask; the compute half, or the
  // host's half with st_other).
  InstanceRef wb = m.instance(ResultWriter(ResultWriterParams{N, B, hw, cfg.dtype}), "writer");
  for (const char* name : {"valid", "row", "src_lane", "dst_lane", "count_m1", "diag"})
    wb.io(name).sig() <<= ctl.io(fmt::format("st_{}", name)).sig();
  if (B > 1) wb.io("row_bank_strides").sig() <<= ctl.io("st_row_bank_strides").sig();
  if (fp)
    wb.io("pad_neg").sig() <<= ctl.io("st_pad_neg").sig();
  else
    wb.io("shift").sig() <<= ctl.io("st_shift").sig();
  for (int i = 0; i < N; ++i) wb.io("data")[i].sig() <<= acc.io("rd_data")[i].sig();
  um.io("wr_other").sig() <<= ctl.io("st_other").sig();
  um.io("wr_en").sig() <<= repl(wb.io("wr_en").sig(), B);
  um.io("wr_mask").sig() <<= wb.io("wr_mask").sig();
  for (int b = 0; b < B; ++b) um.io("wr_addr")[b].sig() <<= wb.io("wr_row")[b].sig();
  for (int i = 0; i < N; ++i) um.io("wr_data")[i].sig() <<= wb.io("wr_data")[i].sig();

  Sig acc_group_q = m.reg("acc_group_q", UInt(gw), RegOptions{}.enabled_by(acc_re));
  acc_group_q <<= acc_group;
  Sig rv = acc.io("rd_valid").sig();
  acc_rvalid <<= rv.or_reduce();
  for (int j = 0; j < H; ++j) {
    std::vector<Expr> items;
    for (int g = 0; g < HG; ++g) items.push_back(acc.io("rd_data")[g * H + j].sig());
    acc_rdata[j].sig() <<= HG == 1 ? items[0] : select(items, acc_group_q);
  }
}

uint32_t hardware_id(const arch::ArchConfig& cfg) {
  const std::string h = rtl::sha256_hex(Accelerator(AcceleratorParams{cfg}).module_name());
  return static_cast<uint32_t>(std::stoul(h.substr(0, 8), nullptr, 16));
}

std::string elaborate_accelerator(Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Accelerator(AcceleratorParams{cfg}))->name();
}

}  // namespace fetta::hw
