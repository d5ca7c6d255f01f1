#include "rtl_gen/error.hpp"

#include <fmt/core.h>

#include <string_view>

namespace fetta::rtl {

SourceLoc SourceLoc::from(const std::source_location& l) {
  std::string_view f = l.file_name();
#ifdef FETTA_SOURCE_DIR
  constexpr std::string_view root = FETTA_SOURCE_DIR;
  if (f.substr(0, root.size()) == root) f.remove_prefix(root.size());
#endif
  return SourceLoc{std::string(f), static_cast<int>(l.line())};
}

std::string SourceLoc::str() const { return file.empty() ? "<unknown>" : fmt::format("{}:{}", file, line); }

const char* to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::width: return "width mismatch";
    case ErrorKind::type: return "type error";
    case ErrorKind::undriven: return "undriven signal";
    case ErrorKind::multiple_drivers: return "multiple drivers";
    case ErrorKind::comb_loop: return "combinational loop";
    case ErrorKind::latch: return "latch";
    case ErrorKind::port: return "port error";
    case ErrorKind::name: return "name error";
    case ErrorKind::usage: return "usage error";
  }
  return "error";
}

RtlError::RtlError(ErrorKind kind, const std::string& what_signal, const std::string& message, const SourceLoc& loc)
    : std::runtime_error(fmt::format("{}: {}: '{}': {}", loc.str(), to_string(kind), what_signal, message)),
      kind_(kind),
      signal_(what_signal),
      loc_(loc) {}

}  // namespace fetta::rtl
