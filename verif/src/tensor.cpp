#include "verif/tensor.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "verif/numerics.hpp"

namespace fetta::verif {
namespace detail {

std::string join_labels(const std::vector<std::string>& labels) {
  return fmt::format("[{}]", fmt::join(labels, ", "));
}
std::string join_dims(const std::vector<int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }
void tensor_fail(const std::string& message) { throw TensorError(message); }

}  // namespace detail

Tensor<double> bf16_to_double(const Tensor<uint16_t>& t) {
  return map_values<double>(t, [](uint16_t x) { return bf16_to_double(x); });
}
Tensor<double> fp32_to_double(const Tensor<uint32_t>& t) {
  return map_values<double>(t, [](uint32_t x) { return fp32_to_double(x); });
}
Tensor<uint32_t> bf16_to_fp32(const Tensor<uint16_t>& t) {
  return map_values<uint32_t>(t, [](uint16_t x) { return bf16_to_fp32(x); });
}
Tensor<uint16_t> double_to_bf16(const Tensor<double>& t) {
  return map_values<uint16_t>(t, [](double x) { return bf16_from_double(x); });
}
Tensor<uint32_t> double_to_fp32(const Tensor<double>& t) {
  return map_values<uint32_t>(t, [](double x) { return fp32_from_double(x); });
}
Tensor<uint16_t> round_to_bf16(const Tensor<uint32_t>& t) {
  return map_values<uint16_t>(t, [](uint32_t x) { return fp32_to_bf16(x); });
}

Tensor<double> random_uniform(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed,
                              double lo, double hi) {
  Tensor<double> t(std::move(labels), std::move(shape));
  fill_uniform(t, seed, lo, hi);
  return t;
}

void fill_uniform(Tensor<double>& t, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  t.for_each([&](const std::vector<int64_t>&, double& x) { x = dist(rng); });
}

Tensor<uint16_t> random_bf16(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed,
                             double lo, double hi) {
  return double_to_bf16(random_uniform(std::move(labels), std::move(shape), seed, lo, hi));
}

namespace {
template <class I>
Tensor<I> random_int(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed) {
  Tensor<I> t(std::move(labels), std::move(shape));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(std::numeric_limits<I>::min(), std::numeric_limits<I>::max());
  t.for_each([&](const std::vector<int64_t>&, I& x) { x = static_cast<I>(dist(rng)); });
  return t;
}

// b's view permuted to a's label order, after checking labels and sizes.
template <class T>
Tensor<T> aligned(const Tensor<T>& a, const Tensor<T>& b, const char* what) {
  if (a.rank() != b.rank())
    throw TensorError(fmt::format("{}: labels {} vs {}", what, detail::join_labels(a.labels()),
                                  detail::join_labels(b.labels())));
  for (const auto& l : a.labels())
    if (!b.has_label(l))
      throw TensorError(fmt::format("{}: labels {} vs {}", what, detail::join_labels(a.labels()),
                                    detail::join_labels(b.labels())));
  Tensor<T> bp = b.permute(a.labels());
  if (bp.shape() != a.shape())
    throw TensorError(fmt::format("{}: shapes {} vs {} (labels {})", what, detail::join_dims(a.shape()),
                                  detail::join_dims(bp.shape()), detail::join_labels(a.labels())));
  return bp;
}

template <class T>
std::string compare_bits_impl(const Tensor<T>& got, const Tensor<T>& want, int hex_digits) {
  const Tensor<T> w = aligned(got, want, "compare_bits");
  const std::vector<T> g = got.values();
  const std::vector<T> v = w.values();
  int64_t mismatches = 0;
  int64_t first = -1;
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i] != v[i]) {
      if (first < 0) first = static_cast<int64_t>(i);
      ++mismatches;
    }
  }
  if (mismatches == 0) return "";
  // Unravel the first mismatch in got's label order.
  std::vector<int64_t> idx(got.shape().size(), 0);
  int64_t rest = first;
  for (size_t i = idx.size(); i-- > 0;) {
    idx[i] = rest % got.shape()[i];
    rest /= got.shape()[i];
  }
  const auto f = static_cast<size_t>(first);
  return fmt::format("{} of {} elements differ; first at {}={}: got 0x{:0{}X}, want 0x{:0{}X}", mismatches,
                     g.size(), detail::join_labels(got.labels()), detail::join_dims(idx), g[f], hex_digits,
                     v[f], hex_digits);
}
}  // namespace

Tensor<int8_t> random_int8(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed) {
  return random_int<int8_t>(std::move(labels), std::move(shape), seed);
}
Tensor<int16_t> random_int16(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed) {
  return random_int<int16_t>(std::move(labels), std::move(shape), seed);
}

Difference difference(const Tensor<double>& a, const Tensor<double>& b, double rel_floor) {
  const Tensor<double> bp = aligned(a, b, "difference");
  Difference d;
  const std::vector<double> va = a.values();
  const std::vector<double> vb = bp.values();
  int64_t worst = -1;
  for (size_t i = 0; i < va.size(); ++i) {
    const double abs = std::fabs(va[i] - vb[i]);
    const double rel = abs / std::max(std::fabs(vb[i]), rel_floor);
    if (std::isnan(abs) || abs > d.max_abs) {
      d.max_abs = std::isnan(abs) ? std::numeric_limits<double>::infinity() : abs;
      worst = static_cast<int64_t>(i);
    }
    if (std::isnan(rel) || rel > d.max_rel) d.max_rel = std::isnan(rel) ? std::numeric_limits<double>::infinity() : rel;
  }
  if (worst >= 0) {
    d.worst_index.assign(a.shape().size(), 0);
    for (size_t i = d.worst_index.size(); i-- > 0;) {
      d.worst_index[i] = worst % a.shape()[i];
      worst /= a.shape()[i];
    }
  }
  return d;
}

std::string compare_bits(const Tensor<uint32_t>& got, const Tensor<uint32_t>& want) {
  return compare_bits_impl(got, want, 8);
}
std::string compare_bits(const Tensor<uint16_t>& got, const Tensor<uint16_t>& want) {
  return compare_bits_impl(got, want, 4);
}

}  // namespace fetta::verif
