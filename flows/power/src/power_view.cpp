#include "flows/power_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "flows/liberty.hpp"

namespace fetta::flows::power {
namespace {

using synth::LibertyAttribute;
using synth::LibertyGroup;

// A change to the library text at a byte offset of the original.
struct Edit {
  size_t pos = 0, len = 0;
  std::string text;
};

Edit replace(const LibertyAttribute& a, std::string text) { return {a.begin, a.end - a.begin, std::move(text)}; }

// The twin input pin written after output pin `pin`'s '}'.
Edit twin_input_after(const LibertyGroup& pin, const std::string& twin) {
  return {pin.close + 1, 0, fmt::format("\n    pin ({}) {{ direction : input; capacitance : 0; }}", twin)};
}

struct BusType {
  int from = 0, to = 0;
};

// The library's `type (name) { bit_from : ..; bit_to : ..; }` groups by name.
std::map<std::string, BusType> bus_types(const LibertyGroup& library) {
  std::map<std::string, BusType> types;
  for (const LibertyGroup* g : library.children("type")) {
    const std::string *from = g->attribute("bit_from"), *to = g->attribute("bit_to");
    if (from && to) types[g->args] = {std::stoi(*from), std::stoi(*to)};
  }
  return types;
}

bool sequential(const LibertyGroup& cell) {
  return std::any_of(cell.groups.begin(), cell.groups.end(), [](const LibertyGroup& g) {
    return g.name == "ff" || g.name == "latch" || g.name == "ff_bank" || g.name == "latch_bank" || g.name == "statetable";
  });
}

// The edits of one library and what they did, cell by cell.
class ViewWriter {
 public:
  ViewWriter(const LibertyGroup& library, const std::string& what, bool twin_logic)
      : types_(bus_types(library)), what_(what), twin_logic_(twin_logic) {}

  void cell(const LibertyGroup& cell) {
    if (cell.attribute("clock_gating_integrated_cell")) {
      clock_gate(cell);
      return;
    }
    const bool is_sequential = sequential(cell);
    for (const LibertyGroup& pin : cell.groups)
      if (pin.name == "pin" || pin.name == "bus") output(cell, is_sequential, pin);
  }

  // The original text with the edits applied, back to front so that every offset still points
  // into the original.
  PowerView view(const std::string& text) {
    std::stable_sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) { return a.pos > b.pos; });
    view_.liberty = text;
    for (const Edit& e : edits_) view_.liberty.replace(e.pos, e.len, e.text);
    return std::move(view_);
  }

 private:
  // An integrated clock gate: its gated clock's state_function over the latch's internal node
  // crashes OpenSTA 2.0.17's activity search, and any function over the gate's inputs would be
  // priced from their propagated estimates (the search overwrites an annotated output). The
  // gated clock becomes a twin input instead, which the run annotates from the traced latch.
  void clock_gate(const LibertyGroup& cell) {
    for (const LibertyGroup& pin : cell.groups) {
      const LibertyAttribute* state =
          pin.name == "pin" && pin.attribute("clock_gate_out_pin") ? pin.find_attribute("state_function") : nullptr;
      if (!state) continue;
      const std::string twin = kTwinPrefix + pin.args;
      edits_.push_back(replace(*state, fmt::format("function : \"{}\";", twin)));
      edits_.push_back(twin_input_after(pin, twin));
      view_.clock_gates.push_back({cell.args, pin.args});
    }
  }

  // Output pin or bus `pin` of `cell`, by the first case of the header's list that fits it.
  void output(const LibertyGroup& cell, bool is_sequential, const LibertyGroup& pin) {
    const std::string* dir = pin.attribute("direction");
    if (!dir || *dir != "output") return;
    const LibertyAttribute* function = pin.find_attribute("function");
    std::vector<const LibertyAttribute*> edge_arcs;
    bool bit_pins = false;
    for (const LibertyGroup& g : pin.groups) {
      bit_pins |= g.name == "pin";
      const LibertyAttribute* type = g.name == "timing" ? g.find_attribute("timing_type") : nullptr;
      if (type && (type->value == "rising_edge" || type->value == "falling_edge")) edge_arcs.push_back(type);
    }
    auto make_combinational = [&] {
      for (const LibertyAttribute* a : edge_arcs) edits_.push_back(replace(*a, "timing_type : combinational;"));
    };
    if (function && (function->value == "0" || function->value == "1")) {
      edits_.push_back(replace(*function, ""));
      view_.constants.push_back({cell.args, pin.args, function->value == "1"});
    } else if (is_sequential && function && !edge_arcs.empty()) {
      make_combinational();
      view_.clocked_arcs += static_cast<int>(edge_arcs.size());
    } else if (!is_sequential && !function && !edge_arcs.empty() && !bit_pins) {
      make_combinational();
      macro_output(cell, pin);
    } else if (twin_logic_ && !is_sequential && function && pin.name == "pin") {
      const std::string twin = kTwinPrefix + pin.args;
      edits_.push_back(replace(*function, fmt::format("function : \"{}\";", twin)));
      edits_.push_back(twin_input_after(pin, twin));
      view_.logic_outputs.push_back({cell.args, pin.args});
    }
  }

  // A macro's read data (no function, clocked arcs): each bit gets the function of its twin input.
  void macro_output(const LibertyGroup& cell, const LibertyGroup& pin) {
    const std::string twin = kTwinPrefix + pin.args;
    view_.macro_outputs.push_back({cell.args, pin.args});
    if (pin.name == "pin") {
      edits_.push_back({pin.open + 1, 0, fmt::format(" function : \"{}\";", twin)});
      edits_.push_back(twin_input_after(pin, twin));
      return;
    }
    const std::string* bus_type = pin.attribute("bus_type");
    const auto type = bus_type ? types_.find(*bus_type) : types_.end();
    if (type == types_.end())
      throw std::runtime_error(
          fmt::format("{}:{}: bus {} of cell {}: no type group for its bus_type", what_, pin.line, pin.args, cell.args));
    std::string bits;
    for (int i = std::min(type->second.from, type->second.to); i <= std::max(type->second.from, type->second.to); ++i)
      bits += fmt::format(" pin ({0}[{1}]) {{ function : \"{2}[{1}]\"; }}", pin.args, i, twin);
    edits_.push_back({pin.close, 0, bits + " "});  // after bus_type, which the bits need
    edits_.push_back({pin.close + 1, 0,
                      fmt::format("\n    bus ({}) {{ bus_type : {}; direction : input; capacitance : 0; }}", twin, *bus_type)});
  }

  const std::map<std::string, BusType> types_;
  const std::string& what_;
  const bool twin_logic_;
  PowerView view_;
  std::vector<Edit> edits_;
};

}  // namespace

PowerView power_view(const std::string& text, const std::string& what, bool twin_logic) {
  const LibertyGroup library = synth::parse_liberty(text, what);
  ViewWriter writer(library, what, twin_logic);
  for (const LibertyGroup* cell : library.children("cell")) writer.cell(*cell);
  return writer.view(text);
}

}  // namespace fetta::flows::power
