// placeholder until the search work lands
#include <CLI/CLI.hpp>

#include "commands.hpp"

namespace fetta::app {
void add_search_command(CLI::App&) {}
}  // namespace fetta::app
