#include "arch/config.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace fetta::arch {

std::string to_string(DataType t) {
  switch (t) {
    case DataType::bf16: return "bf16";
    case DataType::int8: return "int8";
    case DataType::int16: return "int16";
  }
  return "?";
}

std::string to_string(NetworkTopology t) { return t == NetworkTopology::fixed ? "fixed" : "butterfly"; }

std::string to_string(Fp32Adder a) { return a == Fp32Adder::basic ? "basic" : "two_path"; }

std::string to_string(PrefixAdder p) {
  switch (p) {
    case PrefixAdder::kogge_stone: return "kogge_stone";
    case PrefixAdder::sklansky: return "sklansky";
    case PrefixAdder::brent_kung: return "brent_kung";
  }
  return "?";
}

std::string to_string(Dataflow d) {
  switch (d) {
    case Dataflow::ws: return "ws";
    case Dataflow::is: return "is";
    case Dataflow::os: return "os";
  }
  return "?";
}

int operand_bits(DataType t) { return t == DataType::int8 ? 8 : 16; }
int accumulator_bits(DataType t) { return t == DataType::int16 ? 48 : 32; }

bool ArchConfig::has_dataflow(Dataflow d) const {
  return std::find(ce.dataflows.begin(), ce.dataflows.end(), d) != ce.dataflows.end();
}

ConfigError::ConfigError(std::string file, int line, std::string field, std::string message)
    : std::runtime_error(line > 0 ? fmt::format("{}:{}: {}: {}", file, line, field, message)
                                  : fmt::format("{}: {}: {}", file, field, message)),
      file_(std::move(file)),
      line_(line),
      field_(std::move(field)),
      message_(std::move(message)) {}

namespace {

bool is_pow2(long v) { return v > 0 && (v & (v - 1)) == 0; }

// Walks one YAML mapping, reading known keys into the struct and rejecting anything else.
class Section {
 public:
  Section(const YAML::Node& node, std::string path, const std::string& file)
      : node_(node), path_(std::move(path)), file_(file) {
    if (!node_.IsMap()) fail(node_, path_.empty() ? "<top level>" : path_, "expected a mapping of keys");
  }

  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& fieldname, const std::string& msg) const {
    throw ConfigError(file_, at.Mark().is_null() ? 0 : at.Mark().line + 1, fieldname, msg);
  }

  template <typename T>
  void get(const std::string& key, T& out, const char* type_name) {
    seen_.push_back(key);
    YAML::Node v = node_[key];
    if (!v) return;
    if (!v.IsScalar()) fail(v, field(key), fmt::format("expected {}", type_name));
    try {
      out = v.as<T>();
    } catch (const YAML::Exception&) {
      fail(v, field(key), fmt::format("expected {}, got '{}'", type_name, v.Scalar()));
    }
  }

  void get_int(const std::string& key, int& out, int lo, int hi) {
    get(key, out, "an integer");
    if (node_[key] && (out < lo || out > hi))
      fail(node_[key], field(key), fmt::format("{} is out of range; allowed: {}..{}", out, lo, hi));
  }

  void get_double(const std::string& key, double& out, double lo) {
    get(key, out, "a number");
    if (node_[key] && !(out > lo))
      fail(node_[key], field(key), fmt::format("{} must be greater than {}", out, lo));
  }

  void get_bool(const std::string& key, bool& out) { get(key, out, "true or false"); }

  template <typename E>
  void get_enum(const std::string& key, E& out, const std::map<std::string, E>& allowed) {
    std::string s;
    get(key, s, "a string");
    if (!node_[key]) return;
    out = parse_enum(node_[key], field(key), s, allowed);
  }

