// conda's VersionOrder: the chain from conda's own documentation, plus the rules it implies.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/errors.hpp"

using envlock::conda::Version;

namespace {

int cmp(const char* a, const char* b) { return Version::parse(a).compare(Version::parse(b)); }

}  // namespace

TEST_CASE("conda's documented version chain sorts in order, with the documented equalities") {
    // "==" marks a version equal to the one before it, "<" strictly greater.
    std::vector<std::pair<std::string, std::string>> chain = {
        {"", "0.4"},        {"==", "0.4.0"},     {"<", "0.4.1.rc"},   {"==", "0.4.1.RC"},  {"<", "0.4.1"},
        {"<", "0.5a1"},     {"<", "0.5b3"},      {"<", "0.5C1"},      {"<", "0.5"},        {"<", "0.9.6"},
        {"<", "0.960923"},  {"<", "1.0"},        {"<", "1.1dev1"},    {"<", "1.1_"},       {"<", "1.1a1"},
        {"<", "1.1.0dev1"}, {"==", "1.1.dev1"},  {"<", "1.1.a1"},     {"<", "1.1.0rc1"},   {"<", "1.1.0"},
        {"==", "1.1"},      {"<", "1.1.0post1"}, {"==", "1.1.post1"}, {"<", "1.1post1"},   {"<", "1996.07.12"},
        {"<", "1!0.4.1"},   {"<", "1!3.1.1.6"},  {"<", "2!0.4.1"},
    };
    std::vector<Version> seen;
    for (std::size_t i = 0; i < chain.size(); ++i) {
        Version v = Version::parse(chain[i].second);
        if (i > 0) {
            CAPTURE(chain[i - 1].second);
            CAPTURE(chain[i].second);
            if (chain[i].first == "==") CHECK(seen.back() == v);
            else CHECK(seen.back() < v);
        }
        // Transitivity: every earlier, non-equal version is smaller.
        for (const Version& earlier : seen) CHECK(earlier <= v);
        seen.push_back(v);
    }
}

TEST_CASE("prereleases sort before the release: 1.0a1 < 1.0, 1.0dev < 1.0a, 1.0rc1 < 1.0") {
    CHECK(cmp("1.0a1", "1.0") < 0);
    CHECK(cmp("1.0dev", "1.0a") < 0);
    CHECK(cmp("1.0dev1", "1.0a1") < 0);
    CHECK(cmp("1.0rc1", "1.0") < 0);
    CHECK(cmp("1.0b2", "1.0rc1") < 0);
    CHECK(cmp("1.20.0a0", "1.20.0rc1") < 0);   // a < rc: '<1.20.0a0' excludes every 1.20 prerelease
    CHECK(cmp("1.20.0rc1", "1.20.0") < 0);
    CHECK(cmp("1.19.5", "1.20.0a0") < 0);
}

TEST_CASE("post releases sort after the release and after every number in their place") {
    CHECK(cmp("1.0.post1", "1.0") > 0);
    CHECK(cmp("1.0post1", "1.0.1") > 0);        // 'post' is infinity in the third place
    CHECK(cmp("1.0.post1", "1.0.1") < 0);       // here post sits after the implicit 0 of a new segment
    CHECK(cmp("1.0.0post1", "1.0.post1") == 0);
    CHECK(cmp("1.0.post2", "1.0.post10") < 0);
}

TEST_CASE("trailing zeros and missing components compare equal") {
    CHECK(cmp("1.1", "1.1.0") == 0);
    CHECK(cmp("1.1", "1.1.0.0.0") == 0);
    CHECK(cmp("1", "1.0") == 0);
    CHECK(cmp("1.01", "1.1") == 0);   // numbers compare numerically
    CHECK(cmp("1.10", "1.9") > 0);
    CHECK(cmp("0!1.0", "1.0") == 0);  // epoch 0 is the default
}

TEST_CASE("strings sort below numbers, and lexicographically among themselves") {
    CHECK(cmp("1.a", "1.0") < 0);
    CHECK(cmp("1.a", "1.b") < 0);
    CHECK(cmp("1.alpha", "1.beta") < 0);
    CHECK(cmp("1.1a", "1.1b") < 0);
    CHECK(cmp("1.1.a", "1.1") < 0);   // [0,'a'] < missing (0)
    CHECK(cmp("1.0.1a", "1.0.1") < 0);  // openssl letters read as prereleases, as conda documents
    CHECK(cmp("1.0.1_", "1.0.1a") < 0);  // the trailing '_' work-around still sorts below letters
}

TEST_CASE("comparison is case-insensitive and str() is lower case") {
    CHECK(cmp("1.0RC1", "1.0rc1") == 0);
    CHECK(cmp("1.0DEV", "1.0dev") == 0);
    CHECK(Version::parse("1.0RC1").str() == "1.0rc1");
    CHECK(Version::parse("  2.3.4  ").str() == "2.3.4");
}

