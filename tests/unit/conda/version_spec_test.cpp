// conda VersionSpec: operators, prefix and glob forms, ',' (and) binding tighter than '|' (or).
#include <doctest/doctest.h>

#include <string>

#include "resolver/conda_version.hpp"
#include "resolver/errors.hpp"

using envlock::conda::Version;
using envlock::conda::VersionSpec;

namespace {

bool in(const char* spec, const char* version) {
    return VersionSpec::parse(spec).contains(Version::parse(version));
}

std::string error_of(const char* spec) {
    try {
        VersionSpec::parse(spec);
    } catch (const envlock::InputError& e) {
        return e.what();
    }
    return "accepted";
}

}  // namespace

TEST_CASE("a bare version is an exact match, trailing zeros aside") {
    CHECK(in("1.9", "1.9"));
    CHECK(in("1.9", "1.9.0"));
    CHECK_FALSE(in("1.9", "1.9.1"));
    CHECK(in("==1.9.0", "1.9"));
    CHECK_FALSE(in("==1.9.0", "1.9.0+cu111"));   // conda compares local versions too
    CHECK(VersionSpec::parse("1.9").is_exact());
    CHECK(VersionSpec::parse("==1.9").is_exact());
    CHECK_FALSE(VersionSpec::parse(">=1.9").is_exact());
}

TEST_CASE("relational operators") {
    CHECK(in(">=1.19", "1.19"));
    CHECK(in(">=1.19", "1.19.5"));
    CHECK_FALSE(in(">=1.19", "1.18.9"));
    CHECK(in(">1.7", "1.7.post1"));     // unlike PEP 440, a post release is simply greater
    CHECK_FALSE(in(">1.7", "1.7.0"));
    CHECK(in("<2", "1.99"));
    CHECK(in("<2", "2.0a1"));           // unlike PEP 440, prereleases of 2 are below 2
    CHECK_FALSE(in("<2", "2.0"));
    CHECK(in("<=2", "2.0.0"));
    CHECK(in("!=1.9", "1.9.1"));
    CHECK_FALSE(in("!=1.9", "1.9.0"));
}

TEST_CASE("',' is and, '|' is or, and ',' binds tighter") {
    CHECK(in(">=1.19,<1.20.0a0", "1.19.5"));
    CHECK_FALSE(in(">=1.19,<1.20.0a0", "1.20.0rc1"));
    CHECK_FALSE(in(">=1.19,<1.20.0a0", "1.20.0a0"));
    CHECK_FALSE(in(">=1.19,<1.20.0a0", "1.18"));
    CHECK(in(">=1.0|<0.5", "0.4"));
    CHECK(in(">=1.0|<0.5", "1.2"));
    CHECK_FALSE(in(">=1.0|<0.5", "0.7"));
    CHECK(in("1.8.0|1.9.*", "1.8.0"));
    CHECK(in("1.8.0|1.9.*", "1.9.3"));
    CHECK_FALSE(in("1.8.0|1.9.*", "1.8.1"));
    // "a,b|c" is "(a,b)|c"
    CHECK(in(">=2,<3|1.5", "1.5"));
    CHECK(in(">=2,<3|1.5", "2.5"));
    CHECK_FALSE(in(">=2,<3|1.5", "3.5"));
    // parentheses override
    CHECK(in("(>=2|1.5),<3", "1.5"));
    CHECK_FALSE(in("(>=2|1.5),<3", "3.1"));
    CHECK(in("((1.5|((1.6|1.7), 1.8), 1.9 |2.0))|2.1", "2.1"));
    CHECK(in("((1.5|((1.6|1.7), 1.8), 1.9 |2.0))|2.1", "2.0"));
    CHECK_FALSE(in("((1.5|((1.6|1.7), 1.8), 1.9 |2.0))|2.1", "1.6"));
}

TEST_CASE("str() renders the tree the way conda does") {
    CHECK(VersionSpec::parse(">=1.19, <1.20.0a0").str() == ">=1.19,<1.20.0a0");
    CHECK(VersionSpec::parse("1.2.3,4.5.6|<=7.8.9").str() == "(1.2.3,4.5.6)|<=7.8.9");
    CHECK(VersionSpec::parse("(1.2.3|4.5.6),<=7.8.9").str() == "(1.2.3|4.5.6),<=7.8.9");
    CHECK(VersionSpec::parse("1.5|(1.6|1.7),1.8,1.9|2.0|2.1").str() == "1.5|((1.6|1.7),1.8,1.9)|2.0|2.1");
    CHECK(VersionSpec::parse("1.8*").str() == "1.8.*");
    CHECK(VersionSpec::parse("").str() == "*");
    CHECK(VersionSpec::parse("*").str() == "*");
}

