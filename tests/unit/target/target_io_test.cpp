#include <doctest/doctest.h>

#include "resolver/specs/errors.hpp"
#include "resolver/lock/target.hpp"
#include "resolver/lock/target_io.hpp"

#include <yaml-cpp/yaml.h>

namespace {
envlock::Target sample() {
    envlock::Target t;
    t.platform = "linux-64";
    t.kernel = "5.15.0-91-generic";
    t.wsl = true;
    t.glibc = "2.31";
    t.cpu_model = "AMD EPYC 7763 64-Core Processor";
    t.cpu_flags = {"sse4_2", "avx", "avx2", "fma"};
    t.cores = 128;
    t.memory_bytes = 540000000000ULL;
    t.driver_version = "535.104.05";
    t.driver_cuda = "12.2";
    t.gpus = {{"NVIDIA GeForce RTX 3090", 8, 6}, {"", 9, 0}, {"Mystery GPU", 0, 0}};
    t.compilers = {{"gcc", "/usr/bin/gcc-9", "9.4.0"}, {"clang", "/usr/bin/clang", "14.0.6"}};
    t.toolkits = {{"/usr/local/cuda-11.1", "11.1.105", {"compute_35", "compute_86"}}};
    return t;
}

void check_same(const envlock::Target& a, const envlock::Target& b) {
    CHECK(envlock::target_to_json(a) == envlock::target_to_json(b));
}
}  // namespace

TEST_CASE("a target survives YAML and JSON round trips") {
    auto t = sample();
    check_same(envlock::target_from_text(envlock::target_to_yaml(t), "t.yaml"), t);
    check_same(envlock::target_from_text(envlock::target_to_json(t).dump(2), "t.json"), t);
}

TEST_CASE("an empty machine round-trips with nulls") {
    envlock::Target t;
    t.platform = "linux-64";
    std::string yaml = envlock::target_to_yaml(t);
    CHECK(yaml.find("driver: ~") != std::string::npos);
    auto back = envlock::target_from_text(yaml, "t.yaml");
    CHECK(back.driver_version.empty());
    CHECK(back.gpus.empty());
    check_same(back, t);
}

TEST_CASE("GPU capabilities are written as sm_XY, unknown ones as null") {
    auto j = envlock::target_to_json(sample());
    CHECK(j["gpus"][0]["sm"] == "sm_86");
    CHECK(j["gpus"][1]["name"].is_null());
    CHECK(j["gpus"][2]["sm"].is_null());
    CHECK(j["driver-cuda"] == "12.2");
}

TEST_CASE("version-like values stay strings even when written unquoted") {
    auto t = envlock::target_from_text("platform: linux-64\nglibc: 2.31\ndriver-cuda: 12.0\ngpus: [{sm: sm_86}]\n", "t.yaml");
    CHECK(t.glibc == "2.31");
    CHECK(t.driver_cuda == "12.0");
    CHECK(t.gpus.at(0).sm_major == 8);
}

