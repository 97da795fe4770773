#include <doctest/doctest.h>

#include "tests/support/run_envlock.hpp"

using envlock::test::run_envlock;

TEST_CASE("--version prints the version and exits 0") {
    auto r = run_envlock({"--version"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("envlock 0.") != std::string::npos);
}

TEST_CASE("--help lists the subcommands") {
    auto r = run_envlock({"--help"});
    CHECK(r.exit_code == 0);
    for (const char* sub : {"resolve", "detect", "check", "why", "inspect", "index", "spec", "doctor", "verify"})
        CHECK_MESSAGE(r.out.find("\n  " + std::string(sub) + " ") != std::string::npos, sub);
}

TEST_CASE("a mistyped command gets the nearest one, as pip and uv suggest") {
    auto r = run_envlock({"reslove"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown command 'reslove' for `envlock`; did you mean 'resolve'?") != std::string::npos);
    auto nested = run_envlock({"inspect", "gpuu", "RTX 3090"});
    CHECK(nested.exit_code == 2);
    CHECK(nested.err.find("did you mean 'gpu'?") != std::string::npos);
}

TEST_CASE("a mistyped flag gets the nearest flag of that command") {
    auto r = run_envlock({"check", "--jsno"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("unknown flag '--jsno' for `envlock check`; did you mean '--json'?") != std::string::npos);
}

TEST_CASE("a word far from every command gets no guess") {
    auto r = run_envlock({"xyzzy"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("did you mean") == std::string::npos);
}

TEST_CASE("-q and -v are accepted before and after the subcommand") {
    CHECK(run_envlock({"-q", "inspect", "version", "1.0", "1.1"}).exit_code == 0);
    CHECK(run_envlock({"inspect", "version", "1.0", "1.1", "-q"}).exit_code == 0);
}

TEST_CASE("an unknown flag is bad input: exit 2") {
    auto r = run_envlock({"--no-such-flag"});
    CHECK(r.exit_code == 2);
}

TEST_CASE("no subcommand is bad input: exit 2") {
    auto r = run_envlock({});
    CHECK(r.exit_code == 2);
}
