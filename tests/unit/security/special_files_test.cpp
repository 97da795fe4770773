// Every file envlock reads is a regular file of bounded size, and every output goes through one
// atomic writer (issue 20: `-o /dev/full` once read the old "lock" until the kernel killed it
// at 22 GB; `check` on a FIFO or /dev/zero hung; a SIGTERM left `.out.yaml.tmp-XXXXXX` behind).
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "fetch/files.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

// The program under a hard time limit: a hang is a failure with exit 124, not a stuck suite.
RunResult bounded(std::vector<std::string> args) {
    args.insert(args.begin(), {"timeout", "20", ENVLOCK_BINARY});
    return run_program(args);
}

std::string message_of(const std::string& path, size_t max_size = envlock::kMaxTextFileSize) {
    try {
        envlock::read_text_file(path, "lock", max_size);
    } catch (const envlock::InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("check on a FIFO, /dev/zero or a directory is exit 2 at once, naming what the file is") {
    auto dir = temp_dir("special");
    fs::create_directories(dir / "a-directory.yaml");
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    auto fifo = bounded({"check", (dir / "fifo").string()});
    CHECK(fifo.exit_code == 2);
    CHECK(fifo.err.find("fifo: is a FIFO; a lock must be a regular file") != std::string::npos);
    auto zero = bounded({"check", "/dev/zero"});
    CHECK(zero.exit_code == 2);
    CHECK(zero.err.find("/dev/zero: is a character device") != std::string::npos);
    CHECK(message_of((dir / "a-directory.yaml").string()).find("a-directory.yaml: is a directory; a lock must be a regular file") !=
          std::string::npos);
}

TEST_CASE("a file larger than the bound is refused before it is read, saying the bound") {
    auto dir = temp_dir("big");
    write_file(dir / "big.yaml", std::string(4096, 'a'));
    CHECK(message_of((dir / "big.yaml").string(), 1024).find("big.yaml: larger than 1024 bytes") != std::string::npos);
    CHECK(message_of((dir / "big.yaml").string()).empty());
    CHECK(message_of((dir / "missing.yaml").string()).find("missing.yaml: no such lock") != std::string::npos);
}

TEST_CASE("resolve -o /dev/full or -o /dev/stdout is exit 2 before any solve; '-o -' is the way to stdout") {
    auto dir = temp_dir("devout");
    write_file(dir / "spec.yaml", "spec:\n  name: x\n  requirements: [{conda: python=3.8}]\n  channels: [defaults]\n");
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    for (std::string out : {"/dev/full", "/dev/stdout"}) {
        std::vector<std::string> args{"resolve", (dir / "spec.yaml").string(), "-o", out, "--target",
                                      (dir / "target.yaml").string()};
        auto flags = mirror_flags(dir / "cache");
        args.insert(args.end(), flags.begin(), flags.end());
        auto run = bounded(args);
        CHECK_MESSAGE(run.exit_code == 2, (out + ": " + run.err));
        CHECK_MESSAGE(run.err.find("a lock is written only as a regular file (use '-o -' for standard output)") !=
                          std::string::npos,
                      run.err);
    }
}

TEST_CASE("a target file that is a FIFO is refused like a lock, not waited on") {
    auto dir = temp_dir("tfifo");
    REQUIRE(::mkfifo((dir / "target.yaml").c_str(), 0600) == 0);
    auto run = bounded({"detect", "--target", (dir / "target.yaml").string()});
    CHECK(run.exit_code == 2);
    CHECK(run.err.find("is a FIFO; a target file must be a regular file") != std::string::npos);
}

TEST_CASE("SIGTERM during an atomic write leaves the whole new file or the old one, and no temp file") {
    auto dir = temp_dir("sigterm");
    const std::string target = (dir / "out.yaml").string();
    write_file(target, "old\n");
    const std::string content(256u << 20, 'x');   // long enough that the signal lands mid-write
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::signal(SIGTERM, SIG_DFL);   // the test runner's crash handler is not the product's
        envlock::write_file_atomically(target, content);
        _exit(0);
    }
    // Signal as soon as the temp file exists.
    bool saw_temp = false;
    for (int i = 0; i < 20000 && !saw_temp; ++i) {
        for (const auto& e : fs::directory_iterator(dir))
            if (e.path().filename().string().rfind(".out.yaml.tmp-", 0) == 0) saw_temp = true;
        if (!saw_temp) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGTERM);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(saw_temp);
    for (const auto& e : fs::directory_iterator(dir))
        CHECK_MESSAGE(e.path().filename().string().find(".tmp-") == std::string::npos, e.path().string());
    auto size = fs::file_size(target);
    CHECK((size == 4 || size == content.size()));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGTERM);   // it still died of the signal
}
