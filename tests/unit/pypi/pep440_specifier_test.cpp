// PEP 440 version specifiers, with pip's (packaging's) special rules.
#include <doctest/doctest.h>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"

using envlock::pep440::SpecifierSet;
using envlock::pep440::Version;

namespace {
bool in(const char* spec, const char* version) { return SpecifierSet::parse(spec).contains(Version::parse(version)); }
bool in_pre(const char* spec, const char* version) {
    return SpecifierSet::parse(spec).contains(Version::parse(version), true);
}
}  // namespace

TEST_CASE("== ignores the candidate's local label unless the specifier has one") {
    CHECK(in("==1.9.0", "1.9.0+cu111"));
    CHECK(in("==1.9.0", "1.9.0"));
    CHECK(in("==1.9", "1.9.0+cpu"));
    CHECK(in("==1.9.0+cu111", "1.9.0+cu111"));
    CHECK_FALSE(in("==1.9.0+cu102", "1.9.0+cu111"));
    CHECK_FALSE(in("==1.9.0+cu111", "1.9.0"));
    CHECK_FALSE(in("==1.9.0", "1.9.1"));
    CHECK_FALSE(in("==1.9.0", "1.9.0.post1"));
    CHECK(in("!=1.9.0", "1.9.1"));
    CHECK_FALSE(in("!=1.9.0", "1.9.0+cu111"));
    CHECK(in("!=1.9.0+cu102", "1.9.0+cu111"));
}

TEST_CASE("==X.* and !=X.* match by release prefix, with zero padding") {
    CHECK(in("==1.9.*", "1.9.0"));
    CHECK(in("==1.9.*", "1.9"));
    CHECK(in("==1.9.*", "1.9.5+cu111"));
    CHECK(in("==1.9.*", "1.9.1.post2"));
    CHECK_FALSE(in("==1.9.*", "1.10.0"));
    CHECK_FALSE(in("==1.9.*", "1.8.99"));
    CHECK(in("==1.*", "1"));
    CHECK(in("==1.0.0.*", "1"));
    CHECK_FALSE(in("==1.*", "2.0"));
    CHECK_FALSE(in("==1.9.*", "1!1.9.0"));
    CHECK(in("==1!1.9.*", "1!1.9.2"));
    CHECK(in_pre("==1.9.*", "1.9rc1"));
    CHECK_FALSE(in("!=1.9.*", "1.9.2"));
    CHECK(in("!=1.9.*", "1.10"));
    CHECK(in(">=1.8,!=1.9.*", "1.10"));
    CHECK_FALSE(in(">=1.8,!=1.9.*", "1.9.3"));
}

TEST_CASE("<V excludes pre-releases of V itself unless V is one") {
    CHECK_FALSE(in("<1.20", "1.20.0rc1"));
    CHECK_FALSE(in_pre("<1.20", "1.20.0rc1"));  // even with pre-releases allowed
    CHECK_FALSE(in_pre("<1.20", "1.20.dev0"));
    CHECK(in_pre("<1.20", "1.19.0rc1"));
    CHECK(in("<1.20", "1.19.5"));
    CHECK_FALSE(in("<1.20", "1.20"));
    CHECK(in("<1.20rc2", "1.20rc1"));  // names a pre-release: pre-releases admitted
    CHECK(in("<1.20", "1.19.5+cu111"));
}

TEST_CASE(">V excludes post-releases and local versions of V itself unless V is a post-release") {
    CHECK_FALSE(in(">1.7", "1.7.post1"));
    CHECK_FALSE(in(">1.7", "1.7.0+local"));
    CHECK_FALSE(in(">1.7", "1.7"));
    CHECK(in(">1.7", "1.7.1"));
    CHECK(in(">1.7", "1.8.post1"));
    CHECK(in(">1.7.post1", "1.7.post2"));
    CHECK_FALSE(in(">1.7.post1", "1.7.post1"));
}

TEST_CASE("<= and >= compare the candidate's public version") {
    CHECK(in("<=1.9.0", "1.9.0+cu111"));
    CHECK(in(">=1.9.0", "1.9.0+cu111"));
    CHECK(in("<=1.9", "1.9.0"));
    CHECK_FALSE(in("<=1.9", "1.9.0.post1"));
    CHECK(in(">=1.9", "1.9.0.post1"));
    CHECK_FALSE(in(">=1.9", "1.8.9+cu111"));
    CHECK(in(">=1.19,<1.20", "1.19.5"));
    CHECK_FALSE(in(">=1.19,<1.20", "1.20.0"));
}

