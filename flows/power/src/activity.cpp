#include "flows/activity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>

#include "fstapi.h"

namespace fetta::flows::power {

namespace fs = std::filesystem;

namespace {

// One traced variable below the design's scope: its name split into base and declared range.
struct TracedVar {
  std::string instance;  // dot path below the scope, "" at the top
  std::string base;      // RTL name, an unpacked index "(i)" written "[i]"
  int msb = 0, lsb = 0;
  bool ranged = false;
  bool port = false;
};

// The statistics of one FST handle (aliases share one), per character of its value string. Times
// are window times (Reader::window_time): only the time inside the window counts.
struct HandleStats {
  std::vector<unsigned char> value;  // 0, 1, 2 = unknown
  std::vector<uint64_t> last_change, high_time, toggles;
  uint64_t rising = 0;  // of bit 0 inside the window, for the clock
};

// FST value changes come in time order; those of one time are applied together, the window
// signal's first, so that the edge that opens the window counts in it.
struct Reader {
  std::vector<HandleStats> stats;  // by handle
  bool gated = false;              // else the window is the whole trace
  fstHandle gate = 0;
  size_t gate_bit = 0;             // character of the gate's value
  bool gate_level = true;          // the window is where the gate has this value
  bool open = false;               // the window now
  uint64_t start = 0;              // of the trace
  uint64_t time = 0;               // of the pending changes
  uint64_t window_at_time = 0;     // window time elapsed up to `time`
  std::vector<std::pair<fstHandle, std::string>> pending;

  void apply(fstHandle h, const char* v) {
    HandleStats& s = stats[h];
    const size_t n = std::min(s.value.size(), std::strlen(v));
    for (size_t i = 0; i < n; ++i) {
      const unsigned char nv = v[i] == '1' ? 1 : v[i] == '0' ? 0 : 2;
      const unsigned char ov = s.value[i];
      if (ov == 1) s.high_time[i] += window_at_time - s.last_change[i];
      if (open && ov != 2 && nv != 2 && ov != nv) {
        ++s.toggles[i];
        if (i == 0 && nv == 1) ++s.rising;
      }
      s.value[i] = nv;
      s.last_change[i] = window_at_time;
    }
  }

  void flush() {
    if (gated)
      for (const auto& [h, v] : pending)
        if (h == gate && gate_bit < v.size()) open = (v[gate_bit] == '1') == gate_level && v[gate_bit] != 'x' && v[gate_bit] != 'z';
    for (const auto& [h, v] : pending) apply(h, v.c_str());
    pending.clear();
  }

