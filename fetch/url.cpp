#include "fetch/url.hpp"

#include <cctype>

#include <array>
#include <memory>
#include <optional>

#include <curl/curl.h>

#include "resolver/specs/find_chars.hpp"
#include "resolver/specs/url_credentials.hpp"

namespace envlock::fetch {

namespace {

// A table, not a search per character: every link of an index page is checked.
constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> t{};
    for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
    for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
    for (int c = '0'; c <= '9'; ++c) t[c] = true;
    for (unsigned char c : std::string_view("-._~!$&'()*+,;=:@/?#%")) t[c] = true;
    return t;
}();

bool plain_char(unsigned char c) { return kPlain[c]; }

bool hex_digit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Characters libcurl keeps as they are: RFC 3986 unreserved, sub-delims, ':', '@', '/', '?',
// one '#', and well-formed percent escapes.
bool plain(std::string_view s) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (!plain_char(static_cast<unsigned char>(s[i]))) return false;
        if (s[i] == '%' && (i + 2 >= s.size() || !hex_digit(s[i + 1]) || !hex_digit(s[i + 2]))) return false;
        if (s[i] == '#' && s.find('#', i + 1) != std::string_view::npos) return false;
    }
    return true;
}

// RFC 3986 5.2.4.
std::string remove_dot_segments(std::string_view in) {
    std::string out;
    while (!in.empty()) {
        if (in.substr(0, 3) == "../") in.remove_prefix(3);
        else if (in.substr(0, 2) == "./") in.remove_prefix(2);
        else if (in.substr(0, 3) == "/./") in.remove_prefix(2);
        else if (in == "/.") in = "/";
        else if (in.substr(0, 4) == "/../" || in == "/..") {
            in = in.size() == 3 ? std::string_view("/") : in.substr(3);
            auto slash = out.rfind('/');
            out.erase(slash == std::string::npos ? 0 : slash);
        } else if (in == "." || in == "..") {
            in = {};
        } else {
            auto next = in.find('/', 1);
            if (next == std::string_view::npos) next = in.size();
            out.append(in.substr(0, next));
            in.remove_prefix(next);
        }
    }
    return out;
}

// The case an index page is made of, joined without libcurl (whose URL parser was 8% of a
// warm re-resolve): an http(s)/file base with a plain lower-case host and a relative reference
// of plain characters, merged and dot-segments removed as RFC 3986 5.2.2-5.2.4 say. Anything
// else (schemes, network paths, ports, user info, escapes libcurl would normalise, file:// with
// a query, which libcurl drops) is left to libcurl: nullopt.
std::optional<std::string> join_plain(std::string_view base, std::string_view href) {
    std::size_t scheme_end = 0;
    if (base.rfind("https://", 0) == 0) scheme_end = 8;
    else if (base.rfind("http://", 0) == 0) scheme_end = 7;
    else if (base.rfind("file://", 0) == 0) scheme_end = 7;
    else return std::nullopt;
    if (base[0] == 'f' && href.find('?') != std::string_view::npos) return std::nullopt;
    if (href.empty() || href.front() == '#' || href.rfind("//", 0) == 0 || !plain(base) || !plain(href)) return std::nullopt;
    if (href.find(':') < find_first_of_chars(href, "/?#")) return std::nullopt;   // a scheme of its own
    auto path_start = base.find('/', scheme_end);
    if (path_start == std::string_view::npos) return std::nullopt;
    for (char c : base.substr(scheme_end, path_start - scheme_end))
        if ((c >= 'A' && c <= 'Z') || c == ':' || c == '@' || c == '%') return std::nullopt;
    std::string_view base_path = base.substr(path_start);
    base_path = base_path.substr(0, find_first_of_chars(base_path, "?#"));
    std::string_view ref_path = href.substr(0, find_first_of_chars(href, "?#"));
    std::string_view rest = href.substr(ref_path.size());
    std::string path;
    if (ref_path.empty()) {
        // Only "?query": the base path with the new query (a fragment alone is handled above).
        path = std::string(base_path);
    } else if (ref_path.front() == '/') {
        path = remove_dot_segments(ref_path);
    } else {
        std::string merged(base_path.substr(0, base_path.rfind('/') + 1));
        merged.append(ref_path);
        path = remove_dot_segments(merged);
    }
    return std::string(base.substr(0, path_start)) + path + std::string(rest);
}

}  // namespace

