#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/commands.hpp"
#include "cli/env_prefix.hpp"
#include "cli/lock_path.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "install/file_lock.hpp"
#include "install/run_env.hpp"
#include "install/transaction.hpp"
#include "install/verify.hpp"
#include "resolver/knowledge/detect.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {

namespace {

struct VerifyFlags {
    std::string lock, prefix, target;
    std::vector<std::string> knowledge;
    bool build_extensions = false, json = false, no_probe = false, record = false;
};

void print(const install::VerifyReport& r, const Output& out) {
    using S = install::CheckStatus;
    for (const auto& c : r.checks) {
        if (out.quiet && c.status != S::failed) continue;
        std::string mark = c.status == S::passed ? out.out("ok  ", Output::Style::green)
                           : c.status == S::failed ? out.out("FAIL", Output::Style::red)
                                                   : out.out("skip", Output::Style::dim);
        std::cout << mark << " " << out.out(c.name, Output::Style::bold) << ": " << c.what << "\n";
        if (c.status != S::failed) continue;
        if (!c.cause.empty()) std::cout << "     cause: " << c.cause << "\n";
        if (!c.fix.empty()) std::cout << "     fix:   " << out.out(c.fix, Output::Style::green) << "\n";
        if (!c.source.empty() && out.verbose) std::cout << "     source: " << c.source << "\n";
        for (size_t i = 1; i < c.explained.size(); ++i)
            std::cout << "     also:  " << c.explained[i].line << " (" << c.explained[i].id << ")\n";
        if (!c.log.empty()) std::cout << "     log:   " << c.log << "\n";
    }
    std::size_t failed = 0;
    for (const auto& c : r.checks) failed += c.status == S::failed;
    if (failed == 0) std::cout << out.out("verified", Output::Style::green) << "\n";
    else std::cout << failed << " check" << (failed == 1 ? "" : "s") << " failed\n";
}

}  // namespace

void add_verify(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("verify", "Prove the locked environment builds its extensions here: toolchain checks, a CUDA probe, "
                                             "--build-extensions builds and imports them; every failure with cause and fix (exit 1)");
    auto f = std::make_shared<VerifyFlags>();
    cmd->add_option("LOCK", f->lock, "the lock (a file or a directory holding envlock.yaml; default ./envlock.yaml)");
    cmd->add_option("--prefix", f->prefix, "the installed environment (default: the lock's .envlock/<target>)");
    cmd->add_option("--target", f->target, "the lock's target whose environment to use when --prefix is not given");
    cmd->add_flag("--build-extensions", f->build_extensions,
                  "build each of the spec's extensions in the environment (stale build/, *.so, *.egg-info removed first) and import it");
    cmd->add_flag("--no-probe", f->no_probe, "skip compiling the CUDA probe");
    cmd->add_option("--knowledge", f->knowledge, "extra knowledge file(s)");
    cmd->add_flag("--record", f->record, "write the result into the lock's `verified:` block (nvcc, host compiler, sm, date, result); the content hash does not change");
    cmd->add_flag("--json", f->json, "print the checks as JSON");
    cmd->callback([f, cmd, &exit_code] {
        namespace fs = std::filesystem;
        std::error_code ec;
        std::string lock_file = lock_path(f->lock);
        Lock lock = read_lock(read_text_file(lock_file, "lock"), lock_file);
        std::string prefix = f->prefix;
        if (prefix.empty()) {
            std::string target = f->target.empty() ? (lock.targets.empty() ? "default" : lock.targets.front().name) : f->target;
            prefix = (fs::absolute(lock_file, ec).parent_path() / ".envlock" / target).string();
            if (!fs::is_directory(prefix, ec)) prefix.clear();   // not installed: toolchain checks and the probe only
        } else if (!fs::is_directory(prefix, ec)) {
            throw InputError("--prefix " + prefix + ": no such directory (run `envlock install` first)");
        }
        if (!prefix.empty()) prefix = fs::absolute(prefix, ec).lexically_normal().string();

        auto k = knowledge::load(user_knowledge_files(f->knowledge));
        install::VerifyInputs in;
        in.machine = detect_target(DetectRoots::host(), k);
        in.env = install::current_environment();
        in.prefix = prefix;
        in.lock_dir = fs::absolute(lock_file, ec).parent_path().string();
        in.probe = !f->no_probe;
        in.build_extensions = f->build_extensions;

        // Another envlock installing into the prefix would change it under the build.
        std::optional<install::FileLock> held;
        if (!prefix.empty()) {
            held.emplace(install::prefix_lock_path(prefix), [](const std::string& note) {
                std::cerr << "envlock: waiting for another envlock on this environment (" << note << ")\n";
            });
            std::string recovered = install::recover_prefix(prefix);
            if (!recovered.empty()) std::cerr << "envlock: " << recovered << "\n";
        }
        auto report = install::verify_lock(lock, in, k);
        if (f->record) {
            char date[32];
            std::time_t now = std::time(nullptr);
            std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
            std::string text = set_verified(read_text_file(lock_file, "lock"), install::verification_record(report, date));
            read_lock(text, lock_file);   // what is written must read back
            write_file_atomically(lock_file, text);
        }
        if (f->json) std::cout << install::report_json(report).dump(2) << "\n";
        else print(report, output_of(*cmd));
        exit_code = report.exit_code();
    });
}

}  // namespace envlock::cli
