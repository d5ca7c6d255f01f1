#include "flows/dram_energy.hpp"

namespace fetta::flows::power {

namespace {

// One supply of the part: its voltage and the datasheet currents (mA) the method uses.
struct Supply {
  double volts;
  double idd0, idd2n, idd3n, idd4r, idd4w;
};

}  // namespace

DramEnergyModel lpddr4_micron() {
  // Micron 6 Gb LPDDR4-3200 as DRAMPower's memspec gives it (per 16-bit channel): VDD1, VDD2, VDDQ.
  const Supply vdd1{1.8, 3.5, 2.0, 2.25, 2.25, 2.25};
  const Supply vdd2{1.1, 45.0, 27.0, 30.0, 275.0, 210.0};
  const Supply vddq{1.1, 0.75, 0.75, 0.75, 150.0, 55.0};
  const double tck_ns = 1e3 / 1600;                      // 1600 MHz clock, 3200 MT/s
  const double burst_ns = 16.0 / 2 * tck_ns;             // BL16 at two transfers per clock
  const double burst_bytes = 16.0 * 16 / 8;              // 16 beats of 16 bits
  const double tras = 68, trc = 97;                      // in clocks
  const double page_bytes = 1024.0 * 16 / 8;             // 1024 columns of 16 bits
  auto burst_pj = [&](const Supply& s, double idd4) { return s.volts * (idd4 - s.idd3n) * burst_ns; };  // mW x ns = pJ
  auto activate_pj = [&](const Supply& s) {
    const double standby = (s.idd3n * tras + s.idd2n * (trc - tras)) / trc;
    return s.volts * (s.idd0 - standby) * trc * tck_ns;
  };
  DramEnergyModel m;
  m.part = "Micron 6Gb LPDDR4-3200 x16 channel (DRAMPower memspec MICRON_6Gb_LPDDR4-3200_32bit_A), IDD method";
  m.activate_pj_per_byte = (activate_pj(vdd1) + activate_pj(vdd2) + activate_pj(vddq)) / page_bytes;
  m.read_io_pj_per_byte = burst_pj(vddq, vddq.idd4r) / burst_bytes;
  m.write_io_pj_per_byte = burst_pj(vddq, vddq.idd4w) / burst_bytes;
  m.read_pj_per_byte = (burst_pj(vdd1, vdd1.idd4r) + burst_pj(vdd2, vdd2.idd4r)) / burst_bytes + m.read_io_pj_per_byte +
                       m.activate_pj_per_byte;
  m.write_pj_per_byte = (burst_pj(vdd1, vdd1.idd4w) + burst_pj(vdd2, vdd2.idd4w)) / burst_bytes +
                        m.write_io_pj_per_byte + m.activate_pj_per_byte;
  return m;
}

}  // namespace fetta::flows::power
