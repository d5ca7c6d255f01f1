#include "mapper/op_stream.hpp"

#include <algorithm>

namespace fetta::mapper {

uint64_t OpStream::add_map(const std::vector<int64_t>& m) {
  const uint64_t at = out_.maps.size();
  out_.maps.insert(out_.maps.end(), m.begin(), m.end());
  return at;
}

Op OpStream::words_op(OpCode code, const arch::Words& w, int32_t report, Account acc) {
  const Op o{.code = code, .account = acc, .report = report, .a = static_cast<int64_t>(out_.words.size()),
             .b = static_cast<int64_t>(w.size())};
  out_.words.insert(out_.words.end(), w.begin(), w.end());
  return o;
}

void OpStream::push(const arch::Words& w, int32_t report, Account acc, int64_t cycles) {
  Op o = words_op(OpCode::push, w, report, acc);
  o.c = cycles;
  op(o);
  ++pushed_;
}

void OpStream::flip(int32_t report, Account acc) {
  push(arch::encode_flip(isa_), report, acc, 1);
  flip_retired_ = pushed_;
  ++flips_;
}

void OpStream::set_hoist(int32_t report) {
  hoist_at_ = out_.ops.size();
  hoist_report_ = report;
  host_hoist_ = true;
  flip_waited_ = false;
}

void OpStream::insert_at_hoist(const std::vector<Op>& ops) {
  const auto pos = out_.ops.begin() + static_cast<std::ptrdiff_t>(std::min(hoist_at_, out_.ops.size()));
  out_.ops.insert(pos, ops.begin(), ops.end());
  if (hoisting()) hoist_at_ += ops.size();
}

}  // namespace fetta::mapper
