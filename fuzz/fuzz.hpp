#pragma once
// Shared by the fuzz targets: the input as text, and `property`, which turns a violated
// round-trip property into an abort libFuzzer reports as a crash (with the input saved).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace envlock::fuzz {

inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// Splits "a\nb" at the first newline: two inputs from one (a version and a specifier …).
inline std::pair<std::string_view, std::string_view> split_first_line(std::string_view s) {
    auto nl = s.find('\n');
    if (nl == std::string_view::npos) return {s, {}};
    return {s.substr(0, nl), s.substr(nl + 1)};
}

[[noreturn]] inline void violated(const char* what, std::string_view a, std::string_view b) {
    std::fprintf(stderr, "round-trip property violated: %s\n  first:  '%.*s'\n  second: '%.*s'\n", what,
                 static_cast<int>(a.size()), a.data(), static_cast<int>(b.size()), b.data());
    std::abort();
}

// `what` names the property, e.g. "Version::parse(v.str()) == v".
inline void property(bool holds, const char* what, std::string_view a = {}, std::string_view b = {}) {
    if (!holds) violated(what, a, b);
}

}  // namespace envlock::fuzz
