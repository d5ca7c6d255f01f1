// The SystemC bench around one Verilated accelerator top (verilator --sc): a 1 GHz clock, every
// port of the model bound by name to a signal, and the host's bus operations (unified-memory
// writes, instruction pushes, accumulator reads, waiting for the controller), each a whole number
// of clock cycles. Inputs change at the falling edge and are sampled by the model at the rising
// edge; outputs are read at the falling edge.
//
// Works with any configuration: port counts come from the ArchConfig, and check_ports() rejects
// a model whose ports do not match it.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "arch/config.hpp"
#include "arch/isa.hpp"
#include "sim/port_signal.hpp"
#include "sim/system/dram.hpp"

namespace fetta::sim::system {

using sim::PortSignal;

// Who worked in each cycle of a run, counted at its falling edge (docs/program.md, "Overlap"):
// the controller executing (its cycle_count advanced: an instruction in flight, not held for the
// DMA), the DMA busy (a descriptor in its queue), the host transferring (a bus operation, or a
// read of saved rows from DRAM), and the cycles two of them shared.
// `moving`: the DMA or the host worked; `overlapped`: the controller and one of them did.
struct CycleActivity {
  int64_t controller = 0, dma = 0, host = 0;
  int64_t moving = 0, overlapped = 0;
  int64_t none = 0;  // cycles none of the three worked
};

class SystemBench : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(SystemBench);
  // `host_program` runs in the bench's thread after reset; the simulation stops when it returns.
  // `memory`: the DRAM the top's DMA port reaches (the port answers nothing without it).
  SystemBench(sc_core::sc_module_name name, sc_core::sc_module& dut, const arch::ArchConfig& cfg,
              std::function<void(SystemBench&)> host_program, DramInitiator* memory = nullptr);
  ~SystemBench() override;

  // ---- host operations (call only from host_program)
  void idle(int64_t cycles = 1);
  // Writes `lanes` elements of consecutive rows starting at lane 0 into the half the TCU is not
  // using: rows first_row .. first_row + rows - 1, data row-major (rows x lanes).
  void write_rows(int64_t first_row, int64_t rows, int lanes, const std::vector<uint16_t>& data);
  void push(const arch::Words& instr);
  // Waits until the controller is idle with an empty queue; returns the cycles waited.
  int64_t wait_idle(int64_t timeout_cycles);
  // Reads accumulator rows; for each row the lanes asked for (lane indices), in order.
  // Returns rows x lanes values (sign-extended for integer accumulators).
  std::vector<uint64_t> read_acc(const std::vector<int64_t>& rows, const std::vector<int>& lanes);
  // Reads `lanes` elements (from lane 0) of consecutive rows of the half the TCU is not using.
  std::vector<uint16_t> read_rows(int64_t first_row, int64_t rows, int lanes);
  // How long a host-port access or a descriptor push waits for the DMA before it gives up.
  void set_timeout(int64_t cycles) { timeout_cycles_ = cycles; }
  // One DMA descriptor (docs/dma.md) into the DMA's queue, waiting while the queue is full.
  void push_descriptor(const arch::Words& words);
  // Waits until the DMA has no descriptor; returns the cycles waited. Host-port reads and writes
  // wait for this themselves: the DMA owns the port while it is busy.
  // A DMA that has not moved for kDmaStuckCycles with the controller idle and no DRAM request
  // outstanding can never move again: the wait throws, naming the descriptors done (as does a
  // descriptor push into its full queue).
  int64_t wait_dma_idle(int64_t timeout_cycles);
  static constexpr int64_t kDmaStuckCycles = 4096;
  // The host's read of `bytes` from DRAM, waited for in simulated time while the top runs on: once
  // the DMA is idle (the DRAM is then the host's), its latency and transfer at the bandwidth.
  // Returns the cycles it took after the DMA's.
  int64_t host_dram_read(int64_t bytes);
  // Until the controller has retired `count` instructions (its `retired` output).
  void wait_retired(int64_t count, int64_t timeout_cycles);
  // While false, bus operations take their cycles but are not counted as host cycles: the
  // scoreboard's probes of data that stays on chip.
  void count_host(bool on) { counting_ = on; }

