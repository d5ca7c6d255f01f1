// Test harness tops: each network wrapped with flat bus ports, so that one generic C++ harness
// drives any lane count (lane i of `din`/`dout` at bits [i*W +: W], level k of a control bus at
// [k*N +: N]). The wrapper only rewires; the network inside is the shipped module.
#pragma once

#include <string>
#include <vector>

#include "hw/net/dist_net.hpp"
#include "hw/net/red_net.hpp"

namespace nettest {

class FlatDist : public fetta::rtl::Generator<fetta::hw::DistNetParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "tests::FlatDist"; }
  std::string module_name() const override { return "tb_" + fetta::hw::DistNet(p).module_name(); }
  fetta::rtl::ParamList params() const override { return fetta::hw::DistNet(p).params(); }
  void build(fetta::rtl::Module& m) const override;
};

class FlatRed : public fetta::rtl::Generator<fetta::hw::RedNetParams> {
 public:
  using Generator::Generator;
  std::string generator_name() const override { return "tests::FlatRed"; }
  std::string module_name() const override { return "tb_" + fetta::hw::RedNet(p).module_name(); }
  fetta::rtl::ParamList params() const override { return fetta::hw::RedNet(p).params(); }
  void build(fetta::rtl::Module& m) const override;
};

// The configurations proven in Verilator (tests/hw/net/CMakeLists.txt lists the same tops).
std::vector<fetta::hw::DistNetParams> dist_test_configs();
std::vector<fetta::hw::RedNetParams> red_test_configs();

}  // namespace nettest
