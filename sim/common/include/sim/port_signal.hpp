// Binding the ports of a Verilated SystemC model (verilator --sc) by name, whatever their count:
// each port gets an sc_signal of the type Verilator gives its width (bool up to 1 bit, uint32_t
// up to 32, uint64_t up to 64), read and written as uint64_t. Shared by the testbenches.
#pragma once

#include <systemc.h>

#include <cstdint>
#include <memory>
#include <string>

namespace fetta::sim {

class PortSignal {
 public:
  virtual ~PortSignal() = default;
  virtual void write(uint64_t v) = 0;
  virtual uint64_t read() const = 0;
};

namespace detail {

template <typename T>
class TypedPortSignal : public PortSignal {
 public:
  explicit TypedPortSignal(const std::string& name) : sig_(name.c_str()) {}
  void write(uint64_t v) override { sig_.write(static_cast<T>(v)); }
  uint64_t read() const override { return static_cast<uint64_t>(sig_.read()); }
  sc_core::sc_signal<T>& sig() { return sig_; }

 private:
  sc_core::sc_signal<T> sig_;
};

template <typename T>
std::unique_ptr<PortSignal> try_bind(sc_core::sc_object* obj, const std::string& sig_name) {
  if (auto* in = dynamic_cast<sc_core::sc_in<T>*>(obj)) {
    auto s = std::make_unique<TypedPortSignal<T>>(sig_name);
    in->bind(s->sig());
    return s;
  }
  if (auto* out = dynamic_cast<sc_core::sc_out<T>*>(obj)) {
    auto s = std::make_unique<TypedPortSignal<T>>(sig_name);
    out->bind(s->sig());
    return s;
  }
  return nullptr;
}

template <typename T>
bool is_port_of(sc_core::sc_object* obj) {
  return dynamic_cast<sc_core::sc_in<T>*>(obj) || dynamic_cast<sc_core::sc_out<T>*>(obj);
}

}  // namespace detail

// Binds the model port `obj` to a new signal named `sig_name`; nullptr if it is not an
// sc_in/sc_out of bool, uint32_t or uint64_t (a port wider than 64 bits).
inline std::unique_ptr<PortSignal> bind_port(sc_core::sc_object* obj, const std::string& sig_name) {
  std::unique_ptr<PortSignal> s = detail::try_bind<bool>(obj, sig_name);
  if (!s) s = detail::try_bind<uint32_t>(obj, sig_name);
  if (!s) s = detail::try_bind<uint64_t>(obj, sig_name);
  return s;
}

// Whether `obj` is an sc_in/sc_out of the type Verilator uses for `width` bits.
inline bool port_type_fits(sc_core::sc_object* obj, int width) {
  if (width == 1) return detail::is_port_of<bool>(obj);
  if (width <= 32) return detail::is_port_of<uint32_t>(obj);
  if (width <= 64) return detail::is_port_of<uint64_t>(obj);
  return false;
}

}  // namespace fetta::sim
