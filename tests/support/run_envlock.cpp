#include "tests/support/run_envlock.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <stdexcept>

extern char** environ;

namespace envlock::test {

namespace {

// An unnamed file: a test process that dies mid-run leaves nothing behind.
int anonymous_file() {
    std::string dir = std::filesystem::temp_directory_path().string();
    int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
    std::string path = dir + "/envlock-test-output-XXXXXX";
    fd = ::mkstemp(path.data());
    if (fd >= 0) ::unlink(path.c_str());
    return fd;
}

std::string read_all(int fd) {
    std::string text;
    char buffer[65536];
    ::lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        text.append(buffer, static_cast<size_t>(n));
    }
    ::close(fd);
    return text;
}

}  // namespace

RunResult run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    int out_fd = anonymous_file();
    int err_fd = anonymous_file();
    if (out_fd < 0 || err_fd < 0) throw std::runtime_error("cannot create temp files");

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
    posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);

    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.emplace_back(*e);
    for (const auto& extra : env) {
        auto eq = extra.find('=');
        std::string key = extra.substr(0, eq + 1);
        std::erase_if(env_strings, [&](const std::string& s) { return s.rfind(key, 0) == 0; });
        env_strings.push_back(extra);
    }
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> argv_copy = argv;
    std::vector<char*> args;
    for (auto& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);

    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    RunResult result;
    if (rc == 0) {
        int status = 0;
        waitpid(pid, &status, 0);
        result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    result.out = read_all(out_fd);
    result.err = read_all(err_fd);
    if (rc != 0) throw std::runtime_error("cannot start " + argv[0]);
    return result;
}

RunResult run_envlock(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    std::vector<std::string> argv{ENVLOCK_BINARY};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv, env);
}

}  // namespace envlock::test
