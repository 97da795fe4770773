#include "install/source_build.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "fetch/files.hpp"
#include "fetch/process.hpp"
#include "install/build_errors.hpp"
#include "install/extract.hpp"
#include "install/file_lock.hpp"
#include "install/stage.hpp"
#include "install/wheel_archive.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/pep440.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    size_t b = s.find_first_not_of(" \n\r");
    return b == std::string::npos ? "" : s.substr(b);
}

// Run by the env's python in the project directory. `probe` prints the build system and the
// installed versions of its requirements as JSON; `wheel` and `editable` call the backend
// (PEP 517 build_wheel, PEP 660 build_editable) and print the built wheel's name last.
// A project without [build-system] gets setuptools' legacy backend and pip's assumption that
// it needs setuptools>=40.8.0 and wheel (PEP 517 "fallback", PEP 518).
const char* kBuildScript = R"PY(
import importlib, json, os, sys
mode, out = sys.argv[1], sys.argv[2]
if mode == 'probe':
    import sysconfig
    info = {'python': '%d.%d.%d' % sys.version_info[:3],
            'abi': sysconfig.get_config_var('SOABI') or sys.implementation.cache_tag or '',
            'declared': False, 'backend': 'setuptools.build_meta:__legacy__', 'backend_path': [],
            'requires': ['setuptools>=40.8.0', 'wheel']}
    if os.path.exists('pyproject.toml'):
        toml = None
        for name in ('tomllib', 'tomli', 'pip._vendor.tomli', 'setuptools.extern.tomli', 'setuptools._vendor.tomli'):
            try:
                toml = importlib.import_module(name)
                break
            except Exception:
                pass
        if toml is None:
            sys.exit('envlock: cannot read pyproject.toml: the environment has no TOML reader (tomllib, tomli or pip)')
        with open('pyproject.toml', 'rb') as f:
            bs = toml.load(f).get('build-system')
        if bs is not None:
            info['declared'] = True
            info['requires'] = list(bs.get('requires', []))
            info['backend'] = bs.get('build-backend', info['backend'])
            info['backend_path'] = list(bs.get('backend-path', []))
    try:
        from importlib import metadata
        def version_of(name):
            try:
                return metadata.version(name)
            except Exception:
                return None
    except ImportError:
        import pkg_resources
        def version_of(name):
            try:
                return pkg_resources.get_distribution(name).version
            except Exception:
                return None
    import re
    info['installed'] = {}
    for r in info['requires']:
        name = re.match(r'\s*([A-Za-z0-9][A-Za-z0-9._-]*)', r)
        if name:
            info['installed'][name.group(1)] = version_of(name.group(1))
    print(json.dumps(info))
    sys.exit(0)
backend_name, backend_path = sys.argv[3], json.loads(sys.argv[4])
sys.path[:0] = [os.path.abspath(p) for p in backend_path]
if os.getcwd() not in sys.path:
    sys.path.insert(0, os.getcwd())
module, _, attr = backend_name.partition(':')
backend = importlib.import_module(module)
for part in filter(None, attr.split('.')):
    backend = getattr(backend, part)
if mode == 'editable' and hasattr(backend, 'build_editable'):
    name = backend.build_editable(out)
elif mode == 'editable':
    # A backend from before PEP 660 (setuptools < 64, which old CUDA repos pin): what
    # `setup.py develop` does, as a wheel: extensions built in place, the project's metadata,
    # and a .pth naming the directory that holds its top-level packages.
    import base64, hashlib, subprocess, zipfile
    if not hasattr(backend, 'prepare_metadata_for_build_wheel'):
        sys.exit('envlock: the build backend %s can build neither an editable wheel (PEP 660) nor metadata' % backend_name)
    if os.path.exists('setup.py'):
        subprocess.check_call([sys.executable, 'setup.py', 'build_ext', '--inplace'])
    meta = os.path.join(out, 'meta')
    os.makedirs(meta)
    dist_info = backend.prepare_metadata_for_build_wheel(meta)
    tops = []
    top_level = os.path.join(meta, dist_info, 'top_level.txt')
    if os.path.exists(top_level):
        tops = [t.strip() for t in open(top_level) if t.strip()]
    root = os.getcwd()
    if tops and not any(os.path.exists(os.path.join(root, t)) or os.path.exists(os.path.join(root, t + '.py')) for t in tops) \
            and os.path.isdir(os.path.join(root, 'src')):
        root = os.path.join(root, 'src')
    stem = dist_info[:-len('.dist-info')]
    name = stem + '-py3-none-any.whl'
    files = {'__editable__.%s.pth' % stem: (root + '\n').encode()}
    for dirpath, _, filenames in os.walk(os.path.join(meta, dist_info)):
        for f in filenames:
            full = os.path.join(dirpath, f)
            rel = os.path.relpath(full, meta).replace(os.sep, '/')
            if not rel.endswith('/RECORD'):
                files[rel] = open(full, 'rb').read()
    files.setdefault(dist_info + '/WHEEL', b'Wheel-Version: 1.0\nGenerator: envlock\nRoot-Is-Purelib: true\nTag: py3-none-any\n')
    rows = []
    with zipfile.ZipFile(os.path.join(out, name), 'w') as z:
        for rel, data in files.items():
            z.writestr(rel, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
            rows.append('%s,sha256=%s,%d' % (rel, digest, len(data)))
        z.writestr(dist_info + '/RECORD', '\n'.join(rows + [dist_info + '/RECORD,,']) + '\n')
else:
    name = backend.build_wheel(out)
print()
print(name)
)PY";

