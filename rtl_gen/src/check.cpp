#include "rtl_gen/check.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

namespace fetta::rtl {

namespace {

struct DriveInfo {
  std::vector<const Stmt*> top;          // unconditional connects, in order
  std::vector<const Stmt*> conditional;  // connects inside when/switch
  size_t first_conditional_order = SIZE_MAX;
  size_t last_top_order = 0;
  std::set<const SignalNode*> deps;      // signals read by the values and enclosing conditions
};

bool assigns_always(const Block& b, const SignalNode* s) {
  for (const auto& st : b) {
    switch (st->kind) {
      case Stmt::Kind::connect:
        if (st->target.get() == s) return true;
        break;
      case Stmt::Kind::when:
        if (assigns_always(st->then_body, s) && assigns_always(st->else_body, s)) return true;
        break;
      case Stmt::Kind::switch_: {
        bool all = true;
        for (const SwitchCase& c : st->cases) all = all && assigns_always(c.body, s);
        size_t covered = 0;
        for (const SwitchCase& c : st->cases) covered += c.values.size();
        bool complete = st->has_default || (st->subject->width < 20 && covered == (size_t{1} << st->subject->width));
        if (all && complete && (!st->has_default || assigns_always(st->default_body, s))) return true;
        break;
      }
    }
  }
  return false;
}

const char* kind_word(SigKind k) {
  switch (k) {
    case SigKind::input: return "input";
    case SigKind::output: return "output";
    case SigKind::wire: return "wire";
    case SigKind::reg: return "register";
    case SigKind::inst_in: return "instance input";
    case SigKind::inst_out: return "instance output";
    case SigKind::mem_read: return "memory read data";
  }
  return "signal";
}

}  // namespace

std::vector<SignalPtr> referenced_signals(const ExprPtr& e) {
  std::vector<SignalPtr> out;
  std::set<const SignalNode*> seen;
  std::set<const ExprNode*> visited;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& n) {
    if (!visited.insert(n.get()).second) return;
    if (n->op == Op::ref && seen.insert(n->sig.get()).second) out.push_back(n->sig);
    for (const ExprPtr& a : n->args) walk(a);
  };
  walk(e);
  return out;
}

