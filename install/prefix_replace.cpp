#include "install/prefix_replace.hpp"

#include "resolver/specs/errors.hpp"

namespace envlock::install {
namespace {

std::string replace_all(std::string_view data, std::string_view from, std::string_view to, size_t* count = nullptr) {
    std::string out;
    out.reserve(data.size());
    size_t pos = 0, n = 0;
    for (;;) {
        size_t at = data.find(from, pos);
        if (at == std::string_view::npos) break;
        out.append(data.substr(pos, at - pos));
        out.append(to);
        pos = at + from.size();
        ++n;
    }
    out.append(data.substr(pos));
    if (count) *count = n;
    return out;
}

std::string basename_of(std::string_view path) {
    auto slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace

std::string replace_text_prefix(std::string_view data, std::string_view placeholder, std::string_view prefix) {
    if (placeholder.empty()) return std::string(data);
    return fix_shebang(replace_all(data, placeholder, prefix), prefix);
}

std::string replace_binary_prefix(std::string_view data, std::string_view placeholder, std::string_view prefix) {
    // conda's rule (C:conda/core/portability.py binary_replace): each NUL-terminated string
    // holding the placeholder is rewritten and padded with NULs to its old length.
    if (placeholder.empty()) return std::string(data);
    if (prefix.size() > placeholder.size())
        throw InputError("the prefix " + std::string(prefix) + " (" + std::to_string(prefix.size()) +
                         " bytes) is longer than the package's binary placeholder (" + std::to_string(placeholder.size()) +
                         " bytes); choose a shorter --prefix");
    std::string out;
    out.reserve(data.size());
    size_t pos = 0;
    for (;;) {
        size_t at = data.find(placeholder, pos);
        if (at == std::string_view::npos) break;
        size_t nul = data.find('\0', at + placeholder.size());
        if (nul == std::string_view::npos) break;   // not a C string: left alone, as conda does
        out.append(data.substr(pos, at - pos));
        size_t n = 0;
        out.append(replace_all(data.substr(at, nul - at), placeholder, prefix, &n));
        out.append(1 + n * (placeholder.size() - prefix.size()), '\0');
        pos = nul + 1;
    }
    out.append(data.substr(pos));
    return out;
}

std::string python_shebang(const std::string& python) {
    std::string line = "#!" + python;
    if (line.size() <= kMaxShebang && python.find(' ') == std::string::npos) return line + "\n";
    // The interpreter line sh reads, which python then reads as a string literal
    // (C:conda/core/portability.py L466-494).
    return "#!/bin/sh\n'''exec' \"" + python + "\" \"$0\" \"$@\" #'''\n";
}

std::string fix_shebang(std::string data, std::string_view prefix) {
    if (data.rfind("#!", 0) != 0 || prefix.empty()) return data;
    size_t eol = data.find('\n');
    std::string line = data.substr(0, eol);
    std::string rest = eol == std::string::npos ? "" : data.substr(eol + 1);
    size_t start = line.find_first_not_of(' ', 2);
    if (start == std::string::npos || line.compare(start, prefix.size(), prefix) != 0) return data;
    // The interpreter is the prefix plus what follows it up to the first space.
    size_t exe_end = line.find(' ', start + prefix.size());
    std::string exe = line.substr(start, exe_end == std::string::npos ? std::string::npos : exe_end - start);
    std::string options = exe_end == std::string::npos ? "" : line.substr(exe_end);
    if (line.size() <= kMaxShebang && exe.find(' ') == std::string::npos) return data;
    std::string name = basename_of(exe);
    std::string nl = eol == std::string::npos ? "" : "\n";
    if (name.rfind("python", 0) == 0 && options.find_first_not_of(' ') == std::string::npos)
        return python_shebang(exe) + rest;
    return "#!/usr/bin/env " + name + options + nl + rest;
}

}  // namespace envlock::install
