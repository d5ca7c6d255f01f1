// Interfaces between generators, each declared once: a bundle type, and a typed view of its
// fields for the code that drives or reads them (a misspelt field is a compile error, not an
// elaboration error). The side that drives a bundle declares it with Module::output, so its
// flipped fields are inputs; the side that answers declares it with Module::input. rtl::connect
// joins two of them and checks widths and directions. In SystemVerilog a field is the port
// `<port>_<field>` (an element `<port>_<field>_<j>`).
#pragma once

#include <string>

#include "arch/dma.hpp"
#include "rtl_gen/rtl.hpp"

namespace fetta::hw {

// A queue of 32-bit words, from the writer's side (the controller's instructions, the DMA's
// descriptors): a word is taken in each cycle `we` is high; `ready` (flipped) says the queue
// takes a whole entry.
struct WordPort {
  static rtl::Type type();
  explicit WordPort(const rtl::Data& d);
  rtl::Data we, word, ready;
};

// The unified memory's host port, from the side that drives it (the DMA, the host): one beat of
// `lanes` elements a cycle at (group, row) of the half the TCU is not using. A read's `rdata`
// (flipped) comes one cycle after `re`.
struct HostPortShape {
  int group_bits = 1;  // at least 1 (a port of one group still has its group bit)
  int row_bits = 1;
  int lanes = 1;
  int width = 16;
};
HostPortShape host_port_shape(const arch::DmaGeometry& g);
struct HostPort {
  static rtl::Type type(const HostPortShape& s);
  explicit HostPort(const rtl::Data& d);
  rtl::Data group, row, we, wmask, wdata, re, rdata;
};

// The DMA's external memory port, from the DMA's side: requests under `req_ready` (flipped), one
// response per request, in order (`rsp_*` flipped; a write's response carries no data).
struct DramPort {
  static rtl::Type type(const arch::DmaGeometry& g);
  explicit DramPort(const rtl::Data& d);
  rtl::Data req_valid, req_ready, req_write, req_addr, req_wdata, rsp_valid, rsp_rdata;
};

}  // namespace fetta::hw
