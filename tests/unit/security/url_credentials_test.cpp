// Where a credential may hide in a text a spec keeps: a whole URL, a requirement line, a
// documented command. RFC 3986 3.2.1: userinfo is what precedes '@' in the authority.
#include <doctest/doctest.h>

#include "resolver/specs/url_credentials.hpp"

using envlock::redact_url_credentials;
using envlock::strip_url_credentials;

TEST_CASE("user:password and a bare token are stripped from every URL inside a text") {
    CHECK(strip_url_credentials("https://alice:tok@host/simple") == "https://host/simple");
    CHECK(strip_url_credentials("https://TOKEN@host/simple") == "https://host/simple");
    CHECK(strip_url_credentials("pip install -i https://a:b@h1/simple --extra-index-url http://c:d@h2:8080/x pkg") ==
          "pip install -i https://h1/simple --extra-index-url http://h2:8080/x pkg");
    CHECK(strip_url_credentials("mmcv @ git+https://u:p@github.com/open-mmlab/mmcv@v1.4.0") ==
          "mmcv @ git+https://github.com/open-mmlab/mmcv@v1.4.0");
}

TEST_CASE("an '@' after the authority is part of the path, not userinfo") {
    CHECK(strip_url_credentials("https://host/a@b") == "https://host/a@b");
    CHECK(strip_url_credentials("git+https://github.com/x/y@v1.0") == "git+https://github.com/x/y@v1.0");
    CHECK(strip_url_credentials("numpy==1.19.5") == "numpy==1.19.5");
    CHECK(strip_url_credentials("file:///srv/mirror") == "file:///srv/mirror");
}

TEST_CASE("an ssh user without a password is an address and stays") {
    CHECK(strip_url_credentials("ssh://git@github.com/x/y") == "ssh://git@github.com/x/y");
    CHECK(strip_url_credentials("git+ssh://git@github.com/x/y") == "git+ssh://git@github.com/x/y");
    CHECK(strip_url_credentials("git+ssh://git:pw@github.com/x/y") == "git+ssh://github.com/x/y");
}

TEST_CASE("redaction keeps the user name so a message still says whose credentials failed") {
    CHECK(redact_url_credentials("https://alice:tok@host/x") == "https://alice:***@host/x");
    CHECK(redact_url_credentials("fetching https://TOKEN@host/x failed") == "fetching https://***@host/x failed");
}