std::string make_temp_dir(const fs::path& parent, const std::string& stem) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    std::string tmpl = (parent / (stem + "-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data()))
        throw EnvironmentError("cannot create a build directory in " + parent.string() + ": " + std::strerror(errno));
    return tmpl;
}

// A program as the build environment's PATH finds it ("" when absent).
std::string on_path(const std::string& program, const std::map<std::string, std::string>& env) {
    if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 ? program : "";
    auto it = env.find("PATH");
    if (it == env.end()) return "";
    size_t start = 0;
    const std::string& path = it->second;
    while (start <= path.size()) {
        size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        std::string dir = path.substr(start, end - start);
        if (!dir.empty()) {
            std::string candidate = dir + "/" + program;
            if (::access(candidate.c_str(), X_OK) == 0) return candidate;
        }
        start = end + 1;
    }
    return "";
}

// A tool's identity for the key: the last non-empty line of `--version` for nvcc (its build id,
// "Build cuda_13.0.r13.0/compiler.36424714_0"), the first for a compiler ("g++ (Debian 12.2.0-14) 12.2.0").
std::string tool_version(const std::string& tool, bool last_line) {
    if (tool.empty()) return "none";
    auto r = run_process({tool, "--version"}, 60);
    if (r.exit_code != 0) return "unrunnable (" + tool + ")";
    std::string text = trim(r.out);
    if (last_line) {
        auto nl = text.rfind('\n');
        return nl == std::string::npos ? text : trim(text.substr(nl + 1));
    }
    return text.substr(0, text.find('\n'));
}

std::string env_value(const std::map<std::string, std::string>& env, const std::string& key) {
    auto it = env.find(key);
    return it == env.end() ? "" : it->second;
}

std::string log_tail(const std::string& log, size_t limit) {
    return log.size() > limit ? "…" + log.substr(log.size() - limit) : log;
}

}  // namespace

BuildSystem read_build_system(const BuildRequest& r) {
    auto ran = run_process({r.python, "-c", kBuildScript, "probe", "-"}, 120, ProcessOptions{r.project_dir, r.env});
    nlohmann::json j;
    if (ran.exit_code == 0) {
        std::string out = trim(ran.out);
        auto nl = out.rfind('\n');   // a sitecustomize may print first: the JSON is the last line
        try {
            j = nlohmann::json::parse(nl == std::string::npos ? out : out.substr(nl + 1));
        } catch (const nlohmann::json::exception&) {
        }
    }
    if (!j.is_object())
        throw UnmetError(r.where + ": cannot read its build system with the environment's python " + r.python + " (exit " +
                         std::to_string(ran.exit_code) + "):\n" + log_tail(ran.out, 2000));
    BuildSystem s;
    s.declared = j.value("declared", false);
    s.backend = j.value("backend", "");
    s.backend_path = j.value("backend_path", std::vector<std::string>{});
    s.requirements = j.value("requires", std::vector<std::string>{});
    s.python_version = j.value("python", "");
    s.abi = j.value("abi", "");
    const nlohmann::json installed = j.value("installed", nlohmann::json::object());
    for (const auto& [name, v] : installed.items())
        s.installed[name] = v.is_string() ? std::optional<std::string>(v.get<std::string>()) : std::nullopt;
    return s;
}

