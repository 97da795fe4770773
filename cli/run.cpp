#include <iostream>

#include "cli/commands.hpp"
#include "cli/env_prefix.hpp"
#include "cli/output.hpp"
#include "install/run_env.hpp"
#include "install/transaction.hpp"

namespace envlock::cli {

namespace {

struct EnvFlags {
    std::string prefix, lock, target;
};

void add_env_flags(CLI::App* cmd, EnvFlags& f) {
    cmd->add_option("--prefix", f.prefix, "the environment (default: .envlock/<target> beside the lock)");
    cmd->add_option("--lock", f.lock, "the lock (a file or a directory holding envlock.yaml; default ./envlock.yaml)");
    cmd->add_option("--target", f.target, "the lock's target whose environment to use (default: its first)");
}

install::RunEnvironment environment_for(const EnvFlags& f, const Output& out) {
    EnvChoice c = choose_env(f.prefix, f.lock, f.target);
    // Never a half-installed prefix: wait for a running install, recover an interrupted one.
    std::string recovered = install::settle_prefix(c.prefix, [&](const std::string& who) {
        std::cerr << "envlock: waiting for another envlock to finish with " << c.prefix
                  << (who.empty() ? "" : " (" + who + ")") << "\n";
    });
    if (!recovered.empty()) {
        if (!out.quiet) std::cerr << "envlock: " << recovered << "\n";
        c = choose_env(f.prefix, f.lock, f.target);   // its kept lock as it is now
    }
    auto env = install::run_environment(c.prefix, c.lock ? &*c.lock : nullptr, install::current_environment());
    if (!out.quiet)
        for (const auto& n : env.notes) std::cerr << "envlock: note: " << n << "\n";
    return env;
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("run", "Run a command inside the locked environment: envlock run [--prefix DIR] -- CMD ARGS…");
    auto flags = std::make_shared<EnvFlags>();
    auto command = std::make_shared<std::vector<std::string>>();
    add_env_flags(cmd, *flags);
    cmd->add_option("COMMAND", *command, "the command and its arguments, after --")->required();
    cmd->callback([cmd, flags, command, &exit_code] {
        auto env = environment_for(*flags, output_of(*cmd));
        std::cout.flush();
        exit_code = install::exec_in_environment(env, install::current_environment(), *command);
    });

    auto* hook = app.add_subcommand("shell-hook", "Print shell code that activates the environment: eval \"$(envlock shell-hook)\"");
    auto hook_flags = std::make_shared<EnvFlags>();
    add_env_flags(hook, *hook_flags);
    hook->callback([hook, hook_flags] { std::cout << install::shell_hook(environment_for(*hook_flags, output_of(*hook))); });
}

}  // namespace envlock::cli