  uint64_t cycle_count();  // the controller's busy-cycle counter
  bool error();
  int64_t now() const { return cycle_; }      // cycles since the bench started
  sc_core::sc_time period() const { return clk_.period(); }  // of the clock: one cycle
  // Cycles the controller's `busy` output was high: how representative a sampled trace's windows
  // are (docs/power.md, "Sampled activity").
  int64_t busy_cycles() const { return busy_cycles_; }
  int64_t host_cycles() const { return host_cycles_; }  // cycles spent in host bus operations
  const CycleActivity& activity() const { return activity_; }
  int host_lanes() const { return host_lanes_; }
  // The DMA's external port: bytes moved (of them saved: written to DRAM), and cycles the host
  // waited for the DMA to finish.
  int64_t dma_bytes() const { return dma_bytes_; }
  int64_t dma_saved_bytes() const { return dma_saved_bytes_; }
  int64_t dma_wait_cycles() const { return dma_wait_cycles_; }
  // FNV-1a (64-bit) digests of what the host sent: every instruction word pushed, in order, and
  // every unified-memory row write (row, lanes, data). Two runs with equal digests drove the RTL
  // with the same streams: how a refactoring of the planner shows it changed nothing.
  uint64_t instruction_digest() const { return instr_digest_; }
  uint64_t write_digest() const { return write_digest_; }
  // Why host_program stopped early (an exception it threw); empty when it completed.
  const std::string& failure() const { return failure_; }

 private:
  void host_thread();
  // The DMA's external memory port, answered from `memory_`: requests taken while fewer than the
  // bandwidth-delay product wait; served in order at the DRAM's bandwidth, each answered its
  // latency later.
  void memory_thread();
  void check_id();  // hw_id against the configuration's
  void tick();  // one clock cycle: at its end the inputs written before it have been sampled
  // Ticks until `done`; past `timeout_cycles` throws "SystemBench: <stuck()> after N cycles",
  // which names the unit and its state. Returns the cycles waited.
  int64_t wait_until(const std::function<bool()>& done, int64_t timeout_cycles, const std::function<std::string()>& stuck);
  void bus_cycle();  // a tick of a host bus operation: a host cycle unless count_host(false)
  // 32-bit words into a queue that takes one per cycle while `we` is high; the last word of an
  // entry waits (up to the timeout) while `ready` is low. Folded into the instruction digest.
  // `dma_queue`: the DMA's descriptor queue, whose wait DmaWatch ends when its head is stuck.
  void push_words(const char* we, const char* word, const char* ready, const arch::Words& words, const char* queue,
                  bool dma_queue);
  PortSignal& port(const std::string& name);

  arch::ArchConfig cfg_;
  std::function<void(SystemBench&)> program_;
  sc_core::sc_clock clk_;
  std::map<std::string, std::unique_ptr<PortSignal>> ports_;
  int host_lanes_ = 0, host_groups_ = 0;
  int64_t cycle_ = 0, host_cycles_ = 0, busy_cycles_ = 0;
  PortSignal* busy_ = nullptr;
  PortSignal* dma_busy_ = nullptr;
  PortSignal* cycle_count_ = nullptr;
  uint64_t last_cycle_count_ = 0;
  bool host_working_ = false;  // the host's current cycle is a transfer (activity_)
  CycleActivity activity_;
  std::string failure_;
  DramInitiator* memory_ = nullptr;
  int64_t dma_bytes_ = 0, dma_saved_bytes_ = 0, dma_wait_cycles_ = 0;
  size_t outstanding_ = 0;  // external requests the memory port has not answered yet
  // Watches a wait on the DMA, a cycle at a time: throws once it is stuck (wait_dma_idle).
  class DmaWatch {
   public:
    explicit DmaWatch(SystemBench& b);
    void cycle();

   private:
    SystemBench& bench_;
    PortSignal &done_, &req_;
    uint64_t seen_;
    int64_t still_ = 0;
  };
  int64_t timeout_cycles_ = 200'000'000;
  bool int_acc_ = false;
  bool counting_ = true;
  int acc_bits_ = 32;
  uint64_t instr_digest_ = kFnvBasis, write_digest_ = kFnvBasis;
  static constexpr uint64_t kFnvBasis = 0xcbf29ce484222325ULL;
};

}  // namespace fetta::sim::system
