// Einsum front end of the search: "ab,bc,cd->ad" with single-character labels (letters),
// sizes from "a=4,b=8,c=8,d=4". Whitespace is ignored. Without "->" the output is every
// label that appears exactly once, in alphabetical order (numpy's implicit mode).
// Every error is a SearchError naming the offending label, operand or entry.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "verif/network.hpp"

namespace fetta::mapper {

// "a=4,b=8": label -> size. Errors: malformed entry, non-numeric/zero/negative size, label of
// more than one character, the same label twice.
std::map<std::string, int64_t> parse_dims(const std::string& text);

// Nodes are named "T0", "T1", ... in operand order. Errors: malformed text (empty operand or
// output position, a character that is not a letter, more than one "->", no operand),
// a label repeated within one operand or in the output, a label in three or more operands
// (a hyperedge), an output label in no operand, a label without a size, a non-positive size.
verif::TensorNetwork parse_einsum(const std::string& expr, const std::map<std::string, int64_t>& dims);
verif::TensorNetwork parse_einsum(const std::string& expr, const std::string& dims);

}  // namespace fetta::mapper
