#include "resolver/specs/url_credentials.hpp"

#include <cctype>

namespace envlock {
namespace {

bool scheme_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// Where a URL's authority ends: RFC 3986 3.2 ends it at '/', '?' or '#'; in running text a
// space, a quote or a bracket ends the URL itself.
bool ends_authority(char c) {
    return c == '/' || c == '?' || c == '#' || std::isspace(static_cast<unsigned char>(c)) || c == '"' ||
           c == '\'' || c == '>' || c == '<' || c == ')' || c == ']' || c == '`';
}

enum class Mode { strip, redact };

std::string rewrite(std::string_view text, Mode mode) {
    std::string out;
    out.reserve(text.size());
    size_t copied = 0;
    for (size_t sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", sep + 3)) {
        size_t scheme_start = sep;
        while (scheme_start > 0 && scheme_char(text[scheme_start - 1])) --scheme_start;
        if (scheme_start == sep) continue;
        size_t auth_start = sep + 3;
        size_t auth_end = auth_start;
        while (auth_end < text.size() && !ends_authority(text[auth_end])) ++auth_end;
        auto authority = text.substr(auth_start, auth_end - auth_start);
        auto at = authority.rfind('@');
        if (at == std::string_view::npos) continue;
        auto userinfo = authority.substr(0, at);
        auto colon = userinfo.find(':');
        auto scheme = text.substr(scheme_start, sep - scheme_start);
        bool ssh = scheme.size() >= 3 && scheme.substr(scheme.size() - 3) == "ssh";
        if (ssh && colon == std::string_view::npos) continue;
        out.append(text.substr(copied, auth_start - copied));
        if (mode == Mode::redact) {
            if (colon == std::string_view::npos)
                out += "***@";
            else
                out.append(userinfo.substr(0, colon)).append(":***@");
        }
        copied = auth_start + at + 1;
    }
    out.append(text.substr(copied));
    return out;
}

}  // namespace

std::string strip_url_credentials(std::string_view text) { return rewrite(text, Mode::strip); }

std::string redact_url_credentials(std::string_view text) { return rewrite(text, Mode::redact); }

}  // namespace envlock
