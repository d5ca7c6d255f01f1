#include "arch/config.hpp"

#include <fmt/core.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <map>
#include <sstream>

#include "yaml_input/file.hpp"
#include "yaml_input/strict.hpp"

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
int operand_frac_bits(DataType t) { return t == DataType::bf16 ? 0 : t == DataType::int8 ? 6 : 8; }
int accumulator_bits(DataType t) { return t == DataType::int16 ? 48 : 32; }

bool ArchConfig::has_dataflow(Dataflow d) const {
  return std::find(ce.dataflows.begin(), ce.dataflows.end(), d) != ce.dataflows.end();
}

double dram_transfer_ns(const DramConfig& dram, uint64_t bytes) {
  return dram.latency_ns + static_cast<double>(bytes) / dram.bandwidth_gbps;
}

int64_t dram_transfer_cycles(const ArchConfig& cfg, uint64_t bytes) {
  return static_cast<int64_t>(std::ceil(dram_transfer_ns(cfg.dram, bytes) * cfg.clock_mhz / 1000.0 - 1e-9));
}

double dram_bytes_per_cycle(const ArchConfig& cfg) { return cfg.dram.bandwidth_gbps * 1e3 / cfg.clock_mhz; }

int host_port_banks(const ArchConfig& cfg) {
  // As many banks as the DRAM fills a cycle, at one row of each.
  const double per_cycle = dram_bytes_per_cycle(cfg);
  const double row_bytes = cfg.memory.elems_per_bank * operand_bits(cfg.dtype) / 8.0;
  int p = 1;
  while (p < cfg.memory.banks && p * row_bytes < per_cycle) p *= 2;
  return p;
}

int host_port_lanes(const ArchConfig& cfg) { return host_port_banks(cfg) * cfg.memory.elems_per_bank; }

int vector_lanes(const ArchConfig& cfg) {
  return cfg.vector.lanes > 0 ? cfg.vector.lanes : cfg.memory.banks * cfg.memory.elems_per_bank;
}

bool ArchConfig::same_architecture(const ArchConfig& o) const {
  return name == o.name && dtype == o.dtype && clock_mhz == o.clock_mhz && ce == o.ce && arith == o.arith &&
         network == o.network && memory == o.memory && vector == o.vector && dram == o.dram && energy == o.energy;
}

