// Tensor views (permute, reshape, relabel), element access, conversions, and .npy round-trips.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <unistd.h>

#include "verif/npy.hpp"
#include "verif/numerics.hpp"
#include "verif/tensor.hpp"

using namespace fetta::verif;

TEST_CASE("tensor: construction, strides and element access", "[tensor]") {
  Tensor<double> t({"i", "j", "k"}, {2, 3, 4});
  CHECK(t.rank() == 3);
  CHECK(t.numel() == 24);
  CHECK(t.strides() == std::vector<int64_t>{12, 4, 1});
  CHECK(t.is_contiguous());
  CHECK(t.dim("j") == 3);
  CHECK(t.axis("k") == 2);
  int v = 0;
  t.for_each([&](const std::vector<int64_t>&, double& x) { x = v++; });
  CHECK(t(1, 2, 3) == 23.0);
  CHECK(t.at({0, 1, 2}) == 6.0);
  t(1, 0, 0) = -5.0;
  CHECK(t.values()[12] == -5.0);
  CHECK_THROWS_AS(t(2, 0, 0), TensorError);
  CHECK_THROWS_AS(t(0, 0), TensorError);
  CHECK_THROWS_AS(t.axis("z"), TensorError);
  CHECK_THROWS_AS(Tensor<double>({"i", "i"}, {2, 2}), TensorError);
  CHECK_THROWS_AS(Tensor<double>({"i"}, {2, 2}), TensorError);
  CHECK_THROWS_AS(Tensor<double>({"i"}, {3}, {1.0, 2.0}), TensorError);
  const Tensor<double> scalar;
  CHECK(scalar.rank() == 0);
  CHECK(scalar.numel() == 1);
  CHECK(scalar.values() == std::vector<double>{0.0});
}

TEST_CASE("tensor: permute, relabel and reshape are views", "[tensor]") {
  Tensor<int32_t> t({"i", "j", "k"}, {2, 3, 4});
  int v = 0;
  t.for_each([&](const std::vector<int64_t>&, int32_t& x) { x = v++; });

  Tensor<int32_t> p = t.permute({"k", "i", "j"});
  CHECK(p.shares_storage_with(t));
  CHECK(p.shape() == std::vector<int64_t>{4, 2, 3});
  CHECK(p.strides() == std::vector<int64_t>{1, 12, 4});
  CHECK_FALSE(p.is_contiguous());
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) REQUIRE(p(k, i, j) == t(i, j, k));
  p(3, 1, 2) = 1000;  // writes through to t
  CHECK(t(1, 2, 3) == 1000);
  CHECK_THROWS_AS(p.reshape({"x"}, {24}), TensorError);
  CHECK_THROWS_AS(t.permute({"i", "j"}), TensorError);
  CHECK_THROWS_AS(t.permute({"i", "i", "j"}), TensorError);

  const Tensor<int32_t> pc = p.contiguous();
  CHECK_FALSE(pc.shares_storage_with(t));
  CHECK(pc.is_contiguous());
  CHECK(pc.values() == p.values());
  CHECK(pc(3, 1, 2) == 1000);

  const Tensor<int32_t> r = t.reshape({"ij", "k"}, {6, 4});
  CHECK(r.shares_storage_with(t));
  CHECK(r(5, 3) == t(1, 2, 3));
  CHECK(r(4, 1) == t(1, 1, 1));
  CHECK_THROWS_AS(t.reshape({"x"}, {25}), TensorError);

  const Tensor<int32_t> rl = t.relabel({"a", "b", "c"});
  CHECK(rl.labels() == std::vector<std::string>{"a", "b", "c"});
  CHECK(rl.dim("b") == 3);
  CHECK(rl.shares_storage_with(t));

  // Size-1 modes do not break contiguity.
  const Tensor<double> one({"a", "b"}, {1, 5});
  CHECK(one.permute({"b", "a"}).is_contiguous());
}

