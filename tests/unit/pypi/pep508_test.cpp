// PEP 508 requirements and markers, PEP 503 names.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

using envlock::pep440::Version;
using envlock::pep508::Marker;
using envlock::pep508::MarkerEnv;
using envlock::pep508::normalize_name;
using envlock::pep508::Requirement;

namespace {
const MarkerEnv linux38 = MarkerEnv::for_target("3.8", "linux-64");
bool holds(const char* marker, const MarkerEnv& env = linux38, std::set<std::string> extras = {}) {
    return Marker::parse(marker).evaluate(env, extras);
}
}  // namespace

TEST_CASE("PEP 503 normalizes names: lowercase, runs of - _ . become one -") {
    CHECK(normalize_name("mmcv_full") == "mmcv-full");
    CHECK(normalize_name("Friendly-Bard") == "friendly-bard");
    CHECK(normalize_name("FRIENDLY-BARD") == "friendly-bard");
    CHECK(normalize_name("friendly.bard") == "friendly-bard");
    CHECK(normalize_name("friendly__bard") == "friendly-bard");
    CHECK(normalize_name("friendly_-.-_bard") == "friendly-bard");
    CHECK(normalize_name("torch") == "torch");
}

TEST_CASE("PEP 503: a name matches a normalized one exactly when it normalizes to it") {
    const std::vector<std::string> names = {"mmcv_full", "mmcv-full", "MMCV.Full", "mmcv__full", "mmcv-full-", "-mmcv-full",
                                            "mmcvfull", "mmcv", "torch", "Torch", "torchvision", "typing_extensions",
                                            "typing-extensions", "friendly_-.-_bard", "friendly-bard", "", "-", "a", "A_"};
    for (const auto& a : names)
        for (const auto& b : names) {
            CAPTURE(a);
            CAPTURE(b);
            CHECK(envlock::pep508::has_normalized_name(a, normalize_name(b)) == (normalize_name(a) == normalize_name(b)));
        }
}

TEST_CASE("a requirement with extras, specifiers and a marker") {
    auto r = Requirement::parse("requests [security,tests] >= 2.8.1, == 2.8.* ; python_version < \"2.7\"");
    CHECK(r.name == "requests");
    CHECK(r.normalized_name == "requests");
    CHECK(r.extras == std::vector<std::string>{"security", "tests"});
    CHECK(r.specifier.str() == ">=2.8.1,==2.8.*");
    CHECK(r.url.empty());
    REQUIRE(r.marker.has_value());
    CHECK(r.marker->str() == "python_version < \"2.7\"");
    CHECK_FALSE(r.applies(linux38));
    CHECK(r.str() == "requests[security,tests]>=2.8.1,==2.8.*; python_version < \"2.7\"");
}

TEST_CASE("requirement forms: bare name, no spaces, parentheses, name normalization") {
    auto bare = Requirement::parse("mmcv_full");
    CHECK(bare.name == "mmcv_full");
    CHECK(bare.normalized_name == "mmcv-full");
    CHECK(bare.specifier.empty());
    CHECK_FALSE(bare.marker.has_value());
    CHECK(Requirement::parse("torch==1.9.1+cu111").specifier.str() == "==1.9.1+cu111");
    CHECK(Requirement::parse("numpy (>=1.19,<1.20)").specifier.str() == ">=1.19,<1.20");
    CHECK(Requirement::parse("numpy>=1.19;python_version>='3.6'").marker->str() == "python_version >= \"3.6\"");
    CHECK(Requirement::parse("name[]").extras.empty());
    CHECK(Requirement::parse("A.B-C_D").normalized_name == "a-b-c-d");
    CHECK(Requirement::parse("  yapf==0.40.1  ").name == "yapf");
}

TEST_CASE("URL requirements: name @ url, markers after whitespace") {
    auto r = Requirement::parse("mmdet3d @ git+https://github.com/open-mmlab/mmdetection3d@v0.17.1");
    CHECK(r.name == "mmdet3d");
    CHECK(r.url == "git+https://github.com/open-mmlab/mmdetection3d@v0.17.1");
    CHECK(r.specifier.empty());
    CHECK(r.str() == "mmdet3d @ git+https://github.com/open-mmlab/mmdetection3d@v0.17.1");

    auto m = Requirement::parse("pip[x] @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; sys_platform == 'linux'");
    CHECK(m.extras == std::vector<std::string>{"x"});
    CHECK(m.url == "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee");
    CHECK(m.marker->str() == "sys_platform == \"linux\"");
    CHECK(m.str() == "pip[x] @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; sys_platform == \"linux\"");

    // Without whitespace the ';' belongs to the URL.
    CHECK(Requirement::parse("x @ https://h/p;a=b").url == "https://h/p;a=b");
    CHECK(Requirement::parse("x@file:///tmp/x.whl").url == "file:///tmp/x.whl");
}

