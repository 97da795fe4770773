// `envlock export`: pip's hash-checking mode (pip docs, "Secure installs": --require-hashes),
// conda's @EXPLICIT files (url#md5, url#sha256 since conda 24.9, conda/conda#14048), and
// environment.yml (conda env's pip: section is a requirements file).
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include "install/export.hpp"
#include "resolver/specs/errors.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
using namespace envlock::test;

namespace {

LockedPackage conda_pkg(const std::string& name, const std::string& version, const std::string& build, const std::string& md5) {
    LockedPackage p;
    p.kind = Ecosystem::conda;
    p.name = name;
    p.version = version;
    p.build = build;
    p.md5 = md5;
    p.sha256 = std::string(64, 'c');
    p.channel = "https://conda.anaconda.org/conda-forge";
    p.subdir = "linux-64";
    p.url = p.channel + "/linux-64/" + name + "-" + version + "-" + build + ".conda";
    return p;
}

Lock demo_lock(const std::string& wheel_dir) {
    Lock lock;
    lock.content_hash = "sha256:" + std::string(64, '0');
    lock.spec.name = "demo";
    lock.spec.channels = {"conda-forge"};
    lock.spec.find_links = {wheel_dir};
    lock.targets.push_back({"default", {}});
    lock.targets[0].target.platform = "linux-64";
    lock.packages.push_back(conda_pkg("python", "3.11.7", "hab00c5b_0", std::string(32, 'a')));
    auto nomd5 = conda_pkg("zlib", "1.3", "h0", "");
    lock.packages.push_back(nomd5);
    for (const auto& whl : {fixture_wheels().fix_pkg, fixture_wheels().ns_pkg}) {
        LockedPackage p;
        p.kind = Ecosystem::pypi;
        auto name = fs::path(whl).filename().string();
        p.name = name.rfind("fix_pkg", 0) == 0 ? "fix-pkg" : "nsroot-alpha";
        p.version = name.rfind("fix_pkg", 0) == 0 ? "1.2.0" : "0.1";
        p.url = "file://" + whl;
        p.channel = wheel_dir;
        p.sha256 = digest_file(whl).sha256;
        lock.packages.push_back(p);
    }
    LockedPackage src;
    src.kind = Ecosystem::source;
    src.name = "mmdet3d";
    src.version = "0.17.1";
    src.url = "https://github.com/open-mmlab/mmdetection3d";
    src.rev = "f1107977dfd26155fc1f83779ee6535d2468f449";
    lock.packages.push_back(src);
    return lock;
}

}  // namespace

TEST_CASE("requirements: every PyPI package pinned with its sha256, and Debian's pip installs them in --require-hashes mode") {
    std::string dir = fs::path(fixture_wheels().fix_pkg).parent_path().string();
    Lock lock = demo_lock(dir);
    std::string text = export_lock(lock, ExportFormat::requirements);
    CHECK(text.find("--find-links " + dir + "\n") != std::string::npos);
    CHECK(text.find("fix-pkg==1.2.0 \\\n    --hash=sha256:" + lock.packages[2].sha256 + "\n") != std::string::npos);
    CHECK(text.find("# These come from conda") != std::string::npos);
    CHECK(text.find("#   pip install --no-deps --no-build-isolation \"mmdet3d @ git+https://github.com/open-mmlab/mmdetection3d@f1107977") != std::string::npos);

    TempDir t;
    write_text(t.path / "requirements.txt", text);
    auto r = run_program({kDebianPython, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--require-hashes",
                          "--target", t.str("target"), "-r", t.str("requirements.txt")});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(fs::exists(t.path / "target/fixpkg/cli.py"));
    // A wrong hash is what pip refuses: the export really is hash-checked.
    std::string bad = text;
    bad.replace(bad.find("--hash=sha256:") + 14, 4, "0000");
    write_text(t.path / "bad.txt", bad);
    r = run_program({kDebianPython, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--require-hashes",
                     "--target", t.str("target2"), "-r", t.str("bad.txt")});
    CHECK(r.exit_code != 0);
    CHECK((r.out + r.err).find("DO NOT MATCH") != std::string::npos);
}

