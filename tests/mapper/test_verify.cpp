// The program verifier (mapper/verify.hpp, docs/program.md "Verification"): every rule refuses a
// program edited in exactly that one way, naming the record and the field; the compiler's own
// programs pass; an edit that reaches the files (rehashed) is refused after load_program too.
#include <catch2/catch.hpp>
#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "arch/dma.hpp"
#include "arch/isa.hpp"
#include "mapper/program.hpp"
#include "mapper/verify.hpp"

using namespace fetta;
using namespace fetta::mapper;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kSrc = FETTA_SOURCE_DIR;
arch::ArchConfig config(const std::string& name) { return arch::load_arch_config(kSrc + "configs/" + name + ".yaml"); }

const arch::ArchConfig& cfg() {
  static const arch::ArchConfig c = config("default");
  return c;
}
// tt_small and bt_small, every phase: every op code the DMA path emits, sums of terms included.
const Program& base() {
  static const Program p = compile_program(cfg(), {kSrc + "configs/layers/tt_small.yaml", kSrc + "configs/layers/bt_small.yaml"},
                                           {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg});
  return p;
}

// The same layers on the host path (--no-dma): its accumulator reads, row writes, fetches and stores.
const Program& host_base() {
  static const Program p =
      compile_program(cfg(), {kSrc + "configs/layers/tt_small.yaml", kSrc + "configs/layers/bt_small.yaml"},
                      {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg}, ProgramOptions{.dma = false});
  return p;
}

// The same with the host bringing saved intermediates back (--no-gather): it writes their images
// once their FLIPs retire (wait_retired).
const Program& host_images() {
  static const Program p =
      compile_program(cfg(), {kSrc + "configs/layers/tt_small.yaml", kSrc + "configs/layers/bt_small.yaml"},
                      {verif::Phase::fp, verif::Phase::bp, verif::Phase::wg}, ProgramOptions{.gather = false});
  return p;
}

size_t first_op(const Program& p, OpCode c, const std::function<bool(const Op&)>& also = {}) {
  for (size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].code == c && (!also || also(p.ops[i]))) return i;
  FAIL("no " << to_string(c) << " op in the program");
  return 0;
}

std::string refusal(const Program& p) {
  try {
    verify_program(p, cfg(), "prog");
  } catch (const ProgramError& e) {
    return e.what();
  }
  return "(accepted)";
}

// Applies `edit` to a copy of `from` (the DMA path's program by default) and expects a refusal
// containing each of `want`.
void refused(const std::function<void(Program&)>& edit, const std::vector<std::string>& want, const Program& from = base()) {
  Program p = from;
  edit(p);
  const std::string msg = refusal(p);
  INFO(msg);
  CHECK_THAT(msg, Catch::Matchers::StartsWith("prog: "));
  for (const std::string& w : want) CHECK_THAT(msg, Contains(w));
}

}  // namespace

TEST_CASE("verify: the compiler's programs pass", "[verify]") {
  CHECK(refusal(base()) == "(accepted)");
  for (const char* top : {"baseline_tpu_offchip", "ce2x4_x8_int16", "ce4x4_x4_int8"}) {
    CAPTURE(top);
    ProgramOptions host;
    host.dma = false;
    const arch::ArchConfig c = config(top);
    for (const ProgramOptions& o : {ProgramOptions{}, host})
      CHECK_NOTHROW(verify_program(compile_program(c, {kSrc + "configs/layers/ht_small.yaml"}, {verif::Phase::fp, verif::Phase::wg}, o),
                                   c, "prog"));
  }
}

