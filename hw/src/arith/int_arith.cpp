#include <fmt/core.h>

#include <stdexcept>

#include "hw/arith/int_arith.hpp"
#include "hw/arith/pipeline.hpp"

namespace fetta::hw {

using namespace rtl;

namespace {

IntMacParams checked(IntMacParams p) {
  if (p.operand_bits != 8 && p.operand_bits != 16)
    throw std::invalid_argument(fmt::format("IntMac: operand_bits = {} is not supported; allowed: 8, 16", p.operand_bits));
  if (p.acc_bits < 2 * p.operand_bits)
    throw std::invalid_argument(fmt::format(
        "IntMac: acc_bits = {} is narrower than the {}-bit product of two {}-bit operands; allowed: {}..64 "
        "(the configurations use 32 and 48)",
        p.acc_bits, 2 * p.operand_bits, p.operand_bits, 2 * p.operand_bits));
  if (p.acc_bits > 64)
    throw std::invalid_argument(fmt::format("IntMac: acc_bits = {} is too wide; allowed: {}..64", p.acc_bits, 2 * p.operand_bits));
  check_mac_stages("IntMac", "stages", p.stages, p.product_stages);
  if (p.product_valid && p.product_stages == 0)
    throw std::invalid_argument("IntMac: product_valid needs product_stages > 0 (there is no product register to gate)");
  return p;
}

IntAddParams checked(IntAddParams p) {
  if (p.bits < 2 || p.bits > 64)
    throw std::invalid_argument(fmt::format("IntAdd: bits = {} is out of range; allowed: 2..64", p.bits));
  return p;
}

}  // namespace

IntMac::IntMac(IntMacParams params) : IdentifiedGenerator(checked(params)) {}

Identity IntMac::identity() const {
  Identity id("int_mac");
  id.param("operand_bits", p.operand_bits, fmt::format("_i{}", p.operand_bits))
      .param("acc_bits", p.acc_bits, fmt::format("_acc{}", p.acc_bits));
  if (p.product_stages > 0) id.param("product_stages", p.product_stages, fmt::format("_p{}", p.product_stages));
  if (p.product_valid) id.flag("product_valid", true, p.product_stages > 0 ? "v" : "");
  return id.param("stages", p.stages, fmt::format("_s{}", p.stages));
}

void IntMac::build(Module& m) const {
  const int n = p.operand_bits, w = p.acc_bits;
  if (p.product_stages > 0)
    m.add_comment(fmt::format("out = acc + a*b mod 2^{}; latency {} cycle(s) from a, b and {} from acc (docs/arith.md).",
                              w, p.product_stages + p.stages, p.stages));
  else
    m.add_comment(fmt::format("out = acc + a*b mod 2^{}; latency {} cycle(s) (docs/arith.md).", w, p.stages));
  Sig a = m.input("a", SInt(n));
  Sig b = m.input("b", SInt(n));
  Sig acc = m.input("acc", SInt(w));
  const Expr valid = p.product_valid ? Expr(m.input("valid", UInt(1))) : Expr{};
  Sig out = m.output("out", SInt(w));
  // A register stage: `name_s<k>`, no reset (datapath).
  auto stage = [&](const Expr& e, const std::string& name, int k) {
    Sig r = m.reg(fmt::format("{}_s{}", name, k), SInt(e.width()));
    r <<= e;
    return Expr(r);
  };
  const bool in_regs = p.stages >= 3;   // A/B (and acc with them)
  const bool prod_reg = p.stages >= 1;  // M
  const int out_regs = p.stages >= 2 ? p.stages - (in_regs ? 2 : 1) : 0;  // P and any extra
  int k = 0;
  Expr ea = a, eb = b, eacc = acc;
  if (in_regs) {
    ++k;
    ea = stage(ea, "a", k);
    eb = stage(eb, "b", k);
    eacc = stage(eacc, "acc", k);
  }
  Expr product = m.node("product", ea * eb);  // SInt<2n>: one DSP multiplier
  product = product_registers(m, product, "product", p.product_stages, valid);
  if (prod_reg) {
    ++k;
    product = stage(product, "product", k);
    eacc = stage(eacc, "acc", k);
  }
  Expr result = m.node("result", eacc + product.sext(w));  // wraps modulo 2^w
  for (int i = 0; i < out_regs; ++i) result = stage(result, "result", ++k);
  out <<= result;
}

Identity IntAdd::identity() const { return Identity("int_add").param("bits", p.bits, fmt::format("_w{}", p.bits)); }

IntAdd::IntAdd(IntAddParams params) : IdentifiedGenerator(checked(params)) {}

void IntAdd::build(Module& m) const {
  m.add_comment(fmt::format("sum = a + b mod 2^{} (docs/arith.md).", p.bits));
  Sig a = m.input("a", SInt(p.bits));
  Sig b = m.input("b", SInt(p.bits));
  Sig sum = m.output("sum", SInt(p.bits));
  sum <<= a + b;
}

}  // namespace fetta::hw
