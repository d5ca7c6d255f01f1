// The operations of a program as the compiler appends them (mapper/program.hpp): the op list, the
// instruction words and element maps they point into, the FLIP parity, and the hoist point, where
// the loads and host writes that may run while the GEMM last pushed computes are inserted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "mapper/program.hpp"

namespace fetta::mapper {

class OpStream {
 public:
  OpStream(const arch::ArchConfig& cfg, Program& out) : isa_(cfg), out_(out) {}

  Program& program() { return out_; }
  const Program& program() const { return out_; }
  const arch::IsaLayout& isa() const { return isa_; }

  void op(const Op& o) { out_.ops.push_back(o); }
  // Element indices appended to Program::maps; returns where they start.
  uint64_t add_map(const std::vector<int64_t>& m);
  // An operation that sends words `w` (an instruction, a DMA descriptor), appended to the stream.
  Op words_op(OpCode code, const arch::Words& w, int32_t report, Account acc);
  // An instruction and the model's busy cycles for it (the wall-cycle model's, docs/program.md).
  void push(const arch::Words& w, int32_t report, Account acc, int64_t cycles);

  // A FLIP that hands the TCU the other half: later jobs compute on half flips() % 2, and the host
  // writes that wait for it wait for the instructions pushed so far to retire.
  void flip(int32_t report, Account acc);
  // A FLIP pair that lends the host the compute half and puts the halves back: the parity stays,
  // and what waits for a FLIP waits for the second one (call after pushing both).
  void flip_pair_pushed() { flip_retired_ = pushed_; }
  int64_t flips() const { return flips_; }
  int64_t flip_retired() const { return flip_retired_; }

  // The hoist point: right after the last GEMM pushed (set_hoist), or nowhere at a layer's start
  // (clear_hoist: its DMA loads never move into the layer before, whose DRAM is reused).
  bool hoisting() const { return hoist_at_ != kNoHoist; }
  int32_t hoist_report() const { return hoist_report_; }  // the step of the GEMM there
  void set_hoist(int32_t report);
  void clear_hoist() { hoist_at_ = kNoHoist; }
  // Ops inserted at the hoist point (the end when there is none), which moves past them.
  void insert_at_hoist(const std::vector<Op>& ops);

  // Whether host writes may go to the hoist point too (a later job of the same contraction, or an
  // operand overlapping the GEMM before), and whether those already wait for the last FLIP.
  bool host_hoist() const { return host_hoist_ && hoisting(); }
  void set_host_hoist(bool on) { host_hoist_ = on; }
  bool flip_waited() const { return flip_waited_; }
  void set_flip_waited() { flip_waited_ = true; }

 private:
  static constexpr size_t kNoHoist = ~size_t{0};
  arch::IsaLayout isa_;
  Program& out_;
  int64_t pushed_ = 0;        // instructions pushed so far
  int64_t flips_ = 0;         // FLIPs pushed so far: the TCU computes on half flips_ % 2
  int64_t flip_retired_ = 0;  // the instructions retired once the last job's FLIP has taken effect
  size_t hoist_at_ = kNoHoist;
  int32_t hoist_report_ = -1;
  bool host_hoist_ = false;
  bool flip_waited_ = false;
};

}  // namespace fetta::mapper
