#include "fetch/url.hpp"

#include <memory>

#include <curl/curl.h>

#include "resolver/specs/url_credentials.hpp"

namespace envlock::fetch {

std::string url_join(std::string_view base, std::string_view href) {
    // libcurl's URL API resolves a reference against a base as RFC 3986 section 5.2 says (it
    // follows redirects with it); a reference it cannot read is returned as written.
    // A fragment alone keeps the whole base (RFC 3986 5.2.2), which libcurl 7.88 gets wrong.
    if (!href.empty() && href.front() == '#') return std::string(base.substr(0, base.find('#'))) + std::string(href);
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
