#include "sim/ce/bench.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace fetta::sim::ce {

namespace {

// The ports (name, width) a CE with these parameters has (clk excepted), from the generator's
// port types.
std::vector<std::pair<std::string, int>> expected_ports(const hw::CeParams& p) {
  const int w = hw::pe_operand_bits(p.pe);
  std::vector<std::pair<std::string, int>> ports{{"rst", 1}};
  for (int r = 0; r < p.rows; ++r) ports.emplace_back(fmt::format("ia_{}", r), w);
  for (int c = 0; c < p.cols; ++c) ports.emplace_back(fmt::format("ib_top_{}", c), w);
  if (p.pe.stationary())
    for (int r = 0; r < p.rows; ++r) ports.emplace_back(fmt::format("ib_left_{}", r), w);
  for (const rtl::Leaf& l : hw::Ce::ctrl_type(p).leaves()) ports.emplace_back("ctrl" + l.suffix, l.width);
  for (const rtl::Leaf& l : hw::Ce::out_type(p).leaves()) ports.emplace_back("out" + l.suffix, l.width);
  return ports;
}

}  // namespace

// The model's ports by name, checked against the parameters: every port a CE with `params` has
// (clk included) and no other, each a port type the bench can drive.
std::map<std::string, sc_core::sc_object*> CeBench::check_ports(const sc_core::sc_module& dut,
                                                                 const hw::CeParams& params) {
  hw::validate(params);
  const std::string cfg = hw::Ce(params).module_name();
  std::map<std::string, sc_core::sc_object*> found;
  for (sc_core::sc_object* obj : dut.get_child_objects())
    if (dynamic_cast<sc_core::sc_port_base*>(obj)) found[obj->basename()] = obj;
  std::map<std::string, sc_core::sc_object*> ports;
  std::vector<std::pair<std::string, int>> expected = expected_ports(params);
  expected.insert(expected.begin(), {"clk", 1});
  for (const auto& [name, width] : expected) {
    auto it = found.find(name);
    if (it == found.end())
      throw std::invalid_argument(
          fmt::format("CeBench: the model {} has no port '{}' that a {} must have", dut.name(), name, cfg));
    if (!sim::port_type_fits(it->second, width) || (name == "clk" && !dynamic_cast<sc_core::sc_in<bool>*>(it->second)))
      throw std::invalid_argument(fmt::format("CeBench: port '{}' of {} is not the {}-bit port a {} has", name,
                                              dut.name(), width, cfg));
    ports[name] = it->second;
    found.erase(it);
  }
  if (!found.empty())
    throw std::invalid_argument(fmt::format("CeBench: the model {} has port '{}' that a {} does not have", dut.name(),
                                            found.begin()->first, cfg));
  return ports;
}

CeBench::CeBench(sc_core::sc_module_name name, sc_core::sc_module& dut, const hw::CeParams& params)
    : sc_core::sc_module(name), params_(params), clk_("clk", true) {
  std::map<std::string, sc_core::sc_object*> dut_ports = check_ports(dut, params_);
  dynamic_cast<sc_core::sc_in<bool>*>(dut_ports.at("clk"))->bind(clk_);
  dut_ports.erase("clk");
  for (const auto& [port_name, obj] : dut_ports) {
    ports_[port_name] = sim::bind_port(obj, port_name);
  }

  SC_THREAD(clock_thread);
  SC_METHOD(drive);
  sensitive << clk_.negedge_event();
  dont_initialize();
  SC_METHOD(monitor);
  sensitive << clk_.negedge_event();
  dont_initialize();
}

CeBench::~CeBench() = default;

PortSignal& CeBench::port(const std::string& name) {
  auto it = ports_.find(name);
  if (it == ports_.end()) throw std::logic_error("CeBench: no port " + name);
  return *it->second;
}

void CeBench::clock_thread() {
  const sc_core::sc_time half(500, sc_core::SC_PS);  // 1 GHz
  while (true) {
    while (remaining_ == 0) wait(run_event_);
    clk_.write(false);  // falling edge: drive() and monitor() handle cycle_
    wait(half);
    clk_.write(true);   // rising edge: the CE registers the inputs of cycle_
    wait(half);
    --remaining_;
    ++cycle_;
  }
}

void CeBench::drive() {
  port("rst").write(cycle_ < 0 ? 1 : 0);
  static const CeCycleInput kIdle;
  const bool in_program = cycle_ >= 0 && cycle_ < static_cast<int64_t>(prog_->inputs.size());
  const CeCycleInput& in = in_program ? prog_->inputs[static_cast<size_t>(cycle_)] : kIdle;
  const int R = params_.rows, C = params_.cols;
  auto value = [](const std::vector<uint64_t>& v, int i) { return v.empty() ? 0 : v[static_cast<size_t>(i)]; };
  for (int r = 0; r < R; ++r) port(fmt::format("ia_{}", r)).write(value(in.ia, r));
  for (int c = 0; c < C; ++c) port(fmt::format("ib_top_{}", c)).write(value(in.ib_top, c));
  if (params_.pe.stationary())
    for (int r = 0; r < R; ++r) port(fmt::format("ib_left_{}", r)).write(value(in.ib_left, r));
  // The mode stays as the program set it, also while idle.
  if (has_port("ctrl_os")) port("ctrl_os").write(prog_->mapping.os ? 1 : 0);
  port("ctrl_active").write(in.active);
  if (has_port("ctrl_first")) port("ctrl_first").write(in.first);
  if (has_port("ctrl_last")) port("ctrl_last").write(in.last);
  if (has_port("ctrl_ib_load")) port("ctrl_ib_load").write(in.ib_load);
  if (has_port("ctrl_ib_from_left")) port("ctrl_ib_from_left").write(in.ib_from_left);
}

void CeBench::monitor() {
  if (cycle_ < 0 || port("out_valid").read() == 0) return;
  ObservedOutput o;
  o.cycle = cycle_;
  o.row = has_port("out_row") ? static_cast<int>(port("out_row").read()) : 0;
  for (int c = 0; c < params_.cols; ++c) o.psum.push_back(port(fmt::format("out_psum_{}", c)).read());
  seen_.push_back(std::move(o));
}

std::vector<ObservedOutput> CeBench::run(const CeProgram& prog, int64_t tail) {
  if (prog.ce.rows != params_.rows || prog.ce.cols != params_.cols || prog.ce.pe.dtype != params_.pe.dtype)
    throw std::invalid_argument(fmt::format("CeBench {}: the program is for {}, the bench drives {}", basename(),
                                            hw::Ce(prog.ce).module_name(), config()));
  prog_ = &prog;
  seen_.clear();
  cycle_ = -kResetCycles;
  const int64_t last = std::max<int64_t>(static_cast<int64_t>(prog.inputs.size()), prog.scheduled_cycles());
  remaining_ = kResetCycles + last + tail;
  run_event_.notify(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();  // returns when this bench's clock has stopped and nothing else is pending
  prog_ = nullptr;
  return std::move(seen_);
}

ScoreResult run_gemm(CeBench& bench, const hw::Strategy& strategy, const GemmOperands& ops, const PlanOptions& options) {
  const CeProgram prog = plan_gemm(bench.params(), strategy, ops, options);
  const std::vector<ObservedOutput> seen = bench.run(prog);
  return score_gemm(prog, ops, seen);
}

}  // namespace fetta::sim::ce