TEST_CASE("'dev' sorts below every other string, '*' below 'dev'") {
    CHECK(cmp("1.0dev", "1.0_") < 0);
    CHECK(cmp("1.0dev", "1.0a") < 0);
    CHECK(cmp("1.0.dev", "1.0.a") < 0);
    CHECK(cmp("1.0*", "1.0dev") < 0);
}

TEST_CASE("'-' separates like '_' when no '_' is present") {
    CHECK(cmp("1-2-3", "1.2.3") == 0);
    CHECK(cmp("1_2_3", "1.2.3") == 0);
    CHECK(Version::parse("1-2").str() == "1_2");
    CHECK_THROWS_AS(Version::parse("1-2_3"), envlock::InputError);
}

TEST_CASE("epochs dominate everything after them") {
    CHECK(cmp("1!0.1", "2000.0") > 0);
    CHECK(cmp("2!0.1", "1!99") > 0);
    CHECK(cmp("1!1.0", "1!1.0.0") == 0);
}

TEST_CASE("local versions compare after the main version, with the same rules") {
    CHECK(cmp("1.0+1", "1.0") > 0);
    CHECK(cmp("1.0+0", "1.0") == 0);          // no local is the same as '+0'
    CHECK(cmp("1.0+local", "1.0") < 0);       // a string local sorts below the bare version
    CHECK(cmp("1.0+local", "1.0+0.local") < 0);
    CHECK(cmp("1.0+1.local", "1.0") > 0);
    CHECK(cmp("1.0+abc", "1.0+abd") < 0);
    CHECK(cmp("1.1+0", "1.0+9") > 0);         // main version first
    CHECK(cmp("1.0+cu111", "1.0+cu102") > 0);
    CHECK(cmp("1.0+1_2", "1.0+1.2") == 0);
}

TEST_CASE("huge numeric components compare numerically, not by overflow") {
    CHECK(cmp("1.99999999999999999999999", "1.100000000000000000000000") < 0);
    CHECK(cmp("1.000000000000000000000000001", "1.1") == 0);
}