TEST_CASE("to_json carries every part, null where absent") {
    auto j = Requirement::parse("Mmcv_Full[all]>=1.3.8; extra == 'cv'").to_json();
    CHECK(j["name"] == "Mmcv_Full");
    CHECK(j["normalized-name"] == "mmcv-full");
    CHECK(j["extras"] == nlohmann::json::array({"all"}));
    CHECK(j["specifier"] == ">=1.3.8");
    CHECK(j["url"].is_null());
    CHECK(j["marker"] == "extra == \"cv\"");
    CHECK(Requirement::parse("x").to_json()["marker"].is_null());
}

TEST_CASE("malformed requirements name what was expected and the column") {
    struct Case { const char* text; const char* column; };
    for (auto c : {Case{"", "column 1"}, Case{"-foo", "column 1"}, Case{"torch 1.9", "column 7"},
                   Case{"torch[cpu", "column 10"}, Case{"torch[cpu,]", "column 11"}, Case{"torch==1.9.x", "column 11"},
                   Case{"torch @", "column 8"}, Case{"torch @ https://x; python_version>'3'", "column 20"},
                   Case{"torch>=1.0 ; ", "column 14"}, Case{"torch>=1.0; python_version >", "column 29"},
                   Case{"torch (>=1.0", "column 13"}, Case{"torch @ notaurl", "column 9"},
                   Case{"torch==1.0; os_name == 'posix' garbage", "column 32"}}) {
        CAPTURE(c.text);
        try {
            Requirement::parse(c.text);
            FAIL("expected InputError");
        } catch (const envlock::InputError& e) {
            std::string msg = e.what();
            CHECK(msg.find("invalid requirement") != std::string::npos);
            CHECK(msg.find("expected") != std::string::npos);
            CHECK_MESSAGE(msg.find(c.column) != std::string::npos, msg);
        }
    }
}

TEST_CASE("marker environments for conda targets") {
    CHECK(linux38.python_version == "3.8");
    CHECK(linux38.python_full_version == "3.8.0");
    CHECK(linux38.sys_platform == "linux");
    CHECK(linux38.platform_machine == "x86_64");
    CHECK(linux38.platform_system == "Linux");
    CHECK(linux38.os_name == "posix");
    CHECK(linux38.implementation_name == "cpython");
    CHECK(linux38.platform_python_implementation == "CPython");
    auto full = MarkerEnv::for_target("3.10.12", "linux-aarch64");
    CHECK(full.python_version == "3.10");
    CHECK(full.python_full_version == "3.10.12");
    CHECK(full.platform_machine == "aarch64");
    auto mac = MarkerEnv::for_target("3.9", "osx-arm64");
    CHECK(mac.sys_platform == "darwin");
    CHECK(mac.platform_machine == "arm64");
    CHECK(mac.platform_system == "Darwin");
    auto win = MarkerEnv::for_target("3.8", "win-64");
    CHECK(win.sys_platform == "win32");
    CHECK(win.os_name == "nt");
    CHECK(win.platform_machine == "AMD64");
    CHECK_THROWS_AS(MarkerEnv::for_target("3.8", "noarch"), envlock::InputError);
    CHECK_THROWS_AS(MarkerEnv::for_target("three", "linux-64"), envlock::InputError);
    CHECK_THROWS_AS(MarkerEnv::for_target("3", "linux-64"), envlock::InputError);
}

