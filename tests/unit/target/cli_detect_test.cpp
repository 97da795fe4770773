#include <doctest/doctest.h>

#include <gnu/libc-version.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using envlock::test::run_envlock;

TEST_CASE("envlock detect --json describes this machine and exits 0 without a driver") {
    auto r = run_envlock({"detect", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["glibc"] == gnu_get_libc_version());
    CHECK(j["platform"] == "linux-64");
    CHECK(j["cpu-flags"].size() > 0);
    bool gcc = false;
    for (const auto& c : j["compilers"]) gcc = gcc || c["kind"] == "gcc";
    CHECK(gcc);
    if (std::filesystem::exists("/proc/driver/nvidia/version")) {
        MESSAGE("this machine has an NVIDIA driver; not checking its absence");
    } else {
        CHECK(j["driver"].is_null());
        CHECK(j["gpus"].empty());
    }
}

TEST_CASE("envlock detect --gpu \"RTX 4090\" --driver 525.60.13 locks for that machine") {
    auto r = run_envlock({"detect", "--gpu", "RTX 4090", "--driver", "525.60.13", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["gpus"].size() == 1);
    CHECK(j["gpus"][0]["sm"] == "sm_89");
    CHECK(j["driver"] == "525.60.13");
    CHECK(j["driver-cuda"] == "12.0");
}

TEST_CASE("envlock detect output round-trips through --target") {
    auto first = run_envlock({"detect", "--gpu", "sm_86", "--glibc", "2.31", "--cpu-flags", "avx,avx2"});
    REQUIRE(first.exit_code == 0);
    auto path = envlock::test::scratch_dir("target-roundtrip") / "target.yaml";
    std::ofstream(path) << first.out;
    auto second = run_envlock({"detect", "--target", path.string()});
    std::filesystem::remove(path);
    CHECK(second.exit_code == 0);
    CHECK(second.out == first.out);
}

TEST_CASE("envlock detect rejects an unknown GPU and a bad target file with exit 2") {
    auto r = run_envlock({"detect", "--gpu", "Voodoo 3"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("Voodoo 3") != std::string::npos);
    CHECK(run_envlock({"detect", "--target", "/nonexistent/t.yaml"}).exit_code == 2);
    CHECK(run_envlock({"detect", "--platform", "amiga"}).exit_code == 2);
}
