// DRAM energy per byte moved (docs/power.md, "DRAM energy"): Micron's IDD method (the one of
// Micron's power calculators and of DRAMPower) on the datasheet currents of an LPDDR4 part, for
// a stream of whole bursts through open pages. A read or a write burst costs its current above
// the active standby current (IDD4R/IDD4W - IDD3N) on every supply for the burst's time; a
// page (row) activation costs IDD0 above the standby current for tRC, shared by the page's bytes.
// Background and refresh power are the DRAM's whether the accelerator moves data or not, and
// are left out.
#pragma once

#include <string>

namespace fetta::flows::power {

struct DramEnergyModel {
  std::string part;  // where the figures come from
  double read_pj_per_byte = 0, write_pj_per_byte = 0;
  double read_io_pj_per_byte = 0, write_io_pj_per_byte = 0;  // the VDDQ share of the above
  double activate_pj_per_byte = 0;                          // included in both
};

// Micron 6 Gb LPDDR4-3200, one x16 channel (DRAMPower's memspec
// MICRON_6Gb_LPDDR4-3200_32bit_A: IDD values per supply, tCK 0.625 ns, BL16, 2 KB pages).
DramEnergyModel lpddr4_micron();

}  // namespace fetta::flows::power
