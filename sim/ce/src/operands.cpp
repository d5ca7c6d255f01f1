#include "sim/ce/operands.hpp"

#include <fmt/core.h>

#include <random>
#include <stdexcept>

#include "verif/contract.hpp"
#include "verif/numerics.hpp"
#include "verif/tensor.hpp"

namespace fetta::sim::ce {

namespace {

uint64_t mask(int bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

uint16_t bf16_uniform(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return verif::bf16_from_double(u(rng));
}

uint16_t bf16_fields(std::mt19937_64& rng, int exp_lo, int exp_hi) {
  const uint16_t sign = static_cast<uint16_t>(rng() & 1) << 15;
  const uint16_t exp = static_cast<uint16_t>(exp_lo + static_cast<int>(rng() % static_cast<uint64_t>(exp_hi - exp_lo + 1)));
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(exp << 7) | static_cast<uint16_t>(rng() & 0x7F));
}

const std::vector<uint16_t>& bf16_specials() {
  static const std::vector<uint16_t> v{
      0x0000, 0x8000,                  // +-0
      0x0001, 0x807F, 0x0040,          // subnormals (read as +-0)
      0x0080, 0x8080,                  // +-min normal
      0x7F7F, 0xFF7F,                  // +-max normal
      0x7F80, 0xFF80,                  // +-Inf
      0x7FC0, 0xFFC1, 0x7F81, 0xFFFF,  // NaNs (quiet, signalling, negative, payloads)
      0x3F80, 0xBF80,                  // +-1
  };
  return v;
}

uint64_t draw(arch::DataType dtype, OperandMix mix, std::mt19937_64& rng) {
  if (dtype == arch::DataType::bf16) {
    switch (mix) {
      case OperandMix::uniform: return bf16_uniform(rng);
      case OperandMix::wide: return bf16_fields(rng, 1, 254);
      case OperandMix::special:
        if (rng() % 8 == 0) return bf16_specials()[rng() % bf16_specials().size()];
        return bf16_uniform(rng);
      case OperandMix::tiny: return bf16_fields(rng, 58, 68);
    }
    throw std::logic_error("draw: unknown mix");
  }
  const int bits = arch::operand_bits(dtype);
  const int64_t lo = -(int64_t{1} << (bits - 1)), hi = (int64_t{1} << (bits - 1)) - 1;
  int64_t x;
  if (mix == OperandMix::uniform) {
    x = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1));
  } else {
    static const int64_t pick[] = {0, 1, -1, 2, -2};
    switch (rng() % 4) {
      case 0: x = (rng() & 1) ? lo : hi; break;
      case 1: x = (rng() & 1) ? lo + 1 : hi - 1; break;
      case 2: x = pick[rng() % 5]; break;
      default: x = lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)); break;
    }
  }
  return static_cast<uint64_t>(x) & mask(bits);
}

template <typename T>
verif::Tensor<T> to_tensor(const Matrix& m, std::vector<std::string> labels) {
  std::vector<T> vals;
  vals.reserve(m.v.size());
  for (uint64_t x : m.v) vals.push_back(static_cast<T>(x));
  return verif::Tensor<T>(std::move(labels), {m.rows, m.cols}, std::move(vals));
}

}  // namespace

Matrix Matrix::transposed() const {
  Matrix t(cols, rows);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t.at(c, r) = at(r, c);
  return t;
}

std::string to_string(OperandMix m) {
  switch (m) {
    case OperandMix::uniform: return "uniform";
    case OperandMix::wide: return "wide";
    case OperandMix::special: return "special";
    case OperandMix::tiny: return "tiny";
  }
  return "?";
}

GemmOperands random_gemm(arch::DataType dtype, const hw::GemmShape& shape, uint64_t seed, OperandMix mix) {
  if (shape.m < 1 || shape.k < 1 || shape.n < 1)
    throw std::invalid_argument(
        fmt::format("gemm: M={}, K={}, N={}; allowed: every dimension >= 1", shape.m, shape.k, shape.n));
  std::mt19937_64 rng(seed);
  GemmOperands ops;
  ops.dtype = dtype;
  ops.a = Matrix(shape.m, shape.k);
  ops.b = Matrix(shape.k, shape.n);
  for (uint64_t& x : ops.a.v) x = draw(dtype, mix, rng);
  for (uint64_t& x : ops.b.v) x = draw(dtype, mix, rng);
  return ops;
}

Matrix golden_gemm(const GemmOperands& ops, int64_t stationary_chunk) {
  const hw::GemmShape g = ops.shape();
  Matrix c(g.m, g.n);
  std::vector<uint64_t> out;
  switch (ops.dtype) {
    case arch::DataType::bf16: {
      const auto order = stationary_chunk > 0 ? verif::AccumulationOrder::tiled(stationary_chunk)
                                              : verif::AccumulationOrder::sequential();
      const auto r = verif::contract_bf16(to_tensor<uint16_t>(ops.a, {"m", "k"}), to_tensor<uint16_t>(ops.b, {"k", "n"}),
                                          {"m", "n"}, order);
      for (uint32_t x : r.values()) out.push_back(x);
      break;
    }
    case arch::DataType::int8: {
      const auto r = verif::contract_int8(to_tensor<int8_t>(ops.a, {"m", "k"}), to_tensor<int8_t>(ops.b, {"k", "n"}),
                                          {"m", "n"});
      for (int32_t x : r.values()) out.push_back(static_cast<uint32_t>(x));
      break;
    }
    case arch::DataType::int16: {
      const auto r = verif::contract_int16(to_tensor<int16_t>(ops.a, {"m", "k"}),
                                           to_tensor<int16_t>(ops.b, {"k", "n"}), {"m", "n"});
      for (int64_t x : r.values()) out.push_back(static_cast<uint64_t>(x) & mask(48));
      break;
    }
  }
  c.v = std::move(out);
  return c;
}

uint64_t accumulate(arch::DataType dtype, uint64_t acc, uint64_t partial) {
  switch (dtype) {
    case arch::DataType::bf16:
      return verif::fp32_add(static_cast<uint32_t>(acc), static_cast<uint32_t>(partial));
    case arch::DataType::int8: return (acc + partial) & mask(32);
    case arch::DataType::int16: return (acc + partial) & mask(48);
  }
  throw std::logic_error("accumulate: unknown data type");
}

uint64_t ia_padding(arch::DataType dtype) { return dtype == arch::DataType::bf16 ? 0x8000 : 0; }
uint64_t ib_padding(arch::DataType) { return 0; }

}  // namespace fetta::sim::ce
