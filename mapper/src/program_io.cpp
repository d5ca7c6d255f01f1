// The program on disk (docs/program.md): program.json, the index, and three little-endian
// binary streams it names with their lengths and sha256: ops.bin (80-byte records), words.bin
// (uint32 instruction words) and maps.bin (int32 element maps and lane lists). The index carries
// its own sha256 (over its text without that field), so any truncated or edited file is refused.
#include <fmt/format.h>
#include <openssl/evp.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "mapper/layer_search.hpp"
#include "mapper/program.hpp"
#include "mapper/verify.hpp"
#include "yaml_input/file.hpp"
#include "yaml_input/strict.hpp"

namespace fetta::mapper {

namespace fs = std::filesystem;
using nlohmann::json;

std::string program_sha256(const std::string& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("sha256: OpenSSL EVP_Digest failed");
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return hex;
}

namespace {

constexpr const char* kFormat = "fetta-program";
constexpr size_t kOpBytes = 80;

// ---- little-endian packing
void put(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}
uint64_t get(const std::string& in, size_t& at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(in[at + static_cast<size_t>(i)])} << (8 * i);
  at += static_cast<size_t>(bytes);
  return v;
}

std::string pack_ops(const std::vector<Op>& ops) {
  std::string s;
  s.reserve(ops.size() * kOpBytes);
  for (const Op& o : ops) {
    put(s, static_cast<uint64_t>(o.code), 1);
    put(s, static_cast<uint64_t>(o.account), 1);
    put(s, static_cast<uint64_t>(o.convert), 1);
    put(s, o.host_counted ? 1 : 0, 1);
    put(s, o.pad, 2);
    put(s, 0, 2);
    for (int32_t v : {o.report, o.tensor, o.source, o.shift}) put(s, static_cast<uint32_t>(v), 4);
    for (int64_t v : {o.a, o.b, o.c}) put(s, static_cast<uint64_t>(v), 8);
    for (uint64_t v : {o.map, o.map_len, o.lanes, o.lanes_len}) put(s, v, 8);
  }
  return s;
}

std::vector<Op> unpack_ops(const std::string& s) {
  std::vector<Op> ops(s.size() / kOpBytes);
  size_t at = 0;
  for (Op& o : ops) {
    o.code = static_cast<OpCode>(get(s, at, 1));
    o.account = static_cast<Account>(get(s, at, 1));
    o.convert = static_cast<Convert>(get(s, at, 1));
    o.host_counted = get(s, at, 1) != 0;
    o.pad = static_cast<uint16_t>(get(s, at, 2));
    at += 2;
    for (int32_t* v : {&o.report, &o.tensor, &o.source, &o.shift}) *v = static_cast<int32_t>(static_cast<uint32_t>(get(s, at, 4)));
    for (int64_t* v : {&o.a, &o.b, &o.c}) *v = static_cast<int64_t>(get(s, at, 8));
    for (uint64_t* v : {&o.map, &o.map_len, &o.lanes, &o.lanes_len}) *v = get(s, at, 8);
  }
  return ops;
}

std::string pack_words(const std::vector<uint32_t>& w) {
  std::string s;
  s.reserve(w.size() * 4);
  for (uint32_t v : w) put(s, v, 4);
  return s;
}

std::string pack_maps(const std::vector<int64_t>& m) {
  std::string s;
  s.reserve(m.size() * 4);
  for (int64_t v : m) {
    if (v < -1 || v > std::numeric_limits<int32_t>::max())
      throw ProgramError(fmt::format("maps.bin: element index {} does not fit the format's int32", v));
    put(s, static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
  }
  return s;
}

// ---- the index
json to_json(const LabelGroup& g) { return {{"labels", g.labels}, {"dims", g.dims}}; }
LabelGroup group_from(const json& j) { return {j.at("labels").get<std::vector<std::string>>(), j.at("dims").get<std::vector<int64_t>>()}; }

json to_json(const GemmRecord& r) {
  return {{"a", r.shape.a_name}, {"b", r.shape.b_name}, {"m", to_json(r.shape.m)}, {"k", to_json(r.shape.k)},
          {"n", to_json(r.shape.n)}, {"a_labels", r.shape.a_labels}, {"b_labels", r.shape.b_labels},
          {"dataflow", r.os ? "os" : "ws"}, {"ib_top", r.ib_top}, {"gk", r.gk}, {"gm", r.gm}, {"mapping", r.mapping}};
}
GemmRecord gemm_from(const json& j) {
  GemmRecord r;
  r.shape.a_name = j.at("a");
  r.shape.b_name = j.at("b");
  r.shape.m = group_from(j.at("m"));
  r.shape.k = group_from(j.at("k"));
  r.shape.n = group_from(j.at("n"));
  r.shape.a_labels = j.at("a_labels").get<std::vector<std::string>>();
  r.shape.b_labels = j.at("b_labels").get<std::vector<std::string>>();
  r.os = j.at("dataflow") == "os";
  r.ib_top = j.at("ib_top");
  r.gk = j.at("gk");
  r.gm = j.at("gm");
  r.mapping = j.at("mapping");
  return r;
}

json to_json(const ProgramStep& s) {
  json g = json::array();
  for (const GemmRecord& r : s.gemms) g.push_back(to_json(r));
  return {{"layer", s.layer}, {"phase", verif::to_string(s.phase)}, {"problem", s.problem}, {"result", s.result},
          {"term", s.term}, {"terms", s.terms}, {"step", s.step}, {"steps", s.steps}, {"lhs", s.lhs}, {"rhs", s.rhs},
          {"mapping", s.mapping}, {"m", s.m}, {"k", s.k}, {"n", s.n}, {"macs", s.macs}, {"predicted_cycles", s.predicted},
          {"store_predicted_cycles", s.store_predicted}, {"last", s.last}, {"summed", s.summed}, {"on_chip", s.on_chip}, {"saved", s.saved},
          {"store", s.store}, {"through_host_because", s.through_host_because}, {"fate", to_string(s.fate)}, {"images", s.images}, {"gemms", g}, {"a", s.a}, {"b", s.b},
          {"intermediate", s.intermediate}, {"requant_shift", s.requant_shift}};
}
ProgramStep step_from(const json& j) {
  ProgramStep s;
  s.layer = j.at("layer");
  s.phase = parse_phases(j.at("phase").get<std::string>()).at(0);
  s.problem = j.at("problem");
  s.result = j.at("result");
  s.term = j.at("term");
  s.terms = j.at("terms");
  s.step = j.at("step");
  s.steps = j.at("steps");
  s.lhs = j.at("lhs");
  s.rhs = j.at("rhs");
  s.mapping = j.at("mapping");
  s.m = j.at("m");
  s.k = j.at("k");
  s.n = j.at("n");
  s.macs = j.at("macs");
  s.predicted = j.at("predicted_cycles");
  s.store_predicted = j.at("store_predicted_cycles");
  s.last = j.at("last");
  s.summed = j.at("summed");
  s.on_chip = j.at("on_chip");
  s.saved = j.at("saved");
  s.store = j.at("store");
  s.through_host_because = j.at("through_host_because");
  s.fate = parse_fate(j.at("fate"));
  s.images = j.at("images").get<std::vector<std::array<int64_t, 3>>>();
  for (const json& g : j.at("gemms")) s.gemms.push_back(gemm_from(g));
  s.a = j.at("a").get<std::vector<int32_t>>();
  s.b = j.at("b").get<std::vector<int32_t>>();
  s.intermediate = j.at("intermediate");
  s.requant_shift = j.at("requant_shift");
  return s;
}

json to_json(const ProgramTensor& t) {
  return {{"name", t.name}, {"kind", to_string(t.kind)}, {"labels", t.labels}, {"dims", t.dims}, {"layer", t.layer},
          {"input", t.input}, {"dram_addr", t.dram_addr}, {"dram_bytes", t.dram_bytes}};
}
ProgramTensor tensor_from(const json& j) {
  ProgramTensor t;
  t.name = j.at("name");
  const std::string kind = j.at("kind");
  if (kind == "input") t.kind = ProgramTensor::Kind::input;
  else if (kind == "intermediate") t.kind = ProgramTensor::Kind::intermediate;
  else if (kind == "accumulator") t.kind = ProgramTensor::Kind::accumulator;
  else throw ProgramError(fmt::format("tensor '{}': kind '{}'; allowed: input, intermediate, accumulator", t.name, kind));
  t.labels = j.at("labels").get<std::vector<std::string>>();
  t.dims = j.at("dims").get<std::vector<int64_t>>();
  t.layer = j.at("layer");
  t.input = j.at("input");
  t.dram_addr = j.at("dram_addr");
  t.dram_bytes = j.at("dram_bytes");
  return t;
}

// The index's text: one dump for writing and for checking (keys sorted: nlohmann's objects are maps).
std::string index_text(const json& j) { return j.dump(1) + "\n"; }

std::string read_file(const fs::path& p) {
  std::optional<std::string> text = yaml_input::read_file(p.string());
  if (!text) throw ProgramError(fmt::format("{}: cannot read it (a program directory holds program.json, ops.bin, "
                                            "words.bin and maps.bin; write one with `fetta compile`)", p.string()));
  return std::move(*text);
}

void write_file(const fs::path& p, const std::string& data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw ProgramError(fmt::format("{}: cannot write it", p.string()));
}

// Every op decodes: a known code, account and conversion (what the fields mean is verify_program's).
void check_codes(const Program& p, const std::string& where) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Op& o = p.ops[i];
    if (static_cast<int>(o.code) > static_cast<int>(OpCode::wait_dma_idle) || static_cast<int>(o.account) > 2 ||
        static_cast<int>(o.convert) > 2)
      throw ProgramError(fmt::format("{}: ops.bin record {}: field 'code': an unknown op code, account or conversion", where, i));
  }
}

}  // namespace

