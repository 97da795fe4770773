#include "resolver/specs/utf8.hpp"

#include <cstdio>

#include "resolver/specs/errors.hpp"

namespace envlock::utf8 {

std::optional<std::size_t> invalid_at(std::string_view text) {
    const auto* s = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    std::size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len;
        unsigned char lo = 0x80, hi = 0xBF;   // the allowed range of the second byte (RFC 3629 table)
        if (c >= 0xC2 && c <= 0xDF) len = 2;
        else if (c == 0xE0) len = 3, lo = 0xA0;
        else if (c == 0xED) len = 3, hi = 0x9F;   // no surrogates
        else if (c >= 0xE1 && c <= 0xEF) len = 3;
        else if (c == 0xF0) len = 4, lo = 0x90;
        else if (c == 0xF4) len = 4, hi = 0x8F;   // nothing above U+10FFFF
        else if (c >= 0xF1 && c <= 0xF3) len = 4;
        else return i;
        if (i + len > n || s[i + 1] < lo || s[i + 1] > hi) return i;
        for (std::size_t k = 2; k < len; ++k)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
        i += len;
    }
    return std::nullopt;
}

std::string valid(std::string_view text) {
    std::string out;
    while (auto bad = invalid_at(text)) {
        out.append(text.substr(0, *bad));
        out.append("\xEF\xBF\xBD");
        text.remove_prefix(*bad + 1);
    }
    out.append(text);
    return out;
}

std::string utf8_or_latin1(std::string_view text) {
    if (!invalid_at(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    while (!text.empty()) {
        std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl == std::string_view::npos ? text.size() : nl + 1);
        text.remove_prefix(line.size());
        if (!invalid_at(line)) {
            out.append(line);
            continue;
        }
        for (unsigned char c : line) {   // Latin-1: each byte is the code point of the same value
            if (c < 0x80) {
                out.push_back(static_cast<char>(c));
            } else {
                out.push_back(static_cast<char>(0xC0 | (c >> 6)));
                out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
            }
        }
    }
    return out;
}

void require(std::string_view text, std::string_view file) {
    auto bad = invalid_at(text);
    if (!bad) return;
    std::size_t line = 1, line_start = 0;
    for (std::size_t i = 0; i < *bad; ++i)
        if (text[i] == '\n') ++line, line_start = i + 1;
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[*bad]));
    throw InputError(std::string(file) + ":" + std::to_string(line) + ": expected UTF-8 text, found byte " + byte +
                     " at column " + std::to_string(*bad - line_start + 1));
}

}  // namespace envlock::utf8
