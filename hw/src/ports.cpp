#include "hw/ports.hpp"

#include <algorithm>

namespace fetta::hw {

using namespace rtl;

Type WordPort::type() { return Bundle({field("we", UInt(1)), field("word", UInt(32)), flipped("ready", UInt(1))}); }

WordPort::WordPort(const Data& d) : we(d["we"]), word(d["word"]), ready(d["ready"]) {}

HostPortShape host_port_shape(const arch::DmaGeometry& g) {
  return {std::max(1, g.group_bits), g.row_bits, g.lanes, g.width};
}

Type HostPort::type(const HostPortShape& s) {
  return Bundle({field("group", UInt(s.group_bits)), field("row", UInt(s.row_bits)), field("we", UInt(1)),
                 field("wmask", UInt(s.lanes)), field("wdata", Vec(UInt(s.width), s.lanes)), field("re", UInt(1)),
                 flipped("rdata", Vec(UInt(s.width), s.lanes))});
}

HostPort::HostPort(const Data& d)
    : group(d["group"]), row(d["row"]), we(d["we"]), wmask(d["wmask"]), wdata(d["wdata"]), re(d["re"]),
      rdata(d["rdata"]) {}

Type DramPort::type(const arch::DmaGeometry& g) {
  const Type beat = Vec(UInt(g.width), g.lanes);
  return Bundle({field("req_valid", UInt(1)), flipped("req_ready", UInt(1)), field("req_write", UInt(1)),
                 field("req_addr", UInt(g.addr_bits)), field("req_wdata", beat), flipped("rsp_valid", UInt(1)),
                 flipped("rsp_rdata", beat)});
}

DramPort::DramPort(const Data& d)
    : req_valid(d["req_valid"]), req_ready(d["req_ready"]), req_write(d["req_write"]), req_addr(d["req_addr"]),
      req_wdata(d["req_wdata"]), rsp_valid(d["rsp_valid"]), rsp_rdata(d["rsp_rdata"]) {}

}  // namespace fetta::hw
