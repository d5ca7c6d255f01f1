// NumPy .npy files (format version 1.0 written; 1.0, 2.0 and 3.0 read), little-endian, C order.
//
// dtypes: double '<f8', float '<f4', int8_t '|i1', int16_t '<i2', int32_t '<i4', int64_t '<i8',
// uint16_t '<u2', uint32_t '<u4'. bf16 tensors are stored as '<u2' (raw bit patterns) and binary32
// bit patterns as '<u4', so files round-trip bit-exactly; numpy reads them with
// np.load(f).view(np.uint16) etc. save_bf16_as_f4 writes a bf16 tensor converted to float32 values
// for viewing. Labels are not stored; load_npy names the modes as given or "a0", "a1", ...
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "verif/tensor.hpp"

namespace fetta::verif {

class NpyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most elements a .npy file may hold here (the layer files' own limit, 2^26, with room): a
// larger shape is refused before anything is allocated, and so is one the file's bytes do not cover.
inline constexpr int64_t kMaxNpyElements = int64_t{1} << 30;

// The .npy descr string of T (e.g. "<f8").
template <class T>
std::string npy_descr();

// Writes t (any view; values in C order of its current label order).
template <class T>
void save_npy(const std::string& path, const Tensor<T>& t);

// Reads a file whose dtype is exactly npy_descr<T>() (NpyError otherwise, naming the file and
// both dtypes). `labels` (optional) must have one entry per dimension.
template <class T>
Tensor<T> load_npy(const std::string& path, std::vector<std::string> labels = {});

// bf16 bit patterns converted to float32 values (bf16_to_fp32: subnormals read as zero, NaN
// canonical) and written as '<f4'.
void save_bf16_as_f4(const std::string& path, const Tensor<uint16_t>& bf16_bits);

// The header of a .npy file.
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};
NpyHeader read_npy_header(const std::string& path);

}  // namespace fetta::verif
