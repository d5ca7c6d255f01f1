// The program (mapper/program.hpp, docs/program.md) without a simulator: the same input gives
// byte-identical files, the files read back to the same program, damaged files and programs for
// another configuration are refused with the reason, and the policies it encodes hold (data
// written before it is read, a DRAM map without overlaps, one FLIP per GEMM).
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "mapper/compile.hpp"
#include "mapper/program.hpp"
#include "mapper/verify.hpp"
#include "mapper/wall_model.hpp"
#include "verif/layer.hpp"
#include "yaml_input/file.hpp"

using fetta::yaml_input::read_file_or_throw;

using namespace fetta;
using namespace fetta::mapper;
namespace fs = std::filesystem;

namespace {

const std::string kSrc = FETTA_SOURCE_DIR;

arch::ArchConfig config(const std::string& name) { return arch::load_arch_config(kSrc + "configs/" + name + ".yaml"); }
std::string layer(const std::string& name) { return kSrc + "configs/layers/" + name + ".yaml"; }

// A fresh directory under the system's temporary directory, removed afterwards.
struct Scratch {
  fs::path root = fs::temp_directory_path() / ("fetta_program_test_" + std::to_string(::getpid()));
  Scratch() {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~Scratch() { fs::remove_all(root); }
  std::string operator/(const std::string& sub) const { return (root / sub).string(); }
};

void spit(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary | std::ios::trunc) << s; }

bool same_files(const std::string& a, const std::string& b) {
  for (const char* f : {"program.json", "ops.bin", "words.bin", "maps.bin"})
    if (read_file_or_throw(fs::path(a) / f) != read_file_or_throw(fs::path(b) / f)) return false;
  return true;
}

std::string message_of(const std::string& dir) {
  try {
    (void)load_program(dir);
  } catch (const ProgramError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a program is deterministic and round-trips through its files", "[program]") {
  const Scratch tmp;
  const arch::ArchConfig cfg = config("default");
  const std::vector<std::string> layers{layer("tt_small"), layer("bt_small")};
  const Program p = compile_program(cfg, layers, {verif::Phase::fp, verif::Phase::wg});
  save_program(p, tmp / "a");
  save_program(compile_program(cfg, layers, {verif::Phase::fp, verif::Phase::wg}), tmp / "b");
  CHECK(same_files(tmp / "a", tmp / "b"));

  const Program q = load_program(tmp / "a");
  CHECK(q.ops == p.ops);
  CHECK(q.words == p.words);
  CHECK(q.maps == p.maps);
  CHECK(q.tensors == p.tensors);
  CHECK(q.layers == p.layers);
  CHECK(q.options == p.options);
  CHECK(q.interleaved == p.interleaved);
  CHECK(q.config_hash == p.config_hash);
  REQUIRE(q.steps.size() == p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    CHECK(q.steps[i].mapping == p.steps[i].mapping);
    CHECK(q.steps[i].predicted == p.steps[i].predicted);
    CHECK(q.steps[i].a == p.steps[i].a);
    CHECK(q.steps[i].images == p.steps[i].images);
    CHECK(q.steps[i].fate == p.steps[i].fate);
    CHECK(q.steps[i].gemms.size() == p.steps[i].gemms.size());
  }
  // Everything the files hold is read back: written again, they are the same bytes.
  save_program(q, tmp / "c");
  CHECK(same_files(tmp / "a", tmp / "c"));
  // The golden model's reduction order comes from the recorded mappings.
  for (const ProgramStep& s : q.steps)
    for (const GemmRecord& g : s.gemms) CHECK(rebuild_gemm(cfg, g).describe() == g.mapping);
}

TEST_CASE("damaged program files are refused with the file and the reason", "[program]") {
  const Scratch tmp;
  const Program p = compile_program(config("default"), {layer("tt_small")}, {verif::Phase::fp});
  auto fresh = [&](const std::string& name) {
    save_program(p, tmp / name);
    return tmp / name;
  };
  {
    const std::string d = fresh("truncated");
    const std::string ops = read_file_or_throw(fs::path(d) / "ops.bin");
    spit(fs::path(d) / "ops.bin", ops.substr(0, ops.size() - 7));
    CHECK_THAT(message_of(d), Catch::Contains("ops.bin") && Catch::Contains("truncated"));
  }
  {
    const std::string d = fresh("flipped");
    std::string words = read_file_or_throw(fs::path(d) / "words.bin");
    words[words.size() / 2] ^= 0x10;
    spit(fs::path(d) / "words.bin", words);
    CHECK_THAT(message_of(d), Catch::Contains("words.bin") && Catch::Contains("corrupted"));
  }
  {
    const std::string d = fresh("edited");
    std::string index = read_file_or_throw(fs::path(d) / "program.json");
    const size_t at = index.find("\"predicted_cycles\": ");
    REQUIRE(at != std::string::npos);
    index.insert(at + 20, "1");
    spit(fs::path(d) / "program.json", index);
    CHECK_THAT(message_of(d), Catch::Contains("index_sha256"));
  }
  {
    const std::string d = fresh("cut_index");
    const std::string index = read_file_or_throw(fs::path(d) / "program.json");
    spit(fs::path(d) / "program.json", index.substr(0, index.size() / 2));
    CHECK_THAT(message_of(d), Catch::Contains("program.json") && Catch::Contains("truncated or corrupted"));
  }
  {
    const std::string d = fresh("missing");
    fs::remove(fs::path(d) / "maps.bin");
    CHECK_THAT(message_of(d), Catch::Contains("maps.bin") && Catch::Contains("fetta compile"));
  }
  CHECK_THAT(message_of(tmp / "nowhere"), Catch::Contains("program.json"));
}

TEST_CASE("a program runs only on the configuration it was compiled for", "[program]") {
  const arch::ArchConfig cfg = config("default");
  Program p = compile_program(cfg, {layer("tt_small")}, {verif::Phase::fp});
  p.hw_id = "0399b507";
  CHECK_NOTHROW(check_program_target(p, cfg, "0399b507"));
  // Another top: named by both hw_ids.
  const arch::ArchConfig other = config("ce4x4_x4");
  CHECK_THROWS_WITH(check_program_target(p, other, "12345678"),
                    Catch::Contains("hw_id 0399b507") && Catch::Contains("12345678") && Catch::Contains("ce4x4_x4"));
  // The same RTL with other DRAM timing: the compiler's costs differ, so the program does too.
  arch::ArchConfig slow = cfg;
  slow.dram.latency_ns = 250;
  CHECK_THROWS_WITH(check_program_target(p, slow, "0399b507"), Catch::Contains("latency_ns"));
}

TEST_CASE("the program's operations read only what was written before them", "[program]") {
  const arch::ArchConfig cfg = config("default");
  const arch::IsaLayout isa(cfg);
  const arch::Words flip = arch::encode_flip(isa);
  for (auto [through_host, dma, order] :
       {std::tuple{false, true, NetworkOrder::sequential}, {false, true, NetworkOrder::interleaved}, {true, true, NetworkOrder::fastest},
        {false, false, NetworkOrder::interleaved}, {true, false, NetworkOrder::fastest}}) {
    CAPTURE(through_host, dma, to_string(order));
    ProgramOptions o;
    o.through_host = through_host;
    o.dma = dma;
    o.order = order;
    const Program p = compile_program(cfg, {layer("tt_small"), layer("ht_small"), layer("bt_small")},
                                      {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg}, o);
    std::set<int32_t> in_dram, in_host, checked;
    std::set<std::pair<int, std::string>> preloaded;
    size_t next_word = 0;
    std::map<int64_t, int64_t> word_ranges;  // first word -> words, of every push and descriptor
    int64_t flips = 0, gemms = 0;
    for (const Op& op : p.ops) {
      const ProgramTensor* t = op.tensor >= 0 ? &p.tensors[static_cast<size_t>(op.tensor)] : nullptr;
      switch (op.code) {
        case OpCode::preload:
          CHECK(preloaded.insert({t->layer, t->input}).second);  // each input placed once per layer
          in_dram.insert(op.tensor);
          break;
        case OpCode::fetch:
          // An input fetched under another node's labels shares its address with the preloaded one.
          CHECK((in_dram.count(op.tensor) == 1 || (t->kind == ProgramTensor::Kind::input && preloaded.count({t->layer, t->input}))));
          in_host.insert(op.tensor);
          break;
        case OpCode::write_rows: CHECK(in_host.count(op.tensor) == 1); break;
        case OpCode::store:
          CHECK(in_host.count(op.source) == 1);
          in_dram.insert(op.tensor);
          break;
        case OpCode::read_acc: in_host.insert(op.tensor); break;
        case OpCode::read_saved:
          CHECK(dma);
          in_host.insert(op.tensor);
          break;
        case OpCode::check:
          CHECK(in_host.count(op.tensor) == 1);
          checked.insert(op.report);
          break;
        case OpCode::check_rows: CHECK(!through_host); break;
        case OpCode::push: {
          CHECK(static_cast<size_t>(op.a) >= next_word);  // instructions in push order (descriptors between)
          next_word = static_cast<size_t>(op.a + op.b);
          CHECK(word_ranges.emplace(op.a, op.b).second);
          const arch::Words w(p.words.begin() + op.a, p.words.begin() + op.a + op.b);
          const std::string text = arch::disassemble(isa, w);
          if (op.account == Account::compute && w == flip) ++flips;
          if (text.rfind("gemm", 0) == 0) {
            ++gemms;
            CHECK(flips == gemms);  // one FLIP right before each GEMM: the halves alternate by job
          }
          if (text.rfind("store", 0) == 0) CHECK(op.account == Account::store);
          break;
        }
        case OpCode::dma:
          CHECK(dma);
          CHECK(word_ranges.emplace(op.a, op.b).second);
          break;
        case OpCode::preload_image: CHECK((dma && t->kind == ProgramTensor::Kind::input)); break;
        default: break;
      }
    }
    // Instructions and descriptors together use every word once.
    int64_t covered = 0;
    for (const auto& [a, b] : word_ranges) {
      CHECK(a == covered);
      covered = a + b;
    }
    CHECK(covered == static_cast<int64_t>(p.words.size()));
    // The host writes a later job's images while the job before computes: between that job's
    // GEMM and its wait (bt_small's summed terms are jobs of one contraction list).
    // The first such write waits for the job's FLIP to retire (the FLIP before that GEMM), since
    // the DMA may hold it and the host's port reaches the free half only after it.
    int64_t hoisted = 0, pushes = 0;
    bool flip_retired = false;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      if (p.ops[i].code == OpCode::push) {
        ++pushes;
        flip_retired = false;
      }
      if (p.ops[i].code == OpCode::wait_retired) {
        CHECK(p.ops[i].a == pushes - 1);
        flip_retired = true;
      }
      if (p.ops[i].code != OpCode::write_rows) continue;
      size_t j = i + 1;
      while (j < p.ops.size() && (p.ops[j].code == OpCode::write_rows || p.ops[j].code == OpCode::dma ||
                                  p.ops[j].code == OpCode::preload_image))
        ++j;
      if (j < p.ops.size() && p.ops[j].code == OpCode::wait_idle) {
        ++hoisted;
        CHECK(flip_retired);
      }
    }
    CHECK((dma || hoisted > 0));
    // Each instruction carries the model's busy cycles for it (the wall-cycle model's): per step
    // they add up to the step's predicted compute and STORE cycles.
    std::vector<int64_t> compute(p.steps.size(), 0), store(p.steps.size(), 0);
    for (const Op& op : p.ops) {
      if (op.code != OpCode::push) continue;
      CHECK(op.c >= 1);
      if (op.account == Account::compute) compute[static_cast<size_t>(op.report)] += op.c;
      if (op.account == Account::store) store[static_cast<size_t>(op.report)] += op.c;
    }
    for (size_t r = 0; r < p.steps.size(); ++r) {
      CHECK(compute[r] == p.steps[r].predicted);
      CHECK(store[r] == p.steps[r].store_predicted);
    }
    CHECK(gemms > 0);
    int64_t on_chip = 0;
    for (const ProgramStep& s : p.steps) {
      on_chip += s.on_chip;
      CHECK(s.on_chip == !s.images.empty());
      if (through_host && !s.last) CHECK(s.through_host_because == "--through-host");
    }
    CHECK((on_chip == 0) == through_host);
    // Every checked step is checked once, before its finish; the DRAM map has no overlaps.
    for (size_t r = 0; r < p.steps.size(); ++r) CHECK(checked.count(static_cast<int32_t>(r)) == (p.steps[r].checked() ? 1U : 0U));
    std::map<int, std::map<int64_t, int64_t>> extents;  // per layer: address -> end
    for (const ProgramTensor& t : p.tensors)
      if (t.dram_addr >= 0) {
        CHECK(t.dram_addr % 64 == 0);
        const int64_t end = t.dram_addr + t.numel() * t.dram_bytes;
        auto [it, fresh] = extents[t.layer].emplace(t.dram_addr, end);
        if (!fresh) CHECK(it->second == end);  // the same input, seen by two nodes
      }
    for (const auto& [l, m] : extents) {
      int64_t last_end = 0;
      for (const auto& [a, e] : m) {
        CHECK(a >= last_end);
        last_end = e;
      }
    }
  }
}

TEST_CASE("the DMA path saves results and host-path intermediates: a STORE into the job's half, the save once a FLIP frees it",
          "[program]") {
  const arch::ArchConfig cfg = config("default");
  const arch::IsaLayout isa(cfg);
  const arch::DmaLayout dma(arch::dma_geometry(cfg));
  const arch::Words flip = arch::encode_flip(isa);
  // The default (intermediates gathered or saved in their readers' layouts) and the host's reads.
  const bool gather = GENERATE(true, false);
  INFO("gather: " << gather);
  const Program p = compile_program(cfg, {layer("tt_small"), layer("ht_small"), layer("bt_small")},
                                    {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg}, {.gather = gather});
  int64_t flips = 0, saves = 0, stores = 0, reads = 0, finals = 0, saved = 0, saved_intermediates = 0, host_reads = 0,
          probed_intermediates = 0;
  std::map<int32_t, size_t> producer;  // intermediate tensor -> its step
  for (size_t r = 0; r < p.steps.size(); ++r) producer[p.steps[r].intermediate] = r;
  bool idle = false;  // a wait for the DMA since the last save
  std::map<int64_t, int64_t> regions;  // the saves' DRAM: address -> end (one layer at a time)
  int layer = -1;
  for (const Op& op : p.ops) {
    if (op.code == OpCode::push) {
      const arch::Words w(p.words.begin() + op.a, p.words.begin() + op.a + op.b);
      if (w == flip) ++flips;
      if (op.account == Account::store && arch::disassemble(isa, w).rfind("store", 0) == 0) ++stores;
    }
    if (op.code == OpCode::preload && p.tensors[static_cast<size_t>(op.tensor)].layer != layer) {  // reuses the DRAM
      layer = p.tensors[static_cast<size_t>(op.tensor)].layer;
      regions.clear();
    }
    if (op.code == OpCode::dma) {
      const arch::DmaDescriptor d = arch::decode_dma(dma, arch::Words(p.words.begin() + op.a, p.words.begin() + op.a + op.b));
      if (!d.to_dram) continue;
      ++saves;
      idle = false;
      CHECK(static_cast<int64_t>(d.half) != flips % 2);  // pushed once the TCU is on the other half
      CHECK(saves <= stores);                             // after the STORE that filled its rows
    }
    if (op.code == OpCode::wait_dma_idle) idle = true;
    if (op.code == OpCode::read_saved && op.source >= 0) {  // an intermediate later networks reuse, read again
      CHECK(op.source == op.tensor);
      CHECK(op.host_counted);
      CHECK(regions.contains(op.a));  // rows read (and checked) before
      continue;
    }
    if (op.code == OpCode::read_saved) {
      ++reads;
      CHECK(idle);  // read back only once every save is done
      const int64_t end = op.a + op.b * op.c * 2;
      for (const auto& [a, e] : regions) CHECK((end <= a || op.a >= e));
      regions[op.a] = end;
      const ProgramTensor& t = p.tensors[static_cast<size_t>(op.tensor)];
      if (op.host_counted) {  // the host's read of a saved intermediate, for its consumer
        REQUIRE(t.kind == ProgramTensor::Kind::intermediate);
        const ProgramStep& s = p.steps[producer.at(op.tensor)];
        CHECK((s.saved && !s.last));
        CHECK(op.account == Account::compute);
        ++host_reads;
      } else {  // the scoreboard's untimed look at a final result, or at a gathered intermediate
        if (t.kind == ProgramTensor::Kind::intermediate) {
          CHECK(gather);
          CHECK_FALSE(p.steps[producer.at(op.tensor)].last);
          ++probed_intermediates;
        } else {
          CHECK(t.kind == ProgramTensor::Kind::accumulator);
          CHECK(p.steps[static_cast<size_t>(op.report)].saved);
        }
        CHECK(op.account == Account::none);
      }
    }
  }
  for (const ProgramStep& s : p.steps) {
    finals += s.last && s.checked();
    saved += s.saved && s.last;
    if (s.saved && !s.last) {
      ++saved_intermediates;
      // Kept on chip for its next reader too (a shared result), or what the host path would have carried.
      CHECK(s.on_chip == s.through_host_because.empty());
    }
  }
  // Every save is read back once; with gathers, rows saved in a reader's layout are checked where
  // that reader loads them instead (check_rows), not read back.
  if (gather)
    CHECK(reads <= saves);
  else
    CHECK(saves == reads);
  CHECK(saved == finals);  // every final result of these small layers finds rows to wait in
  CHECK(saved > 0);
  CHECK(saved_intermediates > 0);
  // Saved intermediates come back by the host's reads only without gathers.
  CHECK((host_reads == 0) == gather);
  CHECK((probed_intermediates > 0) == gather);
}

TEST_CASE("the DMA path loads every input and weight image by descriptors, beside the GEMM before", "[program]") {
  const arch::ArchConfig cfg = config("default");
  const arch::IsaLayout isa(cfg);
  const arch::DmaLayout dma(arch::dma_geometry(cfg));
  const std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  const std::vector<std::string> layers{layer("tt_small"), layer("ht_small"), layer("bt_small")};
  ProgramOptions o;
  CHECK(o.dma);  // the default
  o.order = NetworkOrder::interleaved;  // the same order on both paths (fastest may choose differently); hoists the most
  o.shared_on_chip = false;             // the host path keeps shared results off chip, which moves images
  const Program p = compile_program(cfg, layers, phases, o);
  REQUIRE(p.interleaved);
  o.dma = false;
  const Program host = compile_program(cfg, layers, phases, o);
  // The same computing instructions in the same order: the DMA changes how data arrives and leaves
  // (the saves' STOREs, and a FLIP at a layer's end, count as STORE), not the GEMMs.
  auto instructions = [](const Program& q) {
    arch::Words w;
    for (const Op& op : q.ops)
      if (op.code == OpCode::push && op.account == Account::compute)
        w.insert(w.end(), q.words.begin() + op.a, q.words.begin() + op.a + op.b);
    return w;
  };
  CHECK(instructions(p) == instructions(host));
  const int64_t half_slots = int64_t{cfg.memory.unified_depth / 2} << dma.geometry().group_bits;
  std::map<int64_t, int64_t> images;  // DRAM address -> end, of the current layer's images placed so far
  std::map<int, std::map<int64_t, int64_t>> image_extents;  // per layer
  int64_t descriptors = 0, hoisted = 0;
  int gemm_layer = -1;  // the layer of the last GEMM pushed
  auto is_gemm = [&](const Op& op) {
    if (op.code != OpCode::push) return false;
    const arch::Words w(p.words.begin() + op.a, p.words.begin() + op.a + op.b);
    return arch::disassemble(isa, w).rfind("gemm", 0) == 0;
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    const ProgramTensor* t = op.tensor >= 0 ? &p.tensors[static_cast<size_t>(op.tensor)] : nullptr;
    if (op.code == OpCode::write_rows || op.code == OpCode::fetch) CHECK(t->kind != ProgramTensor::Kind::input);
    if (op.code == OpCode::preload_image) {
      CHECK(t->kind == ProgramTensor::Kind::input);
      CHECK(op.a % dma.geometry().beat_bytes() == 0);
      const int64_t beats = op.b * ((op.c + dma.geometry().lanes - 1) / dma.geometry().lanes);
      if (!image_extents.count(t->layer)) images.clear();  // a new layer reuses DRAM from address 0
      images[op.a] = op.a + beats * dma.geometry().beat_bytes();
      image_extents[t->layer][op.a] = images[op.a];
      // The images go right after a GEMM's push (the job before computes meanwhile; the host
      // writes its images of intermediates there too, and reads saved rows a later network
      // reuses), or, before a layer's first GEMM, where the host would have written them.
      size_t before = i;
      auto beside = [](OpCode c) {
        return c == OpCode::preload_image || c == OpCode::dma || c == OpCode::write_rows || c == OpCode::wait_retired ||
               c == OpCode::read_saved || c == OpCode::wait_dma_idle || c == OpCode::check || c == OpCode::finish;
      };
      while (before > 0 && beside(p.ops[before - 1].code)) --before;
      if (before > 0 && is_gemm(p.ops[before - 1]))
        ++hoisted;
      else
        CHECK(gemm_layer != t->layer);
    }
    if (is_gemm(op)) gemm_layer = p.steps[static_cast<size_t>(op.report)].layer;
    if (op.code == OpCode::dma) {
      ++descriptors;
      const arch::DmaDescriptor d = arch::decode_dma(dma, arch::Words(p.words.begin() + op.a, p.words.begin() + op.a + op.b));
      const std::vector<arch::DmaBeat> beats = arch::dma_beats(dma, d);
      REQUIRE_FALSE(beats.empty());
      if (d.to_dram) {  // a result saved: DRAM of its own, beside the layer's images and tensors
        const int64_t lo = static_cast<int64_t>(d.dram_base) * dma.geometry().beat_bytes();
        image_extents[p.steps[static_cast<size_t>(op.report)].layer][lo] = lo + d.beats() * dma.geometry().beat_bytes();
        continue;
      }
      if (op.tensor >= 0) continue;  // a gather of saved rows, not an image (the gather test's)
      // Inside one half without wrapping, and inside an image placed before it.
      const int64_t first_slot = static_cast<int64_t>(beats.front().slot), last_slot = static_cast<int64_t>(beats.back().slot);
      CHECK(first_slot <= last_slot);
      CHECK(last_slot < half_slots);
      const int64_t lo = static_cast<int64_t>(beats.front().dram) * dma.geometry().beat_bytes();
      const int64_t hi = static_cast<int64_t>(beats.back().dram + 1) * dma.geometry().beat_bytes();
      auto it = images.upper_bound(lo);
      REQUIRE(it != images.begin());
      --it;
      CHECK(hi <= it->second);
    }
  }
  CHECK(descriptors > 0);
  CHECK(hoisted > 0);
  // The images sit in DRAM beside the layer's tensors, without overlapping them or each other.
  for (const auto& [l, m] : image_extents) {
    std::map<int64_t, int64_t> all = m;
    for (const ProgramTensor& t : p.tensors)
      if (t.dram_addr >= 0 && t.layer == l) all.emplace(t.dram_addr, t.dram_addr + t.numel() * t.dram_bytes);
    int64_t last_end = 0;
    for (const auto& [a, e] : all) {
      CHECK(a >= last_end);
      last_end = std::max(last_end, e);
    }
  }
}

// --gather (docs/dma.md §2, "Gathers"): a saved intermediate comes back by descriptors that read its
// saved rows straight into each reader's images, so the host neither reads it from DRAM nor writes
// an element of it; the scoreboard's reads of it are probes at the layer's end.
TEST_CASE("with gathers the host moves no element of a saved intermediate", "[program]") {
  for (const char* name : {"default", "baseline_tpu_offchip"}) {
    INFO(name);
    const arch::ArchConfig cfg = config(name);
    const arch::DmaLayout dma(arch::dma_geometry(cfg));
    const std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
    const std::vector<std::string> layers{layer("tt_small"), layer("ht_small"), layer("bt_small")};
    ProgramOptions o;
    o.gather = true;
    const Program p = compile_program(cfg, layers, phases, o);
    verify_program(p, cfg, name);
    int64_t gathers = 0, gathered_beats = 0, host_moves = 0, probes = 0;
    std::set<int32_t> gathered;
    for (const Op& op : p.ops) {
      const bool intermediate =
          op.tensor >= 0 && p.tensors[static_cast<size_t>(op.tensor)].kind == ProgramTensor::Kind::intermediate;
      if (op.code == OpCode::dma && op.tensor >= 0) {
        CHECK(intermediate);
        const arch::DmaDescriptor d = arch::decode_dma(dma, arch::Words(p.words.begin() + op.a, p.words.begin() + op.a + op.b));
        CHECK(!d.to_dram);
        ++gathers;
        gathered_beats += d.beats();
        gathered.insert(op.tensor);
      }
      if (intermediate && (op.code == OpCode::write_rows || (op.code == OpCode::read_saved && op.host_counted))) ++host_moves;
      if (op.code == OpCode::read_saved && !op.host_counted && gathered.contains(op.tensor)) ++probes;
    }
    CHECK(gathers > 0);
    CHECK(host_moves == 0);
    CHECK(probes > 0);
    // The traffic the steps report counts every gathered beat as a DRAM burst.
    int64_t read = 0;
    for (const StepTraffic& s : program_traffic(p, cfg)) read += s.read;
    CHECK(read >= gathered_beats * dma.geometry().beat_bytes());
    // The wall-cycle model times the gathers like any descriptor.
    CHECK(predict_wall(p, cfg).total() > 0);
  }
}

TEST_CASE("without on-chip reordering a STORE only copies rows, every element in its lane", "[program]") {
  const std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  const std::vector<std::string> layers{layer("tt_small"), layer("bt_small"), layer("tr_small")};
  const arch::ArchConfig off = config("baseline_tpu_offchip");
  const arch::IsaLayout isa(off);
  // Every network on its own: on these small layers the results later networks reuse stay in
  // DRAM, which leaves few intermediates to compare.
  ProgramOptions o;
  o.reuse = false;
  o.map_for = MapFor::compute;  // the same GEMMs on both tops (end to end, each prices its own movement)
  const Program p = compile_program(off, layers, phases, o);
  const Program tpu = compile_program(config("baseline_tpu"), layers, phases, o);
  int64_t stores = 0;
  for (const Op& op : p.ops) {
    if (op.code != OpCode::push || op.account != Account::store) continue;
    const arch::Words w(p.words.begin() + op.a, p.words.begin() + op.a + op.b);
    auto f = [&](const std::string& name) { return arch::field_value(w, isa.field("st_" + name)); };
    ++stores;
    CHECK(f("diag") == 0);
    CHECK(f("src_lane_base") == f("dst_lane_base"));
    for (int l = 0; l < arch::StoreInstr::kLevels; ++l)
      if (f(fmt::format("bound_m1_l{}", l)) > 0)
        CHECK(f(fmt::format("src_lane_stride_l{}", l)) == f(fmt::format("dst_lane_stride_l{}", l)));
  }
  auto on_chip = [](const Program& q) {
    int64_t n = 0;
    for (const ProgramStep& s : q.steps) n += s.on_chip;
    return n;
  };
  int64_t refused = 0;
  for (const ProgramStep& s : p.steps) refused += s.through_host_because.find("memory.store_reorder: false") != std::string::npos;
  CHECK(on_chip(p) < on_chip(tpu));  // baseline_tpu keeps more on chip by reordering them
  CHECK(refused > 0);
  CHECK((on_chip(p) == 0 || stores > 0));
  // The GEMMs are the same: only the data's way between them differs.
  CHECK(program_cost(p).compute_cycles == program_cost(tpu).compute_cycles);
}

TEST_CASE("the end-to-end bound: each input read once, each result written once, or compute", "[program]") {
  arch::ArchConfig cfg = config("default");
  const Program p = compile_program(cfg, {layer("tt_small")}, {verif::Phase::fp, verif::Phase::wg});
  const ProgramCost c = program_cost(p);
  // By hand: the layer's inputs (X, dY and the cores, each once whatever its views) and the
  // networks' results (FP: Y; WG: every core's gradient), two bytes each in bf16.
  const verif::LayerSpec spec = verif::load_layer(layer("tt_small"));
  std::set<std::string> inputs;
  int64_t bytes = 0;
  for (const ProgramTensor& t : p.tensors)
    if (t.kind == ProgramTensor::Kind::input && inputs.insert(t.input).second) bytes += t.numel() * 2;
  CHECK(inputs.count("X") == 1);
  CHECK(inputs.count("dY") == 1);
  int64_t results = 0;
  for (const ProgramStep& s : p.steps)
    if (s.step + 1 == s.steps) {
      ++results;
      bytes += s.m * s.n * 2;
    }
  CHECK(results == 1 + static_cast<int64_t>(verif::layer_cores(spec).size()));
  CHECK(c.least_dram_bytes == bytes);
  CHECK(end_to_end_bound(c, cfg) == std::max(c.compute_cycles, (bytes * 10 + 255) / 256));  // 25.6 B a cycle
  cfg.dram.bandwidth_gbps = 0.125;  // an eighth of a byte a cycle: DRAM-bound
  REQUIRE(bytes * 4 > c.compute_cycles);
  CHECK(end_to_end_bound(c, cfg) == bytes * 8);
  cfg.clock_mhz = 500;  // a quarter of a byte a cycle
  CHECK(end_to_end_bound(c, cfg) == bytes * 4);
}

// A hand-made program for the wall-cycle model: a DMA load of `beats` into half 1 (the free one)
// when `beats` > 0, a FLIP, a GEMM of `gemm` cycles and a wait.
static Program wall_program(const arch::ArchConfig& cfg, int64_t beats, int64_t gemm) {
  const arch::IsaLayout isa(cfg);
  const arch::DmaLayout dma(arch::dma_geometry(cfg));
  Program p;
  p.steps.resize(1);
  auto words = [&](OpCode code, const arch::Words& w, int64_t cycles) {
    p.ops.push_back({.code = code, .report = 0, .a = static_cast<int64_t>(p.words.size()),
                     .b = static_cast<int64_t>(w.size()), .c = cycles});
    p.words.insert(p.words.end(), w.begin(), w.end());
  };
  if (beats > 0) {
    arch::DmaDescriptor d;
    d.half = true;
    d.bound = {static_cast<uint64_t>(beats), 1, 1};
    d.dram_stride = {1, 0, 0};
    d.slot_stride = {1, 0, 0};
    words(OpCode::dma, arch::encode_dma(dma, d), 0);
  }
  words(OpCode::push, arch::encode_flip(isa), 1);
  arch::GemmInstr g;
  words(OpCode::push, arch::encode_gemm(isa, g), gemm);
  p.ops.push_back({.code = OpCode::wait_idle, .report = 0});
  return p;
}

TEST_CASE("the wall-cycle model: the host bus, the controller, the DMA and DRAM", "[program]") {
  arch::ArchConfig cfg = config("default");
  const int64_t nw = static_cast<int64_t>(arch::encode_flip(arch::IsaLayout(cfg)).size());
  // Without the DMA: reset, the two instructions' words, then the GEMM's cycles from its push.
  const WallPrediction plain = predict_wall(wall_program(cfg, 0, 500), cfg);
  CHECK(plain.simulated == 3 + 2 * nw + 500);
  CHECK(plain.dma_hold == 0);
  // The controller: busy for the FLIP and the GEMM, idle before them (reset, the pushes) and for
  // the wait's cycle after; every idle cycle has a cause.
  CHECK(plain.busy == 501);
  CHECK(plain.busy + plain.stalls.total() == plain.simulated);
  CHECK(plain.stalls.dma == 0);
  CHECK(plain.stalls.other == plain.simulated - 501);
  CHECK(predict_wall(wall_program(cfg, 0, 1), cfg).simulated == 3 + 2 * nw + 1);  // the wait's own cycle
  // A load into the free half holds the FLIP: its beats at the bandwidth (32 B in 1.25 cycles)
  // after the latency (100 cycles), then the GEMM.
  const int64_t beats = 4000;
  const WallPrediction loaded = predict_wall(wall_program(cfg, beats, 500), cfg);
  CHECK(loaded.dma_hold > 0);
  CHECK(loaded.simulated >= 100 + beats * 5 / 4 + 500);
  CHECK(loaded.simulated <= 100 + beats * 5 / 4 + 500 + 3 * nw + 20);
  // The FLIP's wait for the load is the DMA's.
  CHECK(loaded.busy + loaded.stalls.total() == loaded.simulated);
  CHECK(loaded.stalls.dma == loaded.dma_hold);
  CHECK(loaded.stalls.host_writes + loaded.stalls.host_reads + loaded.stalls.accumulator_reads == 0);
  // Twice the latency: the stream is as fast, its first beat 100 cycles later (the DRAM port
  // keeps enough requests in flight to cover it).
  cfg.dram.latency_ns *= 2;
  const WallPrediction late = predict_wall(wall_program(cfg, beats, 500), cfg);
  CHECK(std::abs(late.simulated - loaded.simulated - 100) <= 1);
  cfg.dram.latency_ns /= 2;
  // The host path's DRAM time is accounted beside, per step: one fetch of a tensor.
  Program f = wall_program(cfg, 0, 500);
  ProgramTensor x;
  x.name = "X";
  x.dims = {64, 64};
  x.dram_addr = 0;
  x.dram_bytes = 2;
  f.tensors.push_back(x);
  f.ops.insert(f.ops.begin(), {.code = OpCode::fetch, .report = 0, .tensor = 0});
  CHECK(predict_wall(f, cfg).dram_accounted ==
        static_cast<int64_t>(std::ceil(arch::dram_transfer_ns(cfg.dram, 64 * 64 * 2) * cfg.clock_mhz / 1000.0 - 1e-6)));
  CHECK(predict_wall(f, cfg).simulated == plain.simulated);
}

TEST_CASE("the wall-cycle model puts every idle cycle of the controller on what it waited for", "[program]") {
  const arch::ArchConfig cfg = config("default");
  // The default, the host bringing saved intermediates back (--no-gather), and no DMA at all.
  for (const auto [dma, gather] : {std::pair{true, true}, std::pair{true, false}, std::pair{false, false}}) {
    CAPTURE(dma, gather);
    ProgramOptions o;
    o.dma = dma;
    o.gather = gather;
    const Program p = compile_program(cfg, {layer("tt_small"), layer("ht_small")},
                                      {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg}, o);
    const WallPrediction w = predict_wall(p, cfg);
    int64_t busy = 0;
    for (const Op& op : p.ops)
      if (op.code == OpCode::push) busy += op.c;
    CHECK(w.busy == busy);
    CHECK(w.busy + w.stalls.total() == w.simulated);
    // The scoreboard's probes are their own cause, never the host's or the DMA's: at most their own
    // cycles, and none once every probe op is taken out.
    CHECK(w.stalls.probes <= w.probe);
    Program unprobed = p;
    std::erase_if(unprobed.ops, [](const Op& op) { return op.is_probe(); });
    const WallPrediction u = predict_wall(unprobed, cfg);
    CHECK(u.probe == 0);
    CHECK(u.stalls.probes == 0);
    if (dma) {
      // Results kept on chip for their next reader are probed before it runs, with the controller
      // idle: their cycles show as the probes', not as the host's writes or reads.
      CHECK(w.probe > 0);
      CHECK(w.stalls.probes > 0);
      // Shared results are saved and come back from DRAM, by the DMA's gathers or the host's reads;
      // the DMA loads every input.
      CHECK(w.stalls.dma > 0);
      CHECK((w.stalls.host_reads > 0) == !gather);
    } else {
      // Nothing moves by DMA; results leave through the accumulator's rows.
      CHECK(w.stalls.dma == 0);
      CHECK(w.stalls.host_reads + w.stalls.host_reads_again == 0);
      CHECK(w.stalls.accumulator_reads > 0);
      CHECK(w.stalls.host_writes > 0);
    }
    CHECK_THAT(stalls_text(w), Catch::StartsWith(fmt::format("controller (the wall-cycle model): busy {} cycles, idle {}",
                                                             w.busy, w.stalls.total())));
  }
}

TEST_CASE("a contraction an earlier network computes is computed once, its result kept in DRAM for every reader",
          "[program]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  for (const char* name : {"tt_small", "ttm_small", "tr_small", "ht_small", "bt_small"}) {
    CAPTURE(name);
    for (bool dma : {true, false}) {
      CAPTURE(dma);
      ProgramOptions o;
      CHECK(o.reuse);  // the default
      o.dma = dma;
      const Program p = compile_program(cfg, {layer(name)}, phases, o);
      o.reuse = false;
      const Program alone = compile_program(cfg, {layer(name)}, phases, o);
      // What a step computes, from the program alone: its operands (an input by name and labels,
      // an intermediate by what computed it) and its result's labels and sizes.
      auto keys = [](const Program& q) {
        std::map<int32_t, std::string> of;  // intermediate tensor -> its key
        std::vector<std::string> k;
        for (const ProgramStep& s : q.steps) {
          if (s.last) {  // a network's result (a sum's earlier terms list no operands)
            k.emplace_back();
            continue;
          }
          auto operand = [&](int32_t t) {
            const ProgramTensor& pt = q.tensors[static_cast<size_t>(t)];
            return pt.kind == ProgramTensor::Kind::input ? fmt::format("{}{}", pt.name, fmt::join(pt.labels, ","))
                                                         : of.at(t);
          };
          std::vector<std::string> ops{operand(s.a.at(0)), operand(s.b.at(0))};
          std::sort(ops.begin(), ops.end());
          const ProgramTensor& r = q.tensors[static_cast<size_t>(s.intermediate)];
          std::vector<std::string> l;
          for (size_t i = 0; i < r.labels.size(); ++i) l.push_back(fmt::format("{}:{}", r.labels[i], r.dims[i]));
          std::sort(l.begin(), l.end());
          of[s.intermediate] = fmt::format("({}*{}->{})", ops[0], ops[1], fmt::join(l, ","));
          k.push_back(of.at(s.intermediate));
        }
        return k;
      };
      auto repeats = [&](const Program& q) {
        std::set<std::string> seen;
        int64_t n = 0;
        for (const std::string& k : keys(q)) n += !k.empty() && !seen.insert(k).second;
        return n;
      };
      CHECK(repeats(p) == 0);  // nothing computed twice
      // Every network's result is still computed and checked, the same ones.
      auto finals = [](const Program& q) {
        std::multiset<std::tuple<verif::Phase, int, size_t>> f;
        for (const ProgramStep& s : q.steps)
          if (s.last) f.insert({s.phase, s.problem, s.term});
        return f;
      };
      CHECK(finals(p) == finals(alone));
      const ProgramCost c = program_cost(p), ca = program_cost(alone);
      CHECK(c.contractions + repeats(alone) == ca.contractions);
      CHECK(c.repeats == repeats(alone));  // what the program says it dropped
      CHECK(ca.repeats == 0);
      CHECK(c.macs <= ca.macs);
      CHECK(c.least_dram_bytes == ca.least_dram_bytes);
      if (std::string(name) == "tt_small") {  // the WG gradients share prefixes, with FP and BP
        CHECK(repeats(alone) > 0);
        CHECK(c.compute_cycles < ca.compute_cycles);
      }
      // A result read by steps of several networks: off chip (or on chip for its next reader as
      // well as saved), read where each later reader is, and checked once.
      std::map<int32_t, std::set<std::tuple<verif::Phase, int, size_t>>> readers;
      for (const ProgramStep& s : p.steps)
        for (const std::vector<int32_t>* v : {&s.a, &s.b})
          for (int32_t t : *v) readers[t].insert({s.phase, s.problem, s.term});
      int64_t shared = 0;
      for (const ProgramStep& s : p.steps) {
        if (s.last || readers[s.intermediate].size() < 2) continue;
        ++shared;
        CHECK(s.saved == o.dma);
        if (!s.on_chip) CHECK(s.through_host_because.find("later networks") != std::string::npos);
      }
      if (std::string(name) == "tt_small") CHECK(shared > 0);
      int64_t checks = 0, reads_again = 0;
      for (const Op& op : p.ops) {
        checks += op.code == OpCode::check;
        reads_again += op.code == OpCode::read_saved && op.source >= 0;
      }
      CHECK(checks == static_cast<int64_t>(p.steps.size()) - std::count_if(p.steps.begin(), p.steps.end(), [](const ProgramStep& s) {
              return !s.checked();
            }));
      if (!dma) CHECK(reads_again == 0);  // read again from where the host stored it (fetch)
    }
  }
}

