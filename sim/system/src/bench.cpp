#include "sim/system/bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <stdexcept>

#include "arch/dma.hpp"
#include "hw/mem/mem.hpp"
#include "hw/sys/system.hpp"

namespace fetta::sim::system {

SystemBench::SystemBench(sc_core::sc_module_name name, sc_core::sc_module& dut, const arch::ArchConfig& cfg,
                         std::function<void(SystemBench&)> host_program, DramInitiator* memory)
    : sc_core::sc_module(name),
      cfg_(cfg),
      program_(std::move(host_program)),
      clk_("clk", sc_core::sc_time(static_cast<double>(arch::DramPortTiming::kCyclePs), sc_core::SC_PS)),
      memory_(memory) {
  host_lanes_ = arch::host_port_lanes(cfg);
  host_groups_ = cfg.memory.banks / arch::host_port_banks(cfg);
  int_acc_ = cfg.dtype != arch::DataType::bf16;
  acc_bits_ = arch::accumulator_bits(cfg.dtype);
  // Every port the top has (hw::top_ports); anything missing or extra means the model is not this config's.
  const std::vector<std::string> expected = hw::top_ports(cfg).leaf_names();
  std::map<std::string, sc_core::sc_object*> found;
  for (sc_core::sc_object* obj : dut.get_child_objects())
    if (dynamic_cast<sc_core::sc_port_base*>(obj)) found[obj->basename()] = obj;
  for (const std::string& p : expected)
    if (!found.count(p))
      throw std::invalid_argument(fmt::format("SystemBench: the model {} has no port '{}' that the top of {} has "
                                              "(was it generated from this configuration?)",
                                              dut.name(), p, cfg.name));
  if (found.size() != expected.size())
    throw std::invalid_argument(fmt::format("SystemBench: the model {} has {} ports; the top of {} has {}", dut.name(),
                                            found.size(), cfg.name, expected.size()));
  dynamic_cast<sc_core::sc_in<bool>&>(*found.at("clk")).bind(clk_);
  for (const auto& [pname, obj] : found) {
    if (pname == "clk") continue;
    std::unique_ptr<PortSignal> s = sim::bind_port(obj, pname);
    if (!s) throw std::invalid_argument(fmt::format("SystemBench: port '{}' is wider than 64 bits", pname));
    ports_[pname] = std::move(s);
  }
  busy_ = ports_.at("busy").get();
  dma_busy_ = ports_.at("dma_busy").get();
  cycle_count_ = ports_.at("cycle_count").get();
  SC_THREAD(host_thread);
  if (memory_ != nullptr) SC_THREAD(memory_thread);
}

void SystemBench::check_id() {
  const uint32_t want = hw::hardware_id(cfg_);
  const auto got = static_cast<uint32_t>(port("hw_id").read());
  if (got != want)
    throw std::invalid_argument(fmt::format("SystemBench: the model's hw_id is {:08x} but the top of {} has {:08x}: the "
                                            "model was generated from another configuration",
                                            got, cfg_.name, want));
}

SystemBench::~SystemBench() = default;

namespace {
// Folds `bytes` little-endian bytes of v into an FNV-1a digest.
void fnv1a(uint64_t& h, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    h ^= (v >> (8 * i)) & 0xFFU;
    h *= 0x100000001b3ULL;
  }
}
}  // namespace

PortSignal& SystemBench::port(const std::string& name) {
  auto it = ports_.find(name);
  if (it == ports_.end()) throw std::logic_error("SystemBench: no port " + name);
  return *it->second;
}

void SystemBench::tick() {
  wait(clk_.negedge_event());
  ++cycle_;
  if (busy_->read() != 0) ++busy_cycles_;
  const uint64_t cc = cycle_count_->read();
  const bool c = cc != last_cycle_count_, d = dma_busy_->read() != 0, h = host_working_;
  last_cycle_count_ = cc;
  activity_.controller += c;
  activity_.dma += d;
  activity_.host += h;
  activity_.moving += d || h;
  activity_.overlapped += c && (d || h);
  activity_.none += !c && !d && !h;
}

