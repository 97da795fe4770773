#pragma once
// URL helpers shared by the transport, the cache and the readers: resolving relative hrefs
// from index pages, hiding credentials before a URL reaches a message, and file:// paths.
#include <string>
#include <string_view>

namespace envlock::fetch {

// RFC 3986 reference resolution: `href` (absolute, "//host/x", "/x", "x", "../x", "?q", "#f")
// against the page it was found on. Dot segments are removed from the result.
std::string url_join(std::string_view base, std::string_view href);

// "https://user:secret@host/x" -> "https://user:***@host/x"; a URL without a password is
// returned unchanged. Every URL that reaches a message or a log goes through this.
std::string redact_url(std::string_view url);

// "https://user:secret@host/x" -> "https://host/x". Record URLs go through this so no lock
// ever holds a credential; downloads get theirs back from ~/.netrc or a mirror rule.
std::string strip_userinfo(std::string_view url);

// The parts of an http(s) URL that decide where its credentials may go: "https://u:p@Host/x"
// -> origin "https://host:443" (scheme and host lower case, the default port written out),
// userinfo "u:p" (as written, percent-encoded). Origin "" for any other URL.
struct UrlAuthority {
    std::string origin;
    std::string userinfo;
};
UrlAuthority url_authority(std::string_view url);

// Splits "u#frag" into "u" and "frag" (fragment "" when there is none).
std::string_view strip_fragment(std::string_view url, std::string_view* fragment = nullptr);

// %XX decoding; a malformed escape is kept as written.
std::string percent_decode(std::string_view text);

// Appends the UTF-8 encoding of a code point (JSON \u escapes, HTML numeric entities).
void append_utf8(std::string& out, unsigned long code_point);

bool is_file_url(std::string_view url);
// "file:///a/b%20c" -> "/a/b c"
std::string file_url_path(std::string_view url);
// An absolute local path -> "file:///..." (no escaping of ordinary characters).
std::string path_to_file_url(std::string_view path);

// Removes trailing slashes ("https://x/ch/" -> "https://x/ch").
std::string trim_trailing_slashes(std::string_view url);

}  // namespace envlock::fetch