TEST_CASE("the host reads a saved intermediate's rows while the producer's later jobs compute", "[program]") {
  // bt_transformer_768's backward pass: intermediates of several jobs each, saved by the DMA.
  // (system.default.store_into_both_halves runs this program on the RTL.)
  const arch::ArchConfig cfg = config("default");
  const arch::IsaLayout isa(cfg);
  const Program p = compile_program(cfg, {layer("bt_transformer_768")}, {verif::Phase::bp}, {.gather = false});
  std::map<int32_t, size_t> producer;  // intermediate tensor -> its step
  for (size_t r = 0; r < p.steps.size(); ++r)
    if (!p.steps[r].last) producer[p.steps[r].intermediate] = r;
  auto is_gemm = [&](const Op& op) {
    return op.code == OpCode::push &&
           arch::disassemble(isa, arch::Words(p.words.begin() + op.a, p.words.begin() + op.a + op.b)).rfind("gemm", 0) == 0;
  };
  int64_t early = 0, late = 0;
  bool waited = false;  // a wait for the DMA since the last GEMM pushed
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    if (is_gemm(op)) waited = false;
    if (op.code == OpCode::wait_dma_idle) waited = true;
    if (op.code != OpCode::read_saved || !op.host_counted) continue;
    CHECK(waited);  // its save is done
    if (static_cast<size_t>(op.report) != producer.at(op.tensor)) {
      ++late;  // where the consumer fetches it: the producer's last job's rows
      continue;
    }
    ++early;
    // The producer's next job computes meanwhile: it was pushed before and waited for after.
    size_t next = i + 1;
    while (next < p.ops.size() && !(p.ops[next].code == OpCode::wait_idle && p.ops[next].report == op.report)) ++next;
    CHECK(next < p.ops.size());
    for (size_t k = i + 1; k < next; ++k) CHECK_FALSE(is_gemm(p.ops[k]));
    // And its check comes after every read of its rows.
    bool checked_before = false;
    for (size_t k = 0; k < i; ++k)
      checked_before |= p.ops[k].code == OpCode::check && p.ops[k].tensor == op.tensor;
    CHECK_FALSE(checked_before);
  }
  CHECK(early > 0);
  CHECK(late > 0);
}

