#include "verif/layer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include "verif/contract.hpp"
#include "yaml_input/file.hpp"
#include "yaml_input/strict.hpp"

namespace fetta::verif {

std::string to_string(Format f) {
  switch (f) {
    case Format::tt:
      return "tt";
    case Format::ttm:
      return "ttm";
    case Format::tr:
      return "tr";
    case Format::ht:
      return "ht";
    case Format::bt:
      return "bt";
  }
  return "?";
}

std::string to_string(Phase p) {
  switch (p) {
    case Phase::fp:
      return "fp";
    case Phase::bp:
      return "bp";
    case Phase::wg:
      return "wg";
  }
  return "?";
}

namespace {

constexpr const char* kFormats = "tt, ttm, tr, ht, bt";
constexpr const char* kKeys = "name, format, batch, out_modes, in_modes, ranks, transfer_rank, terms";

// The size budget (docs/golden_model.md): no tensor the layer implies above 2^26 elements, at most
// 16 modes per side and 1,024 block terms. Beyond it a layer would exhaust memory or run for hours
// in the fp64 golden model; it is refused when parsed, naming the field.
constexpr int64_t kMaxTensorElements = int64_t{1} << 26;
constexpr int64_t kMaxModes = 16;
constexpr int64_t kMaxTerms = 1024;

// Where each field was found (1-based line), for messages; absent = no line known.
using Lines = std::map<std::string, int>;

[[noreturn]] void fail(const std::string& source, const Lines& lines, const std::string& field,
                       const std::string& problem) {
  const auto it = lines.find(field);
  if (it != lines.end() && it->second > 0)
    throw LayerError(fmt::format("{}:{}: field '{}': {}", source, it->second, field, problem));
  throw LayerError(fmt::format("{}: field '{}': {}", source, field, problem));
}

std::string ints(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

void check_sizes(const LayerSpec& s, const Lines& lines, const std::string& field, const std::vector<int64_t>& v,
                 bool allow_empty = false) {
  if (v.empty() && !allow_empty) fail(s.source, lines, field, "must list at least one size (allowed: integers >= 1)");
  if (static_cast<int64_t>(v.size()) > kMaxModes)
    fail(s.source, lines, field, fmt::format("{} entries (allowed: at most {})", v.size(), kMaxModes));
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] < 1 || v[i] > kMaxTensorElements)
      fail(s.source, lines, field + "[" + std::to_string(i) + "]",
           fmt::format("size {} in {} {} (allowed: integers 1 .. {})", v[i], field, ints(v), kMaxTensorElements));
}

struct Structure {
  std::vector<std::vector<NetworkNode>> terms;  // cores of each term
  std::map<std::string, int64_t> dims;
};
// The cores and label sizes of a layer that has passed the structural checks.
Structure structure_unchecked(const LayerSpec& s);

// Elements of a tensor of these sizes, saturated at kMaxTensorElements + 1 (no overflow).
int64_t elements(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (const int64_t v : sizes) {
    if (v > 0 && n > kMaxTensorElements / v) return kMaxTensorElements + 1;
    n *= v;
  }
  return n;
}

// The tensors the golden model and the simulator hold whole (X, dY, every core) fit the budget;
// judged from the sizes alone, before anything is allocated.
void check_tensor_budget(const LayerSpec& s, const Lines& lines) {
  const auto refuse = [&](const std::string& field, const std::string& what, int64_t n) {
    fail(s.source, lines, field,
         fmt::format("the layer is too large: {} has {} elements (allowed: at most {} = {} MiB in fp64)", what,
                     n > kMaxTensorElements ? fmt::format("more than {}", kMaxTensorElements) : std::to_string(n),
                     kMaxTensorElements, kMaxTensorElements * 8 / (1 << 20)));
  };
  std::vector<int64_t> x{s.batch}, y{s.batch};
  x.insert(x.end(), s.in_modes.begin(), s.in_modes.end());
  y.insert(y.end(), s.out_modes.begin(), s.out_modes.end());
  if (const int64_t n = elements(x); n > kMaxTensorElements) refuse("batch", "X [batch x in_modes]", n);
  if (const int64_t n = elements(y); n > kMaxTensorElements) refuse("batch", "Y [batch x out_modes]", n);
  const Structure st = structure_unchecked(s);
  for (const auto& term : st.terms)
    for (const NetworkNode& core : term) {
      std::vector<int64_t> sizes;
      for (const std::string& l : core.labels) sizes.push_back(st.dims.at(l));
      if (const int64_t n = elements(sizes); n > kMaxTensorElements) refuse("ranks", "core " + core.name, n);
    }
}

void validate_impl(const LayerSpec& s, const Lines& lines) {
  if (s.batch < 1 || s.batch > kMaxTensorElements)
    fail(s.source, lines, "batch", fmt::format("{} (allowed: integers 1 .. {})", s.batch, kMaxTensorElements));
  check_sizes(s, lines, "out_modes", s.out_modes);
  check_sizes(s, lines, "in_modes", s.in_modes);
  check_sizes(s, lines, "ranks", s.ranks);
  const auto sm = static_cast<int64_t>(s.out_modes.size());
  const auto tm = static_cast<int64_t>(s.in_modes.size());
  const auto nr = static_cast<int64_t>(s.ranks.size());
  const std::string fname = to_string(s.format);
  if (s.format != Format::tt && s.format != Format::tr && sm != tm)
    fail(s.source, lines, "in_modes",
         fmt::format("format {} pairs output and input modes: out_modes has {} entries, in_modes {} (allowed: "
                     "equal counts)",
                     fname, sm, tm));
  switch (s.format) {
    case Format::tt:
    case Format::ttm:
    case Format::tr: {
      const int64_t d = s.format == Format::ttm ? sm : sm + tm;
      if (nr != d + 1)
        fail(s.source, lines, "ranks",
             fmt::format("format {} with {} cores needs {} ranks [R_0 .. R_{}], got {} {}", fname, d, d + 1, d, nr,
                         ints(s.ranks)));
      if (s.format == Format::tr) {
        if (s.ranks.front() != s.ranks.back())
          fail(s.source, lines, "ranks",
               fmt::format("format tr closes the ring: the first and last ranks must be equal (R_0 = R_{}), got {}",
                           d, ints(s.ranks)));
      } else if (s.ranks.front() != 1 || s.ranks.back() != 1) {
        fail(s.source, lines, "ranks",
             fmt::format("format {} needs R_0 = R_{} = 1 (allowed: [1, R_1 .. R_{}, 1]), got {}", fname, d, d - 1,
                         ints(s.ranks)));
      }
      break;
    }
    case Format::ht:
    case Format::bt: {
      const int64_t d = sm;
      if (nr != d)
        fail(s.source, lines, "ranks",
             fmt::format("format {} with {} cores needs {} ranks [R_1 .. R_{}], got {} {}", fname, d, d, d, nr,
                         ints(s.ranks)));
      if (s.format == Format::ht && d < 2)
        fail(s.source, lines, "out_modes",
             fmt::format("format ht needs at least 2 leaves (allowed: >= 2 modes), got {}", d));
      break;
    }
  }
  if (s.format == Format::ht) {
    if (s.transfer_rank < 0)
      fail(s.source, lines, "transfer_rank", fmt::format("{} (allowed: integers >= 1)", s.transfer_rank));
    if (s.transfer_rank == 0 && s.out_modes.size() > 2)
      fail(s.source, lines, "transfer_rank",
           "missing: format ht with more than 2 leaves needs it (allowed: integers >= 1)");
  } else if (s.transfer_rank != 0) {
    fail(s.source, lines, "transfer_rank", fmt::format("only format ht has a transfer rank (format is {})", fname));
  }
  if (s.format == Format::bt) {
    if (s.terms < 1 || s.terms > kMaxTerms)
      fail(s.source, lines, "terms", fmt::format("{} (allowed: integers 1 .. {})", s.terms, kMaxTerms));
  } else if (s.terms != 1) {
    fail(s.source, lines, "terms", fmt::format("only format bt has block terms (format is {})", fname));
  }
  if (s.transfer_rank > kMaxTensorElements)
    fail(s.source, lines, "transfer_rank", fmt::format("{} (allowed: integers 1 .. {})", s.transfer_rank, kMaxTensorElements));
  check_tensor_budget(s, lines);
}

// --- YAML ----------------------------------------------------------------------------------------

int line_of(const YAML::Node& n, int fallback) {
  const YAML::Mark m = n.Mark();
  return m.line >= 0 ? m.line + 1 : fallback;
}

std::string describe(const YAML::Node& n) {
  if (n.IsNull()) return "nothing";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "'" + n.Scalar() + "'";
}

bool parse_int(const std::string& text, int64_t& out) {
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  if (i == text.size()) return false;
  for (size_t j = i; j < text.size(); ++j)
    if (!std::isdigit(static_cast<unsigned char>(text[j]))) return false;
  try {
    out = std::stoll(text);
  } catch (const std::out_of_range&) {
    return false;
  }
  return true;
}

struct Reader {
  std::string source;
  Lines lines;

