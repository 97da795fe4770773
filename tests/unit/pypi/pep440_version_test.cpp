// PEP 440 versions: parsing, normalization and the total order.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"

using envlock::pep440::Version;

namespace {
std::string norm(const char* text) { return Version::parse(text).str(); }
}  // namespace

TEST_CASE("normalization: case, separators and spelled-out labels") {
    CHECK(norm("1.0RC1") == "1.0rc1");
    CHECK(norm("1.0c1") == "1.0rc1");
    CHECK(norm("1.0pre1") == "1.0rc1");
    CHECK(norm("1.0preview1") == "1.0rc1");
    CHECK(norm("1.0alpha1") == "1.0a1");
    CHECK(norm("1.0-alpha-1") == "1.0a1");
    CHECK(norm("1.0.beta.2") == "1.0b2");
    CHECK(norm("1.0_b_2") == "1.0b2");
    CHECK(norm("1.0a") == "1.0a0");
    CHECK(norm("1.0.DEV") == "1.0.dev0");
    CHECK(norm("1.0dev1") == "1.0.dev1");
    CHECK(norm("1.0-dev-1") == "1.0.dev1");
}

TEST_CASE("normalization: post releases, including the implicit 1.0-1 form") {
    CHECK(norm("1.0-1") == "1.0.post1");
    CHECK(norm("1.0post1") == "1.0.post1");
    CHECK(norm("1.0.post") == "1.0.post0");
    CHECK(norm("1.0-r4") == "1.0.post4");
    CHECK(norm("1.0rev4") == "1.0.post4");
    CHECK(norm("1.0_post_2") == "1.0.post2");
    CHECK(norm("1.0a1-1") == "1.0a1.post1");
    CHECK(norm("1.0rc1.post2.dev3") == "1.0rc1.post2.dev3");
}

TEST_CASE("normalization: leading v, whitespace, leading zeros, epochs, local labels") {
    CHECK(norm("v1.0") == "1.0");
    CHECK(norm("V2.3") == "2.3");
    CHECK(norm("  1.0\n") == "1.0");
    CHECK(norm("01.002.0003") == "1.2.3");
    CHECK(norm("0!1.0") == "1.0");
    CHECK(norm("1!2.0") == "1!2.0");
    CHECK(norm("1.9.0+cu111") == "1.9.0+cu111");
    CHECK(norm("1.0+Ubuntu-1") == "1.0+ubuntu.1");
    CHECK(norm("1.0+abc_def.5") == "1.0+abc.def.5");
    CHECK(norm("1.0+5.05.cu011") == "1.0+5.5.cu011");  // numeric local segments lose leading zeros
    CHECK(norm("1.0a.post1") == "1.0a0.post1");
}

TEST_CASE("invalid versions are rejected with the column of the problem") {
    for (const char* bad : {"", "a", "1.0x", "1..0", "1.0+", "1.0+cu111-", "1.0.*", "1.0 beta", "1!", "1.0++a", "=1.0",
                            "1.0-", "1.0-post-a"}) {
        CAPTURE(bad);
        CHECK_FALSE(Version::try_parse(bad).has_value());
        CHECK_THROWS_AS(Version::parse(bad), envlock::InputError);
    }
    try {
        Version::parse("1.0x");
        FAIL("expected InputError");
    } catch (const envlock::InputError& e) {
        std::string msg = e.what();
        CHECK(msg.find("invalid PEP 440 version '1.0x'") != std::string::npos);
        CHECK(msg.find("column 4") != std::string::npos);
    }
}

TEST_CASE("accessors report the parts") {
    auto v = Version::parse("2!1.9.0rc2.post3.dev4+cu111");
    CHECK(v.epoch() == "2");
    CHECK(v.release() == std::vector<long long>{1, 9, 0});
    CHECK(v.is_prerelease());
    CHECK(v.is_postrelease());
    CHECK(v.is_devrelease());
    CHECK(v.local() == "cu111");
    CHECK(v.pre()->first == "rc");
    CHECK(v.pre()->second == "2");
    CHECK(v.public_version().str() == "2!1.9.0rc2.post3.dev4");
    CHECK(v.base_version().str() == "2!1.9.0");
    CHECK(Version::parse("1.0.dev1").is_prerelease());  // dev releases count as pre-releases
    CHECK_FALSE(Version::parse("1.0.post1").is_prerelease());
}

// PEP 440 sets no bound on a version's numbers; packaging 26 and uv accept "1000000000!1.0" and
// numbers of 2^64 and more, and order them as integers (#31's differential run found envlock
// refusing them). Digits compare by length, then text.
TEST_CASE("numbers of 2^63 and more and epochs of 10^9 and more are versions, ordered as integers") {
    CHECK(Version::parse("1000000000!1.0").epoch() == "1000000000");
    CHECK(Version::parse("1000000000!1.0") > Version::parse("999999999!2.0"));
    CHECK(Version::parse("00001000000000!1.0").str() == "1000000000!1.0");
    CHECK(Version::parse("9223372036854775808") > Version::parse("9223372036854775807"));
    CHECK(Version::parse("1.0.post18446744073709551616") > Version::parse("1.0.post9223372036854775807"));
    CHECK(Version::parse("1.0.post18446744073709551616").str() == "1.0.post18446744073709551616");
    CHECK(Version::parse("1.0a99999999999999999999") < Version::parse("1.0b0"));
    CHECK(Version::parse("1.0rc018446744073709551616").str() == "1.0rc18446744073709551616");
    CHECK(Version::parse("1.0.dev18446744073709551616") > Version::parse("1.0.dev18446744073709551615"));
    CHECK(Version::parse("1.0.dev18446744073709551616") < Version::parse("1.0a0"));
    CHECK(Version::parse("1.0-18446744073709551616").post() == "18446744073709551616");
    CHECK(envlock::pep440::SpecifierSet::parse(">=1000000000!0").contains(Version::parse("1000000000!1.0")));
    CHECK_FALSE(envlock::pep440::SpecifierSet::parse(">=1000000000!0").contains(Version::parse("999999999!1.0")));
}