TEST_CASE("interleaved networks: the host prepares one network's contraction while another's computes", "[program]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<std::string> layers{layer("tt_small"), layer("ht_small"), layer("bt_small")};
  const std::vector<verif::Phase> phases{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  ProgramOptions o;
  CHECK(o.order == NetworkOrder::fastest);  // the default
  o.gather = false;  // the host reads saved intermediates and writes their images: what it prepares
  o.order = NetworkOrder::sequential;
  const Program seq = compile_program(cfg, layers, phases, o);
  o.order = NetworkOrder::interleaved;
  const Program il = compile_program(cfg, layers, phases, o);
  o.order = NetworkOrder::fastest;
  const Program fast = compile_program(cfg, layers, phases, o);
  CHECK_FALSE(seq.interleaved);
  CHECK(il.interleaved);
  // The same contractions, mapped the same way, in another order.
  auto contractions = [](const Program& q) {
    std::vector<std::string> v;
    for (const ProgramStep& st : q.steps)
      v.push_back(fmt::format("{} {} {} {} {} {}", st.layer, verif::to_string(st.phase), st.result, st.term, st.step, st.mapping));
    return v;
  };
  std::vector<std::string> a = contractions(seq), b = contractions(il);
  CHECK(a != b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  CHECK(a == b);
  // The host reads an operand of a contraction while another network's GEMM computes: the read
  // goes to that GEMM's step, which neither produced nor reads the tensor.
  auto overlapped = [](const Program& q) {
    std::map<int32_t, std::set<int32_t>> users;  // tensor -> steps producing or reading it
    for (size_t r = 0; r < q.steps.size(); ++r) {
      const ProgramStep& st = q.steps[r];
      users[st.intermediate].insert(static_cast<int32_t>(r));
      for (const std::vector<int32_t>* ops : {&st.a, &st.b})
        for (int32_t t : *ops) users[t].insert(static_cast<int32_t>(r));
    }
    int64_t n = 0;
    for (const Op& op : q.ops)
      if (op.code == OpCode::read_saved && op.host_counted && op.source < 0 && !users[op.tensor].contains(op.report)) ++n;
    return n;
  };
  CHECK(overlapped(seq) == 0);
  CHECK(overlapped(il) > 0);
  // fastest: whichever the wall-cycle model predicts shorter (a tie keeps the sequential order).
  const int64_t t_seq = predict_wall(seq, cfg).total(), t_il = predict_wall(il, cfg).total();
  CAPTURE(t_seq, t_il);
  const Program& want = t_il < t_seq ? il : seq;
  CHECK(fast.interleaved == want.interleaved);
  CHECK(fast.words == want.words);
  CHECK(fast.ops.size() == want.ops.size());
  CHECK(parse_network_order("interleaved") == NetworkOrder::interleaved);
  CHECK_THROWS_WITH(parse_network_order("random"), Catch::Contains("allowed: sequential, interleaved, fastest"));
}

TEST_CASE("every intermediate's fate is recorded: kept on chip, or why it leaves", "[program]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<std::string> layers{layer("tt_small"), layer("bt_small")};
  const std::vector<verif::Phase> all{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  auto check_consistent = [](const Program& p) {
    const IntermediateFates f = intermediate_fates(p);
    int64_t intermediates = 0, sum = 0;
    for (const ProgramStep& s : p.steps) {
      intermediates += s.fate != Fate::result;
      CHECK((s.fate == Fate::on_chip) == s.on_chip);                // the STORE into the consumer's images
      CHECK((s.fate == Fate::result) == s.last);                    // network results are not intermediates
      CHECK(s.through_host_because.empty() == (s.fate == Fate::result || s.fate == Fate::on_chip));  // a reason when it leaves
    }
    for (int i = 0; i < kFates; ++i) sum += f.count[static_cast<size_t>(i)];
    CHECK(f.intermediates == intermediates);
    CHECK(sum == intermediates);
    return f;
  };
  // With reuse, a result several networks read is saved for the later ones; on these layers the
  // wall-cycle model has the next readers take some on chip.
  const IntermediateFates reuse = check_consistent(compile_program(cfg, layers, all));
  CHECK(reuse.of(Fate::on_chip) > 0);
  // Without the DMA a shared result leaves through the host port for every reader.
  ProgramOptions no_dma;
  no_dma.dma = false;
  CHECK(check_consistent(compile_program(cfg, layers, all, no_dma)).of(Fate::shared) > 0);
  // Without reuse nothing is shared, and some stay on chip.
  ProgramOptions no_reuse;
  no_reuse.reuse = false;
  const IntermediateFates own = check_consistent(compile_program(cfg, layers, all, no_reuse));
  CHECK(own.of(Fate::shared) == 0);
  CHECK(own.of(Fate::on_chip) > 0);
  CHECK(own.of(Fate::deferred_term) > 0);  // bt_small's terms' last contractions run together
  // --through-host: every intermediate leaves for that reason alone.
  ProgramOptions host;
  host.through_host = true;
  const IntermediateFates th = check_consistent(compile_program(cfg, layers, all, host));
  CHECK(th.of(Fate::option) == th.intermediates);
  CHECK_THAT(fates_text(th), Catch::Matchers::StartsWith(fmt::format("intermediates: 0 of {} stay on chip", th.intermediates)));
  // A top that reorders only through DRAM says so for a layout change STORE could have made.
  ProgramOptions plain;
  plain.reuse = false;
  const IntermediateFates off = check_consistent(compile_program(config("baseline_tpu_offchip"), layers, all, plain));
  CHECK(off.of(Fate::reorder_off_chip) > 0);
  CHECK(parse_fate(to_string(Fate::no_room)) == Fate::no_room);
  CHECK_THROWS_WITH(parse_fate("gone"), Catch::Matchers::Contains("allowed: result, on_chip"));
}

TEST_CASE("a result later networks read stays on chip for its next reader and is saved for the later ones", "[program]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<verif::Phase> all{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  // The later readers read the saved rows through the host (--no-gather), where the reads are ops.
  const ProgramOptions no_gather{.gather = false};
  const Program p = compile_program(cfg, {layer("tt_small")}, all, no_gather);
  int both = 0;
  for (size_t r = 0; r < p.steps.size(); ++r) {
    const ProgramStep& s = p.steps[r];
    if (!(s.on_chip && s.saved)) continue;
    ++both;
    INFO("step " << r << ": " << s.store);
    CHECK(s.fate == Fate::on_chip);
    CHECK(!s.images.empty());  // STOREd into its next reader's images
    int checks = 0, probes = 0, first_reads = 0, readers = 0, check_at = -1, read_at = -1;
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const Op& o = p.ops[i];
      if (o.code == OpCode::check && o.report == static_cast<int32_t>(r)) {
        ++checks;
        check_at = static_cast<int>(i);
      }
      if (o.code == OpCode::read_acc && o.report == static_cast<int32_t>(r)) probes += o.host_counted ? 0 : 1;
      if (o.code == OpCode::read_saved && o.tensor == s.intermediate && o.host_counted && o.source < 0) {
        ++first_reads;
        if (read_at < 0) read_at = static_cast<int>(i);
      }
    }
    for (const ProgramStep& q : p.steps)
      for (const std::vector<int32_t>* v : {&q.a, &q.b}) readers += static_cast<int>(std::count(v->begin(), v->end(), s.intermediate));
    CHECK(checks == 1);        // checked once, from the scoreboard's probe of the accumulator
    CHECK(probes > 0);         // (the probe is not the host's: it costs no host time)
    CHECK(first_reads > 0);    // a later reader reads what the DMA saved ...
    CHECK(check_at < read_at);  // ... after the result was checked
    CHECK(readers >= 2);       // the next reader, on chip, and at least one later one
  }
  CHECK(both > 0);
  // --no-shared-on-chip, and through the host: nothing shared stays on chip.
  ProgramOptions off = no_gather;
  off.shared_on_chip = false;
  ProgramOptions host = no_gather;
  host.through_host = true;
  for (const ProgramOptions& o : {off, host})
    for (const ProgramStep& s : compile_program(cfg, {layer("tt_small")}, all, o).steps) CHECK_FALSE((s.on_chip && s.saved));
  // The wall-cycle model chose: the program is not longer than the one keeping them in DRAM.
  auto own = [&cfg](const Program& q) {
    const WallPrediction w = predict_wall(q, cfg);
    return w.total() - w.probe;
  };
  CHECK(own(p) < own(compile_program(cfg, {layer("tt_small")}, all, off)));
}

TEST_CASE("shared results are kept on chip one by one, each where the wall-cycle model finds the program shorter",
          "[program]") {
  // tt_transformer_768 keeps 3 of its 10 shared results on chip: its readers' STOREs pay for some
  // and not for others, so neither keeping every one nor none is the shortest program.
  const arch::ArchConfig cfg = config("default");
  const std::vector<verif::Phase> all{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  const Program p = compile_program(cfg, {layer("tt_transformer_768")}, all);
  int kept = 0, in_dram = 0;
  for (const ProgramStep& s : p.steps) {
    if (s.on_chip && s.saved) ++kept;
    if (s.fate == Fate::shared) ++in_dram;
  }
  CHECK(kept > 0);
  CHECK(in_dram > 0);
  auto own = [&cfg](const Program& q) {
    const WallPrediction w = predict_wall(q, cfg);
    return w.total() - w.probe;
  };
  ProgramOptions off;
  off.shared_on_chip = false;
  CHECK(own(p) < own(compile_program(cfg, {layer("tt_transformer_768")}, all, off)));
}

TEST_CASE("mapped for fastest: the program mapped for compute or end to end, whichever the wall-cycle model finds shorter",
          "[program]") {
  const arch::ArchConfig cfg = config("default");
  const std::vector<verif::Phase> all{verif::Phase::fp, verif::Phase::bp, verif::Phase::wg};
  auto own = [&cfg](const Program& q) {
    const WallPrediction w = predict_wall(q, cfg);
    return w.total() - w.probe;
  };
  bool differ = false;
  for (const char* name : {"tt_small", "ht_small", "tt_fetta_example"}) {
    CAPTURE(name);
    ProgramOptions o;
    o.map_for = MapFor::compute;
    const Program c = compile_program(cfg, {layer(name)}, all, o);
    o.map_for = MapFor::end_to_end;
    const Program e = compile_program(cfg, {layer(name)}, all, o);
    o.map_for = MapFor::fastest;
    const Program f = compile_program(cfg, {layer(name)}, all, o);
    const bool e2e = own(e) < own(c);  // a tie keeps compute
    CHECK(f.options.map_for == (e2e ? MapFor::end_to_end : MapFor::compute));  // what it was mapped for
    const Program& want = e2e ? e : c;
    CHECK(f.ops == want.ops);
    CHECK(f.words == want.words);
    CHECK(own(f) == std::min(own(c), own(e)));
    differ |= own(c) != own(e);
  }
  CHECK(differ);  // the choice mattered somewhere
  // A network is mapped one way or the other; `fastest` is only a program's choice.
  CHECK_THROWS_WITH(plan_network(cfg, verif::phase_problems(verif::load_layer(layer("tt_small")), verif::Phase::fp).at(0), 0,
                                 {}, MapFor::fastest),
                    Catch::Matchers::Contains("a program's choice"));
}