void SystemBench::host_thread() {
  for (const auto& [name, p] : ports_)
    if (name == "rst") p->write(1);
  for (int c = 0; c < arch::kBenchResetCycles; ++c) tick();
  port("rst").write(0);
  tick();
  try {
    check_id();
    program_(*this);
  } catch (const std::exception& e) {
    failure_ = e.what();
  }
  sc_core::sc_stop();
}

void SystemBench::bus_cycle() {
  host_working_ = true;
  tick();
  host_working_ = false;
  if (counting_) ++host_cycles_;
}

void SystemBench::idle(int64_t cycles) {
  for (int64_t i = 0; i < cycles; ++i) tick();
}

void SystemBench::write_rows(int64_t first_row, int64_t rows, int lanes, const std::vector<uint16_t>& data) {
  const int H = host_lanes_;
  wait_dma_idle(timeout_cycles_);
  fnv1a(write_digest_, static_cast<uint64_t>(first_row), 8);
  fnv1a(write_digest_, static_cast<uint64_t>(rows), 8);
  fnv1a(write_digest_, static_cast<uint64_t>(lanes), 4);
  for (uint16_t v : data) fnv1a(write_digest_, v, 2);
  for (int64_t r = 0; r < rows; ++r)
    for (int g = 0; g * H < lanes; ++g) {
      port("host_we").write(1);
      port("host_group").write(static_cast<uint64_t>(g));
      port("host_row").write(static_cast<uint64_t>(first_row + r));
      uint64_t mask = 0;
      for (int j = 0; j < H; ++j) {
        const int lane = g * H + j;
        if (lane < lanes) {
          mask |= uint64_t{1} << j;
          port(fmt::format("host_wdata_{}", j)).write(data[static_cast<size_t>(r * lanes + lane)]);
        }
      }
      port("host_wmask").write(mask);
      bus_cycle();
    }
  port("host_we").write(0);
}

void SystemBench::push(const arch::Words& instr) {
  push_words("instr_we", "instr_word", "instr_ready", instr, "the controller's instruction queue", false);
}

void SystemBench::push_words(const char* we, const char* word, const char* ready, const arch::Words& words,
                             const char* queue, bool dma_queue) {
  for (uint32_t w : words) fnv1a(instr_digest_, w, 4);
  for (size_t w = 0; w < words.size(); ++w) {
    if (w + 1 == words.size() && port(ready).read() == 0) {
      // Wait with `we` low: the queue takes a word on every cycle it is high.
      port(we).write(0);
      // The DMA's queue frees when its head is done, which a stuck head never is (DmaWatch).
      std::optional<DmaWatch> watch;
      if (dma_queue) watch.emplace(*this);
      wait_until([&] {
        if (port(ready).read() != 0) return true;
        if (watch) watch->cycle();
        return false;
      }, timeout_cycles_, [&] {
        return fmt::format("{} is still full (controller busy = {}, retired = {}; DMA busy = {}, dma_done = {})", queue,
                           port("busy").read(), port("retired").read(), port("dma_busy").read(), port("dma_done").read());
      });
    }
    port(we).write(1);
    port(word).write(words[w]);
    bus_cycle();
  }
  port(we).write(0);
}

int64_t SystemBench::wait_until(const std::function<bool()>& done, int64_t timeout_cycles,
                                const std::function<std::string()>& stuck) {
  int64_t n = 0;
  while (!done()) {
    if (++n > timeout_cycles) throw std::runtime_error(fmt::format("SystemBench: {} after {} cycles", stuck(), timeout_cycles));
    tick();
  }
  return n;
}

int64_t SystemBench::wait_idle(int64_t timeout_cycles) {
  tick();  // busy is registered: look at it one edge after the last push
  return wait_until([this] { return port("busy").read() == 0; }, timeout_cycles, [this] {
    return fmt::format("the controller is still busy (retired = {}, instr_ready = {}; {})", port("retired").read(),
                       port("instr_ready").read(),
                       port("dma_busy").read() != 0
                           ? fmt::format("the DMA is busy, dma_done = {}: a FLIP or STORE may be waiting for it",
                                         port("dma_done").read())
                           : std::string("the DMA is idle"));
  });
}

