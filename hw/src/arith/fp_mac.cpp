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

FpMac::FpMac(FpMacParams params) : IdentifiedGenerator(checked(params)) {}

Identity FpMac::identity() const {
  Identity id("fp_mac_bf16_fp32");
  if (p.adder_arch != Fp32AddArch::basic)
    id.param("adder_arch", fp32_add_arch_name(p.adder_arch), fmt::format("_twopath_{}", prefix_tag(p.adder_prefix)))
        .param("adder_prefix", prefix_name(p.adder_prefix));
  if (p.product_stages > 0) id.param("product_stages", p.product_stages, fmt::format("_p{}", p.product_stages));
  if (p.product_valid) id.flag("product_valid", true, p.product_stages > 0 ? "v" : "");
  return id.param("stages", p.stages, fmt::format("_s{}", p.stages));
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