std::vector<std::string> unmet_build_requirements(const BuildSystem& s) {
    std::vector<std::string> out;
    std::optional<pep508::MarkerEnv> markers;
    try {
        markers = pep508::MarkerEnv::for_target(s.python_version.empty() ? "3.8" : s.python_version, "linux-64");
    } catch (const InputError&) {
    }
    for (const auto& text : s.requirements) {
        pep508::Requirement req;
        try {
            req = pep508::Requirement::parse(text);
        } catch (const InputError& e) {
            out.push_back(text + " (not a valid requirement: " + e.what() + ")");
            continue;
        }
        if (markers && !req.applies(*markers)) continue;
        std::optional<std::string> have;
        for (const auto& [name, v] : s.installed)
            if (pep508::normalize_name(name) == req.normalized_name) have = v;
        if (!have) {
            out.push_back(text + " (the environment has no " + req.name + ")");
            continue;
        }
        auto v = pep440::Version::try_parse(*have);
        if (v && !req.specifier.contains(*v, true)) out.push_back(text + " (the environment has " + req.name + " " + *have + ")");
    }
    return out;
}

BuildKey build_key(const BuildRequest& r, const BuildSystem& s) {
    std::string torch = "none";
    if (r.lock)
        for (const auto& p : r.lock->packages)
            if (p.name == "torch" || p.name == "pytorch") {
                torch = p.version + (p.build.empty() ? "" : " " + p.build) + " sha256:" + p.sha256;
                if (p.cuda) torch += " cuda " + p.cuda->runtime;
            }
    std::string cuda_home = env_value(r.env, "CUDA_HOME");
    std::string nvcc = !cuda_home.empty() && ::access((cuda_home + "/bin/nvcc").c_str(), X_OK) == 0 ? cuda_home + "/bin/nvcc"
                                                                                                      : on_path("nvcc", r.env);
    std::string cxx = env_value(r.env, "CXX");
    cxx = on_path(cxx.empty() ? "c++" : cxx, r.env);
    std::string cc = env_value(r.env, "CC");
    cc = on_path(cc.empty() ? "cc" : cc, r.env);
    BuildKey k;
    k.text = "source: " + r.source_id + "\n" +
             "python: " + s.abi + " " + s.python_version + "\n" +
             "backend: " + s.backend + "\n" +
             "torch: " + torch + "\n" +
             "nvcc: " + tool_version(nvcc, true) + "\n" +
             "cuda-arch-list: TORCH_CUDA_ARCH_LIST=" + env_value(r.env, "TORCH_CUDA_ARCH_LIST") +
             " CUDAARCHS=" + env_value(r.env, "CUDAARCHS") + "\n" +
             "c++: " + tool_version(cxx, false) + "\n" +
             "cc: " + tool_version(cc, false) + "\n";
    k.hex = sha256_hex(k.text);
    return k;
}

std::string explain_build_failure(const std::string& where, const std::string& log, const std::string& log_path, int exit_code) {
    std::string msg = where + ": building it failed (exit " + std::to_string(exit_code) + ")";
    std::vector<ExplainedFailure> known;
    try {
        known = explain_log(log, knowledge::load_builtin());
    } catch (const Error&) {
    }
    if (!known.empty()) {
        msg += "\n  known failure " + known.front().id + ": " + known.front().line + "\n  cause: " + known.front().cause +
               "\n  fix: " + known.front().fix + (known.front().source.empty() ? "" : "\n  source: " + known.front().source);
    } else if (std::string line = first_error_line(log); !line.empty()) {
        msg += "\n  first error: " + line;
    }
    if (!log_path.empty()) msg += "\n  the whole log: " + log_path;
    msg += "\n" + log_tail(log, 3000);
    return msg;
}

