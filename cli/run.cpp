#include <iostream>

#include "cli/commands.hpp"
#include "cli/env_prefix.hpp"
#include "cli/output.hpp"
#include "install/run_env.hpp"
#include "install/transaction.hpp"
#include "cli/shared_flags.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/workflow/check_lock.hpp"

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
    // From the environment before any shell-hook activation: nothing of an env activated earlier carries over.
    auto env = install::run_environment(c.prefix, c.lock ? &*c.lock : nullptr, install::before_activation(install::current_environment()));
    if (!out.quiet)
        for (const auto& n : env.notes) std::cerr << "envlock: note: " << n << "\n";
    return env;
}


struct SyncFlags {
    bool frozen = false, locked = false, offline = false;
    std::string python;
};

// Before the command, as uv run does: the lock's inputs checked (--locked: a stale lock is an
// error; otherwise a note), then the environment brought to the lock when it is behind.
// --frozen runs the environment as it is. An env named by --prefix alone has no lock file to follow.
void sync_before_run(const EnvFlags& f, const SyncFlags& s, const Output& out) {
    if (s.frozen || (!f.prefix.empty() && f.lock.empty())) return;
    std::string file = lock_path(f.lock);
    EnvChoice c = choose_env(f.prefix, file, f.target);
    if (!c.lock) return;
    std::string dir = std::filesystem::path(file).parent_path().string();
    auto stale = stale_reasons(*c.lock, dir.empty() ? "." : dir, knowledge::load(user_knowledge_files({})));
    if (!stale.empty()) {
        std::string why;
        for (const auto& r : stale) why += (why.empty() ? "" : "; ") + r;
        if (s.locked) throw UnmetError(file + " is out of date (" + why + "); run `envlock resolve` (or drop --locked)");
        if (!out.quiet) std::cerr << "envlock: note: " << file << " is out of date (" << why << "); `envlock resolve` updates it\n";
    }
    if (install::environment_current(c.prefix, *c.lock) && s.python.empty()) return;
    sync_environment(*c.lock, c.prefix, s.python, s.offline);
}

}  // namespace

void add_run(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("run", "Run a command inside the locked environment, installing what it lacks first: envlock run -- CMD ARGS…");
    auto flags = std::make_shared<EnvFlags>();
    auto sync = std::make_shared<SyncFlags>();
    auto command = std::make_shared<std::vector<std::string>>();
    add_env_flags(cmd, *flags);
    cmd->add_flag("--frozen", sync->frozen, "run the environment as it is: no check against the lock, nothing installed");
    cmd->add_flag("--locked", sync->locked, "fail when the lock is behind its spec or the files it was read from");
    cmd->add_flag("--offline", sync->offline, "install what is missing from the package cache only");
    cmd->add_option("-p,--python", sync->python, "a venv lock's base interpreter, X.Y or X.Y.Z (as install --python)");
    cmd->add_option("COMMAND", *command, "the command and its arguments, after --")->required();
    cmd->callback([cmd, flags, sync, command, &exit_code] {
        const Output out = output_of(*cmd);
        sync_before_run(*flags, *sync, out);
        auto env = environment_for(*flags, out);
        if (auto missing = install::missing_in_environment(env, *command); !missing.empty()) {
            std::cerr << "envlock run: " << missing << "\n";
            exit_code = 127;
            return;
        }
        std::cout.flush();
        exit_code = install::exec_in_environment(env, install::before_activation(install::current_environment()), *command);
    });

    auto* hook = app.add_subcommand("shell-hook",
        "Print shell code that activates the environment and defines envlock_deactivate: eval \"$(envlock shell-hook)\"");
    auto hook_flags = std::make_shared<EnvFlags>();
    auto shell = std::make_shared<std::string>("posix");
    auto json = std::make_shared<bool>(false);
    add_env_flags(hook, *hook_flags);
    hook->add_option("-s,--shell", *shell, "bash, zsh, fish or posix (default posix: bash, zsh, dash read it)");
    hook->add_flag("--json", *json, "the variables as JSON (environment-variables, unset, activate-scripts), as pixi's");
    hook->callback([hook, hook_flags, shell, json] {
        install::Shell which = install::parse_shell(*shell);
        auto env = environment_for(*hook_flags, output_of(*hook));
        std::cout << (*json ? install::shell_hook_json(env) : install::shell_hook(env, which));
    });
}

}  // namespace envlock::cli
