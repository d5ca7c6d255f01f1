// Off-chip DRAM as a TLM-2.0 target: loosely timed, blocking transport (b_transport) on a
// simple_target_socket. Every transaction adds latency + bytes / bandwidth to the initiator's
// annotated delay (the configuration's dram section); transactions are served one after another,
// so a sequence of them costs the sum. Debug transport (transport_dbg) moves data in zero time,
// for contents that are in DRAM before the run starts. Out-of-range accesses and byte enables are
// answered with the TLM error responses, never served partly.
#pragma once

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <vector>

#include "arch/config.hpp"

namespace fetta::sim::system {

class DramTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DramTarget> socket;

  DramTarget(sc_core::sc_module_name name, const arch::DramConfig& cfg);

  uint64_t capacity_bytes() const { return capacity_; }
  // Totals over every timed transaction.
  uint64_t bytes_read() const { return bytes_read_; }
  uint64_t bytes_written() const { return bytes_written_; }
  uint64_t transactions() const { return transactions_; }
  // The time one transaction of `bytes` takes: latency + bytes / bandwidth.
  sc_core::sc_time transfer_time(uint64_t bytes) const;

 private:
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  unsigned int transport_dbg(tlm::tlm_generic_payload& trans);
  // Checks and performs the access; false (with the response status set) when refused.
  bool access(tlm::tlm_generic_payload& trans);

  uint64_t capacity_;
  arch::DramConfig cfg_;
  std::vector<uint8_t> mem_;  // grows up to the highest byte written; unwritten bytes read as 0
  uint64_t bytes_read_ = 0, bytes_written_ = 0, transactions_ = 0;
};

}  // namespace fetta::sim::system

namespace fetta::sim::system {

// Values as DRAM holds them: little-endian elements of `bytes` bytes each (the low bytes of
// each value), and back.
std::vector<uint8_t> pack(const std::vector<uint64_t>& v, int bytes);
std::vector<uint64_t> unpack(const std::vector<uint8_t>& d, int bytes);

// The host's DMA into DRAM: a simple_initiator_socket bound to a DramTarget. Timed reads and
// writes add the target's annotated delay to `delay` (the caller's local time: the transfers are
// accounted, not waited for, so the clocked model does not run idle cycles); preload() and peek()
// use debug transport. A refused transaction throws std::runtime_error naming the address range
// and the TLM response.
class DramInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<DramInitiator> socket;

  explicit DramInitiator(sc_core::sc_module_name name);

  void read(uint64_t addr, std::vector<uint8_t>& data, sc_core::sc_time& delay);
  void write(uint64_t addr, const std::vector<uint8_t>& data, sc_core::sc_time& delay);
  void preload(uint64_t addr, const std::vector<uint8_t>& data);
  void peek(uint64_t addr, std::vector<uint8_t>& data);  // untimed: the scoreboard reads what the DMA saved

 private:
  void transport(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, size_t len, sc_core::sc_time* delay);
};

}  // namespace fetta::sim::system
