#include "sim/system/dram.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/core.h>

namespace fetta::sim::system {

DramTarget::DramTarget(sc_core::sc_module_name name, const arch::DramConfig& cfg)
    : sc_core::sc_module(name),
      socket("socket"),
      capacity_(static_cast<uint64_t>(cfg.capacity_mb) << 20),
      cfg_(cfg) {
  socket.register_b_transport(this, &DramTarget::b_transport);
  socket.register_transport_dbg(this, &DramTarget::transport_dbg);
}

sc_core::sc_time DramTarget::transfer_time(uint64_t bytes) const {
  return sc_core::sc_time(arch::dram_transfer_ns(cfg_, bytes), sc_core::SC_NS);
}

bool DramTarget::access(tlm::tlm_generic_payload& trans) {
  const uint64_t addr = trans.get_address();
  const uint64_t len = trans.get_data_length();
  const tlm::tlm_command cmd = trans.get_command();
  if (trans.get_byte_enable_ptr() != nullptr) {
    trans.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
    return false;
  }
  if (trans.get_streaming_width() < len) {
    trans.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return false;
  }
  if (addr > capacity_ || len > capacity_ - addr) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  unsigned char* data = trans.get_data_ptr();
  if (cmd == tlm::TLM_WRITE_COMMAND) {
    if (mem_.size() < addr + len) mem_.resize(addr + len, 0);
    std::memcpy(mem_.data() + addr, data, len);
  } else if (cmd == tlm::TLM_READ_COMMAND) {
    const uint64_t have = mem_.size() > addr ? std::min<uint64_t>(len, mem_.size() - addr) : 0;
    if (have > 0) std::memcpy(data, mem_.data() + addr, have);
    std::memset(data + have, 0, len - have);
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return true;
}

void DramTarget::b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!access(trans)) return;
  const uint64_t len = trans.get_data_length();
  if (trans.get_command() == tlm::TLM_WRITE_COMMAND) bytes_written_ += len;
  if (trans.get_command() == tlm::TLM_READ_COMMAND) bytes_read_ += len;
  if (trans.get_command() != tlm::TLM_IGNORE_COMMAND) {
    ++transactions_;
    delay += transfer_time(len);
  }
}

unsigned int DramTarget::transport_dbg(tlm::tlm_generic_payload& trans) {
  return access(trans) ? trans.get_data_length() : 0;
}

std::vector<uint8_t> pack(const std::vector<uint64_t>& v, int bytes) {
  std::vector<uint8_t> out(v.size() * static_cast<size_t>(bytes));
  for (size_t i = 0; i < v.size(); ++i)
    for (int b = 0; b < bytes; ++b) out[i * static_cast<size_t>(bytes) + static_cast<size_t>(b)] = static_cast<uint8_t>(v[i] >> (8 * b));
  return out;
}

std::vector<uint64_t> unpack(const std::vector<uint8_t>& d, int bytes) {
  std::vector<uint64_t> out(d.size() / static_cast<size_t>(bytes), 0);
  for (size_t i = 0; i < out.size(); ++i)
    for (int b = 0; b < bytes; ++b) out[i] |= uint64_t{d[i * static_cast<size_t>(bytes) + static_cast<size_t>(b)]} << (8 * b);
  return out;
}

DramInitiator::DramInitiator(sc_core::sc_module_name name) : sc_core::sc_module(name), socket("socket") {}

void DramInitiator::transport(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, size_t len, sc_core::sc_time* delay) {
  tlm::tlm_generic_payload trans;
  trans.set_command(cmd);
  trans.set_address(addr);
  trans.set_data_ptr(data);
  trans.set_data_length(static_cast<unsigned int>(len));
  trans.set_streaming_width(static_cast<unsigned int>(len));
  trans.set_byte_enable_ptr(nullptr);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  if (delay != nullptr)
    socket->b_transport(trans, *delay);
  else if (socket->transport_dbg(trans) != len)
    trans.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
  if (trans.is_response_error())
    throw std::runtime_error(fmt::format("DRAM {} of {} bytes at 0x{:x} refused: {}", cmd == tlm::TLM_READ_COMMAND ? "read" : "write",
                                         len, addr, trans.get_response_string()));
}

void DramInitiator::read(uint64_t addr, std::vector<uint8_t>& data, sc_core::sc_time& delay) {
  transport(tlm::TLM_READ_COMMAND, addr, data.data(), data.size(), &delay);
}

void DramInitiator::write(uint64_t addr, const std::vector<uint8_t>& data, sc_core::sc_time& delay) {
  std::vector<uint8_t> copy = data;  // the payload's data pointer is not const
  transport(tlm::TLM_WRITE_COMMAND, addr, copy.data(), copy.size(), &delay);
}

void DramInitiator::peek(uint64_t addr, std::vector<uint8_t>& data) {
  transport(tlm::TLM_READ_COMMAND, addr, data.data(), data.size(), nullptr);
}

void DramInitiator::preload(uint64_t addr, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> copy = data;
  transport(tlm::TLM_WRITE_COMMAND, addr, copy.data(), copy.size(), nullptr);
}

}  // namespace fetta::sim::system
