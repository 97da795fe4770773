#include "install/python_env.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "fetch/files.hpp"
#include "fetch/process.hpp"
#include "fetch/url.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/matchspec.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/wheel.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string join(const std::string& a, const std::string& b) { return (fs::path(a) / b).generic_string(); }

// "3.7" -> true: CPython before 3.8 builds with pymalloc's 'm' ABI flag (include/python3.7m).
bool has_m_abiflag(const std::string& version) {
    int major = 0, minor = 0;
    if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
    return major == 3 && minor < 8;
}

std::string major_minor(const std::string& version) {
    size_t first = version.find('.');
    if (first == std::string::npos) return version;
    size_t second = version.find('.', first + 1);
    return version.substr(0, second);
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        out.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// A shell-script wrapper (pyenv's shims, some distro launchers) is not an interpreter.
bool is_script(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return true;
    char head[2] = {0, 0};
    size_t n = std::fread(head, 1, 2, f);
    std::fclose(f);
    return n == 2 && head[0] == '#' && head[1] == '!';
}

// Asks one interpreter what it is. nullopt when it does not run or is not CPython.
std::optional<BaseInterpreter> probe(const std::string& exe) {
    static const char* script =
        "import platform, sys\n"
        "print(platform.python_implementation())\n"
        "print('%d.%d.%d' % sys.version_info[:3])\n"
        "print(getattr(sys, '_base_executable', '') or sys.executable)\n";
    auto r = run_process({exe, "-I", "-c", script}, 20);
    if (r.exit_code != 0) return std::nullopt;
    auto lines = lines_of(r.out);
    if (lines.size() < 3 || lines[0] != "CPython") return std::nullopt;
    BaseInterpreter b;
    b.implementation = lines[0];
    b.version = lines[1];
    std::error_code ec;
    fs::path real = fs::canonical(lines[2], ec);
    b.executable = ec ? lines[2] : real.string();
    return b;
}

// What identifies an interpreter's answer: the file that runs (its identity, size and times) and,
// for a venv's interpreter, its pyvenv.cfg, which decides sys._base_executable. A package
// upgrade replaces the binary, so its inode or times change and the answer is asked again.
std::string probe_key(const std::string& exe, const std::string& real) {
    auto stamp = [](const std::string& path) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) return std::string("none");
        return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
               std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + " " +
               std::to_string(st.st_ctim.tv_sec) + "." + std::to_string(st.st_ctim.tv_nsec);
    };
    fs::path cfg = fs::path(exe).parent_path().parent_path() / "pyvenv.cfg";
    return "exe " + exe + "\nreal " + real + "\nstat " + stamp(real) + "\ncfg " + stamp(cfg.string()) + "\n";
}

constexpr std::string_view kProbeHeader = "envlock interpreter probe 1\n";

// probe(), remembered in `cache_dir` (as uv keeps interpreter answers in its cache): a warm
// install of a venv starts no python just to ask what it is. A missing, torn or stale entry
// is asked again and rewritten; a cache that cannot be written costs only the probe.
std::optional<BaseInterpreter> probe_cached(const std::string& exe, const std::string& real, const std::string& cache_dir) {
    if (cache_dir.empty()) return probe(exe);
    const std::string key = probe_key(exe, real);
    const std::string entry = join(cache_dir, sha256_hex(exe).substr(0, 32));
    try {
        std::string text = read_text_file(entry);
        std::string head = std::string(kProbeHeader) + key;
        if (text.rfind(head, 0) == 0) {
            auto lines = lines_of(text.substr(head.size()));
            if (lines.size() == 3 && lines[0] == "CPython" && !lines[1].empty() && !lines[2].empty())
                return BaseInterpreter{lines[2], lines[1], lines[0]};
        }
    } catch (const std::exception&) {
        // absent or unreadable: ask the interpreter
    }
    auto b = probe(exe);
    if (b) {
        try {
            std::error_code ec;
            fs::create_directories(cache_dir, ec);
            write_file_atomically(entry, std::string(kProbeHeader) + key + b->implementation + "\n" + b->version + "\n" +
                                             b->executable + "\n");
        } catch (const std::exception&) {
        }
    }
    return b;
}

}  // namespace