std::string to_yaml(const ArchConfig& c) {
  std::vector<std::string> dataflows;
  for (const Dataflow d : c.ce.dataflows) dataflows.push_back(to_string(d));
  const auto flag = [](bool b) { return b ? "true" : "false"; };
  std::string name;  // a double-quoted YAML scalar
  for (const char ch : c.name) name += ch == '"' || ch == '\\' ? std::string{'\\', ch} : std::string{ch};
  // {} prints the shortest text that reads back to the same double.
  return fmt::format(
      "name: \"{}\"\ndtype: {}\nclock_mhz: {}\n"
      "ce:\n  rows: {}\n  cols: {}\n  count: {}\n  dataflows: [{}]\n  ib_double_buffer: {}\n  psum_double_buffer: {}\n"
      "  mac_pipeline_stages: {}\n  mac_product_stages: {}\n"
      "arith:\n  fp32_adder: {}\n  prefix: {}\n  reduction_adder: {}\n  reduction_adder_stages: {}\n"
      "network:\n  lanes: {}\n  dist_pipeline_every: {}\n  dist_output_register: {}\n  topology: {}\n"
      "memory:\n  banks: {}\n  elems_per_bank: {}\n  unified_depth: {}\n  accum_depth: {}\n  accum_pipeline: {}\n"
      "  store_reorder: {}\n"
      "vector:\n  lanes: {}\n"
      "dram:\n  bandwidth_gbps: {}\n  latency_ns: {}\n  capacity_mb: {}\n"
      "energy:\n  mac_pj: {}\n  sram_read_pj_per_byte: {}\n  sram_write_pj_per_byte: {}\n  network_hop_pj: {}\n"
      "  dram_read_pj_per_byte: {}\n  dram_write_pj_per_byte: {}\n  static_mw: {}\n",
      name, to_string(c.dtype), c.clock_mhz, c.ce.rows, c.ce.cols, c.ce.count, fmt::join(dataflows, ", "),
      flag(c.ce.ib_double_buffer), flag(c.ce.psum_double_buffer), c.ce.mac_pipeline_stages, c.ce.mac_product_stages,
      to_string(c.arith.fp32_adder), to_string(c.arith.prefix), to_string(c.arith.reduction_adder),
      c.arith.reduction_adder_stages, c.network.lanes, c.network.dist_pipeline_every,
      flag(c.network.dist_output_register), to_string(c.network.topology), c.memory.banks, c.memory.elems_per_bank,
      c.memory.unified_depth, c.memory.accum_depth, c.memory.accum_pipeline, flag(c.memory.store_reorder),
      c.vector.lanes, c.dram.bandwidth_gbps, c.dram.latency_ns,
      c.dram.capacity_mb, c.energy.mac_pj, c.energy.sram_read_pj_per_byte, c.energy.sram_write_pj_per_byte,
      c.energy.network_hop_pj, c.energy.dram_read_pj_per_byte, c.energy.dram_write_pj_per_byte, c.energy.static_mw);
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

bool in_range(double v, double lo, double hi, bool lo_inclusive) {
  return std::isfinite(v) && (lo_inclusive ? v >= lo : v > lo) && v <= hi;
}

bool int_allowed(int v, limits::IntRange r, bool pow2) { return v >= r.lo && v <= r.hi && (!pow2 || is_pow2(v)); }

std::string int_refusal(int v, limits::IntRange r, bool pow2, const std::string& why = "") {
  return pow2 ? fmt::format("{} is not allowed; allowed: a power of two, {}..{}{}", v, r.lo, r.hi, why)
              : fmt::format("{} is out of range; allowed: {}..{}{}", v, r.lo, r.hi, why);
}

std::string range_text(double lo, double hi, bool lo_inclusive) {
  return fmt::format("a finite number {} {} and <= {}", lo_inclusive ? ">=" : ">", lo, hi);
}

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

  void get_int(const std::string& key, int& out, limits::IntRange r, bool pow2 = false) {
    get(key, out, "an integer");
    if (node_[key] && !int_allowed(out, r, pow2)) fail(node_[key], field(key), int_refusal(out, r, pow2));
  }

  // A finite number in (lo, hi], or [lo, hi] when lo_inclusive.
  void get_double(const std::string& key, double& out, double lo, double hi, bool lo_inclusive = false) {
    get(key, out, "a number");
    if (node_[key] && !in_range(out, lo, hi, lo_inclusive))
      fail(node_[key], field(key), fmt::format("{} is out of range; allowed: {}", node_[key].Scalar(), range_text(lo, hi, lo_inclusive)));
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
  top.get_double("clock_mhz", cfg.clock_mhz, limits::kClockMhz.lo, limits::kClockMhz.hi, true);

  Section ce = top.sub("ce");
  ce.get_int("rows", cfg.ce.rows, limits::kCeDim, true);
  ce.get_int("cols", cfg.ce.cols, limits::kCeDim, true);
  ce.get_int("count", cfg.ce.count, limits::kCeCount, true);
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
  ce.get_int("mac_pipeline_stages", cfg.ce.mac_pipeline_stages, limits::kMacPipelineStages);
  ce.get_int("mac_product_stages", cfg.ce.mac_product_stages, limits::kMacProductStages);
  ce.reject_unknown();

  Section ar = top.sub("arith");
  ar.get_enum("fp32_adder", cfg.arith.fp32_adder, kFp32Adders);
  ar.get_enum("prefix", cfg.arith.prefix, kPrefixAdders);
  ar.get_enum("reduction_adder", cfg.arith.reduction_adder, kFp32Adders);
  ar.get_int("reduction_adder_stages", cfg.arith.reduction_adder_stages, limits::kReductionAdderStages);
  ar.reject_unknown();

  Section net = top.sub("network");
  net.get_int("lanes", cfg.network.lanes, limits::kLanes, true);
  net.get_int("dist_pipeline_every", cfg.network.dist_pipeline_every, {0, 64});  // upper bound: validate()
  net.get_bool("dist_output_register", cfg.network.dist_output_register);
  net.get_enum("topology", cfg.network.topology, kTopologies);
  net.reject_unknown();

  Section mem = top.sub("memory");
  mem.get_int("banks", cfg.memory.banks, limits::kBanks, true);
  mem.get_int("elems_per_bank", cfg.memory.elems_per_bank, limits::kElemsPerBank, true);
  mem.get_int("unified_depth", cfg.memory.unified_depth, limits::kUnifiedDepth, true);
  mem.get_int("accum_depth", cfg.memory.accum_depth, limits::kAccumDepth, true);
  mem.get_int("accum_pipeline", cfg.memory.accum_pipeline, limits::kAccumPipeline);
  mem.get_bool("store_reorder", cfg.memory.store_reorder);
  mem.reject_unknown();

  Section vec = top.sub("vector");
  vec.get_int("lanes", cfg.vector.lanes, {0, limits::kVectorLanes.hi});  // 0 or a power of two up to a row: validate()
  vec.reject_unknown();

  Section dram = top.sub("dram");
  dram.get_double("bandwidth_gbps", cfg.dram.bandwidth_gbps, limits::kBandwidthGbps.lo, limits::kBandwidthGbps.hi, true);
  dram.get_double("latency_ns", cfg.dram.latency_ns, limits::kLatencyNs.lo, limits::kLatencyNs.hi, true);
  dram.get_int("capacity_mb", cfg.dram.capacity_mb, limits::kDramCapacityMb);
  dram.reject_unknown();

  Section en = top.sub("energy");
  // 0 is allowed: a term whose energy another one already holds (docs/power.md, "Energy model").
  en.get_double("mac_pj", cfg.energy.mac_pj, 0.0, limits::kEnergyPjMax, true);
  en.get_double("sram_read_pj_per_byte", cfg.energy.sram_read_pj_per_byte, 0.0, limits::kEnergyPjMax, true);
  en.get_double("sram_write_pj_per_byte", cfg.energy.sram_write_pj_per_byte, 0.0, limits::kEnergyPjMax, true);
  en.get_double("network_hop_pj", cfg.energy.network_hop_pj, 0.0, limits::kEnergyPjMax, true);
  en.get_double("dram_read_pj_per_byte", cfg.energy.dram_read_pj_per_byte, 0.0, limits::kEnergyPjMax, true);
  en.get_double("dram_write_pj_per_byte", cfg.energy.dram_write_pj_per_byte, 0.0, limits::kEnergyPjMax, true);
  en.get_double("static_mw", cfg.energy.static_mw, 0.0, limits::kEnergyPjMax, true);
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
  auto check_real = [&](const std::string& field, double v, limits::RealRange r, bool lo_inclusive) {
    if (!in_range(v, r.lo, r.hi, lo_inclusive))
      fail(field, fmt::format("{} is out of range; allowed: {}", v, range_text(r.lo, r.hi, lo_inclusive)));
  };
  auto check_int = [&](const std::string& field, int v, limits::IntRange r, bool pow2, const std::string& why = "") {
    if (!int_allowed(v, r, pow2)) fail(field, int_refusal(v, r, pow2, why));
  };
  check_real("clock_mhz", c.clock_mhz, limits::kClockMhz, true);
  check_int("ce.rows", c.ce.rows, limits::kCeDim, true, " (network lanes are split by bit fields)");
  check_int("ce.cols", c.ce.cols, limits::kCeDim, true, " (network lanes are split by bit fields)");
  check_int("ce.count", c.ce.count, limits::kCeCount, true, " (CE groups split K and N by halving)");
  check_int("ce.mac_pipeline_stages", c.ce.mac_pipeline_stages, limits::kMacPipelineStages, false);
  check_int("ce.mac_product_stages", c.ce.mac_product_stages, limits::kMacProductStages, false);
  check_int("arith.reduction_adder_stages", c.arith.reduction_adder_stages, limits::kReductionAdderStages, false);
  if (!c.has_dataflow(Dataflow::ws))
    fail("ce.dataflows", "the controller's loads and the compiler's mappings are weight-stationary first; allowed: a "
                         "list that contains ws (ws, [ws, is], [ws, os], [ws, is, os])");
  // Output-stationary accumulates in place: it needs the MAC's result the next cycle.
  if (c.ce.mac_pipeline_stages > 0 && c.has_dataflow(Dataflow::os))
    fail("ce.mac_pipeline_stages",
         fmt::format("{} stages cannot be combined with os in ce.dataflows; allowed: 0 with os, or any "
                     "stage count with ws/is only",
                     c.ce.mac_pipeline_stages));
  check_int("memory.banks", c.memory.banks, limits::kBanks, true);
  check_int("memory.elems_per_bank", c.memory.elems_per_bank, limits::kElemsPerBank, true);
  check_int("memory.unified_depth", c.memory.unified_depth, limits::kUnifiedDepth, true,
            " rows per lane (two halves; a half's row is a 16-bit ISA field)");
  check_int("memory.accum_depth", c.memory.accum_depth, limits::kAccumDepth, true, " rows per lane (16-bit ISA field)");
  check_int("memory.accum_pipeline", c.memory.accum_pipeline, limits::kAccumPipeline, false);
  // An output-stationary fold drains its ce.rows result rows into consecutive accumulator rows.
  if (c.has_dataflow(Dataflow::os) && c.memory.accum_depth < c.ce.rows)
    fail("memory.accum_depth", fmt::format("{} rows cannot take an output-stationary fold's {} result rows; allowed: "
                                           ">= ce.rows = {} when os is in ce.dataflows, or drop os",
                                           c.memory.accum_depth, c.ce.rows, c.ce.rows));
  check_int("network.lanes", c.network.lanes, limits::kLanes, true);
  const int N = c.network.lanes;
  if (N != c.memory.banks * c.memory.elems_per_bank)
    fail("network.lanes", fmt::format("{} lanes do not match memory.banks x memory.elems_per_bank = {} x {} = {}", N,
                                      c.memory.banks, c.memory.elems_per_bank, c.memory.banks * c.memory.elems_per_bank));
  if (N < c.memory.elems_per_bank * c.memory.elems_per_bank)
    fail("network.lanes", fmt::format("{} lanes cannot hold one {}x{} transpose block; need at least {}", N,
                                      c.memory.elems_per_bank, c.memory.elems_per_bank,
                                      c.memory.elems_per_bank * c.memory.elems_per_bank));
  if (c.ce.count * c.ce.rows > N)
    fail("network.lanes", fmt::format("{} lanes cannot feed {} CEs x {} rows = {} IA inputs; allowed: >= ce.count * ce.rows",
                                      N, c.ce.count, c.ce.rows, c.ce.count * c.ce.rows));
  if (c.ce.count * c.ce.cols > N)
    fail("network.lanes", fmt::format("{} lanes cannot take {} CEs x {} columns = {} CE outputs; allowed: >= ce.count * ce.cols",
                                      N, c.ce.count, c.ce.cols, c.ce.count * c.ce.cols));
  // N is a unified-memory row's elements (checked above).
  if (c.vector.lanes != 0 && !int_allowed(c.vector.lanes, {limits::kVectorLanes.lo, std::min(N, limits::kVectorLanes.hi)}, true))
    fail("vector.lanes", fmt::format("{} is not allowed; allowed: 0 (one lane per element of a row) or a power of two, {}..{} "
                                     "(a row is memory.banks x memory.elems_per_bank = {} elements)",
                                     c.vector.lanes, limits::kVectorLanes.lo, N, N));
  const int stages = std::countr_zero(static_cast<unsigned>(N)) + 1;
  check_int("network.dist_pipeline_every", c.network.dist_pipeline_every, {0, stages}, false,
            fmt::format(" (0: combinational; the {}-lane network has {} stages)", N, stages));
  check_real("dram.bandwidth_gbps", c.dram.bandwidth_gbps, limits::kBandwidthGbps, true);
  check_real("dram.latency_ns", c.dram.latency_ns, limits::kLatencyNs, true);
  check_int("dram.capacity_mb", c.dram.capacity_mb, limits::kDramCapacityMb, false);
  const limits::RealRange energy{0.0, limits::kEnergyPjMax};
  check_real("energy.mac_pj", c.energy.mac_pj, energy, true);
  check_real("energy.sram_read_pj_per_byte", c.energy.sram_read_pj_per_byte, energy, true);
  check_real("energy.sram_write_pj_per_byte", c.energy.sram_write_pj_per_byte, energy, true);
  check_real("energy.network_hop_pj", c.energy.network_hop_pj, energy, true);
  check_real("energy.dram_read_pj_per_byte", c.energy.dram_read_pj_per_byte, energy, true);
  check_real("energy.dram_write_pj_per_byte", c.energy.dram_write_pj_per_byte, energy, true);
  check_real("energy.static_mw", c.energy.static_mw, energy, true);
}

ArchConfig parse_arch_config(const std::string& yaml_text, const std::string& source_name) {
  yaml_input::Document doc = yaml_input::load_one_document(yaml_text);
  if (doc.problem) throw ConfigError(source_name, doc.problem->line, doc.problem->field, doc.problem->message);
  if (auto dup = yaml_input::find_duplicate_key(doc.root))
    throw ConfigError(source_name, dup->line, dup->field, dup->message);
  return parse_root(doc.root, source_name);
}

ArchConfig load_arch_config(const std::string& path) {
  const std::optional<std::string> text = yaml_input::read_file(path);
  if (!text) throw ConfigError(path, 0, "<file>", "cannot open the configuration file");
  return parse_arch_config(*text, path);
}

}  // namespace fetta::arch