void save_program(const Program& p, const std::string& dir) {
  fs::create_directories(dir);
  const std::string ops = pack_ops(p.ops), words = pack_words(p.words), maps = pack_maps(p.maps);
  json streams;
  for (const auto& [name, data, count] :
       {std::tuple{"ops", &ops, p.ops.size()}, {"words", &words, p.words.size()}, {"maps", &maps, p.maps.size()}}) {
    write_file(fs::path(dir) / (std::string(name) + ".bin"), *data);
    streams[name] = {{"file", std::string(name) + ".bin"}, {"bytes", data->size()}, {"entries", count},
                     {"sha256", program_sha256(*data)}};
  }
  json layers = json::array(), tensors = json::array(), steps = json::array();
  for (const ProgramLayer& l : p.layers) {
    std::vector<std::string> phases;
    for (verif::Phase ph : l.phases) phases.push_back(verif::to_string(ph));
    layers.push_back({{"name", l.name}, {"phases", phases}, {"yaml", l.yaml}, {"repeats", l.repeats}});
  }
  for (const ProgramTensor& t : p.tensors) tensors.push_back(to_json(t));
  for (const ProgramStep& s : p.steps) steps.push_back(to_json(s));
  json j = {{"format", kFormat}, {"version", p.version},
            {"config", {{"name", p.config_name}, {"sha256", p.config_hash}, {"hw_id", p.hw_id}, {"yaml", p.config_yaml}}},
            {"options", {{"map_for", to_string(p.options.map_for)}, {"through_host", p.options.through_host},
                         {"terms_separately", p.options.terms_separately}, {"dma", p.options.dma},
                         {"reuse", p.options.reuse}, {"network_order", to_string(p.options.order)},
                         {"shared_on_chip", p.options.shared_on_chip}, {"gather", p.options.gather}}},
            {"interleaved", p.interleaved},
            {"layers", layers}, {"tensors", tensors}, {"steps", steps}, {"streams", streams}};
  j["index_sha256"] = program_sha256(index_text(j));
  write_file(fs::path(dir) / "program.json", index_text(j));
}

