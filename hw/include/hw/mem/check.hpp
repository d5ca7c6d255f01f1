// Parameter checks shared by the memory generators: each throws std::invalid_argument naming the
// generator, the field, the value and what is allowed.
#pragma once

#include <string>

namespace fetta::hw::mem_check {

bool is_pow2(long long v);
// `value` must be a power of two in [lo, hi].
void pow2_in(const char* gen, const char* field, long long value, long long lo, long long hi);
// `value` must lie in [lo, hi].
void in_range(const char* gen, const char* field, long long value, long long lo, long long hi);

}  // namespace fetta::hw::mem_check
