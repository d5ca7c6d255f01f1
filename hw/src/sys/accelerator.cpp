#include <fmt/core.h>

#include <bit>
#include <functional>
#include <optional>

#include "hw/ce/ce.hpp"
#include "hw/mem/accumulation_unit.hpp"
#include "hw/mem/dma.hpp"
#include "hw/mem/mem.hpp"
#include "hw/mem/result_writer.hpp"
#include "hw/mem/unified_memory.hpp"
#include "hw/net/dist_net.hpp"
#include "hw/net/net.hpp"
#include "hw/net/red_net.hpp"
#include "hw/pe/pe.hpp"
#include "hw/ports.hpp"
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

namespace {

// A binary32 adder's tag in the top's name: "_basic", or the two-path adder's prefix tag.
std::string adder_variant_tag(arch::Fp32Adder a, const FpAdderChoice& choice) {
  return a == arch::Fp32Adder::basic ? "_basic" : adder_name_tag(choice);
}

}  // namespace

Identity Accelerator::identity() const {
  const arch::ArchConfig& c = p.cfg;
  // The default variant (ws+is+os PEs, double buffers, a MAC with its product registered and a
  // two-path Sklansky binary32 adder, 4 elements per bank, butterfly networks with an output
  // register on the distribution side, a 3-stage accumulator) keeps the short name; every other
  // choice appends its part, so two configurations that generate different RTL never share a
  // name (nor a hw_id).
  const PeParams pe = pe_params_from(c);
  const bool bf16 = c.dtype == arch::DataType::bf16;
  const arch::ArithConfig def{};
  const bool pe_adder = bf16 && (c.arith.fp32_adder != arch::Fp32Adder::two_path || c.arith.prefix != arch::PrefixAdder::sklansky);
  const bool red_adder =
      bf16 && (c.arith.reduction_adder != def.reduction_adder || c.arith.reduction_adder_stages != def.reduction_adder_stages);
  const bool butterfly = c.network.topology == arch::NetworkTopology::butterfly;
  // The host port's width follows the DRAM's bytes per clock (arch::host_port_banks): named where
  // it is not what the default DRAM and clock give this data type and bank width.
  arch::ArchConfig ref = c;
  ref.dram.bandwidth_gbps = arch::ArchConfig{}.dram.bandwidth_gbps;
  ref.clock_mhz = arch::ArchConfig{}.clock_mhz;
  const int host_banks = arch::host_port_banks(c);
  const arch::SystemTiming t = hw::system_timing(c);
  return Identity("fetta_top")
      .param("dtype", arch::to_string(c.dtype), fmt::format("_{}", arch::to_string(c.dtype)))
      .param("ces", c.ce.count, fmt::format("_g{}", c.ce.count))
      .param("ce_rows", c.ce.rows, fmt::format("_{}", c.ce.rows))
      .param("ce_cols", c.ce.cols, fmt::format("x{}", c.ce.cols))
      .param("lanes", c.network.lanes, fmt::format("_n{}", c.network.lanes))
      .param("unified_depth", c.memory.unified_depth, fmt::format("_d{}", c.memory.unified_depth))
      .param("accum_depth", c.memory.accum_depth, fmt::format("_a{}", c.memory.accum_depth))
      .param("dataflows", dataflow_tag(pe), dataflow_tag(pe) != "wsisos" ? fmt::format("_{}", dataflow_tag(pe)) : "")
      .flag("ib_double_buffer", pe.ib_double_buffer, pe.ib_double_buffer ? "" : "_ib1")
      .flag("psum_double_buffer", pe.psum_double_buffer, pe.psum_double_buffer ? "" : "_ps1")
      .param("mac_stages", pe.mac_stages, pe.mac_stages > 0 ? fmt::format("_s{}", pe.mac_stages) : "")
      .param("mac_product_stages", pe.product_stages, pe.product_stages != 1 ? fmt::format("_pm{}", pe.product_stages) : "")
      .param("fp32_adder", arch::to_string(c.arith.fp32_adder),
             pe_adder ? adder_variant_tag(c.arith.fp32_adder, fp_adder_choice(c)) : "")
      .param("adder_prefix", arch::to_string(c.arith.prefix))
      .param("reduction_adder", arch::to_string(c.arith.reduction_adder),
             red_adder ? fmt::format("_red{}_s{}", adder_variant_tag(c.arith.reduction_adder, reduction_adder_choice(c)),
                                     c.arith.reduction_adder_stages)
                       : "")
      .param("reduction_adder_stages", c.arith.reduction_adder_stages)
      .param("elems_per_bank", c.memory.elems_per_bank,
             c.memory.elems_per_bank != 4 ? fmt::format("_t{}", c.memory.elems_per_bank) : "")
      .param("dist_pipeline_every", c.network.dist_pipeline_every,
             c.network.dist_pipeline_every > 0 ? fmt::format("_p{}", c.network.dist_pipeline_every) : "")
      .flag("dist_output_register", c.network.dist_output_register,
            !c.network.dist_output_register && butterfly ? "_nodo" : "")
      .param("accum_pipeline", c.memory.accum_pipeline,
             c.memory.accum_pipeline != 3 ? fmt::format("_r{}", c.memory.accum_pipeline) : "")
      .param("topology", arch::to_string(c.network.topology), butterfly ? "" : "_fixed")
      .param("host_banks", host_banks, host_banks != arch::host_port_banks(ref) ? fmt::format("_h{}", host_banks) : "")
      .param("banks", c.memory.banks)
      .param("ctrl_delay", t.ctrl_delay)
      .param("acc_delay", t.acc_delay);
}