TEST_CASE("invalid versions are rejected with a message naming the problem") {
    auto message = [](const char* text) {
        try {
            Version::parse(text);
        } catch (const envlock::InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message("") == "invalid conda version '': empty version string");
    CHECK(message("   ") == "invalid conda version '   ': empty version string");
    CHECK(message("1!2!3") == "invalid conda version '1!2!3': duplicated epoch separator '!'");
    CHECK(message("a!1.0") == "invalid conda version 'a!1.0': epoch must be an integer");
    CHECK(message("1.0+a+b") == "invalid conda version '1.0+a+b': duplicated local version separator '+'");
    CHECK(message("1..0") == "invalid conda version '1..0': empty version component");
    CHECK(message("1.0.") == "invalid conda version '1.0.': empty version component");
    CHECK(message("+1") == "invalid conda version '+1': empty version component");
    CHECK(message("1.0+") == "invalid conda version '1.0+': empty local version after '+'");
    CHECK(message("1.0 2") != "accepted");
    CHECK(message("1.0$") != "accepted");
    CHECK(message("1.0@x") != "accepted");
    CHECK(message(">=1.0") != "accepted");
    CHECK_FALSE(Version::try_parse("1..0").has_value());
    CHECK(Version::try_parse("1.0").has_value());
}

TEST_CASE("starts_with follows conda's prefix rule component-wise") {
    auto sw = [](const char* v, const char* p) { return Version::parse(v).starts_with(Version::parse(p)); };
    CHECK(sw("1.9", "1.9"));
    CHECK(sw("1.9.0", "1.9"));
    CHECK(sw("1.9.5", "1.9"));
    CHECK(sw("1.9a1", "1.9"));      // the number 9 matches; the rest is beyond the prefix
    CHECK_FALSE(sw("1.90", "1.9"));
    CHECK_FALSE(sw("1.8.9", "1.9"));
    CHECK_FALSE(sw("2.9", "1.9"));
    CHECK(sw("1.9", "1.9.0"));      // missing components are 0
    CHECK_FALSE(sw("1.9", "1.9.1"));
    CHECK(sw("1.0rc1", "1.0rc"));   // the last string atom is a textual prefix
    CHECK(sw("1.0rc1", "1.0r"));
    CHECK_FALSE(sw("1.0", "1.0rc"));
    CHECK(sw("3.8.10", "3.8"));
    CHECK_FALSE(sw("1!1.9", "1.9"));
    CHECK(sw("1.9+cu111", "1.9"));
    CHECK(sw("1.9+cu111", "1.9+cu"));
    CHECK_FALSE(sw("1.9+cu111", "1.9+cpu"));
    CHECK_FALSE(sw("1.9.1+cu111", "1.9+cu"));
}

namespace {

// Every version in the list is strictly greater than the one before.
void check_strictly_sorted(const std::vector<const char*>& list) {
    for (std::size_t i = 1; i < list.size(); ++i) {
        CAPTURE(list[i - 1]);
        CAPTURE(list[i]);
        CHECK(Version::parse(list[i - 1]) < Version::parse(list[i]));
    }
}

}  // namespace

TEST_CASE("conda's parser table sorts in order") {
    check_strictly_sorted({"0.4.1a.vc11", "0.4.1.rc", "0.4.1.vc11", "0.4.1", "0.5*", "0.5a1", "0.5b3", "0.5C1", "0.5z",
                           "0.5za", "0.5", "0.5_5", "0.9.6", "0.960923", "1.0", "1.0.4a3", "1.0.4b1", "1.0.4",
                           "1.1dev1", "1.1_", "1.1a1", "1.1.dev1", "1.1.a1", "1.1", "1.1.post1", "1.1.1dev1",
                           "1.1.1rc1", "1.1.1", "1.1.1post1", "1.1post1", "2g6", "2.0b1pr0", "2.2be.ta29",
                           "2.2be5ta29", "2.2beta29", "2.2.0.1", "3.1.1.6", "3.2.p.r0", "3.2.pr0", "3.2.pr.1",
                           "5.5.kw", "11g", "14.3.1", "14.3.1.post26.g9d75ca2", "1996.07.12", "1!0.4.1",
                           "1!3.1.1.6", "2!0.4.1"});
    CHECK(Version::parse("0.5-5") == Version::parse("0.5_5"));
    CHECK(Version::parse("0.4.a1") == Version::parse("0.4.0a1"));
    CHECK(Version::parse("0.4.a1") != Version::parse("0.4.1a1"));
    CHECK(Version::parse("  0.4.rc  ") == Version::parse("0.4.RC"));
}

TEST_CASE("openssl's letter releases sort after the '_'-suffixed plain version") {
    check_strictly_sorted({"1.0.1dev", "1.0.1_", "1.0.1a", "1.0.1b", "1.0.1c", "1.0.1d", "1.0.1r", "1.0.1rc",
                           "1.0.1rc1", "1.0.1rc2", "1.0.1s", "1.0.1", "1.0.1post.a", "1.0.1post.b",
                           "1.0.1post.z", "1.0.1post.za", "1.0.2"});
}

TEST_CASE("PEP 440-style versions sort as conda sorts them") {
    std::vector<const char*> list = {"1.0a1", "1.0a2.dev456", "1.0a12.dev456", "1.0a12", "1.0b1.dev456", "1.0b2",
                                     "1.0b2.post345.dev456", "1.0b2.post345", "1.0c1.dev456", "1.0c1", "1.0c3",
                                     "1.0rc2", "1.0.dev456", "1.0", "1.0.post456.dev34", "1.0.post456", "1.1.dev1",
                                     "1.2.r32+123456", "1.2.rev33+123456", "1.2+abc", "1.2+abc123def", "1.2+abc123",
                                     "1.2+123abc", "1.2+123abc456", "1.2+1234.abc", "1.2+123456"};
    check_strictly_sorted(list);
    std::vector<std::string> with_epoch;
    for (const char* v : list) with_epoch.push_back(std::string("1!") + v);
    for (std::size_t i = 1; i < with_epoch.size(); ++i) {
        CAPTURE(with_epoch[i]);
        CHECK(Version::parse(with_epoch[i - 1]) < Version::parse(with_epoch[i]));
    }
    CHECK(Version::parse("1.2+123456") < Version::parse("1!1.0a1"));
    CHECK(Version::parse("0.3.0.dev") < Version::parse("0.3.3"));
}

TEST_CASE("conda's rejected versions are rejected") {
    for (const char* bad : {"", "  ", "3.5&1", "5.5++", "5.5..mw", "!", "a!1.0", "a!b!1.0"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(Version::parse(bad), envlock::InputError);
    }
}

TEST_CASE("starts_with: conda's own cases") {
    auto sw = [](const char* v, const char* p) { return Version::parse(v).starts_with(Version::parse(p)); };
    CHECK(sw("0.4.1", "0"));
    CHECK(sw("0.4.1", "0.4"));
    CHECK(sw("0.4.1p1", "0.4"));
    CHECK(sw("0.4.1p1", "0.4.1p"));
    CHECK_FALSE(sw("0.4.1p1", "0.4.1q1"));
    CHECK_FALSE(sw("0.4", "0.4.1"));
    CHECK(sw("0.4.1+1.3", "0.4.1"));
    CHECK(sw("0.4.1+1.3", "0.4.1+1"));
    CHECK_FALSE(sw("0.4.1", "0.4.1+1.3"));
    CHECK_FALSE(sw("0.4.1+1", "0.4.1+1.3"));
}

// Found by fuzz/infer_docs (issue 20, session 5): the message named the first byte of a
// multibyte character ("invalid character '\xEF'"), so a note quoting it was not UTF-8 and
// `envlock spec --json` failed with an internal error.
TEST_CASE("an invalid character in a version is quoted whole, as UTF-8") {
    auto message = [](const char* text) {
        try {
            envlock::conda::Version::parse(text);
        } catch (const envlock::InputError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK(message("3.\xEF\xBF\xBD" "1").find("invalid character '\xEF\xBF\xBD'") != std::string::npos);
    CHECK(message("3.\xFF" "1").find("invalid character '\\xFF'") != std::string::npos);
}