  void advance(uint64_t t) {
    if (t == time) return;
    flush();
    if (open) window_at_time += t - time;
    time = t;
  }
};

void on_change(void* user, uint64_t time, fstHandle h, const unsigned char* v) {
  auto* r = static_cast<Reader*>(user);
  if (h >= r->stats.size() || r->stats[h].value.empty()) return;  // not a handle we asked for
  if (!r->gated) {  // the whole trace: nothing to order
    r->window_at_time = time - r->start;
    r->apply(h, reinterpret_cast<const char*>(v));
    return;
  }
  r->advance(time);
  r->pending.emplace_back(h, reinterpret_cast<const char*>(v));
}

// "sum_q [8:0]" -> base "sum_q", 8, 0; "mem(3) [15:0]" -> "mem[3]".
TracedVar parse_var_name(const std::string& raw, uint32_t length) {
  static const std::regex ranged(R"(^(\S+)\s*\[(-?\d+):(-?\d+)\]$)");
  TracedVar v;
  std::smatch m;
  std::string base = raw;
  if (std::regex_match(raw, m, ranged)) {
    base = m[1];
    v.msb = std::stoi(m[2]);
    v.lsb = std::stoi(m[3]);
    v.ranged = true;
  } else if (length > 1) {
    v.msb = static_cast<int>(length) - 1;
    v.ranged = true;
  }
  for (char& c : base) c = c == '(' ? '[' : c == ')' ? ']' : c;
  v.base = base;
  return v;
}

struct FstCloser {
  void operator()(void* ctx) const {
    if (ctx) fstReaderClose(ctx);
  }
};

}  // namespace

std::pair<std::string, std::string> split_instance(const std::string& name) {
  // The last dot outside brackets separates the instance path from the signal.
  int depth = 0;
  for (size_t i = name.size(); i-- > 0;) {
    if (name[i] == ']') ++depth;
    if (name[i] == '[') --depth;
    if (name[i] == '.' && depth == 0) return {name.substr(0, i), name.substr(i + 1)};
  }
  return {"", name};
}

namespace {

// read_fst_activity, or with `header_only` its checks of the trace's names without the values.
Activity read_trace(const std::string& fst, const std::string& scope_in, const std::string& clock,
                    const std::string& window, const SignalFilter& keep, bool header_only) {
  std::unique_ptr<void, FstCloser> ctx(fstReaderOpen(fst.c_str()));
  if (!ctx) throw std::runtime_error(fmt::format("{}: not a readable FST trace", fst));
  // Every variable with its full scope path.
  struct Entry {
    std::string path, name;
    uint32_t length;
    fstHandle handle;
    unsigned char direction;
  };
  std::vector<Entry> entries;
  std::vector<std::string> stack;
  auto joined = [&] {
    std::string p;
    for (const std::string& s : stack) p += (p.empty() ? "" : ".") + s;
    return p;
  };
  while (fstHier* h = fstReaderIterateHier(ctx.get())) {
    if (h->htyp == FST_HT_SCOPE) stack.emplace_back(h->u.scope.name);
    else if (h->htyp == FST_HT_UPSCOPE && !stack.empty()) stack.pop_back();
    else if (h->htyp == FST_HT_VAR)
      entries.push_back({joined(), h->u.var.name, h->u.var.length, h->u.var.handle, h->u.var.direction});
  }
  std::string scope = scope_in;
  if (scope.empty()) {
    // The shallowest scope holding the clock, then down while it is a wrapper: one sub-scope
    // holding every name it holds (Verilator's TOP repeats the top module's ports).
    std::map<std::string, std::set<std::string>> names;
    std::map<std::string, std::set<std::string>> children;
    for (const Entry& e : entries) {
      names[e.path].insert(e.name);
      for (size_t dot = e.path.find('.'); dot != std::string::npos; dot = e.path.find('.', dot + 1))
        children[e.path.substr(0, dot)].insert(e.path.substr(0, e.path.find('.', dot + 1)));
    }
    size_t best = std::string::npos;
    for (const auto& [path, held] : names) {
      if (!held.count(clock)) continue;
      const size_t depth = static_cast<size_t>(std::count(path.begin(), path.end(), '.'));
      if (depth < best) {
        best = depth;
        scope = path;
      }
    }
    if (scope.empty()) throw std::runtime_error(fmt::format("{}: no signal named '{}' (the clock) in the trace", fst, clock));
    while (children[scope].size() == 1) {
      const std::string child = *children[scope].begin();
      const std::set<std::string>& inner = names[child];
      if (!std::includes(inner.begin(), inner.end(), names[scope].begin(), names[scope].end())) break;
      scope = child;
    }
  }
  Activity a;
  a.source = fst;
  a.scope = scope;
  a.clock = clock;
  a.window = window;
  // The window: a 1-bit signal of the design's top (or a bit of a bus), "!" in front for where it is 0.
  const bool gate_low = !window.empty() && window[0] == '!';
  const std::string gate_name = gate_low ? window.substr(1) : window;
  Reader r;
  r.stats.resize(static_cast<size_t>(fstReaderGetMaxHandle(ctx.get())) + 1);
  r.gated = !window.empty();
  r.gate_level = !gate_low;
  r.open = !r.gated;
  std::multimap<fstHandle, TracedVar> vars;
  fstHandle clock_handle = 0;
  bool have_clock = false, in_scope = false, have_gate = false;
  const std::string prefix = scope + ".";
  for (const Entry& e : entries) {
    if (e.path != scope && e.path.rfind(prefix, 0) != 0) continue;
    in_scope = true;
    TracedVar v = parse_var_name(e.name, e.length);
    v.instance = e.path == scope ? "" : e.path.substr(prefix.size());
    v.port = e.path == scope && e.direction != FST_VD_IMPLICIT;
    bool needed = v.port || !keep || keep(v.instance.empty() ? v.base : v.instance + "." + v.base);
    if (e.path == scope && v.base == clock && !v.ranged) {
      clock_handle = e.handle;
      have_clock = true;
      needed = true;
    }
    if (r.gated && e.path == scope && !have_gate) {
      const int lo = std::min(v.msb, v.lsb), hi = std::max(v.msb, v.lsb);
      for (int bit = lo; bit <= hi; ++bit) {
        const std::string named = v.base + (v.ranged ? fmt::format("[{}]", bit) : "");
        if (named != gate_name && !(v.ranged && hi == lo && v.base == gate_name)) continue;
        r.gate = e.handle;
        r.gate_bit = static_cast<size_t>(v.msb >= v.lsb ? v.msb - bit : bit - v.msb);
        have_gate = true;
        needed = true;
      }
    }
    if (!needed) continue;
    HandleStats& s = r.stats.at(e.handle);
    if (s.value.empty()) {
      s.value.assign(e.length, 2);
      s.last_change.assign(e.length, 0);
      s.high_time.assign(e.length, 0);
      s.toggles.assign(e.length, 0);
      fstReaderSetFacProcessMask(ctx.get(), e.handle);
    }
    vars.emplace(e.handle, v);
  }
  if (!in_scope) throw std::runtime_error(fmt::format("{}: no scope '{}' in the trace", fst, scope));
  if (!have_clock) throw std::runtime_error(fmt::format("{}: no clock '{}' in scope '{}'", fst, clock, scope));
  if (r.gated && !have_gate)
    throw std::runtime_error(fmt::format("{}: no 1-bit signal '{}' in scope '{}' for the window '{}'", fst, gate_name, scope, window));
  if (header_only) return a;
  const uint64_t start = fstReaderGetStartTime(ctx.get()), end = fstReaderGetEndTime(ctx.get());
  r.start = r.time = start;
  fstReaderIterBlocks(ctx.get(), on_change, &r, nullptr);
  if (r.gated) {
    r.advance(end + 1);  // applies the last time's changes; the trace ends at `end`
    if (r.open) r.window_at_time -= 1;
  } else {
    r.window_at_time = end - start;
  }
  a.cycles = static_cast<int64_t>(r.stats[clock_handle].rising);
  if (a.cycles == 0 || end <= start) {
    if (r.gated) throw std::runtime_error(fmt::format("{}: the clock '{}.{}' never rises while '{}'", fst, scope, clock, window));
    throw std::runtime_error(fmt::format("{}: the clock '{}.{}' never rises in the trace", fst, scope, clock));
  }
  const double span = static_cast<double>(r.window_at_time);
  for (HandleStats& s : r.stats)
    for (size_t i = 0; i < s.value.size(); ++i)
      if (s.value[i] == 1) s.high_time[i] += r.window_at_time - s.last_change[i];
  for (const auto& [h, v] : vars) {
    const HandleStats& s = r.stats[h];
    for (size_t i = 0; i < s.value.size(); ++i) {
      // Character i of the value is the most significant first: bit msb - i (or msb + i ascending).
      const int bit = v.msb >= v.lsb ? v.msb - static_cast<int>(i) : v.msb + static_cast<int>(i);
      BitActivity b;
      b.name = (v.instance.empty() ? "" : v.instance + ".") + v.base + (v.ranged ? fmt::format("[{}]", bit) : "");
      b.toggle_rate = static_cast<double>(s.toggles[i]) / static_cast<double>(a.cycles);
      b.duty = static_cast<double>(s.high_time[i]) / span;
      b.port = v.port;
      a.bits.push_back(std::move(b));
    }
  }
  std::sort(a.bits.begin(), a.bits.end(), [](const BitActivity& x, const BitActivity& y) { return x.name < y.name; });
  a.bits.erase(std::unique(a.bits.begin(), a.bits.end(),
                           [](const BitActivity& x, const BitActivity& y) { return x.name == y.name; }),
               a.bits.end());
  return a;
}

}  // namespace

namespace {

// A sampled trace's index (sim/system/trace_windows.hpp writes it).
struct SampleIndex {
  TraceSampling sampling;
  std::vector<std::string> files;  // full paths, in run order
};

SampleIndex read_sample_index(const std::string& dir) {
  const fs::path index = fs::path(dir) / "sampling.json";
  std::ifstream in(index);
  if (!in)
    throw std::runtime_error(fmt::format("{}: a directory without sampling.json; record a sampled trace with fetta run "
                                         "--trace DIR --trace-sample W/N, or give an FST file",
                                         dir));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  auto bad = [&](const std::string& what) {
    return std::runtime_error(fmt::format("{}: {}; write it with fetta run --trace DIR --trace-sample W/N", index.string(), what));
  };
  if (j.is_discarded()) throw bad("not JSON");
  if (!j.is_object() || j.value("format", "") != "fetta-trace-sample-1") throw bad("format: allowed: fetta-trace-sample-1");
  SampleIndex s;
  TraceSampling& t = s.sampling;
  try {
    t.window = j.at("window_cycles").get<int64_t>();
    t.every = j.at("every_cycles").get<int64_t>();
    t.run_cycles = j.at("run_cycles").get<int64_t>();
    for (const auto& f : j.at("files")) s.files.push_back((fs::path(dir) / f.get<std::string>()).string());
  } catch (const nlohmann::json::exception& e) {
    throw bad(fmt::format("malformed ({})", e.what()));
  }
  if (t.window < 1 || t.every < t.window || t.run_cycles < 1) throw bad("window_cycles, every_cycles, run_cycles: allowed: 1 <= window <= every, run >= 1");
  if (s.files.empty()) throw bad("files: none; allowed: one per window");
  t.windows = static_cast<int64_t>(s.files.size());
  for (const std::string& f : s.files)
    if (!fs::exists(f)) throw bad(fmt::format("files: {} is missing", f));
  return s;
}

}  // namespace

Activity read_fst_activity(const std::string& fst, const std::string& scope, const std::string& clock,
                           const std::string& window, const SignalFilter& keep) {
  if (!fs::is_directory(fst)) return read_trace(fst, scope, clock, window, keep, false);
  const SampleIndex idx = read_sample_index(fst);
  std::vector<Activity> parts;
  for (const std::string& f : idx.files) {
    // A window may see no clock edge inside a --while window (or none at all, cut by the run's end).
    Activity a;
    try {
      a = read_trace(f, scope, clock, window, keep, false);
    } catch (const std::runtime_error& e) {
      if (std::string(e.what()).find("never rises") == std::string::npos) throw;
      continue;
    }
    parts.push_back(std::move(a));
  }
  if (parts.empty())
    throw std::runtime_error(fmt::format("{}: the clock '{}' never rises in any window{}", fst, clock,
                                         window.empty() ? "" : " while '" + window + "'"));
  Activity a = merged_windows(parts);
  a.source = fst;
  a.sample = idx.sampling;
  return a;
}

void check_fst(const std::string& fst, const std::string& scope, const std::string& clock, const std::string& window) {
  if (!fs::is_directory(fst)) return void(read_trace(fst, scope, clock, window, {}, true));
  read_trace(read_sample_index(fst).files.front(), scope, clock, window, {}, true);
}

int64_t TraceSampling::traced_cycles() const {
  if (!sampled()) return run_cycles;
  int64_t traced = 0;
  for (int64_t start = 0; start < run_cycles; start += every) traced += std::min(window, run_cycles - start);
  return traced;
}

nlohmann::json to_json(const TraceSampling& s) {
  return {{"window_cycles", s.window}, {"every_cycles", s.every}, {"windows", s.windows}, {"run_cycles", s.run_cycles}};
}

Activity merged_windows(const std::vector<Activity>& windows) {
  if (windows.empty()) throw std::runtime_error("merged_windows: no window");
  Activity m = windows.front();
  m.cycles = 0;
  for (const Activity& w : windows) m.cycles += w.cycles;
  for (size_t i = 0; i < m.bits.size(); ++i) {
    BitActivity& b = m.bits[i];
    double toggles = 0, high = 0;
    for (const Activity& w : windows) {
      // Every window of one trace holds the same signals, sorted alike.
      if (i >= w.bits.size() || w.bits[i].name != b.name)
        throw std::runtime_error(fmt::format("{}: no bit {} in this window of the trace", w.source, b.name));
      toggles += w.bits[i].toggle_rate * static_cast<double>(w.cycles);
      high += w.bits[i].duty * static_cast<double>(w.cycles);
    }
    b.toggle_rate = toggles / static_cast<double>(m.cycles);
    b.duty = high / static_cast<double>(m.cycles);
  }
  return m;
}

Activity scaled(const Activity& a, double factor) {
  Activity s = a;
  for (BitActivity& b : s.bits) b.toggle_rate *= factor;
  return s;
}

nlohmann::json to_json(const Activity& a) {
  nlohmann::json bits = nlohmann::json::array();
  for (const BitActivity& b : a.bits) bits.push_back({b.name, b.toggle_rate, b.duty, b.port});
  nlohmann::json j = {{"format", "fetta-activity-1"}, {"source", a.source}, {"scope", a.scope}, {"clock", a.clock},
                      {"window", a.window}, {"cycles", a.cycles}, {"bits_columns", {"name", "toggles_per_cycle", "duty", "port"}}, {"bits", bits}};
  if (a.sample.sampled()) j["sample"] = to_json(a.sample);
  return j;
}

Activity activity_from_json(const nlohmann::json& j, const std::string& what) {
  auto field = [&](const char* k) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(k)) throw std::runtime_error(fmt::format("{}: no field '{}'", what, k));
    return j.at(k);
  };
  if (field("format") != "fetta-activity-1")
    throw std::runtime_error(fmt::format("{}: format: {}; allowed: fetta-activity-1", what, field("format").dump()));
  Activity a;
  try {
    a.source = field("source").get<std::string>();
    a.scope = field("scope").get<std::string>();
    a.clock = field("clock").get<std::string>();
    a.cycles = field("cycles").get<int64_t>();
    if (j.contains("window")) a.window = j.at("window").get<std::string>();
    if (j.contains("sample")) {
      const auto& sm = j.at("sample");
      a.sample.window = sm.at("window_cycles").get<int64_t>();
      a.sample.every = sm.at("every_cycles").get<int64_t>();
      a.sample.windows = sm.at("windows").get<int64_t>();
      a.sample.run_cycles = sm.at("run_cycles").get<int64_t>();
    }
    for (const auto& b : field("bits"))
      a.bits.push_back({b.at(0).get<std::string>(), b.at(1).get<double>(), b.at(2).get<double>(), b.at(3).get<bool>()});
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: malformed activity ({})", what, e.what()));
  }
  if (a.cycles < 1) throw std::runtime_error(fmt::format("{}: cycles: {}; allowed: >= 1", what, a.cycles));
  return a;
}

}  // namespace fetta::flows::power