TEST_CASE("verify: layers, steps and tensors against the layer files and the configuration", "[verify]") {
  refused([](Program& p) { p.layers.clear(); }, {"field 'layers'", "no layer"});
  refused([](Program& p) { p.layers[0].yaml = "format: tt\nbatch: 0\n"; }, {"layers[0]", "field 'yaml'", "does not load"});
  refused([](Program& p) { p.layers[0].phases.clear(); }, {"layers[0]", "field 'phases'"});
  refused([](Program& p) { p.steps[3].layer = 7; }, {"steps[3]", "field 'layer'", "allowed: 0 .. 1"});
  refused([](Program& p) { p.steps[3].problem = -1; }, {"steps[3]", "field 'problem'"});
  refused([](Program& p) { p.steps[3].term = 5; }, {"steps[3]", "field 'term'"});
  refused([](Program& p) { p.steps[0].gemms[0].mapping += " (edited)"; }, {"steps[0]", "field 'gemms[0]'", "rebuilds as"});
  refused([](Program& p) { p.steps[0].a[0] = static_cast<int32_t>(p.tensors.size()); }, {"steps[0]", "field 'a'"});
  refused([](Program& p) { p.steps[0].intermediate = -7; }, {"steps[0]", "field 'intermediate'"});
  refused([](Program& p) { p.tensors[0].layer = -1; }, {"tensors[0]", "field 'layer'"});
  refused([](Program& p) { p.tensors[0].dims[0] = int64_t{1} << 40; }, {"tensors[0]", "field 'dims'", "at most 268435456"});
  refused([](Program& p) { p.tensors[0].dims[0] += 1; }, {"tensors[0]", "field 'dims'", "layer tensor"});
  refused([](Program& p) { p.tensors[0].input.assign(1, 'Q'); }, {"tensors[0]", "field 'input'", "'Q' is not a tensor", "X"});
  refused([](Program& p) { p.tensors[0].dram_addr = (int64_t{4096} << 20) - 2; }, {"tensors[0]", "field 'dram_addr'", "past the DRAM"});
  refused([](Program& p) { p.tensors[0].dram_bytes = 3; }, {"tensors[0]", "field 'dram_bytes'", "allowed: 2"});
}