namespace {

using DriveMap = std::map<const SignalNode*, DriveInfo>;
using DepGraph = std::map<const SignalNode*, std::vector<const SignalNode*>>;

// Every connect of the module, per signal it drives: unconditional or under a when/switch, in
// statement order, and the signals its value and conditions read.
DriveMap collect_drives(const Module& m) {
  DriveMap drive;
  size_t order = 0;
  std::vector<ExprPtr> conds;
  std::function<void(const Block&, int)> walk = [&](const Block& b, int depth) {
    for (const auto& st : b) {
      switch (st->kind) {
        case Stmt::Kind::connect: {
          DriveInfo& d = drive[st->target.get()];
          ++order;
          if (depth == 0) {
            d.top.push_back(st.get());
            d.last_top_order = order;
          } else {
            d.conditional.push_back(st.get());
            d.first_conditional_order = std::min(d.first_conditional_order, order);
          }
          for (const SignalPtr& r : referenced_signals(st->value)) d.deps.insert(r.get());
          for (const ExprPtr& c : conds)
            for (const SignalPtr& r : referenced_signals(c)) d.deps.insert(r.get());
          break;
        }
        case Stmt::Kind::when:
          conds.push_back(st->cond);
          walk(st->then_body, depth + 1);
          walk(st->else_body, depth + 1);
          conds.pop_back();
          break;
        case Stmt::Kind::switch_:
          conds.push_back(st->subject);
          for (const SwitchCase& c : st->cases) walk(c.body, depth + 1);
          walk(st->default_body, depth + 1);
          conds.pop_back();
          break;
      }
    }
  };
  walk(m.body(), 0);
  return drive;
}

// Every signal that needs a driver has exactly one, and a combinational one is assigned on every path.
void check_drivers(const Module& m, const DriveMap& drive) {
  for (const SignalPtr& s : m.signals()) {
    if (s->kind == SigKind::input || s->kind == SigKind::inst_out || s->kind == SigKind::mem_read) continue;
    if (s->kind == SigKind::output && !m.verbatim_body().empty()) continue;  // the primitive's text drives it
    auto it = drive.find(s.get());
    if (it == drive.end()) {
      std::string msg;
      switch (s->kind) {
        case SigKind::inst_in:
          msg = fmt::format("input port '{}' of instance '{}' is not connected", s->port, s->inst->name);
          break;
        case SigKind::reg: msg = "register is never assigned"; break;
        default: msg = fmt::format("{} is never driven", kind_word(s->kind)); break;
      }
      throw RtlError(ErrorKind::undriven, s->name, msg, s->decl);
    }
    const DriveInfo& d = it->second;
    if (d.top.size() > 1)
      throw RtlError(ErrorKind::multiple_drivers, s->name,
                     fmt::format("driven unconditionally twice (first at {}); use when/otherwise to choose",
                                 d.top[0]->loc.str()),
                     d.top[1]->loc);
    if (!d.top.empty() && !d.conditional.empty() && d.last_top_order > d.first_conditional_order)
      throw RtlError(ErrorKind::multiple_drivers, s->name,
                     fmt::format("unconditional connect overrides the conditional connect at {}; put the default first",
                                 d.conditional[0]->loc.str()),
                     d.top.back()->loc);
    bool comb = s->kind != SigKind::reg;
    if (comb && d.top.empty() && !assigns_always(m.body(), s.get()))
      throw RtlError(ErrorKind::latch, s->name,
                     "combinational signal is not assigned on every path (it would infer a latch); "
                     "assign a default before the when/switch or add otherwise()",
                     d.conditional[0]->loc);
  }
}

void check_memories(const Module& m) {
  for (const auto& mem : m.memories()) {
    if (mem->writes.empty())
      throw RtlError(ErrorKind::undriven, mem->name, "memory has no write port", mem->loc);
    if (mem->reads.empty())
      throw RtlError(ErrorKind::undriven, mem->name, "memory has no read port; nothing can observe it", mem->loc);
  }
}

// Combinational dependency graph: wires, outputs and instance inputs depend on what their
// values and conditions read; instance outputs on the instance inputs the child connects
// to them combinationally; inputs, registers and memory read data start new paths.
DepGraph combinational_graph(const Module& m, const DriveMap& drive) {
  DepGraph deps;
  std::map<const Instance*, std::map<std::string, const SignalNode*>> inst_port;
  for (const SignalPtr& s : m.signals())
    if (s->kind == SigKind::inst_in) inst_port[s->inst][s->port] = s.get();
  for (const SignalPtr& s : m.signals()) {
    if (s->kind == SigKind::reg || s->kind == SigKind::input || s->kind == SigKind::mem_read) continue;
    if (s->kind == SigKind::inst_out) {
      auto cp = s->inst->def->comb_paths.find(s->port);
      if (cp != s->inst->def->comb_paths.end())
        for (const std::string& in : cp->second) {
          auto& ports = inst_port[s->inst];
          if (ports.count(in)) deps[s.get()].push_back(ports[in]);
        }
      continue;
    }
    auto it = drive.find(s.get());
    if (it != drive.end()) deps[s.get()].assign(it->second.deps.begin(), it->second.deps.end());
  }
  return deps;
}

// No signal depends on itself through combinational logic; the first loop found is named.
void check_loops(const Module& m, DepGraph& deps, DriveMap& drive) {
  std::map<const SignalNode*, int> color;  // 0 new, 1 on stack, 2 done
  std::vector<const SignalNode*> path;
  std::function<void(const SignalNode*)> dfs = [&](const SignalNode* s) {
    color[s] = 1;
    path.push_back(s);
    for (const SignalNode* d : deps[s]) {
      if (color[d] == 1) {
        std::vector<std::string> cyc;
        auto start = std::find(path.begin(), path.end(), d);
        for (auto p = start; p != path.end(); ++p) cyc.push_back((*p)->name);
        cyc.push_back(d->name);
        const DriveInfo& di = drive[d];
        SourceLoc loc = !di.top.empty() ? di.top[0]->loc : !di.conditional.empty() ? di.conditional[0]->loc : d->decl;
        throw RtlError(ErrorKind::comb_loop, d->name,
                       fmt::format("combinational loop: {} (depends on itself)", fmt::join(cyc, " <- ")), loc);
      }
      if (color[d] == 0) dfs(d);
    }
    path.pop_back();
    color[s] = 2;
  };
  for (const SignalPtr& s : m.signals())
    if (color[s.get()] == 0) dfs(s.get());
}

// The inputs that reach each output without passing a register (used by parents' loop checks).
void record_comb_paths(Module& m, DepGraph& deps) {
  m.comb_paths.clear();
  for (const SignalPtr& s : m.signals()) {
    if (s->kind != SigKind::output) continue;
    std::set<const SignalNode*> seen;
    std::vector<const SignalNode*> stack{s.get()};
    std::vector<std::string> inputs;
    while (!stack.empty()) {
      const SignalNode* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      if (x->kind == SigKind::input && x != m.clock().get() && x != m.reset().get()) inputs.push_back(x->name);
      for (const SignalNode* d : deps[x]) stack.push_back(d);
    }
    std::sort(inputs.begin(), inputs.end());
    m.comb_paths[s->name] = inputs;
  }
}

}  // namespace

void check_module(Module& m) {
  DriveMap drive = collect_drives(m);
  check_drivers(m, drive);
  check_memories(m);
  DepGraph deps = combinational_graph(m, drive);
  check_loops(m, deps, drive);
  record_comb_paths(m, deps);
}

}  // namespace fetta::rtl
