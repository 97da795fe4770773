// Git sources: checked out at the locked commit under the env's src/, built through the
// project's PEP 517 backend (an in-tree backend here: PEP 517 "In-tree build backends",
// backend-path) with the env's python, installed as a wheel; editable installs per PEP 660;
// direct_url.json per PEP 610 (vcs_info / dir_info).
#include <doctest/doctest.h>

#include "install/source_install.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

// A tiny but real PEP 517 backend: build_wheel packs the package; build_editable writes a .pth
// naming the project directory, as setuptools' and hatchling's editable wheels do.
const char* kBackend = R"PY(
import base64, hashlib, os, zipfile

NAME, VERSION = 'srcpkg', '0.3.0'
DIST = '%s-%s.dist-info' % (NAME, VERSION)

def _write(directory, files):
    path = os.path.join(directory, '%s-%s-py3-none-any.whl' % (NAME, VERSION))
    rows = []
    with zipfile.ZipFile(path, 'w') as z:
        for name, data in files.items():
            z.writestr(name, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
            rows.append('%s,sha256=%s,%d' % (name, digest, len(data)))
        z.writestr(DIST + '/RECORD', '\n'.join(rows + [DIST + '/RECORD,,']) + '\n')
    return os.path.basename(path)

def _meta():
    return {
        DIST + '/METADATA': ('Metadata-Version: 2.1\nName: %s\nVersion: %s\n' % (NAME, VERSION)).encode(),
        DIST + '/WHEEL': b'Wheel-Version: 1.0\nGenerator: tinybackend\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
        DIST + '/entry_points.txt': b'[console_scripts]\nsrcpkg-hello = srcpkg:hello\n',
    }

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _meta()
    files['srcpkg/__init__.py'] = open('srcpkg/__init__.py', 'rb').read()
    return _write(wheel_directory, files)

def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    files = _meta()
    files['_srcpkg_editable.pth'] = (os.getcwd() + '\n').encode()
    return _write(wheel_directory, files)
)PY";

struct Repo {
    std::string url, commit;
};

Repo make_repo(const fs::path& dir) {
    write_text(dir / "pyproject.toml", "[build-system]\nrequires = []\nbuild-backend = \"tinybackend\"\nbackend-path = [\"_backend\"]\n");
    write_text(dir / "_backend/tinybackend.py", kBackend);
    write_text(dir / "srcpkg/__init__.py", "def hello():\n    print('hello from the checkout')\n");
    std::string g = "git -C '" + dir.string() + "' -c user.name=t -c user.email=t@t ";
    REQUIRE(sh(g + "init -q -b main && " + g + "add -A && " + g + "commit -q -m one").exit_code == 0);
    Repo r;
    r.url = "file://" + dir.string();
    r.commit = sh(g + "rev-parse HEAD").out.substr(0, 40);
    // A later commit the lock does not want: the checkout must stay at the locked one.
    write_text(dir / "srcpkg/__init__.py", "def hello():\n    print('a later commit')\n");
    REQUIRE(sh(g + "commit -q -am two").exit_code == 0);
    return r;
}

LockedPackage source_pkg(const Repo& r) {
    LockedPackage p;
    p.kind = Ecosystem::source;
    p.name = "srcpkg";
    p.version = "0.3.0";
    p.url = r.url;
    p.rev = r.commit;
    p.build = "main";
    return p;
}

}  // namespace

TEST_CASE("a git source is checked out at the locked commit and installed as a wheel with vcs_info (PEP 610)") {
    TempDir t;
    Repo repo = make_repo(t.path / "repo");
    create_venv(t.str("env"), debian_base());
    PythonLayout layout = venv_layout(t.str("env"), fixture_wheels().python_version);
    auto env = run_environment(t.str("env"), nullptr, current_environment());
    SourceOptions opt;
    opt.python = t.str("env/bin/python");
    auto got = install_source(source_pkg(repo), layout, env, opt);
    CHECK(got.checkout == "src/srcpkg");
    CHECK(sh("git -C '" + t.str("env/src/srcpkg") + "' rev-parse HEAD").out.substr(0, 40) == repo.commit);
    CHECK(run_program({t.str("env/bin/srcpkg-hello")}).out == "hello from the checkout\n");
    std::string du = read_text(t.path / ("env/" + got.installed.dist_info + "/direct_url.json"));
    CHECK(du == "{\"url\":\"" + repo.url + "\",\"vcs_info\":{\"commit_id\":\"" + repo.commit + "\",\"requested_revision\":\"main\",\"vcs\":\"git\"}}");
    auto r = run_program({kDebianPython, "-m", "pip", "--python", t.str("env/bin/python"), "freeze"});
    CHECK(r.out.find("srcpkg @ git+" + repo.url + "@" + repo.commit) != std::string::npos);
}

TEST_CASE("a source served by a mirror is cloned from it, and direct_url.json names the locked URL") {
    TempDir t;
    Repo repo = make_repo(t.path / "repo");
    create_venv(t.str("env"), debian_base());
    PythonLayout layout = venv_layout(t.str("env"), fixture_wheels().python_version);
    LockedPackage pkg = source_pkg(repo);
    pkg.url = "https://git.example.invalid/srcpkg";
    SourceOptions opt;
    opt.python = t.str("env/bin/python");
    opt.clone_url = repo.url;
    auto got = install_source(pkg, layout, run_environment(t.str("env"), nullptr, current_environment()), opt);
    CHECK(read_text(t.path / ("env/" + got.installed.dist_info + "/direct_url.json")).find("\"url\":\"https://git.example.invalid/srcpkg\"") != std::string::npos);
}