std::vector<uint64_t> SystemBench::read_acc(const std::vector<int64_t>& rows, const std::vector<int>& lanes) {
  const int H = host_lanes_;
  std::vector<int> groups;
  for (int lane : lanes)
    if (std::find(groups.begin(), groups.end(), lane / H) == groups.end()) groups.push_back(lane / H);
  std::vector<uint64_t> out(rows.size() * lanes.size());
  // The row of a read issued in one cycle is on acc_rdata in the next (read at its falling edge).
  for (size_t ri = 0; ri < rows.size(); ++ri)
    for (int g : groups) {
      port("acc_re").write(1);
      port("acc_group").write(static_cast<uint64_t>(g));
      port("acc_row").write(static_cast<uint64_t>(rows[ri]));
      bus_cycle();
      if (port("acc_rvalid").read() == 0) throw std::runtime_error("SystemBench: accumulator read without acc_rvalid");
      for (size_t li = 0; li < lanes.size(); ++li) {
        if (lanes[li] / H != g) continue;
        uint64_t v = port(fmt::format("acc_rdata_{}", lanes[li] % H)).read();
        if (int_acc_ && acc_bits_ < 64 && ((v >> (acc_bits_ - 1)) & 1U)) v |= ~uint64_t{0} << acc_bits_;
        out[ri * lanes.size() + li] = v;
      }
    }
  port("acc_re").write(0);
  return out;
}

std::vector<uint16_t> SystemBench::read_rows(int64_t first_row, int64_t rows, int lanes) {
  const int H = host_lanes_;
  wait_dma_idle(timeout_cycles_);
  std::vector<uint16_t> out(static_cast<size_t>(rows * lanes));
  for (int64_t r = 0; r < rows; ++r)
    for (int g = 0; g * H < lanes; ++g) {
      port("host_re").write(1);
      port("host_group").write(static_cast<uint64_t>(g));
      port("host_row").write(static_cast<uint64_t>(first_row + r));
      bus_cycle();
      if (port("host_rvalid").read() == 0) throw std::runtime_error("SystemBench: memory read without host_rvalid");
      for (int j = 0; j < H && g * H + j < lanes; ++j)
        out[static_cast<size_t>(r * lanes + g * H + j)] = static_cast<uint16_t>(port(fmt::format("host_rdata_{}", j)).read());
    }
  port("host_re").write(0);
  return out;
}

void SystemBench::push_descriptor(const arch::Words& words) {
  push_words("desc_we", "desc_word", "desc_ready", words, "the DMA's descriptor queue", true);
}

// A descriptor for the half the TCU is on starts only after a FLIP: with the controller idle, no
// DRAM request in flight and none asked for, nothing can move the DMA on (mapper::verify_program
// refuses such programs; this ends the host's wait in one that was not verified).
SystemBench::DmaWatch::DmaWatch(SystemBench& b)
    : bench_(b), done_(b.port("dma_done")), req_(b.port("mem_req_valid")), seen_(done_.read()) {}

void SystemBench::DmaWatch::cycle() {
  const uint64_t done = done_.read();
  const bool moving = done != seen_ || bench_.busy_->read() != 0 || bench_.outstanding_ != 0 || req_.read() != 0;
  seen_ = done;
  still_ = moving ? 0 : still_ + 1;
  if (still_ >= kDmaStuckCycles)
    throw std::runtime_error(fmt::format(
        "SystemBench: the DMA is stuck: {} descriptors done, then {} cycles without a move, the controller idle and no "
        "DRAM request outstanding; its next descriptor waits for the half the TCU computes on, and no FLIP is queued to "
        "free it",
        done, kDmaStuckCycles));
}

int64_t SystemBench::wait_dma_idle(int64_t timeout_cycles) {
  DmaWatch watch(*this);
  const int64_t n = wait_until(
      [&] {
        if (dma_busy_->read() == 0) return true;
        watch.cycle();
        return false;
      },
      timeout_cycles, [this] {
        return fmt::format("the DMA is still busy (dma_done = {}, controller busy = {}, {} external requests outstanding)",
                           port("dma_done").read(), port("busy").read(), outstanding_);
      });
  dma_wait_cycles_ += n;
  return n;
}

int64_t SystemBench::host_dram_read(int64_t bytes) {
  wait_dma_idle(timeout_cycles_);
  const int64_t n = arch::dram_transfer_cycles(cfg_, static_cast<uint64_t>(bytes));
  host_working_ = true;
  idle(n);
  host_working_ = false;
  return n;
}

