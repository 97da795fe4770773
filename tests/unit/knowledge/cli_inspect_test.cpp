#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

using envlock::test::run_envlock;
using nlohmann::json;

TEST_CASE("inspect gpu \"RTX 4090\" answers sm_89") {
    auto r = run_envlock({"inspect", "gpu", "RTX 4090"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("sm_89") != std::string::npos);
    auto j = json::parse(run_envlock({"inspect", "gpu", "NVIDIA GeForce RTX 4090", "--json"}).out);
    CHECK(j["sm"] == "sm_89");
    CHECK(j["compute-capability"] == "8.9");
    CHECK(!j["source"].get<std::string>().empty());
}

TEST_CASE("inspect driver 525.60.13 answers CUDA 12.0") {
    auto r = run_envlock({"inspect", "driver", "525.60.13"});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("12.0") != std::string::npos);
    CHECK(json::parse(run_envlock({"inspect", "driver", "525.60.13", "--json"}).out)["max-cuda"] == "12.0");
}

TEST_CASE("inspect cuda 11.1: minimum driver, sm targets, newest gcc") {
    auto j = json::parse(run_envlock({"inspect", "cuda", "11.1", "--json"}).out);
    CHECK(j["min-driver"]["linux"] == "455.23");
    CHECK(j["host-compiler"]["gcc-max"] == 10);
    auto sm = j["nvcc"]["sm"];
    CHECK(std::find(sm.begin(), sm.end(), "sm_86") != sm.end());
    CHECK(std::find(sm.begin(), sm.end(), "sm_89") == sm.end());
}

TEST_CASE("inspect torch 1.9.1: variants, Python range, arch lists") {
    auto r = run_envlock({"inspect", "torch", "1.9.1", "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = json::parse(r.out);
    CHECK(j["python"]["min"] == "3.6");
    CHECK(j["python"]["max"] == "3.9");
    CHECK(j["variants"] == json({"cu102", "cu111", "cpu"}));
    bool cu111 = false;
    for (const auto& a : j["arch-lists"])
        if (a["kind"] == "pip" && a["variant"] == "cu111") {
            cu111 = true;
            CHECK(a["sass"].back() == "sm_86");
            CHECK(a["ptx"].empty());
        }
    CHECK(cu111);
}

TEST_CASE("inspect advisories lists each with its source") {
    auto j = json::parse(run_envlock({"inspect", "advisories", "--json"}).out);
    REQUIRE(j.size() >= 5);
    for (const auto& a : j) CHECK(!a["source"].get<std::string>().empty());
    CHECK(run_envlock({"inspect", "advisories"}).out.find("yapf>=0.40.2") != std::string::npos);
}

TEST_CASE("unknown GPU, driver, CUDA or torch exit 2 with a message") {
    for (auto args : std::vector<std::vector<std::string>>{{"inspect", "gpu", "Voodoo 3"},
                                                           {"inspect", "driver", "12"},
                                                           {"inspect", "cuda", "4.0"},
                                                           {"inspect", "torch", "0.1.2"}}) {
        auto r = run_envlock(args);
        CHECK(r.exit_code == 2);
        CHECK(!r.err.empty());
    }
}

TEST_CASE("--knowledge FILE extends the answers") {
    auto path = envlock::test::scratch_dir("site-knowledge") / "envlock-site-knowledge.yaml";
    std::ofstream(path) << "gpus:\n  - {name: \"NVIDIA GeForce RTX 3080\", cc: \"8.6\", source: \"site inventory\"}\n";
    auto r = run_envlock({"inspect", "gpu", "RTX 3080", "--knowledge", path.string()});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("sm_86") != std::string::npos);
    std::ofstream(path) << "gpus: [{name: x}]\n";
    auto bad = run_envlock({"inspect", "gpu", "RTX 3080", "--knowledge", path.string()});
    std::filesystem::remove(path);
    CHECK(bad.exit_code == 2);
    CHECK(bad.err.find("envlock-site-knowledge.yaml:1:") != std::string::npos);
}

TEST_CASE("knowledge files in the config folder are read") {
    auto dir = envlock::test::scratch_dir("config");
    std::filesystem::create_directories(dir / "knowledge");
    std::ofstream(dir / "knowledge" / "site.yaml") << "gpus:\n  - {name: \"Site Accelerator X1\", cc: \"8.0\", source: \"site\"}\n";
    auto r = run_envlock({"inspect", "gpu", "Site Accelerator X1"}, {"ENVLOCK_CONFIG_DIR=" + dir.string()});
    std::filesystem::remove_all(dir);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("sm_80") != std::string::npos);
}