TEST_CASE("an editable source built in a stage names the final checkout, and edits to it are live (PEP 660)") {
    TempDir t;
    Repo repo = make_repo(t.path / "repo");
    create_venv(t.str("stage"), debian_base());
    PythonLayout layout = venv_layout(t.str("final"), fixture_wheels().python_version);
    auto env = run_environment(t.str("stage"), nullptr, current_environment());
    SourceOptions opt;
    opt.python = t.str("stage/bin/python");
    opt.stage = t.str("stage");
    opt.editable = true;
    auto got = install_source(source_pkg(repo), layout, env, opt);
    std::string pth = read_text(t.path / ("stage/lib/python" + fixture_wheels().python_version + "/site-packages/_srcpkg_editable.pth"));
    CHECK(pth == t.str("final/src/srcpkg") + "\n");
    CHECK(read_text(t.path / ("stage/" + got.installed.dist_info + "/direct_url.json")) ==
          "{\"dir_info\":{\"editable\":true},\"url\":\"file://" + t.str("final/src/srcpkg") + "\"}");
    fs::rename(t.path / "stage", t.path / "final");   // what the transaction's swap does
    PythonLayout final_layout = venv_layout(t.str("final"), fixture_wheels().python_version);
    CHECK(check_record(final_layout, got.installed.dist_info).empty());
    write_text(t.path / "final/src/srcpkg/srcpkg/__init__.py", "def hello():\n    print('edited in place')\n");
    CHECK(run_program({t.str("final/bin/srcpkg-hello")}).out == "edited in place\n");
}

TEST_CASE("an editable source whose backend predates PEP 660 gets what setup.py develop gives: a .pth naming the checkout") {
    TempDir t;
    Repo repo = make_repo(t.path / "repo");
    // The same backend without build_editable, with prepare_metadata_for_build_wheel (PEP 517).
    std::string legacy = std::string(kBackend);
    legacy = legacy.substr(0, legacy.find("def build_editable"));
    legacy += "def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):\n"
              "    os.makedirs(os.path.join(metadata_directory, DIST))\n"
              "    for name, data in _meta().items():\n"
              "        open(os.path.join(metadata_directory, name), 'wb').write(data)\n"
              "    open(os.path.join(metadata_directory, DIST, 'top_level.txt'), 'w').write('srcpkg\\n')\n"
              "    return DIST\n";
    write_text(t.path / "repo/_backend/tinybackend.py", legacy);
    std::string g = "git -C '" + t.str("repo") + "' -c user.name=t -c user.email=t@t ";
    REQUIRE(sh(g + "commit -q -am legacy").exit_code == 0);
    repo.commit = sh(g + "rev-parse HEAD").out.substr(0, 40);
    create_venv(t.str("env"), debian_base());
    PythonLayout layout = venv_layout(t.str("env"), fixture_wheels().python_version);
    SourceOptions opt;
    opt.python = t.str("env/bin/python");
    opt.editable = true;
    auto got = install_source(source_pkg(repo), layout, run_environment(t.str("env"), nullptr, current_environment()), opt);
    CHECK(read_text(t.path / ("env/lib/python" + fixture_wheels().python_version + "/site-packages/__editable__.srcpkg-0.3.0.pth")) ==
          t.str("env/src/srcpkg") + "\n");
    CHECK(run_program({t.str("env/bin/srcpkg-hello")}).out == "a later commit\n");   // the checkout HEAD's code, live
    auto r = run_program({kDebianPython, "-m", "pip", "--python", t.str("env/bin/python"), "list", "--editable"});
    CHECK(r.out.find("srcpkg") != std::string::npos);
}

TEST_CASE("documented install commands: which are editable") {
    CHECK(is_editable_install("pip install -v -e ."));
    CHECK(is_editable_install("python setup.py develop"));
    CHECK(is_editable_install("pip install --editable ."));
    CHECK_FALSE(is_editable_install("pip install ."));
    CHECK_FALSE(is_editable_install("python setup.py install"));
    CHECK_FALSE(is_editable_install("pip install -r requirements/build.txt"));
}

TEST_CASE("a source pinned to a tag rather than a commit is bad input; a failing build is reported with its output") {
    TempDir t;
    Repo repo = make_repo(t.path / "repo");
    create_venv(t.str("env"), debian_base());
    PythonLayout layout = venv_layout(t.str("env"), fixture_wheels().python_version);
    SourceOptions opt;
    opt.python = t.str("env/bin/python");
    auto pkg = source_pkg(repo);
    pkg.rev = "v1.0";
    CHECK_THROWS_AS(install_source(pkg, layout, {}, opt), InputError);
    write_text(t.path / "repo/_backend/tinybackend.py", "def build_wheel(*a, **k):\n    raise SystemExit('compiler exploded')\n");
    sh("git -C '" + t.str("repo") + "' -c user.name=t -c user.email=t@t commit -q -am broken");
    pkg.rev = sh("git -C '" + t.str("repo") + "' rev-parse HEAD").out.substr(0, 40);
    CHECK_THROWS_WITH_AS(install_source(pkg, layout, {}, opt), doctest::Contains("compiler exploded"), UnmetError);
}