void SystemBench::wait_retired(int64_t count, int64_t timeout_cycles) {
  wait_until([this, count] { return static_cast<int64_t>(port("retired").read()) >= count; }, timeout_cycles, [this, count] {
    return fmt::format("the controller retired {} of {} instructions (busy = {}; DMA busy = {}, dma_done = {}: a FLIP "
                       "may be waiting for it)",
                       port("retired").read(), count, port("busy").read(), port("dma_busy").read(), port("dma_done").read());
  });
}

void SystemBench::memory_thread() {
  const int H = host_lanes_;
  const int bytes = H * arch::operand_bits(cfg_.dtype) / 8;
  const int elem_bytes = arch::operand_bits(cfg_.dtype) / 8;
  // When each request is answered: the port's timing as the wall-cycle model reads it. A memory
  // controller deep enough to keep the DRAM busy (a fixed 64 held the default's DMA to 64 beats
  // per 101 ns, 79 % of the bandwidth).
  arch::DramPortTiming timing(cfg_);
  const size_t max_outstanding = timing.depth();
  struct Response {
    int64_t due_ps = 0;
    std::vector<uint8_t> data;
  };
  std::deque<Response> pending;
  // The port's signals, looked up once: this thread runs every cycle.
  PortSignal &rsp_valid = port("mem_rsp_valid"), &req_ready = port("mem_req_ready"), &req_valid = port("mem_req_valid"),
             &req_addr = port("mem_req_addr"), &req_write = port("mem_req_write");
  std::vector<PortSignal*> rsp_rdata, req_wdata;
  for (int j = 0; j < H; ++j) {
    rsp_rdata.push_back(&port(fmt::format("mem_rsp_rdata_{}", j)));
    req_wdata.push_back(&port(fmt::format("mem_req_wdata_{}", j)));
  }
  try {
    for (;;) {
      wait(clk_.negedge_event());
      const int64_t now_ps = std::llround(sc_core::sc_time_stamp() / sc_core::sc_time(1, sc_core::SC_PS));
      // The response for the next rising edge: the oldest, once its time has come (a write's has no data).
      const bool respond = !pending.empty() && pending.front().due_ps <= now_ps;
      rsp_valid.write(respond ? 1 : 0);
      if (respond) {
        if (!pending.front().data.empty()) {
          const std::vector<uint64_t> v = unpack(pending.front().data, elem_bytes);
          for (int j = 0; j < H; ++j) rsp_rdata[static_cast<size_t>(j)]->write(v[static_cast<size_t>(j)]);
        }
        pending.pop_front();
      }
      // A request presented now is taken at the next rising edge when the port is ready.
      const bool ready = pending.size() < max_outstanding;
      req_ready.write(ready ? 1 : 0);
      outstanding_ = pending.size();
      if (!ready || req_valid.read() == 0) continue;
      const uint64_t addr = req_addr.read();
      Response r;
      sc_core::sc_time ignored = sc_core::SC_ZERO_TIME;  // the port's own timing below, not the target's per-call sum
      if (req_write.read() != 0) {
        std::vector<uint64_t> v;
        for (PortSignal* d : req_wdata) v.push_back(d->read());
        memory_->write(addr, pack(v, elem_bytes), ignored);
        dma_saved_bytes_ += bytes;
      } else {
        r.data.resize(static_cast<size_t>(bytes));
        memory_->read(addr, r.data, ignored);
      }
      dma_bytes_ += bytes;
      r.due_ps = timing.take(now_ps + arch::DramPortTiming::kCyclePs / 2);  // taken at the next rising edge
      pending.push_back(std::move(r));
    }
  } catch (const sc_core::sc_unwind_exception&) {
    throw;  // SystemC unwinding the thread at the end of the simulation: not an error
  } catch (const std::exception& e) {  // a refused DRAM access: end the run with the reason
    if (failure_.empty()) failure_ = std::string("the DMA's memory port: ") + e.what();
    sc_core::sc_stop();
  }
}

uint64_t SystemBench::cycle_count() { return port("cycle_count").read(); }
bool SystemBench::error() { return port("error").read() != 0; }

}  // namespace fetta::sim::system
