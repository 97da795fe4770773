// Progress on stderr (issue 19): drawn in place only on a terminal, one outcome line per slow
// step otherwise, nothing with --quiet. The terminal is a real pseudo-terminal from
// util-linux's script(1), as a user's shell gives one.
#include <doctest/doctest.h>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

std::string shell_quoted(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::vector<std::string> resolve_args(const fs::path& dir, const std::string& cache) {
    std::vector<std::string> args{"resolve", "BEVFormer", "-o", (dir / "envlock.yaml").string(), "--target",
                                  (dir / "target.yaml").string()};
    auto flags = mirror_flags(dir / cache);
    args.insert(args.end(), flags.begin(), flags.end());
    return args;
}

const std::string kErase = "\r\033[K";   // ECMA-48: carriage return, erase to end of line

}  // namespace

TEST_CASE("on a terminal a cold resolve draws its progress in place and ends each step with its outcome") {
    auto dir = temp_dir("tty");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    std::string command = ENVLOCK_BINARY;
    for (const auto& a : resolve_args(dir, "cold-cache")) command += " " + shell_quoted(a);
    auto r = run_program({"script", "-qec", command, "/dev/null"}, {"TERM=xterm", "NO_COLOR=1"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    INFO(r.out);
    CHECK(r.out.find(kErase + "Fetching indexes: ") != std::string::npos);
    CHECK(r.out.find("Fetched ") != std::string::npos);
    CHECK(r.out.find(" index documents (") != std::string::npos);
    CHECK(r.out.find("Read 2 git sources in ") != std::string::npos);   // mmdet3d and detectron2
    CHECK(r.out.find("Solved in ") != std::string::npos);
    CHECK(r.out.find("wrote ") != std::string::npos);
}

TEST_CASE("not on a terminal nothing is drawn in place, and --quiet prints no progress at all") {
    auto dir = temp_dir("notty");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    auto plain = run_envlock(resolve_args(dir, "cache"));
    REQUIRE_MESSAGE(plain.exit_code == 0, plain.err);
    CHECK(plain.err.find("\033[K") == std::string::npos);
    auto args = resolve_args(dir, "cold-again");
    args.push_back("--quiet");
    auto quiet = run_envlock(args);
    REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.err);
    for (const char* word : {"Fetch", "Solv", "git source", "\033["}) CHECK_MESSAGE(quiet.err.find(word) == std::string::npos, word);
}

TEST_CASE("a terminal with --quiet shows no progress either") {
    auto dir = temp_dir("ttyq");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    std::string command = ENVLOCK_BINARY;
    for (const auto& a : resolve_args(dir, "cache")) command += " " + shell_quoted(a);
    auto r = run_program({"script", "-qec", command + " -q", "/dev/null"}, {"TERM=xterm"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out);
    CHECK(r.out.find("Fetching") == std::string::npos);
    CHECK(r.out.find("Solved") == std::string::npos);
}

TEST_CASE("index list shows the same progress on a terminal, and none in a pipe") {
    auto dir = temp_dir("indexprogress");
    std::string index = mirror_server().server->url() + "/pypi/simple";
    std::string command = std::string(ENVLOCK_BINARY) + " index list numpy -i " + shell_quoted(index) + " --cache-dir " +
                          shell_quoted((dir / "cache").string());
    auto tty = run_program({"script", "-qec", command, "/dev/null"}, {"TERM=xterm", "NO_COLOR=1"});
    REQUIRE_MESSAGE(tty.exit_code == 0, tty.out);
    CHECK(tty.out.find(kErase + "Fetching indexes: ") != std::string::npos);
    CHECK(tty.out.find("Fetched 1 index documents (") != std::string::npos);
    CHECK(tty.out.find("numpy: ") != std::string::npos);
    auto pipe = run_envlock({"index", "list", "numpy", "-i", index, "--cache-dir", (dir / "cache2").string()});
    REQUIRE_MESSAGE(pipe.exit_code == 0, pipe.err);
    CHECK(pipe.err.find("Fetch") == std::string::npos);
}
