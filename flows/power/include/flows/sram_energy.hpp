// SRAM access energy (docs/power.md, "SRAM access energy"). The flow's SRAM macros are black
// boxes: their Liberty model has leakage and pin capacitances but no internal power, so OpenSTA
// gives an access nothing. The energy of a read and a write comes from CACTI 7.0 instead (a table
// over macro shapes, made by scripts/sram_energy_table.py), scaled from its 22 nm and 0.8 V to the
// corner's supply; the number of accesses comes from the run: the time at 1 of every macro's
// read-enable and write-mask nets, which keep their RTL names in the netlist and in the trace.
#pragma once

#include <string>
#include <vector>

#include "flows/activity.hpp"

namespace fetta::flows::power {

// One CACTI 7.0 result: a one-bank scratch RAM of `depth` words of `width` bits with the ports
// `ports` ("1r1w", "1r1rw", "2r1w", "1rw"), 22 nm ITRS high-performance, 0.8 V.
struct CactiPoint {
  const char* ports;
  int width, depth;
  double read_pj, write_pj;  // per access of a whole word
};
const std::vector<CactiPoint>& cacti_sram_table();  // sram_energy_table.cpp (generated)

struct SramEnergyModel {
  double supply_v = 0.7;        // the power corner's (ASAP7 TT)
  double cacti_supply_v = 0.8;  // CACTI 7.0's 22 nm ITRS-HP Vdd
  // Dynamic energy goes with C V^2; the capacitance is left at 22 nm's, so the figures are an
  // upper bound for 7 nm.
  double scale() const { return (supply_v / cacti_supply_v) * (supply_v / cacti_supply_v); }
};

// A macro cell's shape, from its name ("fetta_sram_w16_d2048_1r1rw": synth::macro_cell_name).
struct MacroShape {
  int width = 0, depth = 0;
  int rd = 0, wr = 0, rw = 0;  // plain read, plain write and read/write ports
  std::string ports;           // "1r1rw"
};
// Throws std::invalid_argument naming the cell when the name is not a macro's.
MacroShape macro_shape(const std::string& cell);

struct AccessEnergy {
  double read_pj = 0, write_pj = 0;  // per access of a whole word, scaled to the model's supply
  std::string basis;                 // the table points used, e.g. "CACTI 1r1rw w16 d2048"
  bool outside = false;              // shape or ports beyond the table: its nearest point stands in
};
// Between table points the energy is interpolated linearly in log2(width), log2(depth) and
// log(energy); a shape beyond the table takes its nearest point and is flagged `outside`, as are
// ports the table has no column for (the column of as many physical ports stands in).
AccessEnergy access_energy(const MacroShape& s, const SramEnergyModel& m = {});

struct MacroAccesses {
  std::string instance, cell;
  int width = 0;            // bits per word (the cell's shape)
  double reads = 0;         // words read over the activity's cycles (every read port)
  double bits_written = 0;  // bits written over the same (every write port's mask bits)
  int nets = 0, nets_found = 0;  // enable and mask bits, those the activity names (or constants)
  AccessEnergy energy;
  double joules = 0;  // reads x read energy + (bits written / width) x write energy
};

struct SramAccesses {
  std::vector<MacroAccesses> macros;  // in the dump's order
  double joules = 0;
  long long nets = 0, nets_found = 0;
  long long outside = 0;  // macros whose energy comes from beyond the table
};

// Every macro instance of a Yosys `dump` of the mapped design (the flow's macros.txt): its read
// accesses are the duty of each read enable (`rd<i>_en`, `rw<k>_en`) times the cycles, its written
// bits the duty of each write-mask bit (`wr<j>_mask`, `rw<k>_mask`) times the cycles. A net the
// activity does not name counts nothing and is left out of `nets_found`.
SramAccesses sram_accesses(const std::string& dump_text, const Activity& a, const SramEnergyModel& m = {});

// The bits of a connection in a Yosys `dump`: `\net`, `\net [3]`, `{ ... }`, `4'1010`; each as
// a net name ("net[3]") or a constant ("'0", "'1", "'x"), most significant first.
std::vector<std::string> dump_connection_bits(const std::string& value);

// The block an instance path belongs to: its first `depth` components, "(top)" with none.
std::string block_of(const std::string& instance, int depth);

}  // namespace fetta::flows::power
