// Dense tensors with named modes for the golden model.
//
// A Tensor<T> is a view: labels (one unique name per mode), shape, strides (in elements) and an
// offset into storage shared by every view of it. permute/relabel/reshape make views without
// copying (writing through a view writes the original); contiguous()/clone() copy.
//
// Element types used by the golden model: double (fp64 reference), float, uint16_t (bf16 bit
// patterns), uint32_t (binary32 bit patterns), int8_t / int16_t (integer operands), int32_t /
// int64_t (integer accumulators).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fetta::verif {

// Misuse of a tensor (unknown label, wrong rank, index out of range, ...).
class TensorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
std::string join_labels(const std::vector<std::string>& labels);
std::string join_dims(const std::vector<int64_t>& dims);
[[noreturn]] void tensor_fail(const std::string& message);
}  // namespace detail

template <class T>
class Tensor {
 public:
  using value_type = T;

  // A rank-0 tensor holding one value T{}.
  Tensor() : Tensor(std::vector<std::string>{}, std::vector<int64_t>{}) {}

  // Contiguous (C order: last label fastest), every element T{}.
  Tensor(std::vector<std::string> labels, std::vector<int64_t> shape)
      : labels_(std::move(labels)), shape_(std::move(shape)) {
    check_labels_and_shape();
    strides_ = contiguous_strides(shape_);
    storage_ = std::make_shared<std::vector<T>>(static_cast<size_t>(numel()), T{});
  }

