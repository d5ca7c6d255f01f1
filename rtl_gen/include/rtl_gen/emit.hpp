// The SystemVerilog back end: one file per module, plus filelist.f and manifest.json.
// Output depends only on the design (no dates, no absolute paths), so the same generator
// parameters always give byte-identical files.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "rtl_gen/module.hpp"

namespace fetta::rtl {

std::string emit_module(const Module& m);

// Code lines longer than 100 characters broken at spaces, outermost brackets first, continuation
// lines indented four more; comments are left whole. emit_module applies it to every module.
std::string wrap_long_lines(const std::string& text);

struct EmittedFile {
  std::string module;
  std::string file;  // relative to the output directory
  std::string sha256;
  size_t bytes = 0;
};

struct EmitResult {
  std::filesystem::path dir;
  std::string top;
  std::vector<EmittedFile> files;  // children before parents (filelist order)
};

// Writes every module reachable from `top`; `info` lands in manifest.json as "config".
// Files whose content is unchanged are not rewritten (their timestamps stay).
EmitResult write_design(const Design& d, const std::string& top, const std::filesystem::path& dir,
                        const ParamList& info = {});

std::string sha256_hex(const std::string& data);

}  // namespace fetta::rtl
