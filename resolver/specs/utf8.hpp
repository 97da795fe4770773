#pragma once
// UTF-8 validity: every text envlock reads (requirements, locks, targets) must be UTF-8, as
// pip and YAML require, so that it can be written back as YAML and JSON (nlohmann refuses
// invalid UTF-8) without failing later with an internal error.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace envlock::utf8 {

// Byte offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF); nullopt when all of it is valid.
std::optional<std::size_t> invalid_at(std::string_view text);

// `text` with every byte that does not start a well-formed sequence replaced by U+FFFD, as
// Python's decode(errors="replace") does: for prose (docs, scripts) read leniently.
std::string valid(std::string_view text);

// `text` as packaging's core-metadata reader decodes it: each line that is UTF-8 as it is, each
// other line as Latin-1 ("mojibake" rather than a failure; old sdists wrote PKG-INFO and setup.py
// in Latin-1, e.g. argparse 0.8.0's setup.py says "Copyright \xA9" under a utf-8 coding line).
// The result is always UTF-8, so it can go into JSON and YAML.
std::string utf8_or_latin1(std::string_view text);

// Throws InputError "FILE:LINE: expected UTF-8 text, found byte 0xFF at column C" when `text`
// (the whole content of FILE) is not UTF-8.
void require(std::string_view text, std::string_view file);

}  // namespace envlock::utf8
