#include <doctest/doctest.h>

#include "tests/support/run_envlock.hpp"

using envlock::test::run_envlock;

TEST_CASE("--version prints the version and exits 0") {
    auto r = run_envlock({"--version"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("envlock 0.") != std::string::npos);
}

TEST_CASE("--help lists every subcommand") {
    auto r = run_envlock({"--help"});
    CHECK(r.exit_code == 0);
    for (const char* sub : {"resolve", "install", "verify", "doctor", "detect", "check", "why", "run", "inspect"})
        CHECK_MESSAGE(r.out.find(sub) != std::string::npos, sub);
}

TEST_CASE("an unknown flag is bad input: exit 2") {
    auto r = run_envlock({"--no-such-flag"});
    CHECK(r.exit_code == 2);
}

TEST_CASE("no subcommand is bad input: exit 2") {
    auto r = run_envlock({});
    CHECK(r.exit_code == 2);
}
