// Random and mutated inputs of every kind a user writes: configurations, layer files and einsums.
// Each must end in one of two ways: refused with a clean error (the source named, then a line or a
// field, no internal text such as "std::", "<unknown>" or a type error), or accepted and usable
// (a configuration elaborates its whole top, lint-clean for the first small ones; a layer gives its
// phase problems; an einsum its network). Counts per kind and outcome are printed.
#include <catch2/catch.hpp>
#include <fmt/core.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "flows/lint.hpp"
#include "hw/top.hpp"
#include "mapper/einsum.hpp"
#include "mapper/problem.hpp"
#include "rtl_gen/rtl.hpp"
#include "verif/layer.hpp"
#include "yaml_input/file.hpp"

using fetta::yaml_input::read_file_or_throw;

namespace {

using Rng = std::mt19937_64;

uint64_t seed() {
  uint64_t s = 0xf022;
  if (const char* env = std::getenv("FETTA_SEED")) s = std::strtoull(env, nullptr, 0);
  std::cout << fmt::format("[fuzz] seed=0x{:x} (FETTA_SEED replays)\n", s);
  return s;
}

int scale() {
  const char* env = std::getenv("FETTA_FUZZ_SCALE");
  return env ? std::max(1, std::atoi(env)) : 1;
}


template <typename T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

// Values that have broken parsers before: zero, negatives, huge, non-finite, wrong types.
std::string odd_value(Rng& rng) {
  static const std::vector<std::string> values = {
      "0", "-1", "1", "2", "3", "4", "7", "8", "64", "1024", "4096", "65536", "131072", "1000000", "2147483648",
      "1099511627776", "9223372036854775807", "1e-300", "1e300", ".inf", "-.inf", ".nan", "0.5", "-0.0", "null", "~",
      "''", "true", "fp8", "[ws]", "[os]", "[ws, ws]", "[]", "{}", "{a: 1}", "[1, 2]", "\"12\"", "0x10", "1_000"};
  return pick(rng, values);
}

// One mutation of a YAML text: a value replaced, a line deleted, duplicated or indented,
// the text truncated, a character inserted, or a second document appended.
std::string mutate(Rng& rng, const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  if (lines.empty()) return text + odd_value(rng) + "\n";  // an earlier mutation emptied it
  const int op = std::uniform_int_distribution<int>(0, 9)(rng);
  const size_t i = std::uniform_int_distribution<size_t>(0, lines.size() - 1)(rng);
  switch (op) {
    case 0:
    case 1:
    case 2:
    case 3: {  // a value replaced (the most common, and the most telling)
      const size_t colon = lines[i].find(':');
      if (colon != std::string::npos) lines[i] = lines[i].substr(0, colon + 1) + " " + odd_value(rng);
      break;
    }
    case 4: lines.erase(lines.begin() + static_cast<long>(i)); break;
    case 5: lines.insert(lines.begin() + static_cast<long>(i), lines[i]); break;
    case 6: lines[i] = "  " + lines[i]; break;
    case 7: {
      std::string all;
      for (const auto& l : lines) all += l + "\n";
      return all.substr(0, std::uniform_int_distribution<size_t>(0, all.size())(rng));
    }
    case 8: lines[i].insert(std::uniform_int_distribution<size_t>(0, lines[i].size())(rng), 1, pick(rng, std::vector<char>{'[', '{', ':', '-', '\t', '"', '#', '&', '*'})); break;
    case 9: lines.push_back("---"); lines.push_back(lines[i]); break;
  }
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// A clean refusal names the source first, then a line or a field, and shows no internal text.
void check_clean(const std::string& kind, const std::string& source, const std::string& message, const std::string& input) {
  INFO(kind << " input:\n" << input << "\nmessage: " << message);
  CHECK(message.rfind(source, 0) == 0);
  CHECK(message.size() > source.size() + 2);
  for (const char* internal : {"std::", "<unknown>", "type error", "bad_alloc", "basic_string", "stoll", "vector::"})
    CHECK(message.find(internal) == std::string::npos);
}

struct Counts {
  int refused = 0, accepted = 0;
};

}  // namespace

TEST_CASE("fuzzed configurations, layers and einsums end in a clean error or a usable result", "[fuzz]") {
  Rng rng(seed());
  const int n = scale();
  const std::string root = FETTA_SOURCE_DIR;

  // --- configurations: mutations of the shipped files, one to three at a time ----------------
  Counts cfg_counts;
  constexpr int kLinted = 2;
  int linted = 0;
  const std::vector<std::string> configs = {read_file_or_throw(root + "configs/default.yaml"), read_file_or_throw(root + "configs/ce4x4_x4.yaml"),
                                            read_file_or_throw(root + "configs/ce2x4_x8.yaml")};
  for (int k = 0; k < 250 * n; ++k) {
    std::string text = pick(rng, configs);
    for (int m = std::uniform_int_distribution<int>(1, 3)(rng); m > 0; --m) text = mutate(rng, text);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const fetta::arch::ArchConfig cfg = fetta::arch::parse_arch_config(text, "fuzz.yaml");
      ++cfg_counts.accepted;
      // Accepted means buildable: the whole top (every block under it), and lint-clean for the
      // first few small ones (Verilator -Wall, Icarus, Yosys take seconds each).
      INFO("accepted config:\n" << text);
      fetta::rtl::Design d;
      std::string top;
      CHECK_NOTHROW(top = fetta::hw::elaborate_part(d, cfg, "top"));
      // A runaway (a size that should have been refused) shows here; the budget is some 200x the
      // slowest accepted configuration, and leaves out the external lint tools.
      CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 20.0);
      if (!top.empty() && linted < kLinted && cfg.total_pes() <= 64 && cfg.network.lanes <= 32) {
        const std::filesystem::path dir = std::filesystem::temp_directory_path() / fmt::format("fetta_fuzz_{}_{}", ::getpid(), linted++);
        fetta::rtl::write_design(d, top, dir);
        CHECK(fetta::flows::all_clean(fetta::flows::lint_design(dir.string(), top)));
        std::filesystem::remove_all(dir);
      }
    } catch (const fetta::arch::ConfigError& e) {
      ++cfg_counts.refused;
      check_clean("config", "fuzz.yaml", e.what(), text);
      CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 20.0);
    }
  }

  // --- layers: mutations of the shipped layer files -------------------------------------------
  Counts layer_counts;
  std::vector<std::string> layers;
  for (const char* f : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small", "tt_fetta_example"})
    layers.push_back(read_file_or_throw(root + "configs/layers/" + f + ".yaml"));
  for (int k = 0; k < 200 * n; ++k) {
    std::string text = pick(rng, layers);
    for (int m = std::uniform_int_distribution<int>(1, 3)(rng); m > 0; --m) text = mutate(rng, text);
    const auto t0 = std::chrono::steady_clock::now();
    try {
      const fetta::verif::LayerSpec spec = fetta::verif::parse_layer(text, "fuzz_layer.yaml");
      ++layer_counts.accepted;
      INFO("accepted layer:\n" << text);
      for (const auto phase : {fetta::verif::Phase::fp, fetta::verif::Phase::bp, fetta::verif::Phase::wg})
        CHECK_FALSE(fetta::verif::phase_problems(spec, phase).empty());
    } catch (const fetta::verif::LayerError& e) {
      ++layer_counts.refused;
      check_clean("layer", "fuzz_layer.yaml", e.what(), text);
    }
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 20.0);
  }

  // --- einsums: random texts over a small alphabet, random size lists --------------------------
  Counts einsum_counts;
  const std::string alphabet = "abcdeA1 ,->,=.";
  for (int k = 0; k < 100 * n; ++k) {
    std::string expr, dims;
    const int len = std::uniform_int_distribution<int>(0, 14)(rng);
    for (int c = 0; c < len; ++c) expr += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
    if (k % 3 == 0) expr = "ab,bc->ac";  // a valid text with fuzzed sizes
    for (const char l : std::string("abcde")) {
      if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) continue;
      dims += fmt::format("{}{}={}", dims.empty() ? "" : ",", l, odd_value(rng));
    }
    try {
      const auto net = fetta::mapper::parse_einsum(expr, dims);
      ++einsum_counts.accepted;
      CHECK_FALSE(net.nodes.empty());
    } catch (const fetta::mapper::SearchError& e) {
      ++einsum_counts.refused;
      INFO("einsum '" << expr << "' dims '" << dims << "': " << e.what());
      CHECK(std::string(e.what()).find("std::") == std::string::npos);
      CHECK(std::string(e.what()).size() > 10);
    }
  }

  CHECK(linted == kLinted);
  std::cout << fmt::format("[fuzz] configs: {} refused, {} accepted; layers: {} refused, {} accepted; "
                           "einsums: {} refused, {} accepted ({} inputs)\n",
                           cfg_counts.refused, cfg_counts.accepted, layer_counts.refused, layer_counts.accepted,
                           einsum_counts.refused, einsum_counts.accepted,
                           cfg_counts.refused + cfg_counts.accepted + layer_counts.refused + layer_counts.accepted +
                               einsum_counts.refused + einsum_counts.accepted);
  // A fuzzer that only ever refuses (or only accepts) tests one path: both must occur.
  CHECK(cfg_counts.accepted > 0);
  CHECK(cfg_counts.refused > 0);
  CHECK(layer_counts.accepted > 0);
  CHECK(layer_counts.refused > 0);
}
