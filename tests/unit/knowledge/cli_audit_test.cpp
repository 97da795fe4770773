// What a user sees of the 2026-11 corrections: `inspect` answers from the corrected, sourced rows.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/support/run_envlock.hpp"

using envlock::test::run_envlock;
using nlohmann::json;

namespace {
// The value printed after "label:" on its line of a text answer.
std::string row_value(const std::string& out, const std::string& label) {
    auto at = out.find(label + ":");
    if (at == std::string::npos) return "";
    auto end = out.find('\n', at);
    auto value = out.substr(at + label.size() + 1, end - at - label.size() - 1);
    return value.substr(value.find_first_not_of(' '));
}
}  // namespace

TEST_CASE("inspect cuda 12.3 says gcc 12") {
    auto r = run_envlock({"inspect", "cuda", "12.3"});
    REQUIRE(r.exit_code == 0);
    CHECK(row_value(r.out, "newest gcc") == "12");
    auto j = json::parse(run_envlock({"inspect", "cuda", "12.3", "--json"}).out);
    CHECK(j["host-compiler"]["gcc-max"] == 12);
    CHECK(j["host-compiler"]["source"].get<std::string>().find("nvidia-cuda-toolkit-12.3.2.ebuild") != std::string::npos);
}

TEST_CASE("inspect cuda 12.8 answers from sourced rows: driver, targets with sm_120, gcc 14, clang 19") {
    auto j = json::parse(run_envlock({"inspect", "cuda", "12.8", "--json"}).out);
    CHECK(j["min-driver"]["linux"] == "570.26");
    CHECK(j["min-driver"]["source"].get<std::string>().find("docs.nvidia.com") != std::string::npos);
    auto sm = j["nvcc"]["sm"];
    CHECK(std::find(sm.begin(), sm.end(), "sm_120") != sm.end());
    CHECK(j["host-compiler"]["gcc-max"] == 14);
    CHECK(j["host-compiler"]["clang-max"] == 19);
    CHECK(j["host-compiler"]["unverified"] == false);
    CHECK(j["host-compiler"]["source"].get<std::string>().find("gentoo/gentoo@") == 0);
}

TEST_CASE("inspect torch 2.7 answers from sourced rows: cu128 arch list and Blackwell extension names") {
    auto r = run_envlock({"inspect", "torch", "2.7.1", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = json::parse(r.out);
    CHECK(j["python"]["min"] == "3.9");
    bool cu128 = false;
    for (const auto& a : j["arch-lists"])
        if (a["variant"] == "cu128") {
            cu128 = true;
            CHECK(a["ptx"] == json({"compute_120"}));
            CHECK(!a["source"].get<std::string>().empty());
        }
    CHECK(cu128);
    auto arches = j["cpp-extension"]["arches"];
    CHECK(std::find(arches.begin(), arches.end(), "12.0") != arches.end());
    CHECK(j["cpp-extension"]["unverified"] == false);
    CHECK(j["cpp-extension"]["source"].get<std::string>().find("pytorch/pytorch/pull/145436") != std::string::npos);
}

TEST_CASE("inspect torch 2.10.0 and inspect cuda 13.1 answer (they were holes)") {
    auto t = run_envlock({"inspect", "torch", "2.10.0"});
    CHECK(t.exit_code == 0);
    CHECK(t.out.find("3.10 - 3.14") != std::string::npos);
    auto c = run_envlock({"inspect", "cuda", "13.1"});
    CHECK(c.exit_code == 0);
    CHECK(c.out.find("590.44.01") != std::string::npos);
    auto d = run_envlock({"inspect", "driver", "595.71.05"});
    CHECK(row_value(d.out, "max CUDA").rfind("13.2 ", 0) == 0);
}

TEST_CASE("inspect advisories shows the yapf rule as yapf >= 0.40.2 with mmcv(-full) < 1.7.2") {
    auto out = run_envlock({"inspect", "advisories"}).out;
    CHECK(out.find("yapf>=0.40.2 + mmcv-full<1.7.2") != std::string::npos);
    CHECK(out.find("yapf>=0.40.2 + mmcv<1.7.2") != std::string::npos);
    CHECK(out.find("yapf==0.40.2") == std::string::npos);
}
