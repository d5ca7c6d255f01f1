#include "yaml_input/file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fetta::yaml_input {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_file_or_throw(const std::string& path) {
  std::optional<std::string> text = read_file(path);
  if (!text) throw std::runtime_error("cannot read " + path);
  return std::move(*text);
}

}  // namespace fetta::yaml_input
