// Sources built at install time (install/source_build.hpp): sdists through setuptools' legacy
// backend or the backend their pyproject.toml declares, a git source whose setup.py imports
// torch, and a CUDA extension compiled by this machine's nvcc; each built by the env's own
// python without isolation, after the binary packages and in dependency order; the built
// wheel kept in the shared cache so a second env links it. Errors name the package and its
// lock line. The env's python is the fixture's conda stand-in (Debian's python3 with the
// prefix's site-packages first), so Debian's setuptools, wheel and torch are its build tools.
#include <doctest/doctest.h>

#include <chrono>

#include "install/source_build.hpp"
#include "tests/mirror/git_repo.hpp"
#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

// An sdist (<name>-<version>/ + files, gzip'd tar) served beside the channel.
LockedPackage add_sdist(Channel& ch, const std::string& name, const std::string& version,
                        const std::map<std::string, std::string>& files, std::vector<std::string> depends = {}) {
    std::string root = name + "-" + version + "/";
    std::vector<mirror::ArchiveMember> members = {
        {root + "PKG-INFO", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n", 0644, ""}};
    for (const auto& [path, text] : files) members.push_back({root + path, text, 0644, ""});
    std::string bytes = mirror::write_tar(members, mirror::TarFilter::gzip);
    std::string file = name + "-" + version + ".tar.gz";
    write_bytes(ch.dir / "pypi" / file, bytes);
    LockedPackage p;
    p.kind = Ecosystem::pypi;
    p.url = ch.server->url() + "/pypi/" + file;
    p.name = name;
    p.version = version;
    p.sha256 = mirror::sha256_hex_of(bytes);
    p.size = bytes.size();
    p.channel = ch.server->url() + "/pypi/simple";
    p.depends = std::move(depends);
    return p;
}

// A pure wheel with one module, served beside the channel.
LockedPackage add_wheel(Channel& ch, const std::string& name, const std::string& version, const std::string& module_text) {
    std::string dist = name + "-" + version + ".dist-info/";
    std::vector<mirror::ArchiveMember> m = {
        {name + "/__init__.py", module_text, 0644, ""},
        {dist + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n", 0644, ""},
        {dist + "WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n", 0644, ""}};
    std::string record;
    for (const auto& f : m) record += f.path + "," + mirror::record_digest(f.content) + "," + std::to_string(f.content.size()) + "\n";
    m.push_back({dist + "RECORD", record + dist + "RECORD,,\n", 0644, ""});
    std::string bytes = mirror::write_zip(m, false);
    std::string file = name + "-" + version + "-py3-none-any.whl";
    write_bytes(ch.dir / "pypi" / file, bytes);
    LockedPackage p;
    p.kind = Ecosystem::pypi;
    p.url = ch.server->url() + "/pypi/" + file;
    p.name = name;
    p.version = version;
    p.build = "py3-none-any";
    p.sha256 = mirror::sha256_hex_of(bytes);
    p.size = bytes.size();
    p.channel = ch.server->url() + "/pypi/simple";
    return p;
}

// The lock as a file and read back, so its entries carry their lines.
Lock as_file(const Lock& lock, const fs::path& path) {
    write_bytes(path, write_lock(lock));
    return read_lock(read_bytes(path), path.string());
}

struct Installed {
    install::InstallResult result;
    std::vector<std::string> said;
};

Installed install_into(const Lock& lock, const fs::path& lock_file, const fs::path& prefix, const fs::path& cache) {
    install::InstallOptions o = options_for(prefix, cache);
    o.lock_file = lock_file.string();
    install::use_default_installers(o);
    Installed out;
    o.say = o.step = [&](const std::string& s) { out.said.push_back(s); };
    out.result = install::install_lock(lock, o);
    return out;
}

bool said(const Installed& i, const std::string& text) {
    return std::any_of(i.said.begin(), i.said.end(), [&](const std::string& s) { return s.find(text) != std::string::npos; });
}

std::string run_python(const fs::path& prefix, const std::string& code) {
    auto r = run_program({(prefix / "bin/python").string(), "-c", code});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    return r.out;
}

int lines_of(const fs::path& p) {
    std::string t = read_bytes(p);
    return static_cast<int>(std::count(t.begin(), t.end(), '\n'));
}

std::string git_commit_all(const fs::path& dir) {
    std::string g = "git -C '" + dir.string() + "' -c user.name=t -c user.email=t@t ";
    auto r = run_program({"sh", "-c", g + "init -q -b main && " + g + "add -A && " + g + "commit -q -m one && " + g + "rev-parse HEAD"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return r.out.substr(r.out.size() - 41, 40);
}

}  // namespace

TEST_CASE("an sdist is built with the env's python after the wheels it imports, sdists in dependency order; "
          "a second env links the built wheel from the cache instead of building again") {
    Channel ch("sdist-build");
    fs::path work = make_temp_dir("sdist-build-work");
    fs::path builds = work / "builds.txt";   // each setup.py run appends a line
    // omega-base is an sdist alpha-tool's setup.py imports: it must be installed first,
    // though alpha-tool comes first in the lock. Both import the wheel `helper` at build time.
    auto setup = [&](const std::string& name, const std::string& module, const std::string& imports) {
        return "import " + imports + "\nfrom setuptools import setup\nopen('" + builds.string() + "', 'a').write('" + name +
               "\\n')\nsetup(name='" + name + "', version='1.0', packages=['" + module + "'])\n";
    };
    LockedPackage helper = add_wheel(ch, "helper", "1.0", "READY = True\n");
    LockedPackage omega = add_sdist(ch, "omega-base", "1.0",
                                    {{"setup.py", setup("omega-base", "omega_base", "helper")},
                                     {"omega_base/__init__.py", "VALUE = 'omega from its sdist'\n"}},
                                    {"helper"});
    LockedPackage alpha = add_sdist(ch, "alpha-tool", "1.0",
                                    {{"setup.py", setup("alpha-tool", "alpha_tool", "helper, omega_base")},
                                     {"alpha_tool/__init__.py", "from omega_base import VALUE\n"}},
                                    {"omega-base", "helper"});
    Lock lock = as_file(make_lock({ch.add(python_pkg()), helper, omega, alpha}), work / "envlock.yaml");

    auto first = install_into(lock, work / "envlock.yaml", work / "env1", work / "cache");
    CHECK(run_python(work / "env1", "import alpha_tool; print(alpha_tool.VALUE)") == "omega from its sdist\n");
    CHECK(read_bytes(builds) == "omega-base\nalpha-tool\n");
    CHECK(said(first, "built omega-base 1.0 from its sdist"));
    // The cache entry says what the build depended on.
    int entries = 0;
    for (const auto& e : fs::directory_iterator(work / "cache/built"))
        if (fs::exists(e.path() / "key.txt")) {
            ++entries;
            std::string key = read_bytes(e.path() / "key.txt");
            CHECK(key.find("source: sdist sha256:") != std::string::npos);
            CHECK(key.find("python: cpython-") != std::string::npos);
            CHECK(key.find("c++: ") != std::string::npos);
            CHECK(fs::exists(e.path() / "build.log"));
        }
    CHECK(entries == 2);

    auto second = install_into(lock, work / "envlock.yaml", work / "env2", work / "cache");
    CHECK(lines_of(builds) == 2);   // nothing was built again
    CHECK(said(second, "linked alpha-tool 1.0 built before"));
    CHECK(run_python(work / "env2", "import alpha_tool; print(alpha_tool.VALUE)") == "omega from its sdist\n");
    CHECK(verify_prefix(work / "env2").empty());
}

TEST_CASE("a shared built-wheel cache: what a builder killed mid-build left (its work folder, an entry moved aside) "
          "is never linked, and is removed by the next builder of the key under the key's lock") {
    Channel ch("killed-build");
    fs::path work = make_temp_dir("killed-build-work");
    LockedPackage p = add_sdist(ch, "tiny-build", "1.0",
                                {{"setup.py", "from setuptools import setup\nsetup(name='tiny-build', version='1.0', packages=['tiny_build'])\n"},
                                 {"tiny_build/__init__.py", "VALUE = 'built'\n"}});
    Lock lock = as_file(make_lock({ch.add(python_pkg()), p}), work / "envlock.yaml");
    install_into(lock, work / "envlock.yaml", work / "env1", work / "cache");
    const fs::path built = work / "cache/built";
    std::string key;
    for (const auto& e : fs::directory_iterator(built))
        if (fs::exists(e.path() / "key.txt")) key = e.path().filename().string();
    REQUIRE(key.size() == 64);
    // The entry never made it (its builder was killed before the rename) and the leftovers of
    // that builder and of an earlier replacement lie beside the key.
    fs::remove_all(built / key);
    fs::create_directories(built / ("." + key.substr(0, 16) + ".tmp-Q1w2E3/entry/tree"));
    write_bytes(built / ("." + key.substr(0, 16) + ".tmp-Q1w2E3/entry/half.whl"), "PK half a wheel");
    fs::create_directories(built / (key + ".gone-node4-88-00ff/tree"));
    fs::create_directories(built / ".0123456789abcdef.tmp-Z9x8C7");   // another key's build: not ours to judge

    auto second = install_into(lock, work / "envlock.yaml", work / "env2", work / "cache");
    CHECK(said(second, "built tiny-build 1.0 from its sdist"));
    CHECK(run_python(work / "env2", "import tiny_build; print(tiny_build.VALUE)") == "built\n");
    CHECK(fs::exists(built / key / "tree"));
    CHECK_FALSE(fs::exists(built / ("." + key.substr(0, 16) + ".tmp-Q1w2E3")));
    CHECK_FALSE(fs::exists(built / (key + ".gone-node4-88-00ff")));
    CHECK(fs::exists(built / ".0123456789abcdef.tmp-Z9x8C7"));
}

TEST_CASE("an sdist declaring its PEP 517 backend in pyproject.toml is built through that backend") {
    Channel ch("pep517-build");
    fs::path work = make_temp_dir("pep517-build-work");
    LockedPackage p = add_sdist(ch, "pep517-demo", "2.0",
                                {{"pyproject.toml", "[build-system]\nrequires = [\"setuptools>=40.8.0\", \"wheel\"]\n"
                                                    "build-backend = \"inhouse\"\nbackend-path = [\"_build\"]\n"},
                                 {"_build/inhouse.py", "from setuptools import build_meta as _sb\n"
                                                       "get_requires_for_build_wheel = _sb.get_requires_for_build_wheel\n"
                                                       "def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):\n"
                                                       "    open('pep517_demo/backend.py', 'w').write('NAME = \"inhouse\"\\n')\n"
                                                       "    return _sb.build_wheel(wheel_directory, config_settings, metadata_directory)\n"},
                                 {"setup.py", "from setuptools import setup\nsetup(name='pep517-demo', version='2.0', packages=['pep517_demo'])\n"},
                                 {"pep517_demo/__init__.py", ""}});
    Lock lock = as_file(make_lock({ch.add(python_pkg()), p}), work / "envlock.yaml");
    install_into(lock, work / "envlock.yaml", work / "env", work / "cache");
    CHECK(run_python(work / "env", "from pep517_demo.backend import NAME; print(NAME)") == "inhouse\n");
}

TEST_CASE("without isolation, a build requirement the env lacks is refused before building, naming the package, "
          "its lock line and what to add") {
    Channel ch("build-requires");
    fs::path work = make_temp_dir("build-requires-work");
    LockedPackage p = add_sdist(ch, "needs-tool", "1.0",
                                {{"pyproject.toml", "[build-system]\nrequires = [\"setuptools>=40.8.0\", \"envlock-absent-build-tool>=1\"]\n"
                                                    "build-backend = \"setuptools.build_meta\"\n"},
                                 {"setup.py", "raise SystemExit('must not run')\n"}});
    Lock lock = as_file(make_lock({ch.add(python_pkg()), p}), work / "envlock.yaml");
    int line = 0;
    for (const auto& q : lock.packages)
        if (q.name == "needs-tool") line = q.line;
    REQUIRE(line > 0);
    CHECK_THROWS_WITH_AS(install_into(lock, work / "envlock.yaml", work / "env", work / "cache"),
                         has((work / "envlock.yaml").string() + ":" + std::to_string(line) + ": needs-tool 1.0: its build needs"), UnmetError);
    CHECK_THROWS_WITH_AS(install_into(lock, work / "envlock.yaml", work / "env", work / "cache"),
                         has("envlock-absent-build-tool>=1 (the environment has no envlock-absent-build-tool)"), UnmetError);
    CHECK_FALSE(fs::exists(work / "env"));   // the transaction left nothing
}

TEST_CASE("a failed build names the package and its lock line, the known failure its log shows, and where the log is kept") {
    Channel ch("build-fails");
    fs::path work = make_temp_dir("build-fails-work");
    LockedPackage p = add_sdist(ch, "cuda-ops", "0.3",
                                {{"setup.py", "raise OSError('CUDA_HOME environment variable is not set. Please set it to your CUDA install root.')\n"}});
    Lock lock = as_file(make_lock({ch.add(python_pkg()), p}), work / "envlock.yaml");
    std::string message;
    try {
        install_into(lock, work / "envlock.yaml", work / "env", work / "cache");
    } catch (const UnmetError& e) {
        message = e.what();
    }
    CHECK(message.find("envlock.yaml:") != std::string::npos);
    CHECK(message.find(": cuda-ops 0.3: building it failed") != std::string::npos);
    CHECK(message.find("known failure cuda-home-unset") != std::string::npos);
    auto at = message.find("the whole log: ");
    REQUIRE(at != std::string::npos);
    std::string log = message.substr(at + 15, message.find('\n', at) - at - 15);
    CHECK(fs::path(log).parent_path() == work / "cache/built/failed");
    CHECK(read_bytes(log).find("CUDA_HOME environment variable is not set") != std::string::npos);
    CHECK_FALSE(fs::exists(work / "env"));
}

TEST_CASE("install refuses a hand-edited entry whose version its URL contradicts, before fetching or touching anything") {
    Channel ch("edited-lock");
    fs::path work = make_temp_dir("edited-lock-work");
    LockedPackage idna = add_sdist(ch, "idna", "3.20", {{"setup.py", "raise SystemExit('never built')\n"}});
    idna.version = "3.21";   // edited by hand
    Lock lock = as_file(make_lock({ch.add(python_pkg()), idna}), work / "envlock.yaml");
    auto r = run_envlock({"install", (work / "envlock.yaml").string(), "--prefix", (work / "env").string(), "--cache-dir",
                          (work / "cache").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("envlock.yaml:") != std::string::npos);
    CHECK(r.err.find(": idna 3.21: the entry says idna 3.21 but its URL is idna-3.20.tar.gz") != std::string::npos);
    CHECK_FALSE(fs::exists(work / "env"));
    CHECK_FALSE(fs::exists(work / "cache/pkgs"));
    CHECK(run_envlock({"install", (work / "envlock.yaml").string(), "--prefix", (work / "env").string(), "--dry-run"}).exit_code == 2);
}

TEST_CASE("a git source whose setup.py imports torch builds against the env's torch, without isolation") {
    if (run_program({"/usr/bin/python3", "-c", "import torch"}).exit_code != 0) {
        MESSAGE("skipped: Debian's python3-torch is not installed");
        return;
    }
    Channel ch("torch-source");
    fs::path work = make_temp_dir("torch-source-work");
    fs::path repo = work / "repo";
    write_bytes(repo / "setup.py", "import torch\nfrom setuptools import setup\n"
                                   "open('torchver/built.py', 'w').write('TORCH = %r\\n' % torch.__version__)\n"
                                   "setup(name='torchver', version='0.1', packages=['torchver'])\n");
    write_bytes(repo / "torchver/__init__.py", "");
    LockedPackage src;
    src.kind = Ecosystem::source;
    src.name = "torchver";
    src.version = "0.1";
    src.url = "file://" + repo.string();
    src.rev = git_commit_all(repo);
    Lock lock = as_file(make_lock({ch.add(python_pkg()), src}), work / "envlock.yaml");
    auto got = install_into(lock, work / "envlock.yaml", work / "env", work / "cache");
    std::string torch = run_program({"/usr/bin/python3", "-c", "import torch; print(torch.__version__)"}).out;
    CHECK(run_python(work / "env", "from torchver.built import TORCH; print(TORCH)") == torch);
    CHECK(said(got, "built torchver 0.1 from file://"));
}

TEST_CASE("a CUDA extension (the demo mirror's boxops) is compiled by nvcc for the locked arch list; "
          "a second env links the built wheel") {
    const fs::path nvcc = "/usr/local/cuda/bin/nvcc";
    if (!fs::exists(nvcc)) {
        MESSAGE("skipped: no /usr/local/cuda/bin/nvcc on this machine");
        return;
    }
    Channel ch("boxops-build");
    fs::path work = make_temp_dir("boxops-build-work");
    mirror::make_boxops_repo((work / "boxops").string());
    LockedPackage src;
    src.kind = Ecosystem::source;
    src.name = "boxops";
    src.version = "0.1.0";
    src.url = "file://" + (work / "boxops").string();
    src.rev = run_program({"git", "-C", (work / "boxops").string(), "rev-parse", "HEAD"}).out.substr(0, 40);
    Lock lock = make_lock({ch.add(python_pkg()), src});
    // The system's toolkit, whatever its release: the lock names what this machine has.
    std::string release = run_program({nvcc.string(), "--version"}).out;
    release = release.substr(release.find("release ") + 8);
    release = release.substr(0, release.find(','));
    lock.toolchain.nvcc = release;
    lock.toolchain.nvcc_from = "system:/usr/local/cuda";
    lock.toolchain.cuda_arch_list = "8.6";   // one arch: SASS only, CUDAARCHS=86-real
    lock = as_file(lock, work / "envlock.yaml");

    install_into(lock, work / "envlock.yaml", work / "env1", work / "cache");
    CHECK(run_python(work / "env1", "import boxops; print(list(boxops.compiled_archs()))") == "[860]\n");
    bool keyed = false;
    for (const auto& e : fs::directory_iterator(work / "cache/built"))
        if (fs::exists(e.path() / "key.txt")) {
            std::string key = read_bytes(e.path() / "key.txt");
            keyed = key.find("nvcc: Build cuda_" + release) != std::string::npos && key.find("TORCH_CUDA_ARCH_LIST=8.6 CUDAARCHS=86-real") != std::string::npos;
        }
    CHECK(keyed);

    auto start = std::chrono::steady_clock::now();
    auto second = install_into(lock, work / "envlock.yaml", work / "env2", work / "cache");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    MESSAGE("second env with boxops linked from the built-wheel cache: " << seconds << " s");
    CHECK(said(second, "linked boxops 0.1.0 built before"));
    CHECK(run_python(work / "env2", "import boxops; print(list(boxops.compiled_archs()))") == "[860]\n");
}