TEST_CASE("verify: every op's indices, counts, offsets and rows inside what they name", "[verify]") {
  using Edit = std::function<void(Program&)>;
  auto at = [](OpCode c, std::function<void(Op&)> f, std::function<bool(const Op&)> also = {}) -> Edit {
    return [c, f, also](Program& p) { f(p.ops[first_op(p, c, also)]); };
  };
  refused(at(OpCode::finish, [](Op& o) { o.report = -5; }), {"ops.bin record", "(finish)", "field 'report'"});
  refused(at(OpCode::check, [](Op& o) { o.report = 1 << 30; }), {"(check)", "field 'report'"});
  refused(at(OpCode::preload, [](Op& o) { o.tensor = 1 << 30; }), {"(preload)", "field 'tensor'"});
  refused(at(OpCode::dma, [](Op& o) { o.b = 3; }), {"(dma)", "field 'b'"});
  refused(at(OpCode::push, [](Op& o) { o.a = std::numeric_limits<int64_t>::max() - 2; }), {"(push)", "field 'b'", "words.bin"});
  refused(at(OpCode::read_acc, [](Op& o) { o.a = 100000; }), {"(read_acc)", "field 'a'", "accumulator"}, host_base());
  refused(at(OpCode::read_acc, [](Op& o) { o.map = std::numeric_limits<uint64_t>::max() - 1; }), {"(read_acc)", "field 'map'", "past maps.bin"}, host_base());
  refused(at(OpCode::read_acc, [](Op& o) { o.map_len -= 1; }), {"(read_acc)", "field 'map_len'"}, host_base());
  refused([](Program& p) {
            const Op& o = p.ops[first_op(p, OpCode::read_acc)];
            p.maps[o.lanes] = 64;
          },
          {"(read_acc)", "field 'lanes'", "allowed: 0 .. 63"}, host_base());
  refused([](Program& p) {  // an element index just past its tensor: would write past the host's buffer
            const Op& o = p.ops[first_op(p, OpCode::read_acc)];
            p.maps[o.map] = p.tensors[static_cast<size_t>(o.tensor)].numel();
          },
          {"(read_acc)", "field 'map'", "names element"}, host_base());
  refused(at(OpCode::preload_image, [](Op& o) { o.b = 5000; }), {"(preload_image)", "field 'b'", "1 .. 2048 rows"});
  refused(at(OpCode::preload_image, [](Op& o) { o.a = int64_t{4096} << 20; }), {"(preload_image)", "field 'a'", "past the DRAM"});
  refused(at(OpCode::read_saved, [](Op& o) { o.c = 0; }), {"(read_saved)", "field 'b'"});
  refused(at(OpCode::read_saved, [](Op& o) { o.source = 0; }, [](const Op& o) { return o.tensor != 0; }), {"(read_saved)", "field 'source'"});
  refused(at(OpCode::wait_retired, [](Op& o) { o.a = 1 << 30; }), {"(wait_retired)", "field 'a'", "pushed before it"},
          host_images());
  refused(at(OpCode::preload_image, [](Op& o) { o.account = Account::store; }), {"(preload_image)", "field 'account'", "none"});
  refused(at(OpCode::check, [](Op& o) { o.convert = Convert::requant; o.shift = 99; }), {"(check)", "field 'shift'"});
  refused([](Program& p) {  // a descriptor at the fields' maximum: 2^48 beats, a run that never ends
            const arch::DmaLayout layout(arch::dma_geometry(cfg()));
            const Op& o = p.ops[first_op(p, OpCode::dma)];
            arch::DmaDescriptor d = arch::decode_dma(layout, arch::Words(p.words.begin() + o.a, p.words.begin() + o.a + o.b));
            d.bound = {65536, 65536, 65536};
            const arch::Words w = arch::encode_dma(layout, d);
            std::copy(w.begin(), w.end(), p.words.begin() + o.a);
          },
          {"(dma)", "field 'b'", "a half's slots"});
  {  // a descriptor past the DRAM's capacity (the TLM target would answer with an error)
    arch::ArchConfig small = cfg();
    small.dram.capacity_mb = 64;
    Program p = base();
    CHECK_NOTHROW(verify_program(p, small, "prog"));
    const arch::DmaLayout layout(arch::dma_geometry(small));
    const Op& o = p.ops[first_op(p, OpCode::dma)];
    arch::DmaDescriptor d = arch::decode_dma(layout, arch::Words(p.words.begin() + o.a, p.words.begin() + o.a + o.b));
    d.dram_base = (uint64_t{64} << 20) / static_cast<uint64_t>(arch::dma_geometry(small).beat_bytes());  // the first beat past it
    const arch::Words w = arch::encode_dma(layout, d);
    std::copy(w.begin(), w.end(), p.words.begin() + o.a);
    CHECK_THROWS_WITH(verify_program(p, small, "prog"), Contains("(dma)") && Contains("field 'a'") &&
                                                            Contains("reaching DRAM beat 2097152 (allowed: 0 .. 2097151"));
  }
  refused(at(OpCode::write_rows, [](Op& o) { o.a = 2047; }), {"(write_rows)", "field 'a'", "a half of 2048 rows"}, host_base());
  refused(at(OpCode::write_rows, [](Op& o) { o.c = 65; }), {"(write_rows)", "field 'c'", "1 .. 64"}, host_base());
  refused(at(OpCode::store, [](Op& o) { o.source = 0; }, [](const Op& o) { return o.source != 0; }),
          {"(store)", "field 'source'", "elements stored as a tensor of"}, host_base());
  refused([](Program& p) {
            const size_t f = first_op(p, OpCode::fetch, [&p](const Op& o) {
              return p.tensors[static_cast<size_t>(o.tensor)].kind == ProgramTensor::Kind::intermediate;
            });
            p.tensors[static_cast<size_t>(p.ops[f].tensor)].dram_addr = -1;
          },
          {"field 'tensor'", "has a DRAM address"}, host_base());  // its store is the first op to say so
}

TEST_CASE("verify: a field an op does not use holds its default (a damaged or misaligned record is not harmless)", "[verify]") {
  refused([](Program& p) { p.ops[first_op(p, OpCode::finish)].tensor = 0; }, {"(finish)", "field 'tensor'", "must be -1"});
  refused([](Program& p) { p.ops[first_op(p, OpCode::wait_idle)].a = 5; }, {"(wait_idle)", "field 'a'", "must be 0"});
  refused([](Program& p) { p.ops[first_op(p, OpCode::push)].map_len = 3; }, {"(push)", "field 'map'"});
  refused([](Program& p) { p.ops[first_op(p, OpCode::preload)].report = 0; }, {"(preload)", "field 'report'", "must be -1"});
  refused([](Program& p) { p.ops[first_op(p, OpCode::check)].account = Account::store; }, {"(check)", "field 'account'"});
}