PythonLayout venv_layout(const std::string& prefix, const std::string& version) {
    PythonLayout l;
    l.prefix = prefix;
    l.version = major_minor(version);
    l.interpreter = join(prefix, "bin/python");
    l.purelib = l.platlib = join(prefix, "lib/python" + l.version + "/site-packages");
    l.scripts = join(prefix, "bin");
    l.data = prefix;
    // pip's rule for venvs (distutils' "headers" inside a virtualenv), which uv follows.
    l.headers = join(prefix, "include/site/python" + l.version);
    return l;
}

PythonLayout conda_layout(const std::string& prefix, const std::string& version, const std::string& python_site_packages_path) {
    PythonLayout l;
    l.prefix = prefix;
    l.version = major_minor(version);
    l.interpreter = join(prefix, "bin/python");
    std::string sp = python_site_packages_path.empty() ? "lib/python" + l.version + "/site-packages" : python_site_packages_path;
    // CEP 17: the path is relative to the prefix and must stay inside it.
    fs::path rel = fs::path(sp).lexically_normal();
    if (rel.is_absolute() || rel.empty() || *rel.begin() == "..")
        throw InputError("python_site_packages_path '" + python_site_packages_path + "' leads out of the prefix");
    l.purelib = l.platlib = join(prefix, rel.generic_string());
    l.scripts = join(prefix, "bin");
    l.data = prefix;
    l.headers = join(prefix, "include/python" + l.version + (has_m_abiflag(l.version) ? "m" : ""));
    return l;
}

std::vector<std::string> default_interpreter_dirs() {
    std::vector<std::string> dirs;
    if (const char* path = std::getenv("PATH")) {
        std::string p = path;
        size_t pos = 0;
        while (pos <= p.size()) {
            size_t end = p.find(':', pos);
            if (end == std::string::npos) end = p.size();
            if (end > pos) dirs.push_back(p.substr(pos, end - pos));
            pos = end + 1;
        }
    }
    dirs.push_back("/usr/local/bin");
    dirs.push_back("/usr/bin");
    const char* home = std::getenv("HOME");
    std::vector<std::string> managed;
    if (const char* root = std::getenv("PYENV_ROOT")) managed.push_back(join(root, "versions"));
    else if (home) managed.push_back(join(home, ".pyenv/versions"));
    if (const char* uv = std::getenv("UV_PYTHON_INSTALL_DIR")) managed.push_back(uv);
    else if (home) managed.push_back(join(home, ".local/share/uv/python"));
    for (const auto& m : managed) {
        std::error_code ec;
        std::vector<std::string> found;
        for (const auto& e : fs::directory_iterator(m, ec))
            if (e.is_directory()) found.push_back(join(e.path().string(), "bin"));
        std::sort(found.rbegin(), found.rend());   // newest first
        dirs.insert(dirs.end(), found.begin(), found.end());
    }
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (const auto& d : dirs)
        if (seen.insert(d).second) unique.push_back(d);
    return unique;
}

namespace {

// Probes the interpreters in `dirs` in order until `enough` says so (each probe starts a
// python: a few tens of milliseconds, more on a loaded machine).
std::vector<BaseInterpreter> scan_interpreters(const std::vector<std::string>& dirs, const std::string& probe_cache,
                                               const std::function<bool(const BaseInterpreter&)>& enough) {
    std::vector<BaseInterpreter> out;
    std::set<std::string> probed, found;
    for (const auto& dir : dirs) {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec)) {
            std::string n = e.path().filename().string();
            if (n.rfind("python3.", 0) == 0 && n.size() > 8 &&
                std::all_of(n.begin() + 8, n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
                names.push_back(n);
        }
        std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
            return std::stoi(a.substr(8)) > std::stoi(b.substr(8));
        });
        names.push_back("python3");
        names.push_back("python");
        for (const auto& n : names) {
            std::string exe = join(dir, n);
            if (::access(exe.c_str(), X_OK) != 0) continue;
            std::error_code e2;
            std::string real = fs::canonical(exe, e2).string();
            if (e2 || !probed.insert(real).second || is_script(real)) continue;
            auto b = probe_cached(exe, real, probe_cache);
            if (b && found.insert(b->executable).second) {
                out.push_back(*b);
                if (enough && enough(*b)) return out;
            }
        }
    }
    return out;
}

}  // namespace