TopPorts top_ports(const arch::ArchConfig& cfg) {
  const arch::DmaGeometry g = arch::dma_geometry(cfg);
  const int H = arch::host_port_lanes(cfg), groups = cfg.memory.banks / arch::host_port_banks(cfg);
  const Type acc_elem = cfg.dtype == arch::DataType::bf16 ? UInt(32) : SInt(arch::accumulator_bits(cfg.dtype));
  const arch::IsaLayout isa(cfg);
  TopPorts p;
  p.instr = {"instr", WordPort::type(), true};
  p.busy = {"busy", UInt(1), false};
  p.error = {"error", UInt(1), false};
  p.cycle_count = {"cycle_count", UInt(48), false};
  p.retired = {"retired", UInt(32), false};
  p.hw_id = {"hw_id", UInt(32), false};
  p.host = {"host", HostPort::type(host_port_shape(g)), true};
  p.host_rvalid = {"host_rvalid", UInt(1), false};
  p.acc = {"acc",
           Bundle({field("re", UInt(1)), field("group", UInt(clog2(groups))), field("row", UInt(isa.acc_addr_bits())),
                   flipped("rvalid", UInt(1)), flipped("rdata", Vec(acc_elem, H))}),
           true};
  p.desc = {"desc", WordPort::type(), true};
  p.dma = {"dma", Bundle({field("busy", UInt(1)), field("done", UInt(32)), field("error", UInt(1))}), false};
  p.mem = {"mem", DramPort::type(g), false};
  return p;
}

std::vector<TopPort> TopPorts::all() const {
  return {instr, busy, error, cycle_count, retired, hw_id, host, host_rvalid, acc, desc, dma, mem};
}

std::vector<std::string> TopPorts::leaf_names() const {
  std::vector<std::string> names{"clk", "rst"};
  for (const TopPort& p : all())
    for (const Leaf& l : p.type.leaves()) names.push_back(p.name + l.suffix);
  return names;
}

namespace {

// The configuration is checked before anything reads it: the rules of every part and subcommand
// (arch/src/config.cpp).
arch::SystemTiming validated_timing(const arch::ArchConfig& cfg) {
  arch::validate(cfg);
  return hw::system_timing(cfg);
}

// The top's generator, one member per part: the host interface, the unified memory's reads, the
// distribution networks, the CE array, the reduction network, the accumulation unit, the STORE
// write-back and the host's accumulator reads.
class AcceleratorBuilder {
 public:
  AcceleratorBuilder(Module& m, const arch::ArchConfig& cfg);
  void build();