TEST_CASE("bad target files name file, line and what was expected") {
    auto message = [](const std::string& text) {
        try {
            envlock::target_from_text(text, "t.yaml");
        } catch (const envlock::InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("platform: linux-64\ngpu: []\n") == "t.yaml:2: unknown key 'gpu'");
    CHECK(message("gpus:\n  - name: x\n    sm: 8.6\n") == "t.yaml:3: gpus[0].sm: expected sm_XY (e.g. sm_86), got '8.6'");
    CHECK(message("cores: many\n") == "t.yaml:1: cores: expected a non-negative integer");
    CHECK(message("wsl: maybe\n") == "t.yaml:1: wsl: expected true or false");
    CHECK(message("- a\n- b\n").find("expected a target mapping") != std::string::npos);
    CHECK(message("gpus: [\n").find("not valid YAML") != std::string::npos);
    CHECK(message("compilers: [{path: /usr/bin/gcc}]\n") == "t.yaml:1: compilers[0]: expected kind and version");
}

// Found by fuzz/target (issue 20): a GPU name with a byte that is not UTF-8 was read, and
// `envlock detect --target FILE --json` then failed with an internal error (JSON holds UTF-8
// only). YAML is UTF-8 text: the file, line and column of the bad byte are named.
TEST_CASE("a target file that is not UTF-8 is refused with its line and column") {
    try {
        envlock::target_from_text("gpus:\n  - name: RTX\xff\n", "t.yaml");
        FAIL("expected an InputError");
    } catch (const envlock::InputError& e) {
        CHECK(std::string(e.what()) == "t.yaml:2: expected UTF-8 text, found byte 0xFF at column 14");
    }
}

// Found by fuzz/target (issue 20): yaml-cpp decodes the YAML escape "\_" (U+00A0) to the lone
// byte 0xA0, so a UTF-8 file still gave a value that is not UTF-8, and writing the target as
// JSON failed with an internal error. Values are checked after decoding.
TEST_CASE("a target value whose YAML escape decodes to a byte that is not UTF-8 is refused") {
    try {
        envlock::target_from_text("platform: linux-64\ncpu-flags: [\"a\\_b\"]\n", "t.yaml");
        FAIL("expected an InputError");
    } catch (const envlock::InputError& e) {
        CHECK(std::string(e.what()).rfind("t.yaml:2", 0) == 0);
        CHECK(std::string(e.what()).find("expected UTF-8 text") != std::string::npos);
    }
}

TEST_CASE("an osx target's macOS version and the kernel and osx given by flags round-trip (detect --osx 13.6 > t.yaml; --target t.yaml)") {
    envlock::Target t;
    t.platform = "osx-arm64";
    t.osx = "13.6";
    t.given = {"kernel", "osx", "platform"};
    std::string yaml = envlock::target_to_yaml(t);
    CHECK(yaml.find("osx: \"13.6\"") != std::string::npos);
    check_same(envlock::target_from_text(yaml, "t.yaml"), t);
    CHECK_THROWS_AS(envlock::target_from_text("platform: osx-64\nosx: Sonoma\n", "t.yaml"), envlock::InputError);
}

TEST_CASE("a lock's left-out facts are not written, are listed under left-out, and round-trip (#30)") {
    auto t = envlock::leave_out(sample(), {"compilers", "cuda-toolkits", "glibc", "gpus", "driver", "wsl", "cpu-flags"});
    std::string yaml = envlock::target_to_yaml(t);
    const YAML::Node read = YAML::Load(yaml);
    for (const char* gone : {"glibc", "gpus", "driver", "driver-cuda", "compilers", "cuda-toolkits", "wsl", "cpu-flags"})
        CHECK_MESSAGE(!read[gone], gone);
    CHECK(read["platform"].as<std::string>() == "linux-64");
    CHECK(yaml.find("left-out: [compilers, cpu-flags, cuda-toolkits, driver, glibc, gpus, wsl]") != std::string::npos);
    check_same(envlock::target_from_text(yaml, "t.yaml"), t);
    check_same(envlock::target_from_text(envlock::target_to_json(t).dump(2), "t.json"), t);
    // A re-resolve takes them from the machine it runs on.
    auto again = envlock::with_left_out(envlock::target_from_text(yaml, "t.yaml"), sample());
    check_same(again, sample());
}

TEST_CASE("a fact the user gave is never left out: it is an input, not the host's (#30)") {
    auto t = sample();
    t.given = {"gpus"};
    auto kept = envlock::leave_out(t, {"gpus", "glibc"});
    CHECK(kept.gpus.size() == 3);
    CHECK(kept.left_out == std::vector<std::string>{"glibc"});
}

TEST_CASE("left-out names only facts a lock may leave out, and never one the file also gives (#30)") {
    auto message = [](const std::string& text) {
        try {
            envlock::target_from_text(text, "t.yaml");
        } catch (const envlock::InputError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(message("platform: linux-64\nleft-out: [platform]\n").find("t.yaml:2: left-out: expected fact names among compilers") == 0);
    CHECK(message("platform: linux-64\nglibc: \"2.31\"\nleft-out: [glibc]\n") == "t.yaml:2: glibc: a fact listed in left-out cannot also be given");
}
