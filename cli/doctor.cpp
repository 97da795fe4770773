#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/env_prefix.hpp"
#include "cli/lock_path.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "install/doctor.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {

namespace {

struct DoctorFlags {
    std::string prefix, lock, target;
    std::vector<std::string> knowledge;
    bool json = false;
};

// The prefix: --prefix, else the active env ($CONDA_PREFIX, $VIRTUAL_ENV), else the lock's
// .envlock/<target>. The lock: --lock, else the copy install kept in the prefix; a lock lying
// around in the working directory is not assumed to describe some other prefix.
struct Choice : EnvChoice {
    std::string lock_file;   // where the lock was read, "" without one
};

Choice choose(const DoctorFlags& f) {
    namespace fs = std::filesystem;
    Choice c;
    std::string prefix = f.prefix;
    for (const char* var : {"CONDA_PREFIX", "VIRTUAL_ENV"})
        if (prefix.empty() && std::getenv(var) && *std::getenv(var)) prefix = std::getenv(var);
    std::error_code ec;
    if (prefix.empty()) {
        if (!fs::exists(lock_path(f.lock), ec))
            throw InputError("no environment to diagnose: give --prefix DIR (or activate one: CONDA_PREFIX / VIRTUAL_ENV), "
                             "or --lock FILE whose .envlock/<target> holds it");
        static_cast<EnvChoice&>(c) = choose_env("", f.lock, f.target);
        c.lock_file = lock_path(f.lock);
        return c;
    }
    c.prefix = prefix;
    std::string kept = (fs::path(prefix) / ".envlock/lock.yaml").string();
    if (!f.lock.empty()) {
        c.lock_file = lock_path(f.lock);
        c.lock = read_lock(read_text_file(c.lock_file, "lock"), c.lock_file);
    } else if (fs::exists(kept, ec)) {
        c.lock_file = kept;
        c.lock = read_lock(read_text_file(kept, "lock"), kept);
    }
    return c;
}

void print(const install::DoctorReport& r, const Output& out) {
    std::cout << r.prefix << ": Python " << (r.python.empty() ? "unknown" : r.python) << ", " << r.python_dists
              << " Python distributions, " << r.conda_records << " conda records";
    if (!r.torch.empty()) std::cout << ", torch " << r.torch << (r.torch_cuda.empty() ? " (CPU)" : " (CUDA " + r.torch_cuda + ")");
    std::cout << "\n";
    using S = install::Severity;
    for (S s : {S::error, S::warning, S::note}) {
        std::size_t n = 0;
        for (const auto& f : r.findings) n += f.severity == s;
        if (n == 0 || (s == S::note && out.quiet)) continue;
        std::string title = s == S::error ? "errors" : s == S::warning ? "warnings" : "notes";
        auto style = s == S::error ? Output::Style::red : s == S::warning ? Output::Style::yellow : Output::Style::dim;
        std::cout << "\n" << out.out(title + " (" + std::to_string(n) + ")", style) << "\n";
        for (const auto& f : r.findings) {
            if (f.severity != s) continue;
            std::cout << "  " << out.out(f.what, Output::Style::bold) << "  [" << f.check << "]\n";
            std::cout << "      why: " << f.why << "\n";
            if (!f.fix.empty()) std::cout << "      fix: " << out.out(f.fix, Output::Style::green) << "\n";
        }
    }
    if (r.drift && !(r.drift->added.empty() && r.drift->removed.empty() && r.drift->changed.empty())) {
        std::cout << "\n`envlock install --repair` would:\n";
        for (const auto& c : r.drift->changed) {   // "name locked -> installed"
            std::size_t arrow = c.find(" -> ");
            std::cout << "  reinstall " << c.substr(0, arrow) << " (now " << c.substr(arrow + 4) << ")\n";
        }
        for (const auto& c : r.drift->removed) std::cout << "  install   " << c << "\n";
        for (const auto& c : r.drift->added) std::cout << "  remove    " << c << "\n";
    }
    if (r.exit_code() == 0) std::cout << "\n" << out.out("healthy", Output::Style::green) << "\n";
}

}  // namespace

void add_doctor(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("doctor", "Diagnose an existing environment, envlock-made or not: what is wrong, why, and the command that fixes it (exit 1 when something is)");
    auto flags = std::make_shared<DoctorFlags>();
    cmd->add_option("--prefix", flags->prefix, "the environment: a conda env, a venv, /usr (default: $CONDA_PREFIX, $VIRTUAL_ENV, else the lock's)");
    cmd->add_option("--lock", flags->lock, "the lock it was installed from: report drift from it (default: the copy install kept in the prefix)");
    cmd->add_option("--target", flags->target, "the lock's target whose environment to use when --prefix is not given");
    cmd->add_option("--knowledge", flags->knowledge, "extra knowledge file(s)");
    cmd->add_flag("--json", flags->json, "print the findings as JSON");
    cmd->callback([flags, cmd, &exit_code] {
        Choice c = choose(*flags);
        auto scan = install::scan_prefix(c.prefix);
        auto k = knowledge::load(user_knowledge_files(flags->knowledge));
        auto machine = install::this_machine(k);
        auto report = install::diagnose(scan, machine, k, c.lock ? &*c.lock : nullptr, c.lock_file);
        if (flags->json) std::cout << install::report_json(report).dump(2) << "\n";
        else print(report, output_of(*cmd));
        exit_code = report.exit_code();
    });
}

}  // namespace envlock::cli
