#include "yaml_input/file.hpp"

#include <fstream>
#include <sstream>

namespace fetta::yaml_input {

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace fetta::yaml_input