  [[noreturn]] void type_error(const std::string& field, int line, const std::string& expected,
                               const YAML::Node& got) const {
    throw LayerError(fmt::format("{}:{}: field '{}': expected {}, got {}", source, line, field, expected, describe(got)));
  }

  int64_t integer(const std::string& field, const YAML::Node& n, int line) const {
    int64_t v = 0;
    if (!n.IsScalar() || !parse_int(n.Scalar(), v)) type_error(field, line, "an integer", n);
    return v;
  }

  std::vector<int64_t> integers(const std::string& field, const YAML::Node& n, int line) {
    if (!n.IsSequence()) type_error(field, line, "a list of integers, e.g. [8, 8, 12]", n);
    std::vector<int64_t> v;
    for (size_t i = 0; i < n.size(); ++i) {
      const YAML::Node e = n[i];
      const std::string entry = field + "[" + std::to_string(i) + "]";
      const int el = line_of(e, line);
      lines[entry] = el;
      int64_t x = 0;
      if (!e.IsScalar() || !parse_int(e.Scalar(), x)) type_error(entry, el, "an integer", e);
      v.push_back(x);
    }
    return v;
  }
};

Format parse_format(const Reader& r, const YAML::Node& n, int line) {
  if (!n.IsScalar()) r.type_error("format", line, fmt::format("one of {}", kFormats), n);
  std::string v = n.Scalar();
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (v == "tt") return Format::tt;
  if (v == "ttm") return Format::ttm;
  if (v == "tr") return Format::tr;
  if (v == "ht") return Format::ht;
  if (v == "bt") return Format::bt;
  throw LayerError(
      fmt::format("{}:{}: field 'format': unknown format '{}' (allowed: {})", r.source, line, n.Scalar(), kFormats));
}

std::string default_name(const std::string& source) {
  if (source.empty() || source.front() == '<') return "layer";
  return std::filesystem::path(source).stem().string();
}

// --- network structure ------------------------------------------------------------------------------

std::string m_label(int64_t i) { return fmt::format("m{}", i); }
std::string n_label(int64_t i) { return fmt::format("n{}", i); }
std::string r_label(int64_t i) { return fmt::format("r{}", i); }

// HT: builds the subtree over leaves lo..hi (1-based), returns the label of its upper edge.
std::string ht_subtree(const LayerSpec& s, int64_t lo, int64_t hi, std::vector<NetworkNode>& transfer,
                       std::map<std::string, int64_t>& dims) {
  if (lo == hi) return r_label(lo);
  const int64_t mid = lo + (hi - lo + 2) / 2 - 1;  // left gets ceil(half)
  const std::string left = ht_subtree(s, lo, mid, transfer, dims);
  const std::string right = ht_subtree(s, mid + 1, hi, transfer, dims);
  NetworkNode t{fmt::format("T{}_{}", lo, hi), {left, right}};
  const std::string up = fmt::format("r{}_{}", lo, hi);
  const bool root = lo == 1 && hi == static_cast<int64_t>(s.out_modes.size());
  if (!root) {
    t.labels.push_back(up);
    dims[up] = s.transfer_rank;
  }
  transfer.push_back(t);
  return root ? std::string() : up;
}

Structure structure(const LayerSpec& s) {
  validate_layer(s);
  return structure_unchecked(s);
}

Structure structure_unchecked(const LayerSpec& s) {
  Structure st;
  const auto sm = static_cast<int64_t>(s.out_modes.size());
  const auto tm = static_cast<int64_t>(s.in_modes.size());
  st.dims["b"] = s.batch;
  for (int64_t i = 1; i <= sm; ++i) st.dims[m_label(i)] = s.out_modes[static_cast<size_t>(i - 1)];
  for (int64_t i = 1; i <= tm; ++i) st.dims[n_label(i)] = s.in_modes[static_cast<size_t>(i - 1)];
  auto rank = [&](int64_t i) { return s.ranks[static_cast<size_t>(i)]; };
  switch (s.format) {
    case Format::tt:
    case Format::tr:
    case Format::ttm: {
      const int64_t d = num_cores(s);
      const bool ring = s.format == Format::tr;
      std::vector<NetworkNode> cores;
      for (int64_t i = 1; i <= d; ++i) {
        NetworkNode g{fmt::format("G{}", i), {}};
        if (i > 1 || ring) g.labels.push_back(r_label(i - 1));
        if (s.format == Format::ttm) {
          g.labels.push_back(m_label(i));
          g.labels.push_back(n_label(i));
        } else {
          g.labels.push_back(i <= sm ? m_label(i) : n_label(i - sm));
        }
        if (i < d) g.labels.push_back(r_label(i));
        if (i == d && ring) g.labels.push_back(r_label(0));
        cores.push_back(g);
      }
      for (int64_t i = ring ? 0 : 1; i < d; ++i) st.dims[r_label(i)] = rank(i);
      st.terms.push_back(cores);
      break;
    }
    case Format::ht: {
      const int64_t d = sm;
      std::vector<NetworkNode> cores;
      for (int64_t i = 1; i <= d; ++i) {
        cores.push_back(NetworkNode{fmt::format("G{}", i), {m_label(i), n_label(i), r_label(i)}});
        st.dims[r_label(i)] = rank(i - 1);
      }
      std::vector<NetworkNode> transfer;
      ht_subtree(s, 1, d, transfer, st.dims);
      cores.insert(cores.end(), transfer.begin(), transfer.end());
      st.terms.push_back(cores);
      break;
    }
    case Format::bt: {
      const int64_t d = sm;
      for (int64_t i = 1; i <= d; ++i) st.dims[r_label(i)] = rank(i - 1);
      for (int64_t k = 1; k <= s.terms; ++k) {
        std::vector<NetworkNode> cores;
        NetworkNode u{fmt::format("U_{}", k), {}};
        for (int64_t i = 1; i <= d; ++i) u.labels.push_back(r_label(i));
        cores.push_back(u);
        for (int64_t i = 1; i <= d; ++i)
          cores.push_back(NetworkNode{fmt::format("G_{}_{}", k, i), {m_label(i), n_label(i), r_label(i)}});
        st.terms.push_back(cores);
      }
      break;
    }
  }
  return st;
}

TensorNetwork make_network(std::vector<NetworkNode> nodes, std::vector<std::string> output,
                           const std::map<std::string, int64_t>& all_dims) {
  TensorNetwork net;
  net.nodes = std::move(nodes);
  net.output_labels = std::move(output);
  for (const auto& n : net.nodes)
    for (const auto& l : n.labels) net.dims[l] = all_dims.at(l);
  validate(net);
  return net;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

// ------------------------------------------------------------------------------------------------

void validate_layer(const LayerSpec& spec) { validate_impl(spec, {}); }

LayerSpec parse_layer(const std::string& yaml_text, const std::string& source) {
  const yaml_input::Document doc = yaml_input::load_one_document(yaml_text);
  if (doc.problem) {
    const yaml_input::Problem& p = *doc.problem;
    throw LayerError(p.field == "<syntax>" ? fmt::format("{}:{}: YAML syntax error: {}", source, p.line, p.message)
                                           : yaml_input::format(p, source));
  }
  const YAML::Node& root = doc.root;
  if (!root.IsMap())
    throw LayerError(fmt::format("{}:{}: expected a mapping with the keys {}, got {}", source, line_of(root, 1), kKeys,
                                 describe(root)));
  Reader r{source, {}};
  LayerSpec s;
  s.source = source;
  std::set<std::string> seen;
  std::map<std::string, YAML::Node> values;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const YAML::Node key = it->first;
    const int line = line_of(key, 1);
    const std::string k = key.IsScalar() ? key.Scalar() : describe(key);
    static const std::set<std::string> known = {"name",  "format",        "batch", "out_modes",
                                                "in_modes", "ranks", "transfer_rank", "terms"};
    if (!known.contains(k))
      throw LayerError(fmt::format("{}:{}: unknown key '{}' (allowed keys: {})", source, line, k, kKeys));
    if (!seen.insert(k).second)
      throw LayerError(fmt::format("{}:{}: field '{}': given twice", source, line, k));
    r.lines[k] = line;
    values[k] = it->second;
  }
  for (const char* required : {"format", "batch", "out_modes", "in_modes", "ranks"})
    if (!values.contains(required))
      throw LayerError(fmt::format("{}:{}: field '{}': missing (required fields: format, batch, out_modes, in_modes, "
                                   "ranks)",
                                   source, line_of(root, 1), required));
  // A field that is absent is reported at the start of the mapping.
  for (const char* k : {"name", "format", "batch", "out_modes", "in_modes", "ranks", "transfer_rank", "terms"})
    r.lines.emplace(k, line_of(root, 1));
  auto line = [&](const std::string& k) { return r.lines.at(k); };
  s.format = parse_format(r, values["format"], line("format"));
  s.batch = r.integer("batch", values["batch"], line("batch"));
  s.out_modes = r.integers("out_modes", values["out_modes"], line("out_modes"));
  s.in_modes = r.integers("in_modes", values["in_modes"], line("in_modes"));
  s.ranks = r.integers("ranks", values["ranks"], line("ranks"));
  if (values.contains("name")) {
    if (!values["name"].IsScalar()) r.type_error("name", line("name"), "a string", values["name"]);
    s.name = values["name"].Scalar();
  } else {
    s.name = default_name(source);
  }
  if (values.contains("transfer_rank")) {
    if (s.format != Format::ht)
      fail(source, r.lines, "transfer_rank",
           fmt::format("only format ht has a transfer rank (format is {}; remove the key)", to_string(s.format)));
    s.transfer_rank = r.integer("transfer_rank", values["transfer_rank"], line("transfer_rank"));
    if (s.transfer_rank < 1)
      fail(source, r.lines, "transfer_rank", fmt::format("{} (allowed: integers >= 1)", s.transfer_rank));
  }
  if (values.contains("terms")) {
    if (s.format != Format::bt)
      fail(source, r.lines, "terms",
           fmt::format("only format bt has block terms (format is {}; remove the key)", to_string(s.format)));
    s.terms = r.integer("terms", values["terms"], line("terms"));
  }
  validate_impl(s, r.lines);
  return s;
}

std::string read_layer_text(const std::string& path) {
  std::optional<std::string> text = yaml_input::read_file(path);
  if (!text) throw LayerError(fmt::format("{}: cannot open the layer description", path));
  return std::move(*text);
}

LayerSpec load_layer(const std::string& path) { return parse_layer(read_layer_text(path), path); }

int64_t num_cores(const LayerSpec& spec) {
  const auto s = static_cast<int64_t>(spec.out_modes.size());
  const auto t = static_cast<int64_t>(spec.in_modes.size());
  return (spec.format == Format::tt || spec.format == Format::tr) ? s + t : s;
}

int64_t out_size(const LayerSpec& spec) {
  int64_t m = 1;
  for (int64_t x : spec.out_modes) m *= x;
  return m;
}
int64_t in_size(const LayerSpec& spec) {
  int64_t n = 1;
  for (int64_t x : spec.in_modes) n *= x;
  return n;
}

std::vector<std::string> x_labels(const LayerSpec& spec) {
  std::vector<std::string> l = {"b"};
  for (size_t i = 1; i <= spec.in_modes.size(); ++i) l.push_back(n_label(static_cast<int64_t>(i)));
  return l;
}
std::vector<std::string> y_labels(const LayerSpec& spec) {
  std::vector<std::string> l = {"b"};
  for (size_t i = 1; i <= spec.out_modes.size(); ++i) l.push_back(m_label(static_cast<int64_t>(i)));
  return l;
}
std::vector<std::string> w_labels(const LayerSpec& spec) {
  std::vector<std::string> l;
  for (size_t i = 1; i <= spec.out_modes.size(); ++i) l.push_back(m_label(static_cast<int64_t>(i)));
  for (size_t i = 1; i <= spec.in_modes.size(); ++i) l.push_back(n_label(static_cast<int64_t>(i)));
  return l;
}

std::map<std::string, int64_t> layer_dims(const LayerSpec& spec) { return structure(spec).dims; }

std::vector<NetworkNode> layer_cores(const LayerSpec& spec) {
  std::vector<NetworkNode> all;
  for (const auto& t : structure(spec).terms) all.insert(all.end(), t.begin(), t.end());
  return all;
}

std::vector<TensorNetwork> weight_networks(const LayerSpec& spec) {
  const Structure st = structure(spec);
  std::vector<TensorNetwork> nets;
  for (const auto& cores : st.terms) nets.push_back(make_network(cores, w_labels(spec), st.dims));
  return nets;
}

std::vector<PhaseProblem> phase_problems(const LayerSpec& spec, Phase phase) {
  const Structure st = structure(spec);
  const NetworkNode x{"X", x_labels(spec)};
  const NetworkNode dy{"dY", y_labels(spec)};
  std::vector<PhaseProblem> out;
  switch (phase) {
    case Phase::fp:
    case Phase::bp: {
      const bool fp = phase == Phase::fp;
      PhaseProblem p{fp ? "Y" : "dX", fp ? y_labels(spec) : x_labels(spec), {}};
      for (const auto& cores : st.terms) {
        std::vector<NetworkNode> nodes = {fp ? x : dy};
        nodes.insert(nodes.end(), cores.begin(), cores.end());
        p.terms.push_back(make_network(nodes, p.result_labels, st.dims));
      }
      out.push_back(p);
      break;
    }
    case Phase::wg: {
      for (const auto& cores : st.terms) {
        for (size_t c = 0; c < cores.size(); ++c) {
          std::vector<NetworkNode> nodes = {x, dy};
          for (size_t o = 0; o < cores.size(); ++o)
            if (o != c) nodes.push_back(cores[o]);
          PhaseProblem p{"d" + cores[c].name, cores[c].labels, {}};
          p.terms.push_back(make_network(nodes, p.result_labels, st.dims));
          out.push_back(p);
        }
      }
      break;
    }
  }
  return out;
}

// --- values ------------------------------------------------------------------------------------------

TensorMap random_cores(const LayerSpec& spec, uint64_t seed) {
  const Structure st = structure(spec);
  TensorMap m;
  uint64_t position = 0;
  for (const auto& cores : st.terms) {
    for (const auto& c : cores) {
      std::vector<int64_t> shape;
      for (const auto& l : c.labels) shape.push_back(st.dims.at(l));
      m.emplace(c.name, random_uniform(c.labels, shape, splitmix64(seed ^ splitmix64(++position))));
    }
  }
  return m;
}

std::map<std::string, std::vector<int64_t>> layer_input_shapes(const LayerSpec& spec) {
  const std::map<std::string, int64_t> dims = layer_dims(spec);
  auto shape_of = [&](const std::vector<std::string>& labels) {
    std::vector<int64_t> s;
    for (const std::string& l : labels) s.push_back(dims.at(l));
    return s;
  };
  std::map<std::string, std::vector<int64_t>> shapes{{"X", shape_of(x_labels(spec))}, {"dY", shape_of(y_labels(spec))}};
  for (const NetworkNode& core : layer_cores(spec)) shapes[core.name] = shape_of(core.labels);
  return shapes;
}

Tensor<double> random_input(const LayerSpec& spec, uint64_t seed) {
  std::vector<int64_t> shape = {spec.batch};
  shape.insert(shape.end(), spec.in_modes.begin(), spec.in_modes.end());
  return random_uniform(x_labels(spec), shape, seed);
}

Tensor<double> random_output_grad(const LayerSpec& spec, uint64_t seed) {
  std::vector<int64_t> shape = {spec.batch};
  shape.insert(shape.end(), spec.out_modes.begin(), spec.out_modes.end());
  return random_uniform(y_labels(spec), shape, seed);
}

Tensor<double> evaluate(const PhaseProblem& problem, const TensorMap& tensors) {
  if (problem.terms.empty()) throw ContractError(fmt::format("evaluate: problem '{}' has no terms", problem.result));
  Tensor<double> sum;
  for (size_t t = 0; t < problem.terms.size(); ++t) {
    Tensor<double> r = evaluate(problem.terms[t], tensors).permute(problem.result_labels);
    if (t == 0) {
      sum = r.contiguous();
      continue;
    }
    std::vector<double> a = sum.values();
    const std::vector<double> b = r.values();
    for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
    sum = Tensor<double>(problem.result_labels, sum.shape(), std::move(a));
  }
  return sum;
}

Tensor<double> reconstruct_modes(const LayerSpec& spec, const TensorMap& cores) {
  PhaseProblem p{"W", w_labels(spec), weight_networks(spec)};
  return evaluate(p, cores);
}

Tensor<double> reconstruct_dense(const LayerSpec& spec, const TensorMap& cores) {
  return reconstruct_modes(spec, cores).contiguous().reshape({"m", "n"}, {out_size(spec), in_size(spec)});
}

}  // namespace fetta::verif
