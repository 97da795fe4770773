#include "install/python_steps.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "fetch/http_cache.hpp"
#include "fetch/url.hpp"
#include "install/python_env.hpp"
#include "install/record.hpp"
#include "install/run_env.hpp"
#include "install/source_install.hpp"
#include "install/wheel_install.hpp"
#include "resolver/lock/spec_io.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

PythonLayout layout_of(const PackageContext& ctx) {
    if (ctx.python.major_minor.empty())
        throw InputError("lock: " + ctx.package.name + " " + ctx.package.version +
                         " is a Python package, and the environment has no python (no conda python, no venv)");
    std::error_code ec;
    PythonLayout l = fs::exists(ctx.stage / "pyvenv.cfg", ec)
                         ? venv_layout(ctx.prefix.string(), ctx.python.major_minor)
                         : conda_layout(ctx.prefix.string(), ctx.python.major_minor, ctx.python.site_packages);
    if (!ctx.python.executable.empty()) l.interpreter = (ctx.prefix / ctx.python.executable).string();
    return l;
}

InstalledPackage package_of(const PackageContext& ctx, const std::string& kind, std::vector<WrittenFile> files) {
    InstalledPackage p;
    p.id = package_id(ctx.package);
    p.kind = kind;
    p.name = ctx.package.name;
    p.version = ctx.package.version;
    p.files.reserve(files.size());
    for (auto& f : files) p.files.push_back({std::move(f.path), std::move(f.sha256), f.size, ""});
    return p;
}

std::string staged_python(const PackageContext& ctx) {
    return (ctx.stage / (ctx.python.executable.empty() ? "bin/python" : ctx.python.executable)).string();
}

// An sdist: built into a wheel in the env (source_build) once the binary packages are in place
// (the transaction calls these after every wheel and conda package), then installed.
InstalledPackage install_sdist_package(const PackageContext& ctx, const PythonStepOptions& options) {
    PythonLayout layout = layout_of(ctx);
    SourceOptions so;
    so.stage = ctx.stage.string();
    so.python = staged_python(ctx);
    so.compile = options.compile;
    so.cache_dir = options.cache_dir;
    so.lock = &ctx.lock;
    so.where = ctx.where;
    so.requested = requested_by_spec(ctx.package);
    so.direct_url = direct_url_for(ctx.package);
    RunEnvironment env = run_environment(ctx.stage.string(), &ctx.lock, current_environment());
    auto got = install_sdist(ctx.package, ctx.cache->tree().string(), layout, env, so);
    if (ctx.warn)
        for (const auto& w : got.installed.warnings) ctx.warn(ctx.package.name + " " + ctx.package.version + ": " + w);
    if (ctx.step) ctx.step(got.from_cache ? "linked " + ctx.package.name + " " + ctx.package.version + " built before (" + got.log_path + ")"
                                        : "built " + ctx.package.name + " " + ctx.package.version + " from its sdist (log: " +
                                              (got.log_path.empty() ? std::string("not kept") : got.log_path) + ")");
    return package_of(ctx, "pypi", std::move(got.installed.files));
}

}  // namespace

bool is_sdist(const LockedPackage& package) {
    if (package.kind != Ecosystem::pypi) return false;
    std::string file = package.url.substr(0, package.url.find_first_of("?#"));
    file = file.substr(file.rfind('/') + 1);
    return !(file.size() > 4 && file.compare(file.size() - 4, 4, ".whl") == 0);
}

PackageInstaller wheel_installer(const PythonStepOptions& options) {
    return [options](const PackageContext& ctx) {
        if (!ctx.cache) throw InputError("lock: " + ctx.package.name + " has no artifact to install");
        if (is_sdist(ctx.package)) return install_sdist_package(ctx, options);
        PythonLayout layout = layout_of(ctx);
        WheelOptions wo;
        wo.stage = ctx.stage.string();
        wo.requested = requested_by_spec(ctx.package);
        wo.direct_url = direct_url_for(ctx.package);
        wo.compile = options.compile;
        wo.compile_python = staged_python(ctx);
        wo.hardlink = ctx.link_mode == LinkMode::hardlink;
        // The cache's unpacked tree links fast; the archive (always verified member by member)
        // when there is no tree or files must be copied anyway.
        std::error_code ec;
        bool tree = ctx.link_mode != LinkMode::copy && fs::is_directory(ctx.cache->tree(), ec);
        auto got = install_wheel((tree ? ctx.cache->tree() : ctx.cache->archive()).string(), layout, wo);
        if (ctx.warn) {
            for (const auto& r : got.replaced) ctx.warn(ctx.package.name + " " + ctx.package.version + " overwrote " + r);
            for (const auto& w : got.warnings) ctx.warn(ctx.package.name + " " + ctx.package.version + ": " + w);
        }
        return package_of(ctx, "pypi", std::move(got.files));
    };
}

