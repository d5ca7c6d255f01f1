// The whole of an input file (a configuration, a layer, a grid, a program's streams), read once
// for every reader: each turns a missing file into its own error, naming the file and what it is.
#pragma once

#include <optional>
#include <string>

namespace fetta::yaml_input {

// The file's bytes, unchanged; nullopt when it cannot be opened.
std::optional<std::string> read_file(const std::string& path);
// The same for a reader with nothing to add to the error: throws std::runtime_error "cannot read <path>".
std::string read_file_or_throw(const std::string& path);

}  // namespace fetta::yaml_input