  // Contiguous with the given values in C order.
  Tensor(std::vector<std::string> labels, std::vector<int64_t> shape, std::vector<T> values)
      : labels_(std::move(labels)), shape_(std::move(shape)) {
    check_labels_and_shape();
    strides_ = contiguous_strides(shape_);
    if (static_cast<int64_t>(values.size()) != numel())
      detail::tensor_fail("Tensor: " + std::to_string(values.size()) + " values for shape " +
                          detail::join_dims(shape_));
    storage_ = std::make_shared<std::vector<T>>(std::move(values));
  }

  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape_) n *= s;
    return n;
  }
  const std::vector<std::string>& labels() const { return labels_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& strides() const { return strides_; }  // in elements
  int64_t offset() const { return offset_; }
  bool shares_storage_with(const Tensor& other) const { return storage_ == other.storage_; }

  bool has_label(const std::string& label) const {
    return std::find(labels_.begin(), labels_.end(), label) != labels_.end();
  }
  // Position of a label; throws TensorError if absent.
  int64_t axis(const std::string& label) const {
    const auto it = std::find(labels_.begin(), labels_.end(), label);
    if (it == labels_.end())
      detail::tensor_fail("Tensor: no label '" + label + "' in " + detail::join_labels(labels_));
    return it - labels_.begin();
  }
  int64_t dim(const std::string& label) const { return shape_[static_cast<size_t>(axis(label))]; }

  // Storage position of a multi-index (in label order); bounds checked.
  int64_t storage_index(std::span<const int64_t> index) const {
    if (static_cast<int64_t>(index.size()) != rank())
      detail::tensor_fail("Tensor: index of rank " + std::to_string(index.size()) +
                          " for a tensor of rank " + std::to_string(rank()));
    int64_t pos = offset_;
    for (size_t i = 0; i < index.size(); ++i) {
      if (index[i] < 0 || index[i] >= shape_[i])
        detail::tensor_fail("Tensor: index " + std::to_string(index[i]) + " out of range for '" +
                            labels_[i] + "' of size " + std::to_string(shape_[i]));
      pos += index[i] * strides_[i];
    }
    return pos;
  }

  T& at(std::span<const int64_t> index) { return (*storage_)[static_cast<size_t>(storage_index(index))]; }
  const T& at(std::span<const int64_t> index) const {
    return (*storage_)[static_cast<size_t>(storage_index(index))];
  }
  T& at(std::initializer_list<int64_t> index) { return at(std::span<const int64_t>(index.begin(), index.size())); }
  const T& at(std::initializer_list<int64_t> index) const {
    return at(std::span<const int64_t>(index.begin(), index.size()));
  }
  template <class... I>
    requires(std::is_integral_v<I> && ...)
  T& operator()(I... i) {
    const int64_t idx[] = {static_cast<int64_t>(i)..., 0};
    return at(std::span<const int64_t>(idx, sizeof...(I)));
  }
  template <class... I>
    requires(std::is_integral_v<I> && ...)
  const T& operator()(I... i) const {
    const int64_t idx[] = {static_cast<int64_t>(i)..., 0};
    return at(std::span<const int64_t>(idx, sizeof...(I)));
  }

  // Raw storage (shared by all views) for kernels that walk strides themselves.
  T* storage_data() { return storage_->data(); }
  const T* storage_data() const { return storage_->data(); }

  // --- views -----------------------------------------------------------------------------------

  // The same data with the modes in the order of `order` (a permutation of labels()).
  Tensor permute(const std::vector<std::string>& order) const {
    if (order.size() != labels_.size())
      detail::tensor_fail("Tensor::permute: " + detail::join_labels(order) + " is not a permutation of " +
                          detail::join_labels(labels_));
    Tensor view = *this;
    for (size_t i = 0; i < order.size(); ++i) {
      const auto j = static_cast<size_t>(axis(order[i]));
      view.labels_[i] = labels_[j];
      view.shape_[i] = shape_[j];
      view.strides_[i] = strides_[j];
    }
    view.check_labels_and_shape();
    return view;
  }

  // The same data with new names for the modes (same order).
  Tensor relabel(std::vector<std::string> labels) const {
    if (labels.size() != labels_.size())
      detail::tensor_fail("Tensor::relabel: " + std::to_string(labels.size()) + " labels for rank " +
                          std::to_string(rank()));
    Tensor view = *this;
    view.labels_ = std::move(labels);
    view.check_labels_and_shape();
    return view;
  }

  // A view with a new shape over the same elements in C order. Requires is_contiguous(); call
  // contiguous() first for a permuted view.
  Tensor reshape(std::vector<std::string> labels, std::vector<int64_t> shape) const {
    if (!is_contiguous())
      detail::tensor_fail("Tensor::reshape: the view " + detail::join_labels(labels_) +
                          " is not contiguous; call contiguous() first");
    Tensor view = *this;
    view.labels_ = std::move(labels);
    view.shape_ = std::move(shape);
    view.check_labels_and_shape();
    if (view.numel() != numel())
      detail::tensor_fail("Tensor::reshape: " + detail::join_dims(shape_) + " -> " +
                          detail::join_dims(view.shape_) + " changes the element count");
    view.strides_ = contiguous_strides(view.shape_);
    return view;
  }

  bool is_contiguous() const {
    int64_t expected = 1;
    for (size_t i = shape_.size(); i-- > 0;) {
      if (shape_[i] != 1 && strides_[i] != expected) return false;
      expected *= shape_[i];
    }
    return true;
  }

  // A new contiguous tensor (C order, same labels) with a copy of the values.
  Tensor contiguous() const { return Tensor(labels_, shape_, values()); }
  Tensor clone() const { return contiguous(); }

  // The values in C order of the current label order.
  std::vector<T> values() const {
    std::vector<T> out;
    out.reserve(static_cast<size_t>(numel()));
    for_each_offset([&](int64_t pos) { out.push_back((*storage_)[static_cast<size_t>(pos)]); });
    return out;
  }

  // Calls f(index, value&) for every element, C order.
  template <class F>
  void for_each(F&& f) {
    std::vector<int64_t> idx(shape_.size(), 0);
    walk(idx, [&](int64_t pos) { f(std::as_const(idx), (*storage_)[static_cast<size_t>(pos)]); });
  }
  template <class F>
  void for_each(F&& f) const {
    std::vector<int64_t> idx(shape_.size(), 0);
    walk(idx, [&](int64_t pos) { f(std::as_const(idx), std::as_const((*storage_)[static_cast<size_t>(pos)])); });
  }

  void fill(const T& v) {
    for_each([&](const std::vector<int64_t>&, T& x) { x = v; });
  }

  static std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      strides[i] = s;
      s *= shape[i];
    }
    return strides;
  }

 private:
  void check_labels_and_shape() const {
    if (labels_.size() != shape_.size())
      detail::tensor_fail("Tensor: " + std::to_string(labels_.size()) + " labels " +
                          detail::join_labels(labels_) + " for shape " + detail::join_dims(shape_));
    for (size_t i = 0; i < labels_.size(); ++i) {
      if (shape_[i] < 0)
        detail::tensor_fail("Tensor: negative size for '" + labels_[i] + "'");
      for (size_t j = 0; j < i; ++j)
        if (labels_[i] == labels_[j])
          detail::tensor_fail("Tensor: label '" + labels_[i] + "' repeated in " + detail::join_labels(labels_));
    }
  }

  template <class F>
  void for_each_offset(F&& f) const {
    std::vector<int64_t> idx(shape_.size(), 0);
    walk(idx, f);
  }

  // Odometer over all indices in C order; idx is updated in place, f gets the storage position.
  template <class F>
  void walk(std::vector<int64_t>& idx, F&& f) const {
    if (numel() == 0) return;
    int64_t pos = offset_;
    const size_t r = shape_.size();
    while (true) {
      f(pos);
      size_t i = r;
      while (i > 0) {
        --i;
        if (++idx[i] < shape_[i]) {
          pos += strides_[i];
          break;
        }
        pos -= (shape_[i] - 1) * strides_[i];
        idx[i] = 0;
        if (i == 0) return;
      }
      if (r == 0) return;
    }
  }

  std::vector<std::string> labels_;
  std::vector<int64_t> shape_;
  std::vector<int64_t> strides_;
  int64_t offset_ = 0;
  std::shared_ptr<std::vector<T>> storage_;
};

