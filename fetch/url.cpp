#include "fetch/url.hpp"

#include <vector>

namespace envlock::fetch {

namespace {

// Splits a URL into scheme ("https:"), authority ("//host"), path, and the rest ("?q#f").
struct Parts {
    std::string_view scheme, authority, path, rest;
};

Parts split(std::string_view url) {
    Parts p;
    auto colon = url.find(':');
    auto first_special = url.find_first_of("/?#");
    if (colon != std::string_view::npos && (first_special == std::string_view::npos || colon < first_special)) {
        p.scheme = url.substr(0, colon + 1);
        url.remove_prefix(colon + 1);
    }
    if (url.substr(0, 2) == "//") {
        auto end = url.find_first_of("/?#", 2);
        p.authority = url.substr(0, end);
        url.remove_prefix(p.authority.size());
    }
    auto q = url.find_first_of("?#");
    p.path = url.substr(0, q);
    if (q != std::string_view::npos) p.rest = url.substr(q);
    return p;
}

std::string remove_dot_segments(std::string_view path) {
    std::vector<std::string_view> out;
    bool absolute = !path.empty() && path.front() == '/';
    bool trailing = false;
    size_t i = absolute ? 1 : 0;
    while (i <= path.size()) {
        auto slash = path.find('/', i);
        auto seg = path.substr(i, slash == std::string_view::npos ? std::string_view::npos : slash - i);
        bool last = slash == std::string_view::npos;
        trailing = false;
        if (seg == "..") {
            if (!out.empty()) out.pop_back();
            trailing = true;
        } else if (seg == ".") {
            trailing = true;
        } else {
            out.push_back(seg);
        }
        if (last) break;
        i = slash + 1;
    }
    std::string result = absolute ? "/" : "";
    for (size_t k = 0; k < out.size(); ++k) {
        if (k) result += '/';
        result += out[k];
    }
    if (trailing && !result.empty() && result.back() != '/') result += '/';
    return result;
}

}  // namespace

std::string url_join(std::string_view base, std::string_view href) {
    Parts r = split(href);
    if (!r.scheme.empty()) return std::string(r.scheme) + std::string(r.authority) + remove_dot_segments(r.path) + std::string(r.rest);
    Parts b = split(base);
    std::string head = std::string(b.scheme);
    if (!r.authority.empty()) return head + std::string(r.authority) + remove_dot_segments(r.path) + std::string(r.rest);
    head += b.authority;
    if (r.path.empty()) {
        if (!r.rest.empty() && r.rest.front() == '#') {
            auto bq = b.rest.find('#');
            return head + std::string(b.path) + std::string(b.rest.substr(0, bq)) + std::string(r.rest);
        }
        return head + std::string(b.path) + std::string(r.rest.empty() ? b.rest : r.rest);
    }
    if (r.path.front() == '/') return head + remove_dot_segments(r.path) + std::string(r.rest);
    std::string merged;
    if (!b.authority.empty() && b.path.empty()) merged = "/" + std::string(r.path);
    else {
        auto slash = b.path.rfind('/');
        merged = std::string(slash == std::string_view::npos ? "" : b.path.substr(0, slash + 1)) + std::string(r.path);
    }
    return head + remove_dot_segments(merged) + std::string(r.rest);
}

std::string redact_url(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::string(url);
    auto auth_start = scheme_end + 3;
    auto auth_end = url.find_first_of("/?#", auth_start);
    auto authority = url.substr(auth_start, auth_end == std::string_view::npos ? std::string_view::npos : auth_end - auth_start);
    auto at = authority.rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    auto userinfo = authority.substr(0, at);
    auto colon = userinfo.find(':');
    std::string user = std::string(colon == std::string_view::npos ? userinfo : userinfo.substr(0, colon));
    // A token alone in the user part (https://TOKEN@host) is as secret as a password.
    std::string shown = colon == std::string_view::npos ? "***" : user + ":***";
    return std::string(url.substr(0, auth_start)) + shown + std::string(url.substr(auth_start + at));
}

std::string strip_userinfo(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::string(url);
    auto auth_start = scheme_end + 3;
    auto auth_end = url.find_first_of("/?#", auth_start);
    auto at = url.substr(auth_start, auth_end == std::string_view::npos ? std::string_view::npos : auth_end - auth_start).rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    return std::string(url.substr(0, auth_start)) + std::string(url.substr(auth_start + at + 1));
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
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
            out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
        } else {
            out += text[i];
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