TEST_CASE("tensor: conversions and random fills are seeded and reproducible", "[tensor]") {
  const uint64_t seed = 1234;
  std::cout << "[tensor] seed=" << seed << "\n";
  const Tensor<double> a = random_uniform({"i", "j"}, {3, 5}, seed);
  const Tensor<double> b = random_uniform({"i", "j"}, {3, 5}, seed);
  CHECK(a.values() == b.values());
  for (double x : a.values()) {
    CHECK(x >= -1.0);
    CHECK(x < 1.0);
  }
  const Tensor<uint16_t> h = random_bf16({"i", "j"}, {3, 5}, seed);
  const Tensor<double> hd = bf16_to_double(h);
  for (size_t i = 0; i < hd.values().size(); ++i)
    CHECK(hd.values()[i] == bf16_to_double(bf16_from_double(a.values()[i])));
  const Tensor<uint32_t> w = bf16_to_fp32(h);
  CHECK(round_to_bf16(w).values() == h.values());
  const Tensor<int8_t> i8 = random_int8({"i"}, {1000}, seed);
  bool saw_negative = false;
  for (int8_t x : i8.values()) saw_negative = saw_negative || x < 0;
  CHECK(saw_negative);

  const Difference d = difference(a, a.permute({"j", "i"}).contiguous());
  CHECK(d.max_abs == 0.0);
  Tensor<double> c = a.contiguous();
  c(2, 4) += 0.5;
  const Difference e = difference(c, a);
  CHECK(e.max_abs == Approx(0.5));
  CHECK(e.worst_index == std::vector<int64_t>{2, 4});

  Tensor<uint32_t> x({"i", "j"}, {2, 2}, {1, 2, 3, 4});
  Tensor<uint32_t> y({"j", "i"}, {2, 2}, {1, 3, 2, 4});
  CHECK(compare_bits(x, y).empty());
  y(1, 1) = 5;
  const std::string msg = compare_bits(x, y);
  CHECK(msg.find("1 of 4 elements differ") != std::string::npos);
  CHECK(msg.find("0x00000004") != std::string::npos);
  CHECK(msg.find("0x00000005") != std::string::npos);
}