TEST_CASE("verify: every result claimed checked is checked once, every step finished once, nothing read unwritten", "[verify]") {
  // Checks removed: the run would print "match" for results it never compared.
  refused([](Program& p) { std::erase_if(p.ops, [](const Op& o) { return o.code == OpCode::check; }); },
          {"steps[", "checked by 0 check op(s)", "claims 1"});
  refused([](Program& p) { p.ops.clear(); }, {"checked by 0 check op(s)"});
  refused([](Program& p) { std::erase_if(p.ops, [](const Op& o) { return o.code == OpCode::finish; }); },
          {"finished by 0 finish op(s)"});
  refused([](Program& p) {
            const size_t i = first_op(p, OpCode::check);
            p.ops.insert(p.ops.begin() + static_cast<std::ptrdiff_t>(i), p.ops[i]);
          },
          {"checked by 2 check op(s)"});
  refused([](Program& p) {  // the finish moved before the check
            const size_t c = first_op(p, OpCode::check);
            const int32_t r = p.ops[c].report;
            const size_t f = first_op(p, OpCode::finish, [r](const Op& o) { return o.report == r; });
            std::swap(p.ops[c], p.ops[f]);
          },
          {"(check)", "checked after it finished"});
  refused([](Program& p) {  // the accumulator read a check compares, removed
            const size_t c = first_op(p, OpCode::check);
            const int32_t t = p.ops[c].tensor;
            std::erase_if(p.ops, [t](const Op& o) { return o.tensor == t && (o.code == OpCode::read_acc || o.code == OpCode::read_saved); });
          },
          {"(check)", "before anything put it there"});
}

TEST_CASE("verify: no wait for the DMA hangs (a descriptor for the TCU's half needs a FLIP before the wait)", "[verify]") {
  auto is_flip = [](const Program& p, const Op& o) {
    if (o.code != OpCode::push) return false;
    const arch::Words w(p.words.begin() + o.a, p.words.begin() + o.a + o.b);
    return static_cast<arch::Opcode>(arch::field_value(w, arch::IsaLayout(cfg()).field("op"))) == arch::Opcode::flip;
  };
  // A FLIP pushed twice (fuzz.program_runs found a program so edited passing the verifier and
  // hanging the RTL): every descriptor after it moves the half the TCU is on.
  refused([&](Program& p) {
            for (size_t i = 0; i < p.ops.size(); ++i)
              if (is_flip(p, p.ops[i])) {
                p.ops.insert(p.ops.begin() + static_cast<std::ptrdiff_t>(i), p.ops[i]);
                return;
              }
            FAIL("no FLIP in the program");
          },
          {"(dma)", "field 'half'", "never ends", "Order and the halves"});
  // Every descriptor for the other half: the first moves the half the TCU starts on, before any FLIP.
  refused([](Program& p) {
            const arch::DmaLayout layout(arch::dma_geometry(cfg()));
            for (const Op& o : p.ops)
              if (o.code == OpCode::dma) {
                const auto first = p.words.begin() + o.a;
                arch::DmaDescriptor d = arch::decode_dma(layout, arch::Words(first, first + o.b));
                d.half = !d.half;
                const arch::Words w = arch::encode_dma(layout, d);
                std::copy(w.begin(), w.end(), first);
              }
          },
          {"(dma)", "field 'half'", "never ends"});
  // Three descriptors for the TCU's half after the first: the third's push into the full queue
  // waits for a head that waits for a FLIP pushed after it.
  refused([](Program& p) {
            const arch::DmaLayout layout(arch::dma_geometry(cfg()));
            const size_t i = first_op(p, OpCode::dma);
            const auto first = p.words.begin() + p.ops[i].a;
            arch::DmaDescriptor d = arch::decode_dma(layout, arch::Words(first, first + p.ops[i].b));
            d.half = !d.half;
            Op o = p.ops[i];
            o.a = static_cast<int64_t>(p.words.size());
            const arch::Words w = arch::encode_dma(layout, d);
            p.words.insert(p.words.end(), w.begin(), w.end());
            p.ops.insert(p.ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, 3, o);
          },
          {"(dma)", "field 'half'", fmt::format("full queue of {}", arch::kTopDmaQueueDepth), "never ends"});
}

TEST_CASE("verify: load_program verifies what the files say against the configuration they name", "[verify]") {
  const fs::path dir = fs::temp_directory_path() / ("fetta_verify_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  Program p = base();
  std::erase_if(p.ops, [](const Op& o) { return o.code == OpCode::check; });
  save_program(p, dir.string());  // rehashed: the files are intact, their contents are not
  CHECK_THROWS_WITH(load_program(dir.string()), Contains(dir.string()) && Contains("checked by 0 check op(s)"));
  fs::remove_all(dir);
}
