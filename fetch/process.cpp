#include "fetch/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

extern char** environ;

namespace envlock {

ProcessResult run_process(const std::vector<std::string>& argv, int timeout_seconds, const ProcessOptions& options) {
    ProcessResult result;
    int pipefd[2];
    if (argv.empty() || pipe2(pipefd, O_CLOEXEC) != 0) return result;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
    posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
    std::vector<std::string> copy = argv, env_copy;
    std::vector<char*> args, envp;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    if (options.env) {
        for (const auto& [k, v] : *options.env) env_copy.push_back(k + "=" + v);
        for (auto& e : env_copy) envp.push_back(e.data());
        envp.push_back(nullptr);
    }
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), options.env ? envp.data() : environ);
    posix_spawn_file_actions_destroy(&actions);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        result.out = "cannot start " + copy[0] + ": " + std::strerror(rc);
        return result;
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
    bool timed_out = false;
    char buffer[4096];
    while (true) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) {
            timed_out = true;
            kill(pid, SIGKILL);
            break;
        }
        pollfd p{pipefd[0], POLLIN, 0};
        if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
        ssize_t n = read(pipefd[0], buffer, sizeof buffer);
        if (n <= 0) break;
        result.out.append(buffer, static_cast<size_t>(n));
    }
    close(pipefd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    result.exit_code = timed_out ? 124 : (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return result;
}

}  // namespace envlock
