#include "verif/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cctype>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "verif/numerics.hpp"

namespace fetta::verif {

static_assert(std::endian::native == std::endian::little, "the .npy code assumes a little-endian host");

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

template <class T>
struct Descr;
template <>
struct Descr<double> {
  static constexpr const char* value = "<f8";
};
template <>
struct Descr<float> {
  static constexpr const char* value = "<f4";
};
template <>
struct Descr<int8_t> {
  static constexpr const char* value = "|i1";
};
template <>
struct Descr<int16_t> {
  static constexpr const char* value = "<i2";
};
template <>
struct Descr<int32_t> {
  static constexpr const char* value = "<i4";
};
template <>
struct Descr<int64_t> {
  static constexpr const char* value = "<i8";
};
template <>
struct Descr<uint16_t> {
  static constexpr const char* value = "<u2";
};
template <>
struct Descr<uint32_t> {
  static constexpr const char* value = "<u4";
};

// "<f8", "=f8" and (one-byte types) "|i1" all name the same little-endian dtype.
std::string normalize_descr(std::string d) {
  if (d.size() >= 2 && (d[0] == '=' || d[0] == '|' || d[0] == '<')) d[0] = '<';
  if (d == "<i1") return "|i1";
  return d;
}

void write_all(const std::string& path, const std::string& header, const void* data, size_t bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw NpyError(fmt::format("{}: cannot open for writing", path));
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (bytes > 0) out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!out) throw NpyError(fmt::format("{}: write failed", path));
}

std::string make_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string shape_text;
  if (shape.size() == 1) {
    shape_text = fmt::format("({},)", shape[0]);
  } else {
    shape_text = fmt::format("({})", fmt::join(shape, ", "));
  }
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape_text);
  // Pad with spaces so that magic + version + length + dict + '\n' is a multiple of 64.
  const size_t unpadded = kMagicLen + 2 + 2 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict.push_back('\n');
  if (dict.size() > 65535) throw NpyError("npy header too long");
  std::string header(kMagic, kMagicLen);
  header.push_back(1);
  header.push_back(0);
  header.push_back(static_cast<char>(dict.size() & 0xFF));
  header.push_back(static_cast<char>((dict.size() >> 8) & 0xFF));
  return header + dict;
}

// Value text after 'key': in a Python dict literal.
size_t find_key(const std::string& dict, const std::string& key, const std::string& path) {
  for (const char q : {'\'', '"'}) {
    const std::string k = std::string(1, q) + key + std::string(1, q);
    const size_t pos = dict.find(k);
    if (pos != std::string::npos) {
      const size_t colon = dict.find(':', pos + k.size());
      if (colon == std::string::npos) break;
      size_t v = colon + 1;
      while (v < dict.size() && std::isspace(static_cast<unsigned char>(dict[v]))) ++v;
      return v;
    }
  }
  throw NpyError(fmt::format("{}: header has no '{}': {}", path, key, dict));
}

struct Opened {
  NpyHeader header;
  std::ifstream in;  // positioned at the data
};

Opened open_npy(const std::string& path) {
  Opened o;
  o.in.open(path, std::ios::binary);
  if (!o.in) throw NpyError(fmt::format("{}: cannot open", path));
  char magic[kMagicLen + 2] = {};
  o.in.read(magic, kMagicLen + 2);
  if (!o.in || std::memcmp(magic, kMagic, kMagicLen) != 0) throw NpyError(fmt::format("{}: not a .npy file", path));
  const int major = static_cast<unsigned char>(magic[kMagicLen]);
  size_t header_len = 0;
  if (major == 1) {
    unsigned char len[2] = {};
    o.in.read(reinterpret_cast<char*>(len), 2);
    header_len = static_cast<size_t>(len[0]) | (static_cast<size_t>(len[1]) << 8);
  } else if (major == 2 || major == 3) {
    unsigned char len[4] = {};
    o.in.read(reinterpret_cast<char*>(len), 4);
    header_len = static_cast<size_t>(len[0]) | (static_cast<size_t>(len[1]) << 8) |
                 (static_cast<size_t>(len[2]) << 16) | (static_cast<size_t>(len[3]) << 24);
  } else {
    throw NpyError(fmt::format("{}: unsupported .npy version {}", path, major));
  }
  std::string dict(header_len, '\0');
  o.in.read(dict.data(), static_cast<std::streamsize>(header_len));
  if (!o.in) throw NpyError(fmt::format("{}: truncated header", path));

  size_t v = find_key(dict, "descr", path);
  if (v >= dict.size() || (dict[v] != '\'' && dict[v] != '"'))
    throw NpyError(fmt::format("{}: unsupported descr (structured dtypes are not supported): {}", path, dict));
  const size_t end = dict.find(dict[v], v + 1);
  if (end == std::string::npos) throw NpyError(fmt::format("{}: bad header: {}", path, dict));
  o.header.descr = normalize_descr(dict.substr(v + 1, end - v - 1));

  v = find_key(dict, "fortran_order", path);
  if (dict.compare(v, 4, "True") == 0) {
    o.header.fortran_order = true;
  } else if (dict.compare(v, 5, "False") != 0) {
    throw NpyError(fmt::format("{}: bad fortran_order: {}", path, dict));
  }

  v = find_key(dict, "shape", path);
  if (v >= dict.size() || dict[v] != '(') throw NpyError(fmt::format("{}: bad shape: {}", path, dict));
  const size_t close = dict.find(')', v);
  if (close == std::string::npos) throw NpyError(fmt::format("{}: bad shape: {}", path, dict));
  const std::string inner = dict.substr(v + 1, close - v - 1);
  size_t i = 0;
  while (i < inner.size()) {
    while (i < inner.size() && (std::isspace(static_cast<unsigned char>(inner[i])) || inner[i] == ',')) ++i;
    if (i >= inner.size()) break;
    size_t j = i;
    while (j < inner.size() && std::isdigit(static_cast<unsigned char>(inner[j]))) ++j;
    if (j == i) throw NpyError(fmt::format("{}: bad shape: {}", path, dict));
    int64_t size = 0;
    const auto [ptr, ec] = std::from_chars(inner.data() + i, inner.data() + j, size);
    if (ec != std::errc() || ptr != inner.data() + j || size > kMaxNpyElements)
      throw NpyError(fmt::format("{}: shape entry {} is larger than {} elements", path, inner.substr(i, j - i), kMaxNpyElements));
    o.header.shape.push_back(size);
    i = j;
  }
  return o;
}

}  // namespace

