// The vector unit's golden operations (verif/vector.hpp, docs/vector.md).
#include "verif/vector.hpp"

#include <fmt/core.h>

#include <stdexcept>

#include "verif/numerics.hpp"

namespace fetta::verif {

namespace {

constexpr uint32_t kFp32One = 0x3F800000u;
constexpr uint32_t kFp32Sign = 0x80000000u;
constexpr uint16_t kBf16One = 0x3F80u;

// Positive as the hardware reads a bf16: sign clear, exponent non-zero, not NaN (+Inf counts).
bool positive(uint16_t a) { return (a & 0x8000u) == 0 && (a & 0x7F80u) != 0; }

}  // namespace

// verif/tools/fit_tanh.py: least-squares quadratics on Chebyshev nodes, rounded to binary32.
const std::array<TanhSegment, 24> kTanhSegments = {{
    {0xB8EDE56Au, 0x3F809FE7u, 0xBD8F0C8Au},  // 2^-4 x (1 + 0/4)
    {0xB95891C3u, 0x3F80EDF2u, 0xBDAE454Fu},  // 2^-4 x (1 + 1/4)
    {0xB9B1CBF8u, 0x3F814A97u, 0xBDCD27F0u},  // 2^-4 x (1 + 2/4)
    {0xBA07980Au, 0x3F81B54Au, 0xBDEBA59Au},  // 2^-4 x (1 + 3/4)
    {0xBA65816Fu, 0x3F826CCCu, 0xBE0C3E72u},  // 2^-3 x (1 + 0/4)
    {0xBACD3F39u, 0x3F838E4Fu, 0xBE293641u},  // 2^-3 x (1 + 1/4)
    {0xBB24EC1Eu, 0x3F84DA93u, 0xBE44EAD2u},  // 2^-3 x (1 + 2/4)
    {0xBB75490Du, 0x3F864A04u, 0xBE5F2DCDu},  // 2^-3 x (1 + 3/4)
    {0xBBC65C22u, 0x3F889A76u, 0xBE81B48Au},  // 2^-2 x (1 + 0/4)
    {0xBC24B051u, 0x3F8BE27Bu, 0xBE96C2CCu},  // 2^-2 x (1 + 1/4)
    {0xBC716873u, 0x3F8F16B1u, 0xBEA7E5C9u},  // 2^-2 x (1 + 2/4)
    {0xBCA08137u, 0x3F91F08Bu, 0xBEB4F919u},  // 2^-2 x (1 + 3/4)
    {0xBCD16FF5u, 0x3F94F4A2u, 0xBEC0E07Bu},  // 2^-1 x (1 + 0/4)
    {0xBCE5BB4Au, 0x3F960789u, 0xBEC48169u},  // 2^-1 x (1 + 1/4)
    {0xBC9D802Eu, 0x3F9310AAu, 0xBEBCB78Au},  // 2^-1 x (1 + 2/4)
    {0x3B8729B6u, 0x3F8C4348u, 0xBEAD3ADFu},  // 2^-1 x (1 + 3/4)
    {0x3D87E099u, 0x3F797793u, 0xBE8EF097u},  // 2^0 x (1 + 0/4)
    {0x3E43CB06u, 0x3F4649C8u, 0xBE4BDDD1u},  // 2^0 x (1 + 1/4)
    {0x3EAD1ACFu, 0x3F14020Au, 0xBE089942u},  // 2^0 x (1 + 2/4)
    {0x3EF6E351u, 0x3ED366CCu, 0xBDB01F20u},  // 2^0 x (1 + 3/4)
    {0x3F28825Au, 0x3E7543BEu, 0xBD314922u},  // 2^1 x (1 + 0/4)
    {0x3F5264EEu, 0x3DDAFE27u, 0xBC865FAEu},  // 2^1 x (1 + 1/4)
    {0x3F699720u, 0x3D3BC1C9u, 0xBBC7EA0Bu},  // 2^1 x (1 + 2/4)
    {0x3F756A91u, 0x3C9D2084u, 0xBB13AF25u},  // 2^1 x (1 + 3/4)
}};

std::string to_string(VectorOp op) {
  switch (op) {
    case VectorOp::add: return "add";
    case VectorOp::sub: return "sub";
    case VectorOp::mul: return "mul";
    case VectorOp::scale: return "scale";
    case VectorOp::axpy: return "axpy";
    case VectorOp::relu: return "relu";
    case VectorOp::relu_bwd: return "relu_bwd";
    case VectorOp::tanh: return "tanh";
    case VectorOp::tanh_bwd: return "tanh_bwd";
    case VectorOp::sumsq: return "sumsq";
    case VectorOp::reduce: return "reduce";
  }
  return "?";
}

uint16_t tanh_bf16(uint16_t x) {
  if (bf16_is_nan(x)) return kBf16QuietNaN;
  const uint16_t sign = x & 0x8000u;
  const int e = (x >> 7) & 0xFF;
  if (e < kTanhLowExp) return bf16_is_zero_or_subnormal(x) ? sign : x;
  if (e >= kTanhHighExp) return sign | kBf16One;
  const uint16_t t = x & 0x7FFFu;
  const TanhSegment& c = kTanhSegments[static_cast<size_t>((e - kTanhLowExp) * 4 + ((x >> 5) & 3))];
  const uint32_t u = fp32_add(fp32_mul_bf16(c.c2, t), c.c1);
  const uint32_t v = fp32_add(fp32_mul_bf16(u, t), c.c0);
  return sign | fp32_to_bf16(v);
}

uint16_t vector_element(VectorOp op, uint16_t a, uint16_t b, uint32_t s) {
  const uint32_t A = bf16_to_fp32(a), B = bf16_to_fp32(b);
  switch (op) {
    case VectorOp::add: return fp32_to_bf16(fp32_add(A, B));
    case VectorOp::sub: return fp32_to_bf16(fp32_add(A, B ^ kFp32Sign));
    case VectorOp::mul: return fp32_to_bf16(fp32_mul_bf16(B, a));
    case VectorOp::scale: return fp32_to_bf16(fp32_mul_bf16(s, a));
    case VectorOp::axpy: return fp32_to_bf16(fp32_add(fp32_mul_bf16(s, a), B));
    case VectorOp::relu: return bf16_is_nan(a) ? kBf16QuietNaN : positive(a) ? a : 0;
    case VectorOp::relu_bwd: return bf16_is_nan(a) ? kBf16QuietNaN : positive(a) ? fp32_to_bf16(B) : 0;
    case VectorOp::tanh: return tanh_bf16(a);
    case VectorOp::tanh_bwd: {
      const uint32_t one_minus_y2 = fp32_add(fp32_mul_bf16(A ^ kFp32Sign, a), kFp32One);
      return fp32_to_bf16(fp32_mul_bf16(one_minus_y2, b));
    }
    case VectorOp::sumsq:
    case VectorOp::reduce: break;
  }
  throw std::invalid_argument("vector_element: " + to_string(op) + " is not an elementwise operation");
}

void VectorAccumulators::sumsq(const std::vector<uint16_t>& row) {
  if (row.empty() || row.size() % acc_.size() != 0)
    throw std::invalid_argument(fmt::format("VectorAccumulators::sumsq: a row of {} elements on {} lanes; allowed: a "
                                            "non-zero multiple of the lanes", row.size(), acc_.size()));
  for (size_t e = 0; e < row.size(); ++e) {
    uint32_t& acc = acc_[e % acc_.size()];
    acc = fp32_add(acc, fp32_mul_bf16(bf16_to_fp32(row[e]), row[e]));
  }
}

uint32_t VectorAccumulators::reduce() {
  uint32_t sum = acc_[0];
  for (size_t i = 1; i < acc_.size(); ++i) sum = fp32_add(sum, acc_[i]);
  for (uint32_t& a : acc_) a = 0;
  return sum;
}

}  // namespace fetta::verif