Program load_program(const std::string& dir) {
  const fs::path index = fs::path(dir) / "program.json";
  const std::string where = index.string();
  json j;
  try {
    j = json::parse(read_file(index));
  } catch (const json::parse_error& e) {
    throw ProgramError(fmt::format("{}: not a program index (truncated or corrupted?): {}", where, e.what()));
  }
  try {
    if (!j.is_object() || j.value("format", "") != kFormat)
      throw ProgramError(fmt::format("{}: format is not '{}'", where, kFormat));
    if (j.at("version") != kProgramFormatVersion)
      throw ProgramError(fmt::format("{}: version {}; this fetta reads version {} (recompile with `fetta compile`)", where,
                                     j.at("version").dump(), kProgramFormatVersion));
    const std::string want = j.at("index_sha256");
    json body = j;
    body.erase("index_sha256");
    if (program_sha256(index_text(body)) != want)
      throw ProgramError(fmt::format("{}: index_sha256 does not match its text: the index was edited or corrupted", where));
    Program p;
    p.version = j.at("version");
    const json& c = j.at("config");
    p.config_name = c.at("name");
    p.config_hash = c.at("sha256");
    p.hw_id = c.at("hw_id");
    p.config_yaml = c.at("yaml");
    const json& o = j.at("options");
    p.options.map_for = parse_map_for(o.at("map_for"));
    p.options.through_host = o.at("through_host");
    p.options.terms_separately = o.at("terms_separately");
    p.options.dma = o.at("dma");
    p.options.reuse = o.at("reuse");
    p.options.order = parse_network_order(o.at("network_order"));
    p.options.shared_on_chip = o.at("shared_on_chip");
    p.options.gather = o.at("gather");
    p.interleaved = j.at("interleaved");
    for (const json& l : j.at("layers")) {
      ProgramLayer pl{l.at("name"), l.at("yaml"), {}};
      for (const json& ph : l.at("phases")) pl.phases.push_back(parse_phases(ph.get<std::string>()).at(0));
      pl.repeats = l.at("repeats");
      p.layers.push_back(std::move(pl));
    }
    for (const json& t : j.at("tensors")) p.tensors.push_back(tensor_from(t));
    for (const json& s : j.at("steps")) p.steps.push_back(step_from(s));
    std::map<std::string, std::string> data;
    for (const char* name : {"ops", "words", "maps"}) {
      const json& s = j.at("streams").at(name);
      const fs::path file = fs::path(dir) / s.at("file").get<std::string>();
      data[name] = read_file(file);
      if (data[name].size() != s.at("bytes").get<size_t>())
        throw ProgramError(fmt::format("{}: {} bytes, the index says {} (truncated?)", file.string(), data[name].size(),
                                       s.at("bytes").get<size_t>()));
      if (program_sha256(data[name]) != s.at("sha256"))
        throw ProgramError(fmt::format("{}: its sha256 is not the index's: the file is corrupted", file.string()));
    }
    if (data["ops"].size() % kOpBytes != 0 || data["words"].size() % 4 != 0 || data["maps"].size() % 4 != 0)
      throw ProgramError(fmt::format("{}: a stream's length is not a whole number of entries", where));
    p.ops = unpack_ops(data["ops"]);
    size_t at = 0;
    p.words.resize(data["words"].size() / 4);
    for (uint32_t& w : p.words) w = static_cast<uint32_t>(get(data["words"], at, 4));
    at = 0;
    p.maps.resize(data["maps"].size() / 4);
    for (int64_t& m : p.maps) m = static_cast<int32_t>(static_cast<uint32_t>(get(data["maps"], at, 4)));
    check_codes(p, where);
    // What the files say, against the configuration they were compiled for (check_program_target
    // then ties that configuration to the top).
    arch::ArchConfig own;
    try {
      own = arch::parse_arch_config(p.config_yaml, "config.yaml");
    } catch (const std::exception& e) {
      throw ProgramError(fmt::format("{}: field 'config.yaml': {}", where, e.what()));
    }
    verify_program(p, own, dir);
    return p;
  } catch (const json::exception& e) {
    throw ProgramError(fmt::format("{}: a field is missing or has the wrong type: {}", where, e.what()));
  } catch (const std::invalid_argument& e) {
    throw ProgramError(fmt::format("{}: {}", where, e.what()));
  }
}

void check_program_target(const Program& p, const arch::ArchConfig& cfg, const std::string& hw_id) {
  if (!p.hw_id.empty() && !hw_id.empty() && p.hw_id != hw_id)
    throw ProgramError(fmt::format("the program was compiled for the top with hw_id {} (configuration {}), this top's "
                                   "hw_id is {} (configuration {}); compile it for this one: fetta compile --config ...",
                                   p.hw_id, p.config_name, hw_id, cfg.name));
  const std::string yaml = arch::to_yaml(cfg);
  if (program_sha256(yaml) == p.config_hash) return;
  // Name the first setting that differs.
  const auto d = yaml_input::first_difference(p.config_yaml, yaml);
  const std::string differs = d ? fmt::format(": '{}' in the program's, '{}' in this one", d->a, d->b) : "";
  throw ProgramError(fmt::format("the program was compiled for configuration {} (sha256 {}), not for {} (sha256 {}){}; "
                                 "compile it for this one: fetta compile --config ...",
                                 p.config_name, p.config_hash.substr(0, 16), cfg.name, program_sha256(yaml).substr(0, 16),
                                 differs));
}

}  // namespace fetta::mapper