TEST_CASE("markers: version comparisons use PEP 440, not string order") {
    auto py310 = MarkerEnv::for_target("3.10", "linux-64");
    CHECK(holds("python_version >= '3.9'", py310));  // "3.10" < "3.9" as strings
    CHECK_FALSE(holds("python_version < '3.9'", py310));
    CHECK(holds("python_version == '3.8'"));
    CHECK(holds("python_version == '3.8.*'"));
    CHECK(holds("python_version != '3.7'"));
    CHECK(holds("python_version > '3.7'"));
    CHECK_FALSE(holds("python_version > '3.8'"));
    CHECK(holds("python_version ~= '3.6'"));
    CHECK(holds("python_full_version >= '3.8.0'"));
    CHECK_FALSE(holds("python_full_version >= '3.8.1'"));
    CHECK(holds("python_full_version < '3.9.0rc1'"));  // pre-releases allowed in markers
    CHECK(holds("'3.7' < python_version"));            // literal on the left
    CHECK(holds("implementation_version >= '3'"));
    CHECK(holds("python_version === '3.8'"));
}

TEST_CASE("markers: string comparisons, in and not in") {
    CHECK(holds("sys_platform == 'linux'"));
    CHECK_FALSE(holds("sys_platform == 'win32'"));
    CHECK(holds("sys_platform != 'win32'"));
    CHECK(holds("platform_machine == \"x86_64\""));
    CHECK(holds("platform_system == 'Linux'"));
    CHECK(holds("os_name == 'posix'"));
    CHECK(holds("implementation_name == 'cpython'"));
    CHECK(holds("platform_python_implementation == 'CPython'"));
    CHECK(holds("'linux' in sys_platform"));
    CHECK(holds("sys_platform in 'linux darwin'"));
    CHECK_FALSE(holds("sys_platform in 'win32 cygwin'"));
    CHECK(holds("sys_platform not in 'win32 cygwin'"));
    CHECK(holds("platform_machine in 'x86_64 AMD64'"));
    CHECK_FALSE(holds("platform_machine not   in 'x86_64 AMD64'"));
    CHECK(holds("sys.platform == 'linux'"));        // legacy dotted names
    CHECK(holds("os.name == 'posix'"));
    CHECK(holds("python_implementation == 'CPython'"));
    CHECK(holds("platform_release == ''"));        // unknown kernel: empty
}

// Dependency specifiers, "Environment Markers" (revised 2026, pypa/packaging.python.org#1988):
// strings that are not versions have no order. packaging 26.4 evaluates every one of these the
// same way (its marker `_operators`: `<`/`>` false, `<=`/`>=` equality); found by the
// differential run of #31, where envlock used Python's string order ("linux" < "win").
TEST_CASE("markers: an ordering comparison between strings that are not versions is false; <= and >= hold only for equal strings") {
    CHECK_FALSE(holds("sys_platform < 'win'"));
    CHECK_FALSE(holds("sys_platform > 'a'"));
    CHECK_FALSE(holds("'win' > sys_platform"));
    CHECK_FALSE(holds("platform_machine < 'y'"));
    CHECK(holds("sys_platform <= 'linux'"));
    CHECK(holds("sys_platform >= 'linux'"));
    CHECK_FALSE(holds("sys_platform <= 'win'"));
    CHECK_FALSE(holds("sys_platform >= 'a'"));
    CHECK_THROWS_AS(holds("sys_platform ~= 'linux'"), envlock::InputError);
}

TEST_CASE("markers: and binds tighter than or; parentheses group") {
    CHECK(holds("sys_platform == 'win32' or sys_platform == 'linux' and python_version >= '3.8'"));
    CHECK_FALSE(holds("(sys_platform == 'win32' or sys_platform == 'linux') and python_version >= '3.9'"));
    CHECK(holds("sys_platform == 'linux' and (python_version < '3.6' or platform_machine == 'x86_64')"));
    CHECK(holds("((python_version=='3.8'))"));
    CHECK_FALSE(holds("python_version == '3.8' and os_name == 'nt' or sys_platform == 'darwin'"));
    auto m = Marker::parse("sys_platform == 'linux' and (python_version < '3.6' or platform_machine == 'x86_64')");
    CHECK(m.str() == "sys_platform == \"linux\" and (python_version < \"3.6\" or platform_machine == \"x86_64\")");
    CHECK(Marker::parse(m.str()).str() == m.str());
    // Parentheses only where precedence needs them.
    CHECK(Marker::parse("os_name=='a' and os_name=='b' or os_name=='c'").str() ==
          "os_name == \"a\" and os_name == \"b\" or os_name == \"c\"");
    CHECK(Marker::parse("(os_name=='a' or os_name=='b') or os_name=='c'").str() ==
          "os_name == \"a\" or os_name == \"b\" or os_name == \"c\"");
}