std::vector<BaseInterpreter> find_interpreters(const std::vector<std::string>& dirs, const std::string& probe_cache) {
    return scan_interpreters(dirs, probe_cache, {});
}

BaseInterpreter find_interpreter(const std::string& version, const std::vector<std::string>& dirs, const std::string& probe_cache) {
    bool exact = std::count(version.begin(), version.end(), '.') >= 2;
    auto matches = [&](const BaseInterpreter& b) { return exact ? b.version == version : b.version.rfind(version + ".", 0) == 0; };
    // The first match in search order, as a scan of all would give; the rest are probed only
    // for the message when none matches.
    auto all = scan_interpreters(dirs, probe_cache, matches);
    if (!all.empty() && matches(all.back())) return all.back();
    std::string msg = "the lock wants Python " + version + ", and no such interpreter is on this machine";
    if (all.empty()) {
        msg += " (no CPython found at all)";
    } else {
        msg += "; found:";
        for (const auto& b : all) msg += " " + b.version + " (" + b.executable + ")";
    }
    msg += ". Looked in:";
    for (const auto& d : dirs) msg += " " + d;
    msg += ". Install Python " + version + " (e.g. `uv python install " + version + "`, pyenv, or the distribution's package)"
           " or lock with a conda python.";
    throw EnvironmentError(msg);
}

void create_venv(const std::string& prefix, const BaseInterpreter& base) {
    std::string mm = major_minor(base.version);
    std::error_code ec;
    fs::create_directories(join(prefix, "bin"), ec);
    if (ec) throw EnvironmentError("cannot create " + join(prefix, "bin") + ": " + ec.message());
    fs::create_directories(join(prefix, "lib/python" + mm + "/site-packages"), ec);
    if (ec) throw EnvironmentError("cannot create " + join(prefix, "lib") + ": " + ec.message());
    auto link = [&](const std::string& target, const std::string& name) {
        std::string path = join(prefix, name);
        std::error_code e;
        if (fs::is_symlink(path, e) && fs::read_symlink(path, e).string() == target) return;
        std::string temp = path + ".envlock-tmp";
        ::unlink(temp.c_str());
        if (::symlink(target.c_str(), temp.c_str()) != 0 || ::rename(temp.c_str(), path.c_str()) != 0)
            throw EnvironmentError("cannot link " + path + " to " + target + ": " + std::strerror(errno));
    };
    link(base.executable, "bin/python");
    link("python", "bin/python3");
    link("python", "bin/python" + mm);
#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__) || defined(__s390x__))
    if (!fs::exists(join(prefix, "lib64"), ec) && !fs::is_symlink(join(prefix, "lib64"), ec)) link("lib", "lib64");
#endif
    // PEP 405: `home` is the directory of the base interpreter; the other keys are what
    // CPython's venv and uv write, for tools that read them.
    std::string cfg = "home = " + fs::path(base.executable).parent_path().string() + "\n" +
                      "implementation = " + base.implementation + "\n" +
                      "version_info = " + base.version + "\n" +
                      "version = " + base.version + "\n" +
                      "include-system-site-packages = false\n" +
                      "executable = " + base.executable + "\n" +
                      "envlock = " + std::string(ENVLOCK_VERSION) + "\n";
    write_file_atomically(join(prefix, "pyvenv.cfg"), cfg);
    if (!fs::exists(join(prefix, ".gitignore"), ec)) write_file_atomically(join(prefix, ".gitignore"), "*\n");
}

