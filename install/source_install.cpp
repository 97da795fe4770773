#include "install/source_install.hpp"

#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "fetch/files.hpp"
#include "fetch/git_source.hpp"
#include "fetch/process.hpp"
#include "install/record.hpp"
#include "resolver/specs/errors.hpp"

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

// Calls the project's PEP 517 backend in the checkout: [build-system] build-backend and
// backend-path from pyproject.toml, else setuptools' legacy backend (PEP 517's fallback for
// projects without one). Prints the built wheel's file name on the last line.
const char* kBuildScript = R"PY(
import importlib, os, sys
mode, out = sys.argv[1], sys.argv[2]
backend_name, backend_path = 'setuptools.build_meta:__legacy__', []
if os.path.exists('pyproject.toml'):
    try:
        import tomllib
    except ImportError:
        tomllib = None
    if tomllib is not None:
        with open('pyproject.toml', 'rb') as f:
            bs = tomllib.load(f).get('build-system', {})
        backend_name = bs.get('build-backend', backend_name)
        backend_path = bs.get('backend-path', [])
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

}  // namespace

bool is_editable_install(const std::string& cmd) {
    auto has_word = [&](const std::string& w) {
        size_t pos = 0;
        while ((pos = cmd.find(w, pos)) != std::string::npos) {
            bool start = pos == 0 || cmd[pos - 1] == ' ';
            bool end = pos + w.size() == cmd.size() || cmd[pos + w.size()] == ' ' || cmd[pos + w.size()] == '=';
            if (start && end) return true;
            pos += w.size();
        }
        return false;
    };
    return has_word("-e") || has_word("--editable") || has_word("develop");
}

SourceInstall install_source(const LockedPackage& package, const PythonLayout& layout, const RunEnvironment& env,
                             const SourceOptions& options) {
    SourceInstall result;
    if (!is_git_commit(package.rev))
        throw InputError("lock: source " + package.name + " is pinned to '" + package.rev + "', not a commit; run `envlock resolve` to pin it");
    result.checkout = "src/" + package.name;
    auto staged = [&](const std::string& rel) {
        return ((options.stage.empty() ? fs::path(layout.prefix) : fs::path(options.stage)) / rel).string();
    };
    std::string checkout = staged(result.checkout);
    std::string final_checkout = (fs::path(layout.prefix) / result.checkout).string();

    // The exact commit: an existing checkout at another commit is replaced, not reused.
    std::error_code ec;
    if (fs::exists(checkout, ec)) {
        auto head = run_process({"git", "-C", checkout, "rev-parse", "HEAD"});
        if (head.exit_code != 0 || trim(head.out) != package.rev) fs::remove_all(checkout, ec);
    }
    if (!fs::exists(checkout, ec)) {
        fs::create_directories(fs::path(checkout).parent_path(), ec);
        clone_at(options.clone_url.empty() ? package.url : options.clone_url, package.rev, checkout);
    }
    auto head = run_process({"git", "-C", checkout, "rev-parse", "HEAD"});
    if (head.exit_code != 0 || trim(head.out) != package.rev)
        throw EnvironmentError("git: " + package.url + " checked out at " + trim(head.out) + ", not the locked commit " + package.rev);

    // Build in the env (its torch, its compilers, CUDA_HOME, TORCH_CUDA_ARCH_LIST).
    std::map<std::string, std::string> vars = current_environment();
    for (const auto& k : env.unset) vars.erase(k);
    for (const auto& [k, v] : env.set) vars[k] = v;
    std::string tmpl = (fs::temp_directory_path() / "envlock-build-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw EnvironmentError(std::string("cannot create a build directory: ") + std::strerror(errno));
    std::string out_dir = tmpl;
    auto ran = run_process({options.python, "-c", kBuildScript, options.editable ? "editable" : "wheel", out_dir},
                           options.timeout_seconds, ProcessOptions{checkout, vars});
    result.build_log = ran.out;
    std::string wheel_name;
    if (auto nl = trim(ran.out).rfind('\n'); nl != std::string::npos) wheel_name = trim(ran.out).substr(nl + 1);
    if (ran.exit_code != 0 || wheel_name.empty() || !fs::exists(fs::path(out_dir) / wheel_name, ec)) {
        fs::remove_all(out_dir, ec);
        std::string tail = ran.out.size() > 4000 ? "…" + ran.out.substr(ran.out.size() - 4000) : ran.out;
        throw UnmetError("building " + package.name + " (" + package.url + " at " + package.rev.substr(0, 12) + ") with " +
                         options.python + " failed (exit " + std::to_string(ran.exit_code) + "):\n" + tail);
    }
    result.wheel = (fs::path(out_dir) / wheel_name).string();

    WheelOptions wo;
    wo.stage = options.stage;
    wo.compile = options.compile;
    wo.compile_python = options.python;
    DirectUrl d;
    if (options.editable) {
        // PEP 660: the project directory, editable. The backend wrote the staged checkout's
        // path into the wheel; the installed files must name where it will live.
        d.url = "file://" + final_checkout;
        d.dir = true;
        d.editable = true;
    } else {
        d.url = package.url;
        d.vcs = "git";
        d.commit_id = package.rev;
        if (!package.build.empty() && package.build != package.rev) d.requested_revision = package.build;
    }
    wo.direct_url = d;
    wo.path_rewrites = {};
    if (options.editable && checkout != final_checkout) wo.path_rewrites.emplace_back(checkout, final_checkout);
    try {
        result.installed = install_wheel(result.wheel, layout, wo);
    } catch (...) {
        fs::remove_all(out_dir, ec);
        throw;
    }
    fs::remove_all(out_dir, ec);
    return result;
}

}  // namespace envlock::install