namespace {
// A per-process scratch directory, removed when the test program exits.
struct ScratchDir {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("fetta_verif_npy_" + std::to_string(::getpid()));
  ScratchDir() { std::filesystem::create_directories(dir); }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

std::string temp_path(const std::string& name) {
  static const ScratchDir scratch;
  return (scratch.dir / name).string();
}

template <class T>
void round_trip(const Tensor<T>& t, const std::string& name, const std::string& descr) {
  const std::string path = temp_path(name);
  save_npy(path, t);
  const NpyHeader h = read_npy_header(path);
  CHECK(h.descr == descr);
  CHECK_FALSE(h.fortran_order);
  CHECK(h.shape == t.shape());
  CHECK(static_cast<int64_t>(std::filesystem::file_size(path) % 64) == (t.numel() * static_cast<int64_t>(sizeof(T))) % 64);
  const Tensor<T> back = load_npy<T>(path, t.labels());
  CHECK(back.labels() == t.labels());
  CHECK(back.shape() == t.shape());
  CHECK(back.values() == t.values());
}
}  // namespace

TEST_CASE("npy: round-trips of every dtype", "[npy]") {
  const uint64_t seed = 77;
  std::cout << "[npy] seed=" << seed << "\n";
  const Tensor<double> d = random_uniform({"a", "b", "c"}, {2, 3, 5}, seed);
  round_trip(d, "d.npy", "<f8");
  round_trip(cast<float>(d), "f.npy", "<f4");
  round_trip(random_int8({"a", "b"}, {7, 3}, seed), "i1.npy", "|i1");
  round_trip(random_int16({"a"}, {9}, seed), "i2.npy", "<i2");
  round_trip(cast<int32_t>(random_int16({"a", "b"}, {4, 4}, seed)), "i4.npy", "<i4");
  round_trip(Tensor<int64_t>({"a"}, {3}, {-(int64_t{1} << 47), 0, (int64_t{1} << 47) - 1}), "i8.npy", "<i8");
  round_trip(random_bf16({"x", "y"}, {3, 4}, seed), "u2.npy", "<u2");
  round_trip(bf16_to_fp32(random_bf16({"x"}, {11}, seed)), "u4.npy", "<u4");
  round_trip(Tensor<double>({}, {}, {3.5}), "scalar.npy", "<f8");
  round_trip(Tensor<double>({"e"}, {0}), "empty.npy", "<f8");

  // A permuted view is written in its own C order.
  const std::string path = temp_path("perm.npy");
  save_npy(path, d.permute({"c", "a", "b"}));
  const Tensor<double> back = load_npy<double>(path);
  CHECK(back.labels() == std::vector<std::string>{"a0", "a1", "a2"});
  CHECK(back.shape() == std::vector<int64_t>{5, 2, 3});
  CHECK(back(4, 1, 2) == d(1, 2, 4));

  // The header is the documented version-1.0 text.
  std::ifstream in(temp_path("d.npy"), std::ios::binary);
  std::string head(128, '\0');
  in.read(head.data(), 128);
  CHECK(head.substr(1, 5) == "NUMPY");
  CHECK(head[6] == 1);
  CHECK(head[7] == 0);
  CHECK(head.find("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 5), }") != std::string::npos);
}

TEST_CASE("npy: bf16 saved as float32 for viewing; errors", "[npy]") {
  const Tensor<uint16_t> h({"i"}, {4}, {0x3F80, 0xC020, 0x0001, 0x7F80});
  const std::string path = temp_path("bf16_as_f4.npy");
  save_bf16_as_f4(path, h);
  const Tensor<float> f = load_npy<float>(path);
  CHECK(f.values() == std::vector<float>{1.0f, -2.5f, 0.0f, std::numeric_limits<float>::infinity()});
  CHECK_THROWS_WITH(load_npy<double>(path), Catch::Contains("dtype '<f4' but '<f8' was requested"));
  CHECK_THROWS_AS(load_npy<float>(path, {"a", "b"}), NpyError);
  CHECK_THROWS_AS(load_npy<float>(temp_path("missing.npy")), NpyError);
  const std::string junk = temp_path("junk.npy");
  std::ofstream(junk) << "not a numpy file";
  CHECK_THROWS_WITH(load_npy<float>(junk), Catch::Contains("not a .npy file"));
}

TEST_CASE("npy: a shape too large, or larger than the file, is refused before anything is allocated", "[npy]") {
  // A valid file of 4 elements whose header is rewritten to claim another shape (same header length).
  const Tensor<uint16_t> t({"i"}, {4}, {1, 2, 3, 4});
  const std::string path = temp_path("shape.npy");
  save_npy(path, t);
  auto with_shape = [&](const std::string& shape) {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t at = bytes.find("(4,)");
    REQUIRE(at != std::string::npos);
    std::string header = bytes.substr(0, bytes.find('\n') + 1);
    const size_t len = header.size();
    header.replace(at, 4, shape);
    header.erase(header.size() - 1);  // the newline; pad back to the same length
    header.resize(len - 1, ' ');
    header += '\n';
    REQUIRE(header.size() == len);
    const std::string edited = temp_path("edited.npy");
    std::ofstream(edited, std::ios::binary) << header << bytes.substr(len);
    return edited;
  };
  CHECK_THROWS_WITH(load_npy<uint16_t>(with_shape("(1000000000000000000000000000000,)")),
                    Catch::Contains("shape entry 1000000000000000000000000000000 is larger than 1073741824 elements"));
  CHECK_THROWS_WITH(load_npy<uint16_t>(with_shape("(1000000, 1000000)")), Catch::Contains("has more than 1073741824 elements"));
  CHECK_THROWS_WITH(load_npy<uint16_t>(with_shape("(1000000,)")),
                    Catch::Contains("truncated data: shape (1000000) needs 2000000 bytes, the file holds 8"));
  CHECK(load_npy<uint16_t>(with_shape("(2, 2)")).values() == t.values());
}
