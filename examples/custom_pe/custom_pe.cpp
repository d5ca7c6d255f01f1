// A user's generator written against the installed fetta::rtl_gen: a weight-stationary int8 PE
// (the weight loaded once, activations passed east, partial sums passed south) and a row of N of
// them, whose activation input is skewed by fetta's own DelayLine (fetta::hw) to show reuse.
//   custom_pe OUT_DIR [N]   emits OUT_DIR/<module>.sv, filelist.f and manifest.json, prints the top
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hw/ce/delay_line.hpp"
#include "rtl_gen/rtl.hpp"

using namespace fetta::rtl;

namespace custom {

// psum_out <= psum_in + a * w, a_out <= a; w loads from w_in while load_w is 1.
class Int8Pe : public Generator<int> {  // parameter: the partial-sum width
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "custom::Int8Pe"; }
  std::string module_name() const override { return "int8_pe_p" + std::to_string(p); }
  ParamList params() const override { return {{"psum_bits", std::to_string(p)}}; }
  void build(Module& m) const override {
    Sig a = m.input("a", SInt(8));
    Sig w_in = m.input("w_in", SInt(8));
    Sig load_w = m.input("load_w", UInt(1));
    Sig psum_in = m.input("psum_in", SInt(p));
    Sig a_out = m.output("a_out", SInt(8));
    Sig psum_out = m.output("psum_out", SInt(p));
    Sig w = m.reg("w", SInt(8), reset_to(0).enabled_by(load_w));
    w <<= w_in;
    Sig a_q = m.reg("a_q", SInt(8));
    a_q <<= a;
    Sig acc = m.reg("acc", SInt(p), reset_to(0));
    acc <<= psum_in + (a * w).sext(p);
    a_out <<= a_q;
    psum_out <<= acc;
  }
};

// N PEs in a row sharing one weight-load strobe; the activation enters through a delay line.
class PeRow : public Generator<int> {  // parameter: N
 public:
  using Generator::Generator;
  static constexpr int kPsumBits = 24;
  std::string generator_name() const override { return "custom::PeRow"; }
  std::string module_name() const override { return "int8_pe_row_n" + std::to_string(p); }
  ParamList params() const override { return {{"n", std::to_string(p)}}; }
  void build(Module& m) const override {
    Sig a = m.input("a", SInt(8));
    Data w_in = m.input("w_in", Vec(SInt(8), p));
    Sig load_w = m.input("load_w", UInt(1));
    Data psum_out = m.output("psum_out", Vec(SInt(kPsumBits), p));
    InstanceRef skew = m.instance(fetta::hw::DelayLine({8, 2, false}), "a_skew");
    skew.io("in").sig() <<= a.as_unsigned();
    Expr east = skew.io("out").sig().as_signed();
    for (int i = 0; i < p; ++i) {
      InstanceRef pe = m.instance(Int8Pe(kPsumBits), "pe" + std::to_string(i));
      pe.io("a").sig() <<= east;
      pe.io("w_in").sig() <<= w_in[i].sig();
      pe.io("load_w").sig() <<= load_w;
      pe.io("psum_in").sig() <<= slit(0, kPsumBits);
      psum_out[i].sig() <<= pe.io("psum_out").sig();
      east = pe.io("a_out").sig();
    }
  }
};

}  // namespace custom

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: custom_pe OUT_DIR [N]\n");
    return 2;
  }
  const int n = argc == 3 ? std::atoi(argv[2]) : 4;
  if (n < 1 || n > 64) {
    std::fprintf(stderr, "custom_pe: N = %s; allowed: 1..64\n", argv[2]);
    return 2;
  }
  try {
    Design d;
    auto top = d.elaborate(custom::PeRow(n));
    write_design(d, top->name(), argv[1]);
    std::printf("%s\n", top->name().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "custom_pe: %s\n", e.what());
    return 1;
  }
  return 0;
}
