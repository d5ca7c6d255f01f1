#include "flows/sram_macro.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

#include "flows/yosys_output.hpp"

namespace fetta::flows::synth {

namespace {

// Liberty tables of the macros: flat in slew and load, as FakeRAM writes them (one figure per
// arc, the index only spans the range the standard cells see).
constexpr const char* kSlewIndex = "5, 500";
constexpr const char* kLoadIndex = "1, 500";

std::string flat2(double v) { return fmt::format("\"{0:.3f}, {0:.3f}\", \"{0:.3f}, {0:.3f}\"", v); }

std::string constraint_arcs(const SramModel& s) {
  std::string t;
  for (const auto& [type, value] : {std::pair<const char*, double>{"setup_rising", s.setup_ps}, {"hold_rising", s.hold_ps}})
    t += fmt::format(
        "      timing () {{ related_pin : \"clk\"; timing_type : {};\n"
        "        rise_constraint (fetta_sram_constraint) {{ index_1 (\"{}\"); index_2 (\"{}\"); values ({}); }}\n"
        "        fall_constraint (fetta_sram_constraint) {{ index_1 (\"{}\"); index_2 (\"{}\"); values ({}); }} }}\n",
        type, kSlewIndex, kSlewIndex, flat2(value), kSlewIndex, kSlewIndex, flat2(value));
  return t;
}

std::string input_pin(const std::string& kind, const std::string& name, const std::string& bus_type,
                      const SramModel& s) {
  std::string head = kind == "bus" ? fmt::format("    bus ({}) {{ bus_type : {};", name, bus_type)
                                   : fmt::format("    pin ({}) {{", name);
  return fmt::format("{} direction : input; capacitance : {:.3f};\n{}    }}\n", head, s.input_cap_ff,
                     constraint_arcs(s));
}

std::string output_bus(const std::string& name, const std::string& bus_type, const SramModel& s) {
  return fmt::format(
      "    bus ({0}) {{ bus_type : {1}; direction : output; max_capacitance : 500;\n"
      "      timing () {{ related_pin : \"clk\"; timing_type : rising_edge; timing_sense : non_unate;\n"
      "        cell_rise (fetta_sram_delay) {{ index_1 (\"{2}\"); index_2 (\"{3}\"); values ({4}); }}\n"
      "        cell_fall (fetta_sram_delay) {{ index_1 (\"{2}\"); index_2 (\"{3}\"); values ({4}); }}\n"
      "        rise_transition (fetta_sram_slew) {{ index_1 (\"{3}\"); values (\"10, 200\"); }}\n"
      "        fall_transition (fetta_sram_slew) {{ index_1 (\"{3}\"); values (\"10, 200\"); }} }}\n"
      "    }}\n",
      name, bus_type, kSlewIndex, kLoadIndex, flat2(s.clk_to_q_ps));
}

// The macro's ports in pin order: the plain read ports (rd<n>), the plain write ports (wr<n>),
// the read/write ports (rw<k>); each with the $mem_v2 port index (or indices) it takes.
struct PortLayout {
  std::vector<int> reads;                     // $mem_v2 read port of rd<n>
  std::vector<int> writes;                    // $mem_v2 write port of wr<n>
  std::vector<std::pair<int, int>> rw;        // (read, write) port of rw<k>
};

PortLayout port_layout(const MemoryMacro& m) {
  PortLayout l;
  std::vector<bool> read_taken(static_cast<size_t>(m.rd_ports)), write_taken(static_cast<size_t>(m.wr_ports));
  for (const auto& [i, j] : m.rw_pairs) {
    read_taken[static_cast<size_t>(i)] = write_taken[static_cast<size_t>(j)] = true;
    l.rw.emplace_back(i, j);
  }
  for (int i = 0; i < m.rd_ports; ++i)
    if (!read_taken[static_cast<size_t>(i)]) l.reads.push_back(i);
  for (int j = 0; j < m.wr_ports; ++j)
    if (!write_taken[static_cast<size_t>(j)]) l.writes.push_back(j);
  return l;
}

std::string liberty_cell(const MemoryMacro& m, const SramModel& s) {
  const std::string data_t = m.cell + "_data", addr_t = m.cell + "_addr";
  std::string t;
  t += fmt::format("  type ({}) {{ base_type : array; data_type : bit; bit_width : {}; bit_from : {}; bit_to : 0; "
                   "downto : true; }}\n",
                   data_t, m.width, m.width - 1);
  t += fmt::format("  type ({}) {{ base_type : array; data_type : bit; bit_width : {}; bit_from : {}; bit_to : 0; "
                   "downto : true; }}\n",
                   addr_t, m.abits, m.abits - 1);
  t += fmt::format("  cell ({}) {{\n", m.cell);
  const PortLayout pl = port_layout(m);
  t += fmt::format("    /* {} x {} bits, {} read / {} write / {} read-write ports: {} bits */\n", m.depth, m.width,
                   pl.reads.size(), pl.writes.size(), pl.rw.size(), m.bits());
  t += fmt::format("    area : {:.3f};\n    interface_timing : true;\n    dont_use : true;\n", m.area_um2);
  t += fmt::format("    cell_leakage_power : {:.3f};\n", s.leakage_nw(m.bits()));
  t += fmt::format("    pin (clk) {{ direction : input; capacitance : {:.3f}; clock : true; min_period : {:.3f}; }}\n",
                   s.clock_cap_ff, s.min_period_ps);
  for (size_t i = 0; i < pl.reads.size(); ++i) {
    t += input_pin("pin", fmt::format("rd{}_en", i), "", s);
    t += input_pin("bus", fmt::format("rd{}_addr", i), addr_t, s);
    t += output_bus(fmt::format("rd{}_data", i), data_t, s);
  }
  for (size_t j = 0; j < pl.writes.size(); ++j) {
    t += input_pin("bus", fmt::format("wr{}_mask", j), data_t, s);
    t += input_pin("bus", fmt::format("wr{}_addr", j), addr_t, s);
    t += input_pin("bus", fmt::format("wr{}_data", j), data_t, s);
  }
  for (size_t k = 0; k < pl.rw.size(); ++k) {
    t += input_pin("pin", fmt::format("rw{}_en", k), "", s);
    t += input_pin("bus", fmt::format("rw{}_addr", k), addr_t, s);
    t += output_bus(fmt::format("rw{}_data", k), data_t, s);
    t += input_pin("bus", fmt::format("rw{}_mask", k), data_t, s);
    t += input_pin("bus", fmt::format("rw{}_wdata", k), data_t, s);
  }
  t += "  }\n";
  return t;
}

std::string verilog_stub(const MemoryMacro& m) {
  const PortLayout pl = port_layout(m);
  std::vector<std::string> ports{"input clk"};
  for (size_t i = 0; i < pl.reads.size(); ++i) {
    ports.push_back(fmt::format("input rd{}_en", i));
    ports.push_back(fmt::format("input [{}:0] rd{}_addr", m.abits - 1, i));
    ports.push_back(fmt::format("output [{}:0] rd{}_data", m.width - 1, i));
  }
  for (size_t j = 0; j < pl.writes.size(); ++j) {
    ports.push_back(fmt::format("input [{}:0] wr{}_mask", m.width - 1, j));
    ports.push_back(fmt::format("input [{}:0] wr{}_addr", m.abits - 1, j));
    ports.push_back(fmt::format("input [{}:0] wr{}_data", m.width - 1, j));
  }
  for (size_t k = 0; k < pl.rw.size(); ++k) {
    ports.push_back(fmt::format("input rw{}_en", k));
    ports.push_back(fmt::format("input [{}:0] rw{}_addr", m.abits - 1, k));
    ports.push_back(fmt::format("output [{}:0] rw{}_data", m.width - 1, k));
    ports.push_back(fmt::format("input [{}:0] rw{}_mask", m.width - 1, k));
    ports.push_back(fmt::format("input [{}:0] rw{}_wdata", m.width - 1, k));
  }
  return fmt::format("(* blackbox *)\nmodule {} ({});\nendmodule\n", m.cell, fmt::join(ports, ", "));
}

// The techmap branch for one shape: only a $mem_v2 of exactly this shape, with registered
// read-first reads, no read reset, rising-edge writes and no initial contents becomes the macro.
// A read/write port needs its read and write port on the same address drivers (the connection
// maps of their slices equal) and never enabled together (their RD_COLLISION_X_MASK bit).
std::string techmap_branch(const MemoryMacro& m, bool first) {
  const int R = m.rd_ports, W = m.wr_ports;
  std::string cond = fmt::format(
      "SIZE == {} && WIDTH == {} && ABITS == {} && OFFSET == 0 && RD_PORTS == {} && WR_PORTS == {}"
      " && RD_CLK_ENABLE == {{{}{{1'b1}}}} && RD_CLK_POLARITY == {{{}{{1'b1}}}} && RD_TRANSPARENCY_MASK == 0"
      " && RD_WIDE_CONTINUATION == 0 && WR_CLK_ENABLE == {{{}{{1'b1}}}} && WR_CLK_POLARITY == {{{}{{1'b1}}}}"
      " && WR_WIDE_CONTINUATION == 0 && _TECHMAP_CONSTMSK_RD_ARST_ == {{{}{{1'b1}}}} && _TECHMAP_CONSTVAL_RD_ARST_ == 0"
      " && _TECHMAP_CONSTMSK_RD_SRST_ == {{{}{{1'b1}}}} && _TECHMAP_CONSTVAL_RD_SRST_ == 0 && INIT === {{(SIZE * WIDTH){{1'bx}}}}",
      m.depth, m.width, m.abits, R, W, R, R, W, W, R, R);
  for (const auto& [i, j] : m.rw_pairs)
    cond += fmt::format(
        " && RD_COLLISION_X_MASK[{}] == 1'b1 && _TECHMAP_CONNMAP_RD_ADDR_[{} * _TECHMAP_BITS_CONNMAP_ +: {} * "
        "_TECHMAP_BITS_CONNMAP_] == _TECHMAP_CONNMAP_WR_ADDR_[{} * _TECHMAP_BITS_CONNMAP_ +: {} * _TECHMAP_BITS_CONNMAP_]",
        i * W + j, i * m.abits, m.abits, j * m.abits, m.abits);
  const PortLayout pl = port_layout(m);
  auto slice = [](const char* port, int index, int width) {
    return fmt::format("{}[{}:{}]", port, (index + 1) * width - 1, index * width);
  };
  std::vector<std::string> conns{".clk(RD_CLK[0])"};
  for (size_t n = 0; n < pl.reads.size(); ++n) {
    const int i = pl.reads[n];
    conns.push_back(fmt::format(".rd{}_en(RD_EN[{}])", n, i));
    conns.push_back(fmt::format(".rd{}_addr({})", n, slice("RD_ADDR", i, m.abits)));
    conns.push_back(fmt::format(".rd{}_data({})", n, slice("RD_DATA", i, m.width)));
  }
  for (size_t n = 0; n < pl.writes.size(); ++n) {
    const int j = pl.writes[n];
    conns.push_back(fmt::format(".wr{}_mask({})", n, slice("WR_EN", j, m.width)));
    conns.push_back(fmt::format(".wr{}_addr({})", n, slice("WR_ADDR", j, m.abits)));
    conns.push_back(fmt::format(".wr{}_data({})", n, slice("WR_DATA", j, m.width)));
  }
  for (size_t k = 0; k < pl.rw.size(); ++k) {
    const auto [i, j] = pl.rw[k];
    conns.push_back(fmt::format(".rw{}_en(RD_EN[{}])", k, i));
    conns.push_back(fmt::format(".rw{}_addr({})", k, slice("RD_ADDR", i, m.abits)));
    conns.push_back(fmt::format(".rw{}_data({})", k, slice("RD_DATA", i, m.width)));
    conns.push_back(fmt::format(".rw{}_mask({})", k, slice("WR_EN", j, m.width)));
    conns.push_back(fmt::format(".rw{}_wdata({})", k, slice("WR_DATA", j, m.width)));
  }
  return fmt::format("    {}if ({}) begin\n      {} _TECHMAP_REPLACE_ ({});\n    end\n", first ? "" : "else ", cond,
                     m.cell, fmt::join(conns, ", "));
}

}  // namespace

std::string macro_obstacle(const MemoryMacro& m) {
  if (!m.sync_read) return "an asynchronous read port";
  if (!m.read_first) return "a read port transparent to writes of the same cycle";
  if (!m.plain_read) return "a reset or wide read port";
  if (!m.plain_write) return "a write port not on the rising clock edge, or a wide write port";
  if (m.initialized) return "initial contents";
  if (m.rd_ports < 1 || m.wr_ports < 1) return "no read or no write port";
  if (m.width < 1 || m.depth < 2 || m.abits < 1) return "a degenerate shape";
  return {};
}

std::vector<std::pair<int, int>> shared_port_pairs(const MemoryMacro& m) {
  std::vector<std::pair<int, int>> pairs;
  const size_t n = static_cast<size_t>(m.rd_ports) * static_cast<size_t>(std::max(0, m.wr_ports));
  if (m.rd_ports < 1 || m.wr_ports < 1 || m.same_address.size() < n || m.never_together.size() < n) return pairs;
  std::vector<bool> taken(static_cast<size_t>(m.rd_ports));
  for (int j = 0; j < m.wr_ports; ++j)
    for (int i = 0; i < m.rd_ports; ++i) {
      const size_t k = static_cast<size_t>(i * m.wr_ports + j);
      if (taken[static_cast<size_t>(i)] || !m.same_address[k] || !m.never_together[k]) continue;
      taken[static_cast<size_t>(i)] = true;
      pairs.emplace_back(i, j);
      break;
    }
  return pairs;
}

std::string macro_cell_name(const MemoryMacro& m) {
  const int rw = m.rw_ports();
  if (rw == 0) return fmt::format("fetta_sram_w{}_d{}_{}r{}w", m.width, m.depth, m.rd_ports, m.wr_ports);
  std::string ports;
  if (m.rd_ports > rw) ports += fmt::format("{}r", m.rd_ports - rw);
  if (m.wr_ports > rw) ports += fmt::format("{}w", m.wr_ports - rw);
  return fmt::format("fetta_sram_w{}_d{}_{}{}rw", m.width, m.depth, ports, rw);
}

MacroLibrary make_macro_library(const std::vector<MemoryMacro>& found, const SramModel& model) {
  std::map<std::string, MemoryMacro> shapes;  // by cell
  // Techmap branches: one per cell and pairing, the most read/write ports first.
  std::map<std::tuple<int, std::string, std::vector<std::pair<int, int>>>, MemoryMacro> branches;
  for (const MemoryMacro& f : found) {
    if (!macro_obstacle(f).empty()) continue;
    MemoryMacro m = f;
    m.name.clear();
    m.rw_pairs = shared_port_pairs(f);
    m.cell = macro_cell_name(m);
    m.area_um2 = model.area_um2(m.bits(), m.rd_ports, m.wr_ports, m.rw_ports());
    shapes.emplace(m.cell, m);
    branches.emplace(std::make_tuple(-m.rw_ports(), m.cell, m.rw_pairs), m);
  }
  MacroLibrary lib;
  for (const auto& [name, m] : shapes) lib.cells.push_back(m);
  if (lib.cells.empty()) return lib;

  std::string& l = lib.liberty;
  l += "/* fetta: SRAM macros of one design (docs/synthesis.md, \"The SRAM macros\"): area from the SRAM\n";
  l += fmt::format("   model ({} um^2/bit, efficiency {}, port factor {}), timing and leakage as OpenROAD's\n",
                   model.um2_per_bit, model.array_efficiency, model.extra_port_factor);
  l += "   ASAP7 FakeRAM2.0 macros: flat in slew and load. */\n";
  l += "library (fetta_sram) {\n  technology (cmos);\n  delay_model : table_lookup;\n";
  l += "  time_unit : \"1ps\";\n  voltage_unit : \"1V\";\n  current_unit : \"1mA\";\n";
  l += "  leakage_power_unit : \"1nW\";\n  capacitive_load_unit (1, ff);\n  pulling_resistance_unit : \"1kohm\";\n";
  l += "  nom_process : 1;\n  nom_temperature : 25;\n  nom_voltage : 0.7;\n";
  // As FakeRAM writes it: the supply OpenSTA's power analysis switches the read data's loads at.
  l += "  operating_conditions (tt_0p7v_25c) { process : 1; temperature : 25; voltage : 0.7; tree_type : balanced_tree; }\n";
  l += "  default_operating_conditions : tt_0p7v_25c;\n";
  l += "  input_threshold_pct_rise : 50;\n  input_threshold_pct_fall : 50;\n";
  l += "  output_threshold_pct_rise : 50;\n  output_threshold_pct_fall : 50;\n";
  l += "  slew_lower_threshold_pct_rise : 10;\n  slew_upper_threshold_pct_rise : 90;\n";
  l += "  slew_lower_threshold_pct_fall : 10;\n  slew_upper_threshold_pct_fall : 90;\n";
  l += fmt::format("  lu_table_template (fetta_sram_delay) {{ variable_1 : input_net_transition; "
                   "variable_2 : total_output_net_capacitance; index_1 (\"{}\"); index_2 (\"{}\"); }}\n",
                   kSlewIndex, kLoadIndex);
  l += fmt::format("  lu_table_template (fetta_sram_slew) {{ variable_1 : total_output_net_capacitance; "
                   "index_1 (\"{}\"); }}\n",
                   kLoadIndex);
  l += fmt::format("  lu_table_template (fetta_sram_constraint) {{ variable_1 : related_pin_transition; "
                   "variable_2 : constrained_pin_transition; index_1 (\"{}\"); index_2 (\"{}\"); }}\n",
                   kSlewIndex, kSlewIndex);
  for (const MemoryMacro& m : lib.cells) l += liberty_cell(m, model);
  l += "}\n";

  lib.verilog_stubs = "// fetta: SRAM macro stubs (black boxes) for Yosys.\n";
  for (const MemoryMacro& m : lib.cells) lib.verilog_stubs += verilog_stub(m);

  std::string& t = lib.techmap;
  t += "// fetta: $mem_v2 cells of these exact shapes become SRAM macro instances; any other memory\n";
  t += "// is left to memory_map (flip-flops).\n";
  t += "(* techmap_celltype = \"$mem_v2\" *)\n";
  t += "module _fetta_sram_map (RD_CLK, RD_EN, RD_ARST, RD_SRST, RD_ADDR, RD_DATA, WR_CLK, WR_EN, WR_ADDR, WR_DATA);\n";
  t += "  parameter MEMID = \"\";\n  parameter integer SIZE = 0;\n  parameter integer OFFSET = 0;\n";
  t += "  parameter integer ABITS = 0;\n  parameter integer WIDTH = 0;\n  parameter INIT = 0;\n";
  t += "  parameter integer RD_PORTS = 0;\n  parameter RD_CLK_ENABLE = 0;\n  parameter RD_CLK_POLARITY = 0;\n";
  t += "  parameter RD_TRANSPARENCY_MASK = 0;\n  parameter RD_COLLISION_X_MASK = 0;\n";
  t += "  parameter RD_WIDE_CONTINUATION = 0;\n  parameter RD_CE_OVER_SRST = 0;\n  parameter RD_ARST_VALUE = 0;\n";
  t += "  parameter RD_SRST_VALUE = 0;\n  parameter RD_INIT_VALUE = 0;\n  parameter integer WR_PORTS = 0;\n";
  t += "  parameter WR_CLK_ENABLE = 0;\n  parameter WR_CLK_POLARITY = 0;\n  parameter WR_PRIORITY_MASK = 0;\n";
  t += "  parameter WR_WIDE_CONTINUATION = 0;\n";
  t += "  parameter _TECHMAP_CONSTMSK_RD_ARST_ = 0;\n  parameter _TECHMAP_CONSTVAL_RD_ARST_ = 0;\n";
  t += "  parameter _TECHMAP_CONSTMSK_RD_SRST_ = 0;\n  parameter _TECHMAP_CONSTVAL_RD_SRST_ = 0;\n";
  t += "  parameter _TECHMAP_BITS_CONNMAP_ = 0;\n  parameter _TECHMAP_CONNMAP_RD_ADDR_ = 0;\n";
  t += "  parameter _TECHMAP_CONNMAP_WR_ADDR_ = 0;\n";
  t += "  input [RD_PORTS-1:0] RD_CLK, RD_EN, RD_ARST, RD_SRST;\n  input [RD_PORTS*ABITS-1:0] RD_ADDR;\n";
  t += "  output [RD_PORTS*WIDTH-1:0] RD_DATA;\n  input [WR_PORTS-1:0] WR_CLK;\n";
  t += "  input [WR_PORTS*WIDTH-1:0] WR_EN, WR_DATA;\n  input [WR_PORTS*ABITS-1:0] WR_ADDR;\n";
  t += "  generate\n";
  bool first = true;
  for (const auto& [key, m] : branches) {
    t += techmap_branch(m, first);
    first = false;
  }
  t += "    else begin\n      wire _TECHMAP_FAIL_ = 1'b1;\n    end\n  endgenerate\nendmodule\n";
  return lib;
}

std::string address_probe_techmap() {
  return "// fetta: the address probe (docs/synthesis.md): every $mem_v2 becomes a fetta_mem_probe cell of\n"
         "// its name whose SHARED_ADDR bit i * WR_PORTS + j says that read port i and write port j have\n"
         "// the same address drivers. Run on a throw-away copy of the design.\n"
         "(* techmap_celltype = \"$mem_v2\" *)\n"
         "module _fetta_mem_probe (RD_CLK, RD_EN, RD_ARST, RD_SRST, RD_ADDR, RD_DATA, WR_CLK, WR_EN, WR_ADDR, WR_DATA);\n"
         "  parameter MEMID = \"\";\n  parameter integer SIZE = 0;\n  parameter integer OFFSET = 0;\n"
         "  parameter integer ABITS = 0;\n  parameter integer WIDTH = 0;\n  parameter INIT = 0;\n"
         "  parameter integer RD_PORTS = 0;\n  parameter RD_CLK_ENABLE = 0;\n  parameter RD_CLK_POLARITY = 0;\n"
         "  parameter RD_TRANSPARENCY_MASK = 0;\n  parameter RD_COLLISION_X_MASK = 0;\n"
         "  parameter RD_WIDE_CONTINUATION = 0;\n  parameter RD_CE_OVER_SRST = 0;\n  parameter RD_ARST_VALUE = 0;\n"
         "  parameter RD_SRST_VALUE = 0;\n  parameter RD_INIT_VALUE = 0;\n  parameter integer WR_PORTS = 0;\n"
         "  parameter WR_CLK_ENABLE = 0;\n  parameter WR_CLK_POLARITY = 0;\n  parameter WR_PRIORITY_MASK = 0;\n"
         "  parameter WR_WIDE_CONTINUATION = 0;\n"
         "  parameter integer _TECHMAP_BITS_CONNMAP_ = 0;\n  parameter _TECHMAP_CONNMAP_RD_ADDR_ = 0;\n"
         "  parameter _TECHMAP_CONNMAP_WR_ADDR_ = 0;\n"
         "  input [RD_PORTS-1:0] RD_CLK, RD_EN, RD_ARST, RD_SRST;\n  input [RD_PORTS*ABITS-1:0] RD_ADDR;\n"
         "  output [RD_PORTS*WIDTH-1:0] RD_DATA;\n  input [WR_PORTS-1:0] WR_CLK;\n"
         "  input [WR_PORTS*WIDTH-1:0] WR_EN, WR_DATA;\n  input [WR_PORTS*ABITS-1:0] WR_ADDR;\n"
         "  localparam integer AW = ABITS * _TECHMAP_BITS_CONNMAP_;  // connection-map bits of one address\n"
         "  function automatic [RD_PORTS*WR_PORTS:0] shared_addr(input integer unused);\n"
         "    integer i, j;\n"
         "    begin\n"
         "      shared_addr = 0;\n"
         "      for (i = 0; i < RD_PORTS; i = i + 1)\n"
         "        for (j = 0; j < WR_PORTS; j = j + 1)\n"
         "          if (_TECHMAP_CONNMAP_RD_ADDR_[i*AW +: AW] == _TECHMAP_CONNMAP_WR_ADDR_[j*AW +: AW])\n"
         "            shared_addr[i*WR_PORTS + j] = 1'b1;\n"
         "    end\n"
         "  endfunction\n"
         "  fetta_mem_probe #(.RD_PORTS(RD_PORTS), .WR_PORTS(WR_PORTS), .SHARED_ADDR(shared_addr(0))) "
         "_TECHMAP_REPLACE_ ();\n"
         "endmodule\n";
}

void apply_address_probe(const std::string& probe_dump, std::vector<MemoryMacro>& found) {
  static const std::regex cell_re(R"(^\s*cell \\?fetta_mem_probe (\S+))");
  static const std::regex param_re(R"(^\s*parameter \\SHARED_ADDR (\S+))");
  std::map<std::string, std::vector<std::vector<bool>>> probed;  // name -> each probe cell's bits
  std::string current;
  std::stringstream ss(probe_dump);
  for (std::string line; std::getline(ss, line);) {
    std::smatch m;
    if (std::regex_search(line, m, cell_re)) {
      current = m[1];
      if (!current.empty() && current[0] == '\\') current = current.substr(1);
      probed[current].emplace_back();
    } else if (!current.empty() && std::regex_search(line, m, param_re)) {
      probed[current].back() = yosys_const_bits(m[1]);
    } else if (line.find("end") != std::string::npos && line.find_first_not_of(" \t") == line.find("end")) {
      current.clear();
    }
  }
  std::map<std::string, size_t> seen;
  for (MemoryMacro& f : found) {
    auto it = probed.find(f.name);
    const size_t k = seen[f.name]++;
    f.same_address.clear();
    if (it == probed.end() || k >= it->second.size()) continue;
    f.same_address = it->second[k];
    f.same_address.resize(static_cast<size_t>(std::max(0, f.rd_ports * f.wr_ports)));
  }
}

std::vector<std::pair<std::string, std::string>> parse_macro_instances(const std::string& dump_text) {
  std::vector<std::pair<std::string, std::string>> out;
  static const std::regex cell_re(R"(^\s*cell \\?(fetta_sram_\S+) (\S+))");
  std::stringstream ss(dump_text);
  for (std::string line; std::getline(ss, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, cell_re)) continue;
    std::string name = m[2];
    if (!name.empty() && name[0] == '\\') name = name.substr(1);
    out.emplace_back(m[1], name);
  }
  return out;
}

}  // namespace fetta::flows::synth
