// Identifier rules for emitted SystemVerilog. Names come from the C++ code and are never
// silently changed: an illegal or reserved name is an error at the line that declared it.
#pragma once

#include <string>

namespace fetta::rtl {

bool is_sv_keyword(const std::string& s);
bool is_legal_identifier(const std::string& s);
// Empty when `s` is usable; otherwise the reason it is not.
std::string identifier_problem(const std::string& s);

}  // namespace fetta::rtl
