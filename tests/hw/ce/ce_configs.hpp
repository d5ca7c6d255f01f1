// The CE configurations Verilated for the tests: one model per distinct RTL configuration, the
// 4x4, 8x8, 2x8 and 1x1, each in bf16 and int16, with every dataflow, plus small int16 arrays
// for the single-buffered and pipelined-MAC variants, and the registered-product MACs.
#pragma once

#include <string>
#include <vector>

#include "hw/ce/ce.hpp"

namespace fetta::test {

struct CeTestConfig {
  hw::CeParams params;
  std::string top() const { return hw::Ce(params).module_name(); }
};

inline hw::CeParams ce_config(int rows, int cols, arch::DataType dtype, bool ib_db = true, bool ps_db = true,
                              int stages = 0, bool os = true, int product_stages = 0,
                              hw::Fp32AddArch adder = hw::Fp32AddArch::basic) {
  hw::CeParams p;
  p.rows = rows;
  p.cols = cols;
  p.pe.dtype = dtype;
  p.pe.os = os;
  p.pe.ib_double_buffer = ib_db;
  p.pe.psum_double_buffer = ps_db;
  p.pe.mac_stages = stages;
  p.pe.product_stages = product_stages;
  p.pe.adder.arch = adder;
  return p;
}

inline const std::vector<CeTestConfig>& ce_test_configs() {
  using arch::DataType;
  static const std::vector<CeTestConfig> list{
      {ce_config(4, 4, DataType::bf16)},
      {ce_config(4, 4, DataType::int16)},
      {ce_config(8, 8, DataType::bf16)},
      {ce_config(8, 8, DataType::int16)},
      {ce_config(2, 8, DataType::bf16)},
      {ce_config(2, 8, DataType::int16)},
      {ce_config(1, 1, DataType::bf16)},
      {ce_config(1, 1, DataType::int16)},
      // single-buffered IB and Psum (every strategy, longer folds)
      {ce_config(3, 2, DataType::int16, false, false)},
      // stationary only around a 1-stage pipelined MAC: rows skewed by 2 cycles
      {ce_config(3, 2, DataType::int16, true, true, 1, false)},
      // the default PE: the product registered, a two-path binary32 adder
      {ce_config(4, 4, DataType::bf16, true, true, 0, true, 1, hw::Fp32AddArch::two_path)},
      // a registered product with single buffers (OS's drain and IB loads against the later results)
      {ce_config(3, 2, DataType::int16, false, false, 0, true, 1)},
      // two product stages in front of a 1-stage pipelined MAC, stationary only
      {ce_config(3, 2, DataType::int16, true, true, 1, false, 2)},
  };
  return list;
}

}  // namespace fetta::test