  template <typename E>
  E parse_enum(const YAML::Node& at, const std::string& fieldname, const std::string& s,
               const std::map<std::string, E>& allowed) const {
    auto it = allowed.find(s);
    if (it == allowed.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : allowed) names.push_back(k);
      fail(at, fieldname, fmt::format("unknown value '{}'; allowed: {}", s, fmt::join(names, ", ")));
    }
    return it->second;
  }

  Section sub(const std::string& key) {
    seen_.push_back(key);
    YAML::Node v = node_[key];
    return Section(v ? v : YAML::Node(YAML::NodeType::Map), field(key), file_);
  }

  YAML::Node raw(const std::string& key) {
    seen_.push_back(key);
    return node_[key];
  }

  // Any key not read by now is a typo or an unsupported option.
  void reject_unknown() const {
    for (const auto& kv : node_) {
      std::string key = kv.first.as<std::string>();
      if (std::find(seen_.begin(), seen_.end(), key) == seen_.end())
        fail(kv.first, field(key), fmt::format("unknown key; allowed keys here: {}", fmt::join(seen_, ", ")));
    }
  }

 private:
  YAML::Node node_;
  std::string path_;
  const std::string& file_;
  std::vector<std::string> seen_;
};

const std::map<std::string, DataType> kDataTypes{
    {"bf16", DataType::bf16}, {"int8", DataType::int8}, {"int16", DataType::int16}};
const std::map<std::string, NetworkTopology> kTopologies{{"butterfly", NetworkTopology::butterfly},
                                                          {"fixed", NetworkTopology::fixed}};
const std::map<std::string, Fp32Adder> kFp32Adders{{"basic", Fp32Adder::basic}, {"two_path", Fp32Adder::two_path}};
const std::map<std::string, PrefixAdder> kPrefixAdders{{"kogge_stone", PrefixAdder::kogge_stone},
                                                        {"sklansky", PrefixAdder::sklansky},
                                                        {"brent_kung", PrefixAdder::brent_kung}};
const std::map<std::string, Dataflow> kDataflows{
    {"ws", Dataflow::ws}, {"is", Dataflow::is}, {"os", Dataflow::os}};

ArchConfig parse_root(const YAML::Node& root, const std::string& file) {
  ArchConfig cfg;
  cfg.source = file;
  Section top(root, "", file);
  top.get("name", cfg.name, "a string");
  top.get_enum("dtype", cfg.dtype, kDataTypes);
  top.get_double("clock_mhz", cfg.clock_mhz, 0.0);

  Section ce = top.sub("ce");
  ce.get_int("rows", cfg.ce.rows, 1, 256);
  ce.get_int("cols", cfg.ce.cols, 1, 256);
  ce.get_int("count", cfg.ce.count, 1, 1024);
  if (YAML::Node dfs = ce.raw("dataflows")) {
    if (!dfs.IsSequence() || dfs.size() == 0)
      ce.fail(dfs, ce.field("dataflows"), "expected a non-empty list; allowed entries: is, os, ws");
    cfg.ce.dataflows.clear();
    for (const auto& d : dfs) {
      Dataflow v = ce.parse_enum(d, ce.field("dataflows"), d.IsScalar() ? d.Scalar() : "<non-scalar>", kDataflows);
      if (cfg.has_dataflow(v)) ce.fail(d, ce.field("dataflows"), fmt::format("'{}' is listed twice", d.Scalar()));
      cfg.ce.dataflows.push_back(v);
    }
  }
  ce.get_bool("ib_double_buffer", cfg.ce.ib_double_buffer);
  ce.get_bool("psum_double_buffer", cfg.ce.psum_double_buffer);
  ce.get_int("mac_pipeline_stages", cfg.ce.mac_pipeline_stages, 0, 8);
  ce.get_int("mac_product_stages", cfg.ce.mac_product_stages, 0, 4);
  ce.reject_unknown();

  Section ar = top.sub("arith");
  ar.get_enum("fp32_adder", cfg.arith.fp32_adder, kFp32Adders);
  ar.get_enum("prefix", cfg.arith.prefix, kPrefixAdders);
  ar.reject_unknown();

  Section net = top.sub("network");
  net.get_int("lanes", cfg.network.lanes, 2, 4096);
  net.get_int("dist_pipeline_every", cfg.network.dist_pipeline_every, 0, 64);
  net.get_bool("dist_output_register", cfg.network.dist_output_register);
  net.get_enum("topology", cfg.network.topology, kTopologies);
  net.reject_unknown();

  Section mem = top.sub("memory");
  mem.get_int("banks", cfg.memory.banks, 1, 1024);
  mem.get_int("elems_per_bank", cfg.memory.elems_per_bank, 1, 64);
  mem.get_int("unified_depth", cfg.memory.unified_depth, 2, 1 << 24);
  mem.get_int("accum_depth", cfg.memory.accum_depth, 2, 1 << 24);
  mem.get_int("accum_pipeline", cfg.memory.accum_pipeline, 2, 3);
  mem.reject_unknown();

  Section dram = top.sub("dram");
  dram.get_double("bandwidth_gbps", cfg.dram.bandwidth_gbps, 0.0);
  dram.get("latency_ns", cfg.dram.latency_ns, "a number");
  dram.get_int("capacity_mb", cfg.dram.capacity_mb, 1, 1 << 20);
  dram.reject_unknown();

  Section en = top.sub("energy");
  en.get_double("mac_pj", cfg.energy.mac_pj, 0.0);
  en.get_double("sram_read_pj_per_byte", cfg.energy.sram_read_pj_per_byte, 0.0);
  en.get_double("sram_write_pj_per_byte", cfg.energy.sram_write_pj_per_byte, 0.0);
  en.get_double("network_hop_pj", cfg.energy.network_hop_pj, 0.0);
  en.get_double("dram_pj_per_byte", cfg.energy.dram_pj_per_byte, 0.0);
  en.reject_unknown();

  top.reject_unknown();

  // Cross-field rules are reported at the line of the field that has to change.
  try {
    validate(cfg);
  } catch (const ConfigError& e) {
    std::stringstream path(e.field());
    std::string part;
    YAML::Node cur = root;
    while (std::getline(path, part, '.')) {
      if (!cur.IsMap() || !cur[part]) break;
      cur.reset(cur[part]);
    }
    throw ConfigError(file, cur.Mark().is_null() ? 0 : cur.Mark().line + 1, e.field(), e.message());
  }
  return cfg;
}

}  // namespace