 private:
  void host_interface();
  void unified_memory_reads();
  void distribution();
  void ce_array();
  void reduction();
  void accumulation_unit();
  void store_write_back();
  void host_accumulator_reads();

  Module& m_;
  const arch::ArchConfig& cfg_;
  const arch::SystemTiming tm_;
  const arch::IsaLayout isa_;
  const int G_, R_, C_, N_, B_, T_, L_;
  const UnifiedMemoryParams ump_;
  const CeParams cep_;
  const int P_, H_, HG_, gw_;  // host banks, elements per host row, host bank groups, group bits
  const bool fp_;
  const int AB_;

  std::optional<InstanceRef> ctl_, um_, red_, acc_;
  Sig acc_re_, acc_group_, acc_row_, acc_rvalid_;
  Data acc_rdata_;
  std::function<Expr(int)> ia_lane_, ib_lane_;  // CE input lane -> its value
  std::vector<Expr> acc_in_;                   // the accumulation unit's data, lane by lane
  std::vector<Expr> ce_valids_;                // each CE's output valid
};

AcceleratorBuilder::AcceleratorBuilder(Module& m, const arch::ArchConfig& cfg)
    : m_(m),
      cfg_(cfg),
      tm_(validated_timing(cfg)),
      isa_(cfg),
      G_(cfg.ce.count),
      R_(cfg.ce.rows),
      C_(cfg.ce.cols),
      N_(cfg.network.lanes),
      B_(cfg.memory.banks),
      T_(cfg.memory.elems_per_bank),
      L_(isa_.levels()),
      ump_(unified_memory_params(cfg)),
      cep_(ce_params_from(cfg)),
      P_(ump_.host_banks),
      H_(P_ * T_),
      HG_(B_ / P_),
      gw_(clog2(HG_)),
      fp_(cfg.dtype == arch::DataType::bf16),
      AB_(arch::accumulator_bits(cfg.dtype)) {}

void AcceleratorBuilder::build() {
  m_.add_comment(fmt::format("{} CEs of {}x{} {} PEs, {}-lane distribution networks (IA, IB) and reduction network,", G_,
                             R_, C_, arch::to_string(cfg_.dtype), N_));
  m_.add_comment(fmt::format("unified memory {} banks x {} x {} rows (ping-pong halves), accumulator {} rows; docs/architecture.md.",
                             B_, T_, cfg_.memory.unified_depth, cfg_.memory.accum_depth));
  host_interface();
  unified_memory_reads();
  distribution();
  ce_array();
  reduction();
  accumulation_unit();
  store_write_back();
  host_accumulator_reads();
}

// ---- host interface: the controller's ports (instruction words, status) are the top's, and so
// is the unified memory's host port.
void AcceleratorBuilder::host_interface() {
  Module& m = m_;
  const TopPorts ports = top_ports(cfg_);
  auto declare = [&m](const TopPort& p) { return p.input ? m.input(p.name, p.type) : m.output(p.name, p.type); };
  ctl_ = m.instance(Controller(ControllerParams{cfg_, tm_.ctrl_delay, tm_.acc_delay, arch::kTopInstrQueueDepth}), "ctl");
  const InstanceRef& ctl = *ctl_;
  connect(ctl.io_whole(Controller::kInstr), declare(ports.instr));
  for (const TopPort* p : {&ports.busy, &ports.error, &ports.cycle_count, &ports.retired})
    declare(*p).sig() <<= ctl.io(p->name).sig();
  declare(ports.hw_id).sig() <<= lit(hardware_id(cfg_), 32);
  um_ = m.instance(UnifiedMemory(ump_), "umem");
  const HostPort um_host = um_->io(UnifiedMemory::kHost);
  // The DMA (docs/dma.md) owns the unified memory's host port while it has descriptors; the
  // host's own accesses (the through-host path, the scoreboard's probes) are for when it has none.
  InstanceRef dma = m.instance(Dma(dma_params(cfg_)), "dma_engine");
  connect(dma.io_whole(Dma::kDesc), declare(ports.desc));
  const Data status = declare(ports.dma);
  status["busy"].sig() <<= dma.io("busy").sig();
  status["done"].sig() <<= dma.io("done_count").sig();
  status["error"].sig() <<= dma.io("error").sig();
  connect(declare(ports.mem), dma.io_whole(Dma::kMem));
  dma.io("compute_half").sig() <<= ctl.io("compute_half").sig();
  ctl.io("dma_hold").sig() <<= dma.io("host_half_busy").sig();
  Sig dma_owns = m.node("dma_owns_host_port", dma.io("busy").sig());
  const HostPort from_dma = dma.io(Dma::kUm), from_host(declare(ports.host));
  for (auto field : {&HostPort::group, &HostPort::row, &HostPort::we, &HostPort::wmask, &HostPort::re})
    (um_host.*field).sig() <<= mux(dma_owns, (from_dma.*field).sig(), (from_host.*field).sig());
  for (int j = 0; j < H_; ++j) {
    um_host.wdata[j].sig() <<= mux(dma_owns, from_dma.wdata[j].sig(), from_host.wdata[j].sig());
    from_dma.rdata[j].sig() <<= um_host.rdata[j].sig();
    from_host.rdata[j].sig() <<= um_host.rdata[j].sig();
  }
  declare(ports.host_rvalid).sig() <<= um_->io("host_rvalid").sig();
  const Data acc = declare(ports.acc);
  acc_re_ = acc["re"];
  acc_group_ = acc["group"];
  acc_row_ = acc["row"];
  acc_rvalid_ = acc["rvalid"];
  acc_rdata_ = acc["rdata"];
}

// ---- unified memory: TCU reads (same row in every bank), host port on the other half
void AcceleratorBuilder::unified_memory_reads() {
  const InstanceRef &ctl = *ctl_, &um = *um_;
  um.io("compute_half").sig() <<= ctl.io("compute_half").sig();
  um.io("ia_en").sig() <<= repl(ctl.io("ia_en").sig(), B_);
  um.io("ib_en").sig() <<= repl(ctl.io("ib_en").sig(), B_);
  for (int b = 0; b < B_; ++b) {
    um.io("ia_addr")[b].sig() <<= ctl.io("ia_row").sig();
    um.io("ib_addr")[b].sig() <<= ctl.io("ib_row").sig();
  }
}

// ---- distribution networks (cheap control from the instruction), or fixed wiring
void AcceleratorBuilder::distribution() {
  const InstanceRef &ctl = *ctl_, &um = *um_;
  if (cfg_.network.topology == arch::NetworkTopology::fixed) {
    ia_lane_ = [um](int i) { return Expr(um.io("ia_data")[i].sig()); };
    ib_lane_ = [um](int i) { return Expr(um.io("ib_data")[i].sig()); };
    return;
  }
  DistNetParams dp = dist_net_params(cfg_);
  dp.control = DistControlPorts::cheap;
  InstanceRef dist_ia = m_.instance(DistNet(dp), "dist_ia");
  InstanceRef dist_ib = m_.instance(DistNet(dp), "dist_ib");
  for (int i = 0; i < N_; ++i) {
    dist_ia.io("in")[i].sig() <<= um.io("ia_data")[i].sig();
    dist_ib.io("in")[i].sig() <<= um.io("ib_data")[i].sig();
  }
  dist_ia.io("sel_vec").sig() <<= ctl.io("ia_sel").sig();
  dist_ia.io("idx_mask").sig() <<= ctl.io("ia_mask").sig();
  dist_ia.io("tr_en").sig() <<= ctl.io("ia_tr").sig();
  dist_ib.io("sel_vec").sig() <<= ctl.io("ib_sel").sig();
  dist_ib.io("idx_mask").sig() <<= ctl.io("ib_mask").sig();
  dist_ib.io("tr_en").sig() <<= ctl.io("ib_tr").sig();
  ia_lane_ = [dist_ia](int i) { return Expr(dist_ia.io("out")[i].sig()); };
  ib_lane_ = [dist_ib](int i) { return Expr(dist_ib.io("out")[i].sig()); };
  red_ = m_.instance(RedNet(red_net_params(cfg_)), "red");
}

// ---- CE array: CE g row r reads lane g*R + r of both networks (IB from the left), column c
// lane g*C + c of the IB network (IB from the top); output column c -> lane g*C + c
void AcceleratorBuilder::ce_array() {
  const InstanceRef& ctl = *ctl_;
  const Ce ce_gen(cep_);
  Sig ib_load = ctl.io("ce_ib_load").sig();
  acc_in_.assign(static_cast<size_t>(N_), fp_ ? lit(0, 32) : slit(0, AB_));
  for (int g = 0; g < G_; ++g) {
    InstanceRef ce = m_.instance(ce_gen, fmt::format("ce{}", g));
    for (int r = 0; r < R_; ++r) {
      ce.io("ia")[r].sig() <<= ia_lane_(g * R_ + r);
      ce.io("ib_left")[r].sig() <<= ib_lane_(g * R_ + r);
    }
    for (int c = 0; c < C_; ++c) ce.io("ib_top")[c].sig() <<= ib_lane_(g * C_ + c);
    const CeCtrl cc = ce.io(Ce::kCtrl);
    // arch::validate requires ws, so a CE with os has both modes and the controller drives it.
    if (cep_.pe.both_modes()) cc.os.sig() <<= ctl.io("ce_os").sig();
    cc.active.sig() <<= ctl.io("ce_active").sig();
    if (cep_.has_first_ctrl()) cc.first.sig() <<= ctl.io("ce_first").sig();
    if (cep_.pe.has_last()) cc.last.sig() <<= ctl.io("ce_last").sig();
    cc.ib_load.sig() <<= ib_load.bit(g);
    cc.ib_from_left.sig() <<= ctl.io("ce_ib_from_left").sig();
    const CeOut out = ce.io(Ce::kOut);
    for (int c = 0; c < C_; ++c) {
      Sig ps = out.psum[c].sig();
      acc_in_[static_cast<size_t>(g * C_ + c)] = fp_ ? Expr(ps) : ps.as_signed();
    }
    ce_valids_.push_back(out.valid.sig());
  }
}

// ---- reduction network (none with fixed wiring): the CE outputs -> the accumulator's lanes
void AcceleratorBuilder::reduction() {
  if (!red_) return;
  const InstanceRef &ctl = *ctl_, &red = *red_;
  for (int i = 0; i < N_; ++i) red.io("in")[i].sig() <<= acc_in_[static_cast<size_t>(i)];
  // Whether any CE's outputs carry results: the network's stages load only then.
  if (red_net_params(cfg_).gate_stages)
    red.io("valid").sig() <<= m_.node("ce_valid", cat(ce_valids_) != lit(0, static_cast<int>(ce_valids_.size())));
  for (int k = 0; k < L_; ++k) red.io("sw_mode")[k].sig() <<= ctl.io("red_sw_mode")[k].sig();
  red.io("tr_sel").sig() <<= ctl.io("red_tr_sel").sig();
  for (int i = 0; i < N_; ++i) acc_in_[static_cast<size_t>(i)] = red.io("out")[i].sig();
}

// ---- accumulation unit: the controller's ops while busy, host reads of bank groups when idle
void AcceleratorBuilder::accumulation_unit() {
  const InstanceRef& ctl = *ctl_;
  acc_ = m_.instance(AccumulationUnit(accumulator_params(cfg_)), "accum");
  const InstanceRef& acc = *acc_;
  Sig host_side = m_.node("host_side", !ctl.io("busy").sig());
  for (int b = 0; b < B_; ++b) {
    Expr host_op = mux(acc_re_ & (acc_group_ == static_cast<int>(b / P_)), lit(3, 2), lit(0, 2));
    acc.io("op")[b].sig() <<= mux(host_side, host_op, ctl.io("acc_op").sig());
    acc.io("addr")[b].sig() <<= mux(host_side, acc_row_, ctl.io("acc_row")[b].sig());
  }
  acc.io("mask").sig() <<= ~lit(0, N_);
  for (int i = 0; i < N_; ++i) acc.io("data")[i].sig() <<= acc_in_[static_cast<size_t>(i)];
}

// ---- STORE write-back: accumulator read data -> operand type -> unified memory (a row per
// bank: the same in every bank but for diagonal moves; lanes by mask; the compute half, or the
// host's half with st_other).
void AcceleratorBuilder::store_write_back() {
  const InstanceRef &ctl = *ctl_, &um = *um_, &acc = *acc_;
  InstanceRef wb = m_.instance(ResultWriter(ResultWriterParams{N_, B_, isa_.half_addr_bits(), cfg_.dtype}), "writer");
  for (const char* name : {"valid", "row", "src_lane", "dst_lane", "count_m1", "diag"})
    wb.io(name).sig() <<= ctl.io(fmt::format("st_{}", name)).sig();
  if (B_ > 1) wb.io("row_bank_strides").sig() <<= ctl.io("st_row_bank_strides").sig();
  if (fp_)
    wb.io("pad_neg").sig() <<= ctl.io("st_pad_neg").sig();
  else
    wb.io("shift").sig() <<= ctl.io("st_shift").sig();
  for (int i = 0; i < N_; ++i) wb.io("data")[i].sig() <<= acc.io("rd_data")[i].sig();
  um.io("wr_other").sig() <<= ctl.io("st_other").sig();
  um.io("wr_en").sig() <<= repl(wb.io("wr_en").sig(), B_);
  um.io("wr_mask").sig() <<= wb.io("wr_mask").sig();
  for (int b = 0; b < B_; ++b) um.io("wr_addr")[b].sig() <<= wb.io("wr_row")[b].sig();
  for (int i = 0; i < N_; ++i) um.io("wr_data")[i].sig() <<= wb.io("wr_data")[i].sig();
}

// ---- host reads of the accumulator: one bank group per read, selected a cycle later
void AcceleratorBuilder::host_accumulator_reads() {
  const InstanceRef& acc = *acc_;
  Sig acc_group_q = m_.reg("acc_group_q", UInt(gw_), RegOptions{}.enabled_by(acc_re_));
  acc_group_q <<= acc_group_;
  Sig rv = acc.io("rd_valid").sig();
  acc_rvalid_ <<= rv.or_reduce();
  for (int j = 0; j < H_; ++j) {
    std::vector<Expr> items;
    for (int g = 0; g < HG_; ++g) items.push_back(acc.io("rd_data")[g * H_ + j].sig());
    acc_rdata_[j].sig() <<= HG_ == 1 ? items[0] : select(items, acc_group_q);
  }
}

}  // namespace

void Accelerator::build(Module& m) const { AcceleratorBuilder(m, p.cfg).build(); }

std::string hardware_id_hex_of(const std::string& top) { return rtl::sha256_hex(top).substr(0, 8); }

uint32_t hardware_id(const arch::ArchConfig& cfg) {
  return static_cast<uint32_t>(std::stoul(hardware_id_hex_of(Accelerator(AcceleratorParams{cfg}).module_name()), nullptr, 16));
}

std::string hardware_id_hex(const arch::ArchConfig& cfg) { return fmt::format("{:08x}", hardware_id(cfg)); }

std::string elaborate_accelerator(Design& design, const arch::ArchConfig& cfg) {
  return design.elaborate(Accelerator(AcceleratorParams{cfg}))->name();
}

}  // namespace fetta::hw
