#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/env_prefix.hpp"
#include "cli/lock_path.hpp"
#include "cli/output.hpp"
#include "cli/shared_flags.hpp"
#include "fetch/files.hpp"
#include "install/doctor.hpp"
#include "resolver/infer/code_uses.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::cli {

namespace {

struct DoctorFlags {
    std::string prefix, lock, target, code;
    std::vector<std::string> knowledge;
    bool json = false, no_code = false;
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

// The code that runs in the prefix: --code, else the checkout beside the lock (its `checkout:`,
// else the lock's folder), else the working directory when it is a Python project's root.
install::CodeUses read_code(const DoctorFlags& f, const Choice& c) {
    namespace fs = std::filesystem;
    install::CodeUses code;
    std::error_code ec;
    if (f.no_code) return code;
    if (!f.code.empty()) {
        code.dir = f.code;
        code.why = "--code";
    } else if (c.lock && !c.lock_file.empty() && fs::path(c.lock_file).parent_path().filename() != ".envlock") {
        fs::path dir = fs::absolute(c.lock_file, ec).parent_path();
        if (!c.lock->checkout.empty() && fs::is_directory(dir / c.lock->checkout, ec)) dir /= c.lock->checkout;
        code.dir = dir.lexically_normal().string();
        code.why = "the checkout beside " + c.lock_file;
    } else {
        for (const char* marker : {"setup.py", "pyproject.toml", "setup.cfg", "requirements.txt"})
            if (code.dir.empty() && fs::exists(marker, ec)) {
                code.dir = fs::current_path(ec).string();
                code.why = "the working directory (it has " + std::string(marker) + ")";
            }
    }
    if (!code.dir.empty()) code.uses = code_uses(code.dir);
    return code;
}

void print(const install::DoctorReport& r, const install::CodeUses& code, const Output& out) {
    std::cout << r.prefix << ": Python " << (r.python.empty() ? "unknown" : r.python) << ", " << r.python_dists
              << " Python distributions, " << r.conda_records << " conda records";
    if (!r.torch.empty()) std::cout << ", torch " << r.torch << (r.torch_cuda.empty() ? " (CPU)" : " (CUDA " + r.torch_cuda + ")");
    std::cout << "\n";
    if (!code.dir.empty()) {
        std::cout << "code: " << code.dir << " (" << code.why << ")";
        std::vector<std::string> uses;
        for (const auto& [use, where] : code.uses) uses.push_back(use + " at " + where);
        for (size_t i = 0; i < uses.size(); ++i) std::cout << (i ? ", " : "; uses ") << uses[i];
        std::cout << "\n";
    }
    if (!r.build_nvcc.empty()) std::cout << "extensions build with " << r.build_nvcc << "\n";
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
    if (r.repair && !r.repair->refused.empty()) {
        std::cout << "\n`envlock install --repair` cannot run here: " << r.repair->refused << "\n";
    } else if (r.repair) {
        const auto& p = r.repair->plan;
        std::set<std::string> added;
        for (const auto& a : p.plan.add) added.insert(a.name);
        std::size_t n = p.plan.add.size() + p.plan.remove.size() + p.damage.size() + p.foreign.size();
        std::cout << "\n`envlock install --repair` would" << (n ? ":\n" : " change nothing\n");
        for (const auto& a : p.plan.add) std::cout << "  install   " << a.name << " " << a.version << " (" << a.kind << ")\n";
        for (const auto& x : p.plan.remove)
            if (!added.count(x.name)) std::cout << "  remove    " << x.name << " " << x.version << " (" << x.kind << ")\n";
        for (const auto& d : p.damage) std::cout << "  restore   " << d << "\n";
        for (const auto& w : p.foreign) std::cout << "  remove    " << w << "\n";
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
    cmd->add_option("--code", flags->code, "the code that runs in it, for advisories that depend on what the code uses (SyncBatchNorm, np.float …) (default: the checkout beside the lock, else the working directory when it is a Python project)");
    cmd->add_flag("--no-code", flags->no_code, "read no code");
    cmd->add_flag("--json", flags->json, "print the findings as JSON");
    cmd->callback([flags, cmd, &exit_code] {
        Choice c = choose(*flags);
        auto scan = install::scan_prefix(c.prefix);
        auto k = knowledge::load(user_knowledge_files(flags->knowledge));
        auto machine = install::this_machine(k);
        auto code = read_code(*flags, c);
        std::optional<install::RepairPreview> repair;
        if (c.lock) repair = install::repair_preview(*c.lock, scan.prefix);
        auto report = install::diagnose(scan, machine, k, c.lock ? &*c.lock : nullptr, c.lock_file, repair ? &*repair : nullptr,
                                        code.dir.empty() ? nullptr : &code);
        if (flags->json) {
            auto j = install::report_json(report);
            if (!code.dir.empty()) j["code-uses"] = code.uses;
            std::cout << j.dump(2) << "\n";
        } else {
            print(report, code, output_of(*cmd));
        }
        exit_code = report.exit_code();
    });
}

}  // namespace envlock::cli