template <class T>
std::string npy_descr() {
  return Descr<T>::value;
}

template <class T>
void save_npy(const std::string& path, const Tensor<T>& t) {
  const std::vector<T> values = t.values();
  write_all(path, make_header(npy_descr<T>(), t.shape()), values.data(), values.size() * sizeof(T));
}

template <class T>
Tensor<T> load_npy(const std::string& path, std::vector<std::string> labels) {
  Opened o = open_npy(path);
  if (o.header.descr != npy_descr<T>())
    throw NpyError(fmt::format("{}: dtype '{}' but '{}' was requested", path, o.header.descr, npy_descr<T>()));
  if (o.header.fortran_order)
    throw NpyError(fmt::format("{}: fortran_order=True is not supported (save in C order)", path));
  if (labels.empty()) {
    for (size_t i = 0; i < o.header.shape.size(); ++i) labels.push_back(fmt::format("a{}", i));
  } else if (labels.size() != o.header.shape.size()) {
    throw NpyError(fmt::format("{}: {} labels for shape ({})", path, labels.size(), fmt::join(o.header.shape, ", ")));
  }
  // The element count, checked against the limit and against the bytes the file holds before
  // anything is allocated.
  int64_t n = 1;
  for (int64_t s : o.header.shape) {
    if (s > 0 && n > kMaxNpyElements / s)
      throw NpyError(fmt::format("{}: shape ({}) has more than {} elements", path, fmt::join(o.header.shape, ", "), kMaxNpyElements));
    n *= s;
  }
  const std::streamoff at = o.in.tellg();
  std::error_code ec;
  const uintmax_t bytes = std::filesystem::file_size(path, ec);
  if (!ec && at >= 0 && bytes - static_cast<uintmax_t>(at) < static_cast<uintmax_t>(n) * sizeof(T))
    throw NpyError(fmt::format("{}: truncated data: shape ({}) needs {} bytes, the file holds {}", path,
                               fmt::join(o.header.shape, ", "), static_cast<uintmax_t>(n) * sizeof(T),
                               bytes - static_cast<uintmax_t>(at)));
  std::vector<T> values(static_cast<size_t>(n));
  o.in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
  if (!o.in) throw NpyError(fmt::format("{}: truncated data ({} elements expected)", path, n));
  return Tensor<T>(std::move(labels), o.header.shape, std::move(values));
}

NpyHeader read_npy_header(const std::string& path) { return open_npy(path).header; }

void save_bf16_as_f4(const std::string& path, const Tensor<uint16_t>& bf16_bits) {
  save_npy(path, map_values<float>(bf16_bits, [](uint16_t x) { return bits_to_float(bf16_to_fp32(x)); }));
}

#define FETTA_NPY_INSTANTIATE(T)                                          \
  template std::string npy_descr<T>();                                    \
  template void save_npy<T>(const std::string&, const Tensor<T>&);        \
  template Tensor<T> load_npy<T>(const std::string&, std::vector<std::string>);
FETTA_NPY_INSTANTIATE(double)
FETTA_NPY_INSTANTIATE(float)
FETTA_NPY_INSTANTIATE(int8_t)
FETTA_NPY_INSTANTIATE(int16_t)
FETTA_NPY_INSTANTIATE(int32_t)
FETTA_NPY_INSTANTIATE(int64_t)
FETTA_NPY_INSTANTIATE(uint16_t)
FETTA_NPY_INSTANTIATE(uint32_t)
#undef FETTA_NPY_INSTANTIATE

}  // namespace fetta::verif
