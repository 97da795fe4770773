#pragma once
// Whole-file reads and atomic writes: a write goes to a temp file beside the target and is
// renamed into place, so a reader never sees half a file and a failure loses nothing.
#include <string>
#include <string_view>

namespace envlock {

// EnvironmentError (exit 3) when the file cannot be read; InputError (exit 2) when it does
// not exist and `what` is given ("lock", "spec"), naming the file.
std::string read_text_file(const std::string& path, std::string_view what = "");

void write_file_atomically(const std::string& path, std::string_view content);

}  // namespace envlock