std::string locked_python(const Lock& lock) {
    for (const auto& p : lock.packages)
        if (p.kind == Ecosystem::conda && p.name == "python") return p.version;
    if (lock.python && !lock.python->version.empty()) return lock.python->version;   // the venv's, chosen by resolve
    auto digits_of = [](std::string v) {
        v.erase(0, std::min(v.size(), v.find_first_of("0123456789")));
        v = v.substr(0, v.find_first_not_of("0123456789."));
        while (!v.empty() && v.back() == '.') v.pop_back();
        return v;
    };
    if (!lock.spec.python.empty() && std::isdigit(static_cast<unsigned char>(lock.spec.python[0])))
        return digits_of(lock.spec.python);
    for (const auto& r : lock.spec.requirements) {
        if (r.ecosystem == "pypi") continue;
        try {
            auto ms = conda::MatchSpec::parse(r.text);
            if (ms.name == "python" && !ms.version.is_any()) {
                std::string v = digits_of(ms.version.str());
                if (!v.empty()) return v;
            }
        } catch (const InputError&) {
        }
    }
    // The cpXY tags of the locked wheels: they agree on one minor when the lock is consistent.
    std::set<std::string> minors;
    for (const auto& p : lock.packages) {
        if (p.kind != Ecosystem::pypi) continue;
        try {
            auto w = wheel::WheelName::parse(p.url);
            for (const auto& t : w.tags)
                if (t.interpreter.rfind("cp3", 0) == 0 && t.interpreter.size() > 3)
                    minors.insert("3." + t.interpreter.substr(3));
        } catch (const InputError&) {
        }
    }
    return minors.size() == 1 ? *minors.begin() : "";
}

std::string seed_pip(const std::string& prefix, const std::vector<std::string>& find_links) {
    std::error_code ec;
    const fs::path bin = fs::path(prefix) / "bin";
    if (fs::exists(bin / "pip", ec)) return "";
    const fs::path python = bin / "python";
    if (!fs::exists(python, ec)) throw EnvironmentError(prefix + " has no bin/python to seed pip into (install the lock first)");
    // The base interpreter's own bundled wheels: <base prefix>/lib/pythonX.Y/ensurepip/_bundled.
    std::vector<std::string> dirs;
    for (const auto& f : find_links) {
        std::string dir = fetch::is_file_url(f) ? fetch::file_url_path(f) : f;
        if (fs::is_directory(dir, ec)) dirs.push_back(dir);
    }
    auto probe = run_process({python.string(), "-c", "import sys, sysconfig; print(sys.base_prefix); print(sysconfig.get_python_version())"}, 30);
    if (probe.exit_code == 0) {
        std::istringstream lines(probe.out);
        std::string base, mm;
        std::getline(lines, base);
        std::getline(lines, mm);
        dirs.push_back(base + "/lib/python" + mm + "/ensurepip/_bundled");
    }
    dirs.push_back("/usr/share/python-wheels");
    std::string best;
    std::optional<pep440::Version> best_version;
    for (const auto& d : dirs) {
        for (const auto& e : fs::directory_iterator(d, ec)) {
            std::string name = e.path().filename().string();
            if (name.rfind("pip-", 0) != 0 || !name.ends_with(".whl")) continue;
            std::optional<pep440::Version> v;
            try {
                v = pep440::Version::try_parse(wheel::WheelName::parse(name).version);
            } catch (const InputError&) {
            }
            if (v && (!best_version || *best_version < *v)) best = e.path().string(), best_version = v;
        }
        if (!best.empty()) break;   // an earlier source wins: the spec's own folders first
    }
    if (best.empty()) {
        std::string where;
        for (const auto& d : dirs) where += "\n  " + d;
        throw EnvironmentError("--seed: no pip wheel (pip-*.whl) in any of:" + where +
                               "\n(put one in a find-links folder of the spec, or add pip to the requirements and resolve again)");
    }
    auto r = run_process({python.string(), best + "/pip", "install", "--no-index", "--no-deps", "--no-cache-dir",
                                 "--disable-pip-version-check", "--quiet", best}, 300);
    if (r.exit_code != 0 || !fs::exists(bin / "pip", ec))
        throw EnvironmentError("--seed: pip could not install " + best + " into " + prefix + ":\n" + r.out);
    return "pip " + best_version->str() + " from " + best;
}

}  // namespace envlock::install