TEST_CASE("'.*' and a trailing '*' mean 'starts with'") {
    CHECK(in("1.9.*", "1.9"));
    CHECK(in("1.9.*", "1.9.0"));
    CHECK(in("1.9.*", "1.9.12"));
    CHECK_FALSE(in("1.9.*", "1.90"));
    CHECK_FALSE(in("1.9.*", "1.10"));
    CHECK(in("1.8*", "1.8.2"));          // glob without the dot is the same rule
    CHECK_FALSE(in("1.8*", "1.80"));
    CHECK(in("3.8.*", "3.8.10"));
    CHECK(in("=1.9", "1.9.5"));
    CHECK(in("=1.9.*", "1.9.5"));
    CHECK(in(">=1.9.*", "1.9"));          // '.*' after >= is dropped
    CHECK(in("!=1.9.*", "1.8"));
    CHECK_FALSE(in("!=1.9.*", "1.9.4"));
    CHECK(in("==1.9.*", "1.9"));          // conda drops '.*' after '==': an exact match on 1.9
    CHECK_FALSE(in("==1.9.*", "1.9.4"));
}

TEST_CASE("'*' and the empty spec match everything") {
    CHECK(VersionSpec::parse("*").is_any());
    CHECK(VersionSpec::parse("").is_any());
    CHECK(VersionSpec().is_any());
    CHECK(in("*", "0.0.1a1"));
    CHECK(in("", "1!2.0+local"));
    CHECK_FALSE(VersionSpec::parse(">=0").is_any());
}

TEST_CASE("an inner '*' is a glob over the version text") {
    CHECK(in("1.*.3", "1.2.3"));
    CHECK(in("1.*.3", "1.22.3"));
    CHECK_FALSE(in("1.*.3", "1.2.4"));
    CHECK(in("*.1", "2.1"));
    CHECK_FALSE(in("*.1", "2.1.0"));   // text, not version order
}

TEST_CASE("regex specs between ^ and $") {
    CHECK(in("^1\\.[0-9]$", "1.5"));
    CHECK_FALSE(in("^1\\.[0-9]$", "1.10"));
    CHECK(in("^1\\.(5|6)$", "1.6"));   // '|' inside a regex is not the or operator
    CHECK(error_of("^1.5") != "accepted");
    CHECK(error_of("1.5$") != "accepted");
}

TEST_CASE("'~=' is PEP 440's compatible release") {
    CHECK(in("~=1.4", "1.4"));
    CHECK(in("~=1.4", "1.9"));
    CHECK_FALSE(in("~=1.4", "2.0"));
    CHECK_FALSE(in("~=1.4", "1.3"));
    CHECK(in("~=1.4.5", "1.4.7"));
    CHECK_FALSE(in("~=1.4.5", "1.5.0"));
    CHECK_FALSE(in("~=1.4.5", "1.4.4"));
    CHECK(error_of("~=1.4.*") == "invalid conda version spec '~=1.4.*': invalid operator with '.*'");
    CHECK(error_of("~=1") != "accepted");
}

TEST_CASE("malformed specs are rejected with one clear line") {
    CHECK(error_of(">=") == "invalid conda version spec '>=': missing version after '>='");
    CHECK(error_of("<>1.0") == "invalid conda version spec '<>1.0': invalid operator '<>'");
    CHECK(error_of("=<1.0") == "invalid conda version spec '=<1.0': invalid operator '=<'");
    CHECK(error_of(">=1.0,") != "accepted");
    CHECK(error_of("|1.0") != "accepted");
    CHECK(error_of("(1.0") == "invalid conda version spec '(1.0': missing ')'");
    CHECK(error_of("1.0)") == "invalid conda version spec '1.0)': unbalanced ')'");
    CHECK(error_of(">= 1.0") != "accepted");
    CHECK(error_of("1..0") != "accepted");
    CHECK(error_of("!1.0") != "accepted");
    CHECK(error_of(">=1.0+a+b").find("duplicated local version separator") != std::string::npos);
}