TEST_CASE("~=V.N means >=V.N and ==V.*") {
    CHECK(in("~=2.2", "2.2"));
    CHECK(in("~=2.2", "2.3"));
    CHECK(in("~=2.2", "2.9.1"));
    CHECK_FALSE(in("~=2.2", "3.0"));
    CHECK_FALSE(in("~=2.2", "2.1"));
    CHECK(in("~=1.4.5", "1.4.9"));
    CHECK_FALSE(in("~=1.4.5", "1.5.0"));
    CHECK(in("~=2.2.post3", "2.3"));
    CHECK_FALSE(in("~=2.2.post3", "2.2"));
    CHECK(in("~=1.4.5a4", "1.4.5"));
    CHECK(in("~=1.4.5a4", "1.4.5a4"));  // names a pre-release
    CHECK(in("~=1!2.0", "1!2.5"));
    CHECK_FALSE(in("~=1!2.0", "2.5"));
    CHECK(in("~=1.19", "1.19.5+cu111"));
}

TEST_CASE("=== compares the text, case-insensitively") {
    CHECK(in("===1.0", "1.0"));
    CHECK_FALSE(in("===1.0", "1.0.0"));
    CHECK(in("===1.0+CU111", "1.0+cu111"));
}

TEST_CASE("pre-releases are excluded unless allowed or named by the specifier") {
    CHECK_FALSE(in(">=1.0", "2.0rc1"));
    CHECK(in_pre(">=1.0", "2.0rc1"));
    CHECK(in(">=2.0rc1", "2.0rc1"));
    CHECK(in(">=2.0rc1", "2.1b1"));  // any clause naming a pre-release admits pre-releases
    CHECK(in("==2.0rc1", "2.0rc1"));
    CHECK_FALSE(in("==2.0.*", "2.0rc1"));
    CHECK_FALSE(in("", "2.0rc1"));
    CHECK(in("", "2.0"));
    CHECK(in_pre("", "2.0rc1"));
    CHECK_FALSE(in(">=1.0", "2.0.dev1"));
    CHECK(in(">=1.0", "2.0.post1"));  // a post-release is not a pre-release
    CHECK_FALSE(SpecifierSet::parse(">=2.0rc1").contains(Version::parse("2.1b1"), false));
    CHECK(in(">2.0rc1", "2.0rc2"));   // < and > name pre-releases too (pip since packaging 24.2)
    CHECK_FALSE(in("!=2.0rc1", "2.0rc2"));  // != never does
}

TEST_CASE("filter accepts pre-releases only when nothing else matches") {
    auto versions = [](std::initializer_list<const char*> list) {
        std::vector<Version> out;
        for (auto s : list) out.push_back(Version::parse(s));
        return out;
    };
    auto strs = [](const std::vector<Version>& vs) {
        std::vector<std::string> out;
        for (const auto& v : vs) out.push_back(v.str());
        return out;
    };
    auto set = SpecifierSet::parse(">=1.0");
    CHECK(strs(set.filter(versions({"0.9", "1.0", "2.0rc1", "1.5"}))) == std::vector<std::string>{"1.0", "1.5"});
    CHECK(strs(set.filter(versions({"0.9", "2.0rc1", "2.0b1"}))) == std::vector<std::string>{"2.0rc1", "2.0b1"});
    CHECK(strs(set.filter(versions({"0.9", "2.0rc1"}), false)).empty());
    CHECK(strs(set.filter(versions({"1.0", "2.0rc1"}), true)) == std::vector<std::string>{"1.0", "2.0rc1"});
    CHECK(strs(SpecifierSet::parse(">=2.0b1").filter(versions({"1.0", "2.0rc1", "2.0"}))) ==
          std::vector<std::string>{"2.0rc1", "2.0"});
    CHECK(strs(SpecifierSet::parse("").filter(versions({"1.0", "2.0rc1"}))) == std::vector<std::string>{"1.0"});
    CHECK(strs(SpecifierSet::parse("").filter(versions({"2.0rc1"}))) == std::vector<std::string>{"2.0rc1"});
    CHECK(strs(SpecifierSet::parse("<1.20").filter(versions({"1.20.0rc1"}))).empty());
}

TEST_CASE("a specifier set keeps its clauses and prints them back") {
    auto set = SpecifierSet::parse(" >= 1.19 , < 1.20.0a0 ");
    CHECK(set.specifiers().size() == 2);
    CHECK(set.str() == ">=1.19,<1.20.0a0");
    CHECK(SpecifierSet::parse("").empty());
    CHECK(SpecifierSet::parse("==1.9.*,!=1.9.2").str() == "==1.9.*,!=1.9.2");
}

TEST_CASE("malformed specifiers are bad input naming the column") {
    for (const char* bad : {"1.0", ">=", ">=1.0,", ",>=1.0", ">=1.*", "~=1", "~=1.0.*", "<1.0+local", "==1.0a1.*",
                            "=>1.0", ">=1.0 <2.0", "==1.0+", "=1.0", "===a b"}) {
        CAPTURE(bad);
        CHECK_THROWS_AS(SpecifierSet::parse(bad), envlock::InputError);
    }
    try {
        SpecifierSet::parse(">=1.0,<2.x");
        FAIL("expected InputError");
    } catch (const envlock::InputError& e) {
        std::string msg = e.what();
        CHECK(msg.find("'>=1.0,<2.x'") != std::string::npos);
        CHECK(msg.find("column 9") != std::string::npos);  // the "." that cannot continue "2"
    }
}