PackageInstaller source_installer(const PythonStepOptions& options) {
    return [options](const PackageContext& ctx) {
        PythonLayout layout = layout_of(ctx);
        SourceOptions so;
        so.stage = ctx.stage.string();
        so.python = staged_python(ctx);
        so.compile = options.compile;
        so.clone_url = options.mirrors.apply(ctx.package.url);
        // Offline is no network at all, git included: only a clone from a local folder (what
        // `envlock mirror` writes and a mirrors file points at) is allowed.
        if (options.offline && !fetch::is_file_url(so.clone_url) && so.clone_url.rfind('/', 0) != 0)
            throw EnvironmentError(ctx.where + ": offline, and the git source " + fetch::redact_url(ctx.package.url) +
                                   " is not in a local mirror (a mirrors file mapping it to a folder, as `envlock mirror` writes)");
        so.cache_dir = options.cache_dir;
        so.lock = &ctx.lock;
        so.where = ctx.where;
        // The documented command says editable or not (spec.sources[].install).
        for (const auto& s : ctx.lock.spec.sources)
            // By name, or by repository: the lock names a source as its setup.py does ("dbreader"),
            // the spec as its doc does ("RADIal").
            if (pep508::normalize_name(s.name) == pep508::normalize_name(ctx.package.name) || (!s.git.empty() && s.git == ctx.package.url)) {
                so.editable = is_editable_install(s.install);
                so.project_dir = source_project_dir(s);
            }
        // Built in the stage, where its python and (conda) toolchain live.
        RunEnvironment env = run_environment(ctx.stage.string(), &ctx.lock, current_environment());
        auto got = install_source(ctx.package, layout, env, so);
        if (ctx.step && !so.editable)
            ctx.step(got.from_cache ? "linked " + ctx.package.name + " " + ctx.package.version + " built before (" + got.log_path + ")"
                                   : "built " + ctx.package.name + " " + ctx.package.version + " from " + ctx.package.url + " (log: " +
                                         (got.log_path.empty() ? std::string("not kept") : got.log_path) + ")");
        std::vector<WrittenFile> files = got.installed.files;
        // The checkout belongs to the package too (removed with it); its files are the user's
        // to edit, so no hashes are recorded for them.
        std::error_code ec;
        for (auto it = fs::recursive_directory_iterator(ctx.stage / got.checkout, ec); it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec) break;
            if (it->is_directory() && !it->is_symlink()) continue;
            files.push_back({(fs::path(got.checkout) / it->path().lexically_relative(ctx.stage / got.checkout)).generic_string(), "", 0});
        }
        return package_of(ctx, "source", std::move(files));
    };
}

VenvMaker venv_maker(const PythonStepOptions& options) {
    return [options](const Lock& lock, const fs::path& stage, const fs::path& prefix) {
        std::string version = locked_python(lock);
        if (version.empty() && options.python.empty())
            throw InputError("lock: it has PyPI packages but names no Python version (no conda python, no spec python, "
                             "no cpXY wheels); resolve again with --python X.Y");
        if (!options.python.empty()) {
            // Another patch of the lock's Python is the same environment; another minor is not.
            auto minor_of = [](const std::string& v) { return v.substr(0, v.find('.', v.find('.') + 1)); };
            if (!version.empty() && minor_of(options.python) != minor_of(version))
                throw InputError("--python " + options.python + ": the lock was resolved for Python " + version +
                                 "; resolve it for " + options.python + " first (envlock resolve --python " + options.python + ")");
            version = options.python;
        }
        auto dirs = options.interpreter_dirs.empty() ? default_interpreter_dirs() : options.interpreter_dirs;
        BaseInterpreter base = find_interpreter(version, dirs, options.probe_cache);
        create_venv(stage.string(), base);
        VenvResult r;
        std::string mm = base.version.substr(0, base.version.find('.', base.version.find('.') + 1));
        r.python = {base.version, mm, "lib/python" + mm + "/site-packages", "bin/python"};
        r.package.id = "venv:python=" + base.version;
        r.package.kind = "venv";
        r.package.name = "python";
        r.package.version = base.version;
        for (const std::string f : {"pyvenv.cfg", ".gitignore"}) {
            auto d = digest_file((stage / f).string());
            r.package.files.push_back({f, d.sha256, d.size, ""});
        }
        for (const std::string& l : std::vector<std::string>{"bin/python", "bin/python3", "bin/python" + mm, "lib64"}) {
            std::error_code ec;
            if (fs::is_symlink(stage / l, ec)) r.package.files.push_back({l, "", 0, fs::read_symlink(stage / l, ec).string()});
        }
        (void)prefix;   // a venv names no prefix path: pyvenv.cfg holds only the base's
        return r;
    };
}

void use_python_installers(InstallOptions& options, const PythonStepOptions& given) {
    PythonStepOptions python = given;
    if (python.mirrors.rules.empty()) python.mirrors = options.fetch.mirrors;
    python.offline = python.offline || options.fetch.offline;
    // Built wheels beside the packages they were built from (<cache>/built).
    if (python.cache_dir.empty())
        python.cache_dir = (options.fetch.cache_dir.empty() ? fetch::default_cache_dir() : fs::path(options.fetch.cache_dir)).string();
    // Beside the packages of the same cache (the CLI always names one).
    if (python.probe_cache.empty() && !options.fetch.cache_dir.empty())
        python.probe_cache = (fs::path(options.fetch.cache_dir) / "interpreters").string();
    options.install_wheel = wheel_installer(python);
    options.install_source = source_installer(python);
    options.make_venv = venv_maker(python);
}

}  // namespace envlock::install