BuiltWheel build_source(const BuildRequest& r) {
    BuildSystem system = read_build_system(r);
    if (auto missing = unmet_build_requirements(system); !missing.empty()) {
        std::string list;
        for (const auto& m : missing) list += "\n  " + m;
        throw UnmetError(r.where + ": its build needs what the environment does not have (" +
                         (system.declared ? std::string("[build-system] requires of its pyproject.toml")
                                          : std::string("a setup.py project without [build-system]: setuptools and wheel, as pip assumes")) +
                         "):" + list +
                         "\n  envlock builds sources inside the environment, without build isolation: add these to the spec's "
                         "requirements (so the lock pins them) and resolve again");
    }
    BuildKey key = build_key(r, system);
    BuiltWheel out;
    out.key = key.hex;
    const bool cached = !r.cache_dir.empty() && !r.editable;
    fs::path built = fs::path(r.cache_dir) / "built";
    fs::path entry = built / key.hex;
    std::error_code ec;
    auto take_cached = [&]() -> bool {
        if (!fs::is_directory(entry / "tree", ec)) return false;
        for (const auto& f : fs::directory_iterator(entry, ec))
            if (f.path().extension() == ".whl") {
                out.wheel = f.path().string();
                out.tree = (entry / "tree").string();
                out.log_path = (entry / "build.log").string();
                out.from_cache = true;
                return true;
            }
        return false;
    };
    std::optional<FileLock> entry_lock;
    if (cached) {
        if (take_cached()) return out;
        fs::create_directories(built, ec);
        entry_lock.emplace(built / (key.hex + ".lock"), [](const std::string&) {});
        if (take_cached()) return out;   // another envlock built it while this one waited
        // Work folders of this key's earlier builds that were killed, or whose host died: every
        // builder of the key holds its lock, which this process holds now.
        sweep_stale_temps(built, std::chrono::seconds(0), "." + key.hex.substr(0, 16) + ".tmp");
        sweep_stale_temps(built, std::chrono::seconds(0), key.hex + ".gone-");
    }

    // The build: in a copy when the project lives in the shared package cache (setuptools writes
    // build/ and *.egg-info beside setup.py); the wheel into a directory of its own.
    fs::path work_parent = cached ? built : fs::temp_directory_path();
    std::string work = make_temp_dir(work_parent, cached ? "." + key.hex.substr(0, 16) + ".tmp" : "envlock-build");
    auto cleanup = [&] { remove_tree_quietly(work); };
    std::string project = r.project_dir;
    try {
        if (r.build_in_copy) {
            project = work + "/src";
            fs::copy(r.project_dir, project, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
        }
        fs::create_directories(work + "/dist");
        std::string backend_path = nlohmann::json(system.backend_path).dump();
        auto ran = run_process({r.python, "-c", kBuildScript, r.editable ? "editable" : "wheel", work + "/dist", system.backend, backend_path},
                               r.timeout_seconds, ProcessOptions{project, r.env});
        out.log = key.text + "\n" + ran.out;
        std::string wheel_name;
        if (auto t = trim(ran.out); t.rfind('\n') != std::string::npos) wheel_name = t.substr(t.rfind('\n') + 1);
        else wheel_name = t;
        bool ok = ran.exit_code == 0 && !wheel_name.empty() && wheel_name.find('/') == std::string::npos &&
                  fs::is_regular_file(fs::path(work) / "dist" / wheel_name, ec);
        if (!ok) {
            std::string log_path;
            if (!r.cache_dir.empty()) {
                log_path = (built / "failed" / (r.name + "-" + r.version + "-" + key.hex.substr(0, 16) + ".log")).string();
                fs::create_directories(built / "failed", ec);
                write_file_atomically(log_path, out.log);
            }
            throw UnmetError(explain_build_failure(r.where, ran.out, log_path, ran.exit_code == 0 ? 1 : ran.exit_code));
        }
        if (!cached) {
            out.wheel = work + "/dist/" + wheel_name;
            out.temp_dir = work;
            return out;
        }
        // Into the cache: the wheel, its tree (checked by extraction's rules) and the log,
        // renamed in whole so a reader sees a complete entry or none.
        fs::path staged = fs::path(work) / "entry";
        fs::create_directories(staged);
        fs::rename(fs::path(work) / "dist" / wheel_name, staged / wheel_name);
        extract_archive(staged / wheel_name, staged / "tree");
        save_unpacked_listing((staged / "tree").string(), (staged / "tree").string());
        write_file_atomically((staged / "build.log").string(), out.log);
        write_file_atomically((staged / "key.txt").string(), key.text);
        // Renamed in whole, never over an entry that is there: one this process could not see
        // (an NFS client's cached listing) is complete too, and others may be reading it.
        fs::rename(staged, entry, ec);
        if (ec && !fs::is_directory(entry / "tree")) {
            // An entry without a tree is no entry (made by hand, or by an older envlock): moved
            // aside under a temp name, so no reader sees it half removed, and replaced.
            fs::path aside = entry;
            aside += ".gone-" + unique_temp_tail();
            fs::rename(entry, aside, ec);
            remove_tree_quietly(aside.string());
            fs::rename(staged, entry, ec);
            if (ec) throw EnvironmentError("cannot move the built wheel into " + entry.string() + ": " + ec.message());
        }
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
    out.wheel = (entry / [&] {
        for (const auto& f : fs::directory_iterator(entry, ec))
            if (f.path().extension() == ".whl") return f.path().filename().string();
        return std::string();
    }()).string();
    out.tree = (entry / "tree").string();
    out.log_path = (entry / "build.log").string();
    return out;
}

}  // namespace envlock::install
