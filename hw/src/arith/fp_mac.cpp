#include <fmt/core.h>

#include <stdexcept>

#include "hw/arith/fp_add.hpp"
#include "hw/arith/fp_mac.hpp"
#include "hw/arith/fp_mul.hpp"
#include "hw/arith/pipeline.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

FpMacParams checked(FpMacParams p) {
  check_mac_stages("FpMac", "stages", p.stages, p.product_stages);
  if (p.product_valid && p.product_stages == 0)
    throw std::invalid_argument("FpMac: product_valid needs product_stages > 0 (there is no product register to gate)");
  fp32_add_arch_name(p.adder_arch, "FpMac: adder_arch");
  prefix_tag(p.adder_prefix, "FpMac: adder_prefix");
  if (p.adder_arch == Fp32AddArch::basic) p.adder_prefix = FpMacParams{}.adder_prefix;  // not used
  return p;
}

// Multiplier then adder steps, for balancing the register stages over both.
std::vector<int> mac_levels(Fp32AddArch arch) {
  std::vector<int> levels{Bf16Mul::kLevels};
  for (int l : Fp32Add::step_levels(arch)) levels.push_back(l);
  return levels;
}

}  // namespace

FpMac::FpMac(FpMacParams params) : Generator(checked(params)) {}

std::string FpMac::module_name() const {
  const std::string prod = p.product_stages > 0 ? fmt::format("_p{}{}", p.product_stages, p.product_valid ? "v" : "") : "";
  if (p.adder_arch == Fp32AddArch::basic) return fmt::format("fp_mac_bf16_fp32{}_s{}", prod, p.stages);
  return fmt::format("fp_mac_bf16_fp32_twopath_{}{}_s{}", prefix_tag(p.adder_prefix), prod, p.stages);
}

ParamList FpMac::params() const {
  ParamList l{{"stages", std::to_string(p.stages)}};
  if (p.product_stages > 0) l.emplace_back("product_stages", std::to_string(p.product_stages));
  if (p.product_valid) l.emplace_back("product_valid", "true");
  if (p.adder_arch != Fp32AddArch::basic) {
    l.emplace_back("adder_arch", fp32_add_arch_name(p.adder_arch));
    l.emplace_back("adder_prefix", prefix_name(p.adder_prefix));
  }
  return l;
}

bool FpMac::product_registered() const {
  return p.product_stages == 0 && place_cuts(mac_levels(p.adder_arch), p.stages)[0] > 0;
}

void FpMac::build(Module& m) const {
  if (p.product_stages > 0)
    m.add_comment(fmt::format("out = fp32_add(acc, bf16_mul(a, b)); latency {} cycle(s) from a, b and {} from acc "
                              "(docs/arith.md).",
                              p.product_stages + p.stages, p.stages));
  else
    m.add_comment(fmt::format("out = fp32_add(acc, bf16_mul(a, b)); latency {} cycle(s) (docs/arith.md).", p.stages));
  Sig a = m.input("a", UInt(16));
  Sig b = m.input("b", UInt(16));
  Sig acc = m.input("acc", UInt(32));
  const Expr valid = p.product_valid ? Expr(m.input("valid", UInt(1))) : Expr{};
  Sig out = m.output("out", UInt(32));

  InstanceRef mul = m.instance(Bf16Mul({}), "mul");
  mul.io("a").sig() <<= a;
  mul.io("b").sig() <<= b;
  Expr product = mul.io("product").sig();
  Expr addend = acc;
  int lead = Bf16Mul::kLevels;
  if (p.product_stages > 0) {
    // The product alone is registered: acc is the loop's operand and enters the adder late.
    product = product_registers(m, product, "product", p.product_stages, valid);
    lead = 0;
  }
  if (product_registered()) {
    // Register the product and delay acc by the same cycle, so both reach the adder together.
    Sig product_q = m.reg("product_s1", UInt(32));
    Sig acc_q = m.reg("acc_s1", UInt(32));
    product_q <<= product;
    acc_q <<= acc;
    product = product_q;
    addend = acc_q;
    lead = 0;
  }
  InstanceRef add = m.instance(Fp32Add({adder_stages(), lead, p.adder_arch, p.adder_prefix}), "add");
  add.io("a").sig() <<= addend;
  add.io("b").sig() <<= product;
  out <<= add.io("sum").sig();
}

}  // namespace fetta::hw