TEST_CASE("markers: extra compares normalized and is empty when none is requested") {
    CHECK_FALSE(holds("extra == 'test'"));
    CHECK(holds("extra == 'test'", linux38, {"test"}));
    CHECK(holds("extra == 'Test_Utils'", linux38, {"test-utils"}));
    CHECK(holds("extra == 'test'", linux38, {"docs", "test"}));
    CHECK_FALSE(holds("extra == 'test'", linux38, {"docs"}));
    CHECK(holds("extra != 'test'"));
    CHECK(holds("python_version >= '3.6' and extra == 'cv'", linux38, {"cv"}));
    CHECK_FALSE(holds("python_version < '3.6' and extra == 'cv'", linux38, {"cv"}));
    auto r = Requirement::parse("opencv-python; extra == 'cv'");
    CHECK_FALSE(r.applies(linux38));
    CHECK(r.applies(linux38, {"cv"}));
}

TEST_CASE("malformed markers name the column") {
    struct Case { const char* text; const char* column; };
    for (auto c : {Case{"python_version", "column 15"}, Case{"python_version == 3.8", "column 19"},
                   Case{"pyversion == '3.8'", "column 1"}, Case{"python_version = '3.8'", "column 16"},
                   Case{"(python_version == '3.8'", "column 25"}, Case{"python_version == '3.8", "column 19"},
                   Case{"python_version == '3.8' andd os_name == 'nt'", "column 25"},
                   Case{"python_version not '3.8'", "column 16"}, Case{"", "column 1"}}) {
        CAPTURE(c.text);
        try {
            Marker::parse(c.text);
            FAIL("expected InputError");
        } catch (const envlock::InputError& e) {
            std::string msg = e.what();
            CHECK(msg.find("invalid marker") != std::string::npos);
            CHECK_MESSAGE(msg.find(c.column) != std::string::npos, msg);
        }
    }
}

TEST_CASE("`~=` where a side is not a PEP 440 version is an error, not false (PEP 508 Environment Markers; packaging's UndefinedComparison)") {
    auto env = envlock::pep508::MarkerEnv::for_target("3.8", "linux-64");
    auto marker = Marker::parse("platform_machine ~= \"x86_64\"");
    CHECK_THROWS_AS(marker.evaluate(env), envlock::InputError);
    try {
        marker.evaluate(env);
    } catch (const envlock::InputError& e) {
        CHECK(std::string(e.what()).find("platform_machine ~= \"x86_64\"") != std::string::npos);
    }
    // Between versions, ~= keeps its PEP 440 meaning.
    CHECK(Marker::parse("python_version ~= \"3.6\"").evaluate(env));
}

// Found by fuzz/pep508 (issue 20): a marker string holding bytes that are not UTF-8 parsed,
// and writing the requirement as JSON (`envlock spec --json`) then failed with an internal
// error. Requirement files are UTF-8 text (pip decodes them so); the bad byte is named.
TEST_CASE("a requirement that is not UTF-8 text is refused with the column of the bad byte") {
    std::string text = "requests>=2.8.1; python_version < \"2.7\xff\"";
    try {
        Requirement::parse(text);
        FAIL("expected an InputError");
    } catch (const envlock::InputError& e) {
        CHECK(std::string(e.what()).find("expected UTF-8 text at column 39") != std::string::npos);
    }
    CHECK_THROWS_AS(Marker::parse("python_version < \"\xc3\x28\""), envlock::InputError);
    CHECK(Requirement::parse("name; platform_version == \"caf\xc3\xa9\"").applies(linux38) == false);
}

// Found by fuzz/pep508 (issue 20, session 5): a requirement whose specifier text holds
// " at column " and "': expected " itself made the error's re-anchoring read the user's text as
// a column number (std::stoul threw std::invalid_argument, which is no InputError).
TEST_CASE("a malformed specifier that quotes an error message's words is still bad input") {
    const std::string text("nP>5 at column python_hon_version <on_version < '320+055J''''''''''''''''''''''''''''''''''''''71555+5555555555.557555555': expected 55''''''''''''''''''''''''''''''''''''''''''''''''''''''o '320+\x00""\x00""\x00""055J''''''''''''''''''''''''''''''''''''''' < '320+0\x00""\x00""\x00"";552.$0'", 262);
    CHECK_THROWS_AS(Requirement::parse(text), envlock::InputError);
    CHECK_THROWS_AS(Requirement::parse("x>5 at column y': expected 1 at column z"), envlock::InputError);
}