void validate(const ArchConfig& c) {
  auto fail = [&](const std::string& field, const std::string& msg) { throw ConfigError(c.source, 0, field, msg); };
  if (c.ce.rows < 1) fail("ce.rows", "must be at least 1");
  if (c.ce.cols < 1) fail("ce.cols", "must be at least 1");
  if (c.ce.count < 1) fail("ce.count", "must be at least 1");
  if (c.ce.dataflows.empty()) fail("ce.dataflows", "at least one of ws, is, os must be built in");
  // Output-stationary accumulates in place: it needs the MAC's result the next cycle.
  if (c.ce.mac_pipeline_stages > 0 && c.has_dataflow(Dataflow::os))
    fail("ce.mac_pipeline_stages",
         fmt::format("{} stages cannot be combined with os in ce.dataflows; allowed: 0 with os, or any "
                     "stage count with ws/is only",
                     c.ce.mac_pipeline_stages));
  if (!is_pow2(c.memory.elems_per_bank))
    fail("memory.elems_per_bank", fmt::format("{} is not a power of two; allowed: 1, 2, 4, 8, ...", c.memory.elems_per_bank));
  if (!is_pow2(c.network.lanes))
    fail("network.lanes", fmt::format("{} is not a power of two; allowed: 2, 4, 8, ..., 4096", c.network.lanes));
  if (c.network.lanes != c.memory.banks * c.memory.elems_per_bank)
    fail("network.lanes", fmt::format("{} lanes do not match memory.banks x memory.elems_per_bank = {} x {} = {}",
                                      c.network.lanes, c.memory.banks, c.memory.elems_per_bank,
                                      c.memory.banks * c.memory.elems_per_bank));
  if (c.network.lanes < c.memory.elems_per_bank * c.memory.elems_per_bank)
    fail("network.lanes", fmt::format("{} lanes cannot hold one {}x{} transpose block; need at least {}",
                                      c.network.lanes, c.memory.elems_per_bank, c.memory.elems_per_bank,
                                      c.memory.elems_per_bank * c.memory.elems_per_bank));
  if (c.dram.latency_ns < 0) fail("dram.latency_ns", "must not be negative");
}

ArchConfig parse_arch_config(const std::string& yaml_text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(source_name, e.mark.line + 1, "<syntax>", e.msg);
  }
  if (!root || root.IsNull()) return [&] { ArchConfig c; c.source = source_name; return c; }();
  return parse_root(root, source_name);
}

ArchConfig load_arch_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "<file>", "cannot open the configuration file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_arch_config(ss.str(), path);
}

}  // namespace fetta::arch
