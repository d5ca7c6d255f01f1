// Program files edited one field at a time (mapper/verify.hpp): each edit is written back with its
// sha256 sums recomputed, so only the semantic checks stand between it and the simulator. Every
// edited program must load and then be refused with a clean error (the directory, the file and
// record, the field), or be accepted and replay through the wall-cycle model without a crash or a
// hang. Seed printed; FETTA_SEED replays, FETTA_FUZZ_SCALE multiplies the edits.
// FETTA_FUZZ_KEEP=<dir> keeps the first accepted programs there (mutant_<n>), compiled for
// FETTA_FUZZ_CONFIG (default configs/default.yaml), for tests/fuzz/program_runs.sh to run on the RTL.
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "mapper/program.hpp"
#include "mapper/verify.hpp"
#include "mapper/wall_model.hpp"

using namespace fetta;
using namespace fetta::mapper;
namespace fs = std::filesystem;

namespace {

using Rng = std::mt19937_64;

// Values that break index arithmetic: zero, one, negatives, just past a size, the types' extremes.
int64_t odd(Rng& rng, int64_t near) {
  const std::vector<int64_t> v = {0, 1, -1, -2, near - 1, near, near + 1, 2 * near, int64_t{1} << 31, int64_t{1} << 40,
                                  std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                  static_cast<int64_t>(rng() % 4096)};
  return v[rng() % v.size()];
}

// One random field of one random record, set to an odd value; returns what was edited.
std::string edit(Program& p, Rng& rng) {
  const uint64_t what = rng() % 10;
  if (what < 6 && !p.ops.empty()) {  // an op
    const size_t i = rng() % p.ops.size();
    Op& o = p.ops[i];
    const int field = static_cast<int>(rng() % 11);
    const int64_t v = odd(rng, field < 3 ? o.a + o.b : static_cast<int64_t>(p.maps.size()));
    switch (field) {
      case 0: o.a = v; break;
      case 1: o.b = v; break;
      case 2: o.c = v; break;
      case 3: o.map = static_cast<uint64_t>(v); break;
      case 4: o.map_len = static_cast<uint64_t>(v); break;
      case 5: o.lanes = static_cast<uint64_t>(v); break;
      case 6: o.lanes_len = static_cast<uint64_t>(v); break;
      case 7: o.report = static_cast<int32_t>(odd(rng, static_cast<int64_t>(p.steps.size()))); break;
      case 8: o.tensor = static_cast<int32_t>(odd(rng, static_cast<int64_t>(p.tensors.size()))); break;
      case 9: o.source = static_cast<int32_t>(odd(rng, static_cast<int64_t>(p.tensors.size()))); break;
      default: o.shift = static_cast<int32_t>(odd(rng, 64)); break;
    }
    return fmt::format("ops[{}] ({}) field {}", i, to_string(o.code), field);
  }
  if (what == 6 && !p.maps.empty()) {  // an element map or lane list entry
    const size_t i = rng() % p.maps.size();
    p.maps[i] = std::clamp<int64_t>(odd(rng, p.maps[i] + 1), -1, 2147483647);  // what maps.bin holds
    return fmt::format("maps[{}]", i);
  }
  if (what == 7 && !p.tensors.empty()) {
    ProgramTensor& t = p.tensors[rng() % p.tensors.size()];
    if (rng() % 2 && !t.dims.empty()) t.dims[rng() % t.dims.size()] = odd(rng, 64);
    else t.dram_addr = odd(rng, t.dram_addr);
    return "tensor " + t.name;
  }
  if (what == 8 && !p.steps.empty()) {
    ProgramStep& s = p.steps[rng() % p.steps.size()];
    switch (rng() % 4) {
      case 0: s.layer = static_cast<int>(odd(rng, 1)); break;
      case 1: s.problem = static_cast<int>(odd(rng, 3)); break;
      case 2: s.intermediate = static_cast<int32_t>(odd(rng, static_cast<int64_t>(p.tensors.size()))); break;
      default: s.gemms.clear(); break;
    }
    return "a step";
  }
  if (!p.ops.empty()) {  // an op removed or repeated
    const auto i = static_cast<std::ptrdiff_t>(rng() % p.ops.size());
    if (rng() % 2) p.ops.erase(p.ops.begin() + i);
    else p.ops.insert(p.ops.begin() + i, p.ops[static_cast<size_t>(i)]);
    return fmt::format("op {} removed or repeated", i);
  }
  return "nothing";
}

}  // namespace

TEST_CASE("fuzzed program files are refused with the record and field, or run through the model", "[fuzz_program]") {
  uint64_t seed = 0x9e07;
  if (const char* env = std::getenv("FETTA_SEED")) seed = std::strtoull(env, nullptr, 0);
  std::cout << fmt::format("[fuzz_program] seed=0x{:x} (FETTA_SEED replays)\n", seed);
  const char* sc = std::getenv("FETTA_FUZZ_SCALE");
  const int edits = 600 * (sc ? std::max(1, std::atoi(sc)) : 1);
  const std::string root = FETTA_SOURCE_DIR;
  const char* config = std::getenv("FETTA_FUZZ_CONFIG");
  const arch::ArchConfig cfg = arch::load_arch_config(config ? std::string(config) : root + "configs/default.yaml");
  const char* keep = std::getenv("FETTA_FUZZ_KEEP");
  constexpr int kKeep = 8;
  const Program base = compile_program(cfg, {root + "configs/layers/tt_small.yaml"}, {verif::Phase::fp, verif::Phase::wg});
  const fs::path dir = fs::temp_directory_path() / ("fetta_fuzz_program_" + std::to_string(::getpid()));
  const std::regex clean(fmt::format("^{}(/program\\.json)?: (program\\.json|ops\\.bin).* field '[^']+': .+", dir.string()));
  Rng rng(seed);
  int refused = 0, accepted = 0;
  for (int n = 0; n < edits; ++n) {
    Program p = base;
    const std::string what = edit(p, rng);
    fs::remove_all(dir);
    save_program(p, dir.string());  // rehashed: intact files, edited contents
    INFO("edit " << n << ": " << what);
    Program q;
    try {
      q = load_program(dir.string());  // decodes, then verifies against the program's configuration
      verify_program(q, cfg, dir.string());
    } catch (const ProgramError& e) {
      ++refused;
      const std::string msg = e.what();
      INFO(msg);
      CHECK(std::regex_search(msg, clean));
      CHECK(msg.find("std::") == std::string::npos);
      continue;
    }
    ++accepted;
    CHECK(predict_wall(q, cfg).total() > 0);  // an accepted program replays to its end
    if (keep && accepted <= kKeep) save_program(q, fmt::format("{}/mutant_{}", keep, accepted));
  }
  fs::remove_all(dir);
  std::cout << fmt::format("[fuzz_program] {} edits: {} refused, {} accepted and replayed\n", edits, refused, accepted);
  CHECK(refused > edits / 2);
}