std::string url_join(std::string_view base, std::string_view href) {
    // libcurl's URL API resolves a reference against a base as RFC 3986 section 5.2 says (it
    // follows redirects with it); a reference it cannot read is returned as written.
    // A fragment alone keeps the whole base (RFC 3986 5.2.2), which libcurl 7.88 gets wrong.
    if (!href.empty() && href.front() == '#') return std::string(base.substr(0, base.find('#'))) + std::string(href);
    if (auto joined = join_plain(base, href)) return *joined;
    std::unique_ptr<CURLU, void (*)(CURLU*)> url(curl_url(), curl_url_cleanup);
    const unsigned flags = CURLU_NON_SUPPORT_SCHEME | CURLU_ALLOW_SPACE;
    if (!url || curl_url_set(url.get(), CURLUPART_URL, std::string(base).c_str(), flags) != CURLUE_OK ||
        curl_url_set(url.get(), CURLUPART_URL, std::string(href).c_str(), flags) != CURLUE_OK)
        return std::string(href);
    char* joined = nullptr;
    if (curl_url_get(url.get(), CURLUPART_URL, &joined, 0) != CURLUE_OK) return std::string(href);
    std::string out(joined);
    curl_free(joined);
    return out;
}

std::string redact_url(std::string_view url) { return redact_url_credentials(url); }

std::string strip_userinfo(std::string_view url) { return strip_url_credentials(url); }

UrlAuthority url_authority(std::string_view url) {
    auto lower = [](std::string_view s) {
        std::string out(s);
        for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        return out;
    };
    auto sep = url.find("://");
    if (sep == std::string_view::npos) return {};
    const std::string scheme = lower(url.substr(0, sep));
    if (scheme != "http" && scheme != "https") return {};
    std::string_view authority = url.substr(sep + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    UrlAuthority out;
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        out.userinfo = std::string(authority.substr(0, at));
        authority.remove_prefix(at + 1);
    }
    // "[::1]:8080" or "host:8080"; the port is after the last ':' outside brackets.
    std::string_view host = authority, port;
    auto colon = authority.rfind(':');
    if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) return {};
    out.origin = scheme + "://" + lower(host) + ":" + (port.empty() ? (scheme == "https" ? "443" : "80") : std::string(port));
    return out;
}

std::string_view strip_fragment(std::string_view url, std::string_view* fragment) {
    auto hash = url.find('#');
    if (fragment) *fragment = hash == std::string_view::npos ? std::string_view{} : url.substr(hash + 1);
    return url.substr(0, hash);
}

std::string percent_decode(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    auto hex = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    // Runs without '%' are copied whole.
    size_t i = 0;
    while (i < text.size()) {
        size_t pct = text.find('%', i);
        if (pct == std::string_view::npos) pct = text.size();
        out.append(text.substr(i, pct - i));
        i = pct;
        if (i == text.size()) break;
        if (i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 3;
        } else {
            out += '%';
            ++i;
        }
    }
    return out;
}

bool is_file_url(std::string_view url) { return url.substr(0, 7) == "file://"; }

std::string file_url_path(std::string_view url) {
    url.remove_prefix(7);
    // "file://localhost/x" and "file:///x" both name /x.
    if (url.substr(0, 9) == "localhost") url.remove_prefix(9);
    return percent_decode(strip_fragment(url));
}

std::string path_to_file_url(std::string_view path) { return "file://" + std::string(path); }

std::string trim_trailing_slashes(std::string_view url) {
    while (url.size() > 1 && url.back() == '/') url.remove_suffix(1);
    return std::string(url);
}

void append_utf8(std::string& out, unsigned long cp) {
    if (cp < 0x80) out += static_cast<char>(cp);
    else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace envlock::fetch