TEST_CASE("ordering follows PEP 440's example sequence exactly") {
    // Each entry sorts strictly before the next.
    std::vector<std::string> ordered = {
        "1.0.dev456", "1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
        "1.0b2.post345.dev456", "1.0b2.post345", "1.0rc1.dev456", "1.0rc1", "1.0", "1.0+abc.5", "1.0+abc.7",
        "1.0+5", "1.0.post456.dev34", "1.0.post456", "1.0.15", "1.1.dev1",
    };
    for (std::size_t i = 0; i + 1 < ordered.size(); ++i) {
        CAPTURE(ordered[i]);
        CAPTURE(ordered[i + 1]);
        CHECK(Version::parse(ordered[i]) < Version::parse(ordered[i + 1]));
        CHECK(Version::parse(ordered[i + 1]) > Version::parse(ordered[i]));
    }
    // Sorting a shuffled copy restores the order.
    std::vector<Version> shuffled;
    for (const auto& s : ordered) shuffled.push_back(Version::parse(s));
    std::mt19937 rng(42);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::sort(shuffled.begin(), shuffled.end());
    for (std::size_t i = 0; i < ordered.size(); ++i) CHECK(shuffled[i].str() == ordered[i]);
}

TEST_CASE("ordering: epochs dominate everything else") {
    CHECK(Version::parse("1!0.1") > Version::parse("2020.10"));
    CHECK(Version::parse("1!1.0") < Version::parse("2!0.0.1"));
    CHECK(Version::parse("0!1.0") == Version::parse("1.0"));
}

TEST_CASE("ordering: trailing zeros in the release do not matter, numbers compare numerically") {
    CHECK(Version::parse("1.0") == Version::parse("1.0.0"));
    CHECK(Version::parse("1") == Version::parse("1.0.0.0"));
    CHECK(Version::parse("1.10") > Version::parse("1.9"));
    CHECK(Version::parse("1.0.1") > Version::parse("1.0"));
    CHECK(Version::parse("1.19.5") < Version::parse("1.20.0rc1"));
    CHECK(Version::parse("1.20.0rc1") < Version::parse("1.20"));
}

TEST_CASE("ordering: local labels sort after the public version; numbers after strings") {
    CHECK(Version::parse("1.9.0") < Version::parse("1.9.0+cu111"));
    CHECK(Version::parse("1.9.0+cu102") < Version::parse("1.9.0+cu111"));
    CHECK(Version::parse("1.0+abc") < Version::parse("1.0+1"));
    CHECK(Version::parse("1.0+1") < Version::parse("1.0+2"));
    CHECK(Version::parse("1.0+9") < Version::parse("1.0+10"));
    CHECK(Version::parse("1.0+abc") < Version::parse("1.0+abc.0"));
    CHECK(Version::parse("1.0+Cu111") == Version::parse("1.0+cu111"));
    CHECK(Version::parse("1.0+cu111") < Version::parse("1.0.post1"));
}

TEST_CASE("ordering: dev of a final sorts before its pre-releases, dev of a pre-release after the previous one") {
    CHECK(Version::parse("1.0.dev0") < Version::parse("1.0a0"));
    CHECK(Version::parse("1.0a1.dev1") < Version::parse("1.0a1"));
    CHECK(Version::parse("1.0a1") < Version::parse("1.0a2.dev0"));
    CHECK(Version::parse("1.0.post1.dev1") < Version::parse("1.0.post1"));
    CHECK(Version::parse("1.0") < Version::parse("1.0.post1.dev1"));
    CHECK(Version::parse("1.0a1") < Version::parse("1.0b1"));
    CHECK(Version::parse("1.0b1") < Version::parse("1.0rc1"));
}

TEST_CASE("equal versions written differently compare equal") {
    CHECK(Version::parse("1.0-1") == Version::parse("1.0.post1"));
    CHECK(Version::parse("1.0RC1") == Version::parse("1.0rc1"));
    CHECK(Version::parse("v1.0") == Version::parse("1.0"));
    CHECK(Version::parse("1.0c1") == Version::parse("1.0rc1"));
    CHECK(Version::parse("1.0.0a") == Version::parse("1.0a0"));
}

TEST_CASE("a release segment has no length limit (PEP 440 sets none; packaging compares them as Python ints)") {
    // 19 and 20 digits: beyond what fits in 64 bits, and one that fits but was refused before.
    CHECK(norm("1.9223372036854775807") == "1.9223372036854775807");
    CHECK(norm("2.0.12345678901234567890") == "2.0.12345678901234567890");
    CHECK(norm("0.000012345678901234567890123") == "0.12345678901234567890123");
    CHECK(Version::parse("2.0.12345678901234567890") > Version::parse("2.0.1234567890123456789"));
    CHECK(Version::parse("2.0.12345678901234567890") < Version::parse("2.0.12345678901234567891"));
    CHECK(Version::parse("2.0.012345678901234567890") == Version::parse("2.0.12345678901234567890"));
    CHECK(Version::parse("99999999999999999999999") > Version::parse("9223372036854775807"));
    auto set = envlock::pep440::SpecifierSet::parse("==2.0.12345678901234567890.*");
    CHECK(set.contains(Version::parse("2.0.12345678901234567890.1")));
    CHECK_FALSE(set.contains(Version::parse("2.0.12345678901234567891")));
}