// --- element-wise conversions (new contiguous tensors, same labels and order) --------------------

template <class U, class T, class F>
Tensor<U> map_values(const Tensor<T>& t, F&& f) {
  std::vector<T> v = t.values();
  std::vector<U> out;
  out.reserve(v.size());
  for (const T& x : v) out.push_back(static_cast<U>(f(x)));
  return Tensor<U>(t.labels(), t.shape(), std::move(out));
}
template <class U, class T>
Tensor<U> cast(const Tensor<T>& t) {
  return map_values<U>(t, [](const T& x) { return static_cast<U>(x); });
}

Tensor<double> bf16_to_double(const Tensor<uint16_t>& bf16_bits);
Tensor<double> fp32_to_double(const Tensor<uint32_t>& fp32_bits);
Tensor<uint32_t> bf16_to_fp32(const Tensor<uint16_t>& bf16_bits);
Tensor<uint16_t> double_to_bf16(const Tensor<double>& values);   // bf16_from_double per element
Tensor<uint32_t> double_to_fp32(const Tensor<double>& values);   // fp32_from_double per element
// The rounding step of results that become next operands: fp32_to_bf16 per element (RNE).
Tensor<uint16_t> round_to_bf16(const Tensor<uint32_t>& fp32_bits);

// --- random tensors (std::mt19937_64 seeded with `seed`; values drawn in C order) --------------

Tensor<double> random_uniform(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed,
                              double lo = -1.0, double hi = 1.0);
void fill_uniform(Tensor<double>& t, uint64_t seed, double lo = -1.0, double hi = 1.0);
// Uniform in [lo, hi) rounded to bf16.
Tensor<uint16_t> random_bf16(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed,
                             double lo = -1.0, double hi = 1.0);
// Uniform over the whole type range (int8: [-128, 127], int16: [-32768, 32767]).
Tensor<int8_t> random_int8(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed);
Tensor<int16_t> random_int16(std::vector<std::string> labels, std::vector<int64_t> shape, uint64_t seed);

// --- comparisons ---------------------------------------------------------------------------------

// Largest |a - b| and largest |a - b| / max(|b|, floor) over elements matched by label (b may be
// a permutation of a). Throws if labels or sizes differ.
struct Difference {
  double max_abs = 0.0;
  double max_rel = 0.0;
  std::vector<int64_t> worst_index;  // in a's label order
};
Difference difference(const Tensor<double>& a, const Tensor<double>& b, double rel_floor = 1e-30);

// Bit-exact comparison of two tensors of bit patterns (matched by label). Returns "" when equal,
// else a message naming the number of mismatches and the first one (index, got, want in hex).
std::string compare_bits(const Tensor<uint32_t>& got, const Tensor<uint32_t>& want);
std::string compare_bits(const Tensor<uint16_t>& got, const Tensor<uint16_t>& want);

}  // namespace fetta::verif
