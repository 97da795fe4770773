#pragma once
// Credentials written into URLs ("https://alice:token@host/simple") are secrets: they never enter
// a spec, a lock or a message. These find every scheme://userinfo@ inside a text (a whole URL, a
// requirement line, a documented command), so no caller has to know where a URL may hide.
#include <string>
#include <string_view>

namespace envlock {

// "pip install -i https://alice:tok@host/simple x" -> "pip install -i https://host/simple x".
// An ssh user without a password ("ssh://git@github.com/x") is an address, not a secret: kept.
std::string strip_url_credentials(std::string_view text);

// As above, but keeps the user name and hides the rest: "https://alice:***@host/simple";
// a token alone in the user part ("https://TOKEN@host") becomes "https://***@host".
std::string redact_url_credentials(std::string_view text);

}  // namespace envlock