TEST_CASE("requirements: packages locked from a PEP 503 index's project pages name the index once") {
    Lock lock = demo_lock("/wheels");
    for (auto& p : lock.packages)
        if (p.kind == Ecosystem::pypi) p.channel = "https://index.example/simple/" + p.name + "/";
    lock.spec.find_links.clear();
    std::string text = export_lock(lock, ExportFormat::requirements);
    CHECK(text.find("--index-url https://index.example/simple\n") != std::string::npos);
    CHECK(text.find("--extra-index-url") == std::string::npos);
    CHECK(text.find("/simple/fix-pkg") == std::string::npos);
}

TEST_CASE("conda-explicit: @EXPLICIT, one URL per conda package with #md5, else #sha256; PyPI packages only as comments") {
    Lock lock = demo_lock("/wheels");
    std::string text = export_lock(lock, ExportFormat::conda_explicit);
    CHECK(text.find("# platform: linux-64\n") != std::string::npos);
    auto at = text.find("@EXPLICIT\n");
    REQUIRE(at != std::string::npos);
    CHECK(text.substr(at) == "@EXPLICIT\n"
                             "https://conda.anaconda.org/conda-forge/linux-64/python-3.11.7-hab00c5b_0.conda#" + std::string(32, 'a') + "\n"
                             "https://conda.anaconda.org/conda-forge/linux-64/zlib-1.3-h0.conda#" + std::string(64, 'c') + "\n");
    CHECK(text.find("#   fix-pkg==1.2.0\n") < at);
}

TEST_CASE("environment-yml: channels, name=version=build pins, a pip: section with the find-links and the git source") {
    Lock lock = demo_lock("/wheels");
    YAML::Node y = YAML::Load(export_lock(lock, ExportFormat::environment_yml));
    CHECK(y["name"].as<std::string>() == "demo");
    CHECK(y["channels"][0].as<std::string>() == "conda-forge");
    auto deps = y["dependencies"];
    CHECK(deps[0].as<std::string>() == "python=3.11.7=hab00c5b_0");
    CHECK(deps[2].as<std::string>() == "pip");
    auto pip = deps[3]["pip"];
    REQUIRE(pip.IsSequence());
    CHECK(pip[0].as<std::string>() == "--find-links /wheels");
    CHECK(pip[1].as<std::string>() == "fix-pkg==1.2.0");
    CHECK(pip[3].as<std::string>() == "git+https://github.com/open-mmlab/mmdetection3d@f1107977dfd26155fc1f83779ee6535d2468f449#egg=mmdet3d");
    CHECK_THROWS_AS(parse_export_format("pipfile"), InputError);
}

TEST_CASE("envlock export reads the lock file and writes the format to stdout or -o; an unknown format is bad input") {
    TempDir t;
    Lock lock = demo_lock("/wheels");
    write_text(t.path / "envlock.yaml", write_lock(lock));
    auto r = run_envlock({"export", "--format", "conda-explicit", t.str("envlock.yaml")});
    CHECK_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out == export_lock(read_lock(read_text(t.path / "envlock.yaml"), "envlock.yaml"), ExportFormat::conda_explicit));
    CHECK(run_envlock({"export", "--format", "requirements", "--locked-only", t.str(), "-o", t.str("req.txt")}).exit_code == 0);
    CHECK(read_text(t.path / "req.txt").find("fix-pkg==1.2.0 \\\n") != std::string::npos);
    r = run_envlock({"export", "--format", "pipfile", t.str("envlock.yaml")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("requirements, conda-explicit or environment-yml") != std::string::npos);
    CHECK(run_envlock({"export", "--format", "requirements", t.str("missing.yaml")}).exit_code == 2);
}

TEST_CASE("a venv lock exports: requirements say which Python and platform their hashes are for, environment-yml pins that Python, conda-explicit refuses") {
    Lock lock = demo_lock(fs::path(fixture_wheels().fix_pkg).parent_path().string());
    lock.spec.channels.clear();
    std::erase_if(lock.packages, [](const LockedPackage& p) { return p.kind == Ecosystem::conda; });
    lock.python = LockedPython{"3.11", "--python"};
    lock.targets[0].target.glibc = "2.36";
    std::string req = export_lock(lock, ExportFormat::requirements);
    CHECK(req.find("# Valid for Python 3.11 on linux-64 (glibc 2.36)") != std::string::npos);
    std::string yml = export_lock(lock, ExportFormat::environment_yml);
    CHECK(yml.find("dependencies:\n  - python=3.11\n") != std::string::npos);
    CHECK(YAML::Load(yml)["dependencies"][0].as<std::string>() == "python=3.11");
    CHECK_THROWS_AS(export_lock(lock, ExportFormat::conda_explicit), InputError);
}
