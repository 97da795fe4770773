#pragma once
// Prefix replacement in conda package files (CEP 34 paths.json / has_prefix): text files get
// every placeholder replaced (lengths may change) and over-long shebangs shortened; binary
// files keep their length, each C string rewritten and padded with NULs.
#include <string>
#include <string_view>

namespace envlock::install {

// Linux executes at most 127 bytes of a "#!" line (conda, mamba and rattler use the same).
inline constexpr size_t kMaxShebang = 127;

std::string replace_text_prefix(std::string_view data, std::string_view placeholder, std::string_view prefix);

// InputError when `prefix` is longer than `placeholder` (nothing can be padded then).
std::string replace_binary_prefix(std::string_view data, std::string_view placeholder, std::string_view prefix);

// A script whose "#!" line names an interpreter under `prefix` and is longer than kMaxShebang,
// or has a space in that interpreter's path: a python interpreter gets the /bin/sh trick,
// which keeps the exact interpreter; anything else "#!/usr/bin/env <name>" (rattler's rule).
// Other files are returned as they are.
std::string fix_shebang(std::string data, std::string_view prefix);

// The "#!" line for a script run by `python` (absolute path), with the same rules.
std::string python_shebang(const std::string& python);

}  // namespace envlock::install
