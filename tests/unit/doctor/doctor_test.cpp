// envlock doctor: each broken prefix of issue 18 is named with its fix; a healthy one is healthy.
#include <doctest/doctest.h>

#include "install/elf.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "tests/unit/doctor/doctor_fixture.hpp"

using namespace envlock;
using namespace envlock::test;

namespace {

const knowledge::Knowledge& K() {
    static knowledge::Knowledge k = knowledge::load_builtin();
    return k;
}

install::DoctorReport doctor(const Prefix& p, const install::DoctorMachine& m = quiet_machine(), const Lock* lock = nullptr) {
    return install::diagnose(install::scan_prefix(p.root()), m, K(), lock, lock ? "envlock.yaml" : "");
}

}  // namespace

TEST_CASE("a venv whose requirements are all met, installed by Debian's pip, is healthy (exit 0)") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"demo-app", "1.0", {"demo-lib>=1.2", "colorama; sys_platform == \"win32\"", "extra-thing; extra == \"cli\""}, {}, {}},
                           {"demo-lib", "1.2.1", {}, {}, {}}});
    auto scan = install::scan_prefix(p.root());
    CHECK(scan.python_version == "3.8.18");
    REQUIRE(scan.dists.size() == 2);
    CHECK(scan.dists[0].installer == "pip");
    CHECK(scan.dists[0].has_record);
    auto r = install::diagnose(scan, quiet_machine(), K());
    CHECK_MESSAGE(r.findings.empty(), describe(r));
    CHECK(r.exit_code() == 0);
}

TEST_CASE("a Requires-Dist that is unmet is named with the pip command that meets it (as `pip check` reports it)") {
    Prefix p;
    p.make_venv();
    // mmdet3d 0.17.1 pins numba==0.48.0 (requirements/runtime.txt); a later `pip install -U numba` leaves 0.56.4.
    pip_install(p.site(), {{"mmdet3d", "0.17.1", {"numba==0.48.0", "numpy<1.20.0"}, {}, {}},
                           {"numba", "0.56.4", {"llvmlite<0.40,>=0.39.0dev0", "numpy<1.24,>=1.18"}, {}, {}},
                           {"llvmlite", "0.39.1", {}, {}, {}},
                           {"numpy", "1.19.5", {}, {}, {}}});
    auto r = doctor(p);
    const auto* f = find_check(r, "requirement");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "mmdet3d 0.17.1 requires numba==0.48.0, but numba 0.56.4 is installed");
    CHECK(f->fix.find("-m pip install \"numba==0.48.0\"") != std::string::npos);
    CHECK(r.exit_code() == 1);
    // The oracle: Debian's pip finds the same conflict in that directory.
    auto oracle = run_program({kDebianPython, "-c",
                               "import sys; sys.path.insert(0, sys.argv[1]); from pip._internal.cli.main import main; sys.exit(main(['check']))",
                               p.site()});
    CHECK(oracle.out.find("mmdet3d 0.17.1 has requirement numba==0.48.0, but you have numba 0.56.4") != std::string::npos);
}

TEST_CASE("a `setup.py develop` checkout (.egg-link) is read, and its requires.txt checked") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"numba", "0.56.4", {"numpy<1.24,>=1.18"}, {}, {}}, {"numpy", "1.19.5", {}, {}, {}}});
    TempDir checkout;
    write_text(checkout.path / "mmdet3d.egg-info/PKG-INFO", "Metadata-Version: 2.1\nName: mmdet3d\nVersion: 0.17.1\n");
    write_text(checkout.path / "mmdet3d.egg-info/requires.txt", "numba==0.48.0\nnumpy<1.20.0\n\n[tests]\npytest\n\n[:python_version < \"3.7\"]\ndataclasses\n");
    write_text(fs::path(p.site()) / "mmdet3d.egg-link", checkout.str() + "\n.\n");
    auto scan = install::scan_prefix(p.root());
    const install::PythonDist* mmdet3d = nullptr;
    for (const auto& d : scan.dists)
        if (d.normalized == "mmdet3d") mmdet3d = &d;
    REQUIRE(mmdet3d);
    CHECK(mmdet3d->editable);
    CHECK(mmdet3d->requires_dist == std::vector<std::string>{"numba==0.48.0", "numpy<1.20.0", "pytest; extra == \"tests\"",
                                                              "dataclasses; python_version < \"3.7\""});
    auto r = install::diagnose(scan, quiet_machine(), K());
    auto* f = find_check(r, "requirement");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what.find("requires numba==0.48.0, but numba 0.56.4 is installed") != std::string::npos);
    CHECK(describe(r).find("pytest") == std::string::npos);        // an extra nobody asked for
    CHECK(describe(r).find("dataclasses") == std::string::npos);   // a marker that does not hold on 3.8
}

TEST_CASE("conda numpy and numpy-base out of step: named, with the conda command that puts them back in step") {
    Prefix p;
    conda_python(p, "3.8.18");
    conda_record(p, "numpy", "1.20.3", "py38hf144106_0", {"numpy-base 1.20.3 py38h74d4b33_0", "python >=3.8,<3.9.0a0"}, {});
    conda_record(p, "numpy-base", "1.19.5", "py38h74d4b33_0", {"python >=3.8,<3.9.0a0"}, conda_dist_files(p, "numpy", "1.19.5", "numpy"));
    auto r = doctor(p);
    const auto* f = find_check(r, "split-package");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "conda numpy 1.20.3 but numpy-base 1.19.5");
    CHECK(f->fix == "conda install -p " + install::scan_prefix(p.root()).prefix + " \"numpy=1.20.3\" \"numpy-base=1.20.3\"");
    // conda's own depends say the same thing.
    const auto* dep = find_check(r, "requirement");
    REQUIRE(dep);
    CHECK(dep->what == "conda numpy 1.20.3 depends on numpy-base 1.20.3 py38h74d4b33_0, but numpy-base 1.19.5 is installed");
}

TEST_CASE("cross-ecosystem identity: a conda Python package without metadata provides the PyPI project of its name, as in the solve") {
    // conda's numpy (a record whose files list no *.dist-info, as the demo mirror's and some old
    // builds are) meets pip's `Requires-Dist: numpy>=1.17`; so do conda's pytorch for `torch` and
    // typing_extensions for `typing-extensions`.
    Prefix p;
    conda_python(p, "3.8.18");
    std::string sp = "lib/python3.8/site-packages/";
    conda_record(p, "numpy", "1.21.5", "py38h7a5d4dd_0", {"python >=3.8,<3.9.0a0"}, {{sp + "numpy/__init__.py", ""}});
    conda_record(p, "pytorch", "1.10.0", "py3.8_cuda11.1_cudnn8.0.5_0", {"python >=3.8,<3.9.0a0"}, {{sp + "torch/__init__.py", ""}});
    conda_record(p, "typing_extensions", "4.7.1", "pyha770c72_0", {"python >=3.7"}, {{sp + "typing_extensions.py", ""}});
    conda_record(p, "libpng", "1.6.39", "h5eee18b_0", {}, {{"lib/libpng.so", ""}});   // no Python package: provides nothing
    pip_install(p.site(), {{"matplotlib", "3.5.2", {"numpy>=1.17", "typing-extensions"}, {}, {}},
                           {"torchvision", "0.11.1", {"torch==1.10.0"}, {}, {}},
                           {"pypng-user", "1.0", {"libpng"}, {}, {}}});
    auto scan = install::scan_prefix(p.root());
    for (const auto& rec : scan.conda_records)
        if (rec.name == "libpng") CHECK(rec.python_dist.empty());
    auto r = doctor(p);
    std::vector<std::string> unmet;
    for (const auto& f : r.findings)
        if (f.check == "requirement") unmet.push_back(f.what);
    CHECK(unmet == std::vector<std::string>{"pypng-user 1.0 requires libpng, which is not installed"});
    CHECK(find_check(r, "duplicate") == nullptr);
}

TEST_CASE("conda's numpy metapackage beside the numpy-base that holds numpy's metadata is one numpy, not two") {
    Prefix p;
    conda_python(p, "3.8.18");
    conda_record(p, "numpy", "1.21.5", "py38h7a5d4dd_0", {"numpy-base 1.21.5 py38hf524024_0", "python >=3.8,<3.9.0a0"}, {});
    conda_record(p, "numpy-base", "1.21.5", "py38hf524024_0", {"python >=3.8,<3.9.0a0"}, conda_dist_files(p, "numpy", "1.21.5", "numpy"));
    auto r = doctor(p);
    CHECK_MESSAGE(find_check(r, "duplicate") == nullptr, describe(r));
    CHECK(r.exit_code() == 0);
}

TEST_CASE("pip's numpy over conda's numpy: installed twice, named with both installers and a fix") {
    Prefix p;
    conda_python(p, "3.8.18");
    conda_record(p, "numpy", "1.20.3", "py38h9894fe3_0", {"python >=3.8,<3.9.0a0"}, conda_dist_files(p, "numpy", "1.20.3", "numpy"));
    pip_install(p.site(), {{"numpy", "1.19.5", {}, {}, {}}}, /*upgrade=*/true);
    auto scan = install::scan_prefix(p.root());
    REQUIRE(scan.dists.size() == 2);
    auto r = install::diagnose(scan, quiet_machine(), K());
    const auto* f = find_check(r, "duplicate");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->severity == install::Severity::error);
    CHECK(f->what.find("numpy is installed 2 times") == 0);
    CHECK(f->what.find("1.19.5 (pip") != std::string::npos);
    CHECK(f->what.find("1.20.3 (conda") != std::string::npos);
    CHECK(f->fix.find("-m pip uninstall -y numpy && conda install -p ") != std::string::npos);
    CHECK(f->fix.find("--force-reinstall \"numpy=1.20.3\"") != std::string::npos);
}

TEST_CASE("mmcv beside mmcv-full: both write the mmcv package, and the knowledge base's advisory names it") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"mmcv-full", "1.4.0", {}, {{"mmcv/__init__.py", "full = True\n"}, {"mmcv/ops/__init__.py", ""}}, {}},
                           {"mmcv", "1.4.0", {}, {{"mmcv/__init__.py", "full = False\n"}}, {}}});
    auto r = doctor(p);
    const auto* overlap = find_check(r, "overlap");
    REQUIRE_MESSAGE(overlap, describe(r));
    CHECK(overlap->what.find("mmcv/__init__.py") != std::string::npos);
    const auto* advisory = find_check(r, "advisory:mmcv-and-mmcv-full-together");
    REQUIRE_MESSAGE(advisory, describe(r));
    CHECK(advisory->fix.find("uninstall mmcv") != std::string::npos);
}

TEST_CASE("yapf 0.40.2 with mmcv-full 1.4.0: the advisory, with the pip command of its fix") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"mmcv-full", "1.4.0", {"yapf"}, {}, {}}, {"yapf", "0.40.2", {}, {}, {}}});
    auto r = doctor(p);
    const auto* f = find_check(r, "advisory:yapf-0.40.2-mmcv-full-config");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "yapf 0.40.2 with mmcv-full 1.4.0");
    CHECK(f->why.find("verify") != std::string::npos);
    CHECK(f->why.find("shared/") == std::string::npos);   // the developers' fact files are not the product's to cite
    CHECK(f->fix.find("-m pip install \"yapf==0.40.1\"") != std::string::npos);
}

TEST_CASE("numba outside its numpy range (knowledge: numba's setup.py limits)") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"numba", "0.56.4", {}, {}, {}}, {"numpy", "1.24.4", {}, {}, {}}});
    auto r = doctor(p);
    const auto* f = find_check(r, "numba-numpy");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what == "numba 0.56.4 with numpy 1.24.4");
    CHECK(f->fix.find("-m pip install \"numpy") != std::string::npos);
}

TEST_CASE("ELF DT_NEEDED is read from the dynamic section") {
    TempDir d;
    std::string so = build_linked_so(d.path, "libcudart.so.11.0");
    auto needed = install::elf_needed(so);
    REQUIRE(needed);
    CHECK(std::find(needed->begin(), needed->end(), "libcudart.so.11.0") != needed->end());
    CHECK(install::cudart_soname_version("libcudart.so.11.0") == "11.0");
    CHECK(install::cudart_soname_version("libcudart.so.12") == "12");
    CHECK(install::cudart_soname_version("libcudnn.so.8") == "");
    write_text(d.path / "not-elf.so", "hello");
    CHECK_FALSE(install::elf_needed((d.path / "not-elf.so").string()));
    // The oracle: binutils' readelf sees the same entry.
    auto r = sh("readelf -d " + so + " | grep NEEDED");
    if (r.exit_code == 0) CHECK(r.out.find("[libcudart.so.11.0]") != std::string::npos);
}

TEST_CASE("an extension linked to libcudart.so.11.0 under a cu102 torch is named, with the rebuild command") {
    Prefix p;
    p.make_venv();
    TempDir build;
    std::string so = read_text(build_linked_so(build.path, "libcudart.so.11.0"));
    pip_install(p.site(), {{"torch", "1.9.1+cu102", {}, {{"torch/__init__.py", ""}, {"torch/version.py", "__version__ = '1.9.1+cu102'\ncuda = '10.2'\ngit_version = 'dfbd030'\n"}}, {}},
                           {"myops", "0.3", {}, {{"myops/__init__.py", ""}, {"myops/_ext.so", so}}, {{"myops/_ext.so", 0100755}}}});
    auto scan = install::scan_prefix(p.root());
    CHECK(scan.torch.version == "1.9.1+cu102");
    CHECK(scan.torch.cuda == "10.2");
    REQUIRE(scan.extensions.size() == 1);
    CHECK(scan.extensions[0].dist == "myops");
    auto r = install::diagnose(scan, quiet_machine(), K());
    const auto* f = find_check(r, "extension-cuda");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->what.find("myops/_ext.so links libcudart.so.11.0, torch 1.9.1+cu102 is CUDA 10.2") != std::string::npos);
    CHECK(f->fix.find("--force-reinstall --no-deps --no-build-isolation \"myops==0.3\"") != std::string::npos);
}

TEST_CASE("torch's CUDA against this machine's driver and GPU, CUDA_HOME and the open-file limit") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"torch", "1.9.1+cu102", {}, {{"torch/__init__.py", ""}, {"torch/version.py", "cuda = '10.2'\n"}}, {}}});
    auto m = quiet_machine();
    m.target.driver_version = "418.39";   // runs CUDA 10.1 at most
    m.target.driver_cuda = "10.1";
    m.target.gpus = {{"NVIDIA GeForce RTX 3090", 8, 6}};
    m.cuda_home_set = true;
    m.cuda_home = "/usr/local/cuda-12.4";
    m.cuda_home_version = "12.4";
    m.target.toolkits = {{"/usr/local/cuda-12.4", "12.4", {}}, {"/usr/local/cuda-10.2", "10.2.89", {}}};
    m.nofile_soft = 1024;
    m.nofile_hard = 1048576;
    auto r = doctor(p, m);
    const auto* driver = find_check(r, "torch-driver");
    REQUIRE_MESSAGE(driver, describe(r));
    CHECK(driver->what.find("NVIDIA driver 418.39") != std::string::npos);
    const auto* gpu = find_check(r, "torch-gpu");
    REQUIRE_MESSAGE(gpu, describe(r));
    CHECK(gpu->what.find("sm_86") != std::string::npos);
    const auto* home = find_check(r, "cuda-home");
    REQUIRE_MESSAGE(home, describe(r));
    CHECK(home->severity == install::Severity::error);
    CHECK(home->fix == "export CUDA_HOME=/usr/local/cuda-10.2");
    const auto* files = find_check(r, "open-files");
    REQUIRE_MESSAGE(files, describe(r));
    CHECK(files->severity == install::Severity::warning);
    CHECK(files->fix.find("ulimit -n 65536") == 0);
}

TEST_CASE("a toolkit's release is read from version.json, else version.txt") {
    TempDir d;
    write_text(d.path / "a/version.json", R"({"cuda": {"name": "CUDA SDK", "version": "12.4.131"}})");
    write_text(d.path / "b/version.txt", "CUDA Version 10.2.89\n");
    CHECK(install::cuda_toolkit_version(d.str("a")) == "12.4");
    CHECK(install::cuda_toolkit_version(d.str("b")) == "10.2");
    CHECK(install::cuda_toolkit_version(d.str("c")) == "");
}

TEST_CASE("drift from the lock: changed, missing and added packages, each fixed by `envlock install --repair`") {
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"numpy", "1.20.3", {}, {}, {}}, {"yapf", "0.40.1", {}, {}, {}}, {"tqdm", "4.64.1", {}, {}, {}}});
    Lock lock;
    auto pkg = [](std::string name, std::string version) {
        LockedPackage lp;
        lp.kind = Ecosystem::pypi;
        lp.name = std::move(name);
        lp.version = std::move(version);
        return lp;
    };
    lock.packages = {pkg("numpy", "1.19.5"), pkg("yapf", "0.40.1"), pkg("mmcv-full", "1.4.0")};
    auto r = doctor(p, quiet_machine(), &lock);
    REQUIRE(r.drift);
    CHECK(r.drift->changed == std::vector<std::string>{"numpy 1.19.5 -> 1.20.3"});
    CHECK(r.drift->removed == std::vector<std::string>{"mmcv-full 1.4.0"});
    CHECK(r.drift->added == std::vector<std::string>{"tqdm 4.64.1"});
    int drift = 0;
    for (const auto& f : r.findings)
        if (f.check == "lock-drift") {
            ++drift;
            CHECK(f.fix.find("envlock install envlock.yaml --repair --prefix ") == 0);
        }
    CHECK(drift == 3);
}

TEST_CASE("a finding `install --repair` would not change is fixed by a new lock, never by --repair") {
    // The lock itself leaves matplotlib's numpy out: the prefix is exactly what it installs, so
    // --repair's plan is empty and proposing it would be a fix that then declines.
    Prefix p;
    p.make_venv();
    pip_install(p.site(), {{"matplotlib", "3.5.2", {"numpy>=1.17"}, {}, {}}});
    Lock lock;
    LockedPackage lp;
    lp.kind = Ecosystem::pypi;
    lp.name = "matplotlib";
    lp.version = "3.5.2";
    lock.packages = {lp};
    install::RepairPreview nothing;   // would change nothing
    auto r = install::diagnose(install::scan_prefix(p.root()), quiet_machine(), K(), &lock, "envlock.yaml", &nothing);
    const auto* f = find_check(r, "requirement");
    REQUIRE_MESSAGE(f, describe(r));
    CHECK(f->fix.find("(`envlock install --repair` would change nothing)") != std::string::npos);
    CHECK(f->fix.find("re-resolve it (`envlock resolve`)") != std::string::npos);
    CHECK(f->fix.find("envlock install envlock.yaml --repair") == std::string::npos);

    install::RepairPreview restores;
    restores.plan.damage = {"lib/python3.8/site-packages/numpy/__init__.py (missing)"};
    r = install::diagnose(install::scan_prefix(p.root()), quiet_machine(), K(), &lock, "envlock.yaml", &restores);
    f = find_check(r, "requirement");
    REQUIRE(f);
    CHECK(f->fix.find("envlock install envlock.yaml --repair --prefix ") == 0);
}

TEST_CASE("`envlock doctor`: grouped report, --json, exit 0 healthy / 1 problems / 2 bad input") {
    Prefix healthy;
    healthy.make_venv();
    pip_install(healthy.site(), {{"demo-lib", "1.2.1", {}, {}, {}}});
    auto ok = run_envlock({"doctor", "--prefix", healthy.root(), "--json"});
    CHECK_MESSAGE(ok.exit_code == 0, ok.out << ok.err);
    auto j = nlohmann::json::parse(ok.out);
    CHECK(j["healthy"] == true);
    CHECK(j["python"] == "3.8.18");

    Prefix broken;
    broken.make_venv();
    pip_install(broken.site(), {{"mmcv-full", "1.4.0", {}, {}, {}}, {"yapf", "0.40.2", {}, {}, {}}});
    auto bad = run_envlock({"doctor", "--prefix", broken.root()});
    CHECK(bad.exit_code == 1);
    CHECK(bad.out.find("errors (") != std::string::npos);
    CHECK(bad.out.find("fix: ") != std::string::npos);
    CHECK(bad.out.find("yapf==0.40.1") != std::string::npos);

    auto missing = run_envlock({"doctor", "--prefix", "/nonexistent/env"});
    CHECK(missing.exit_code == 2);
    CHECK(missing.err.find("/nonexistent/env") != std::string::npos);
    auto no_lock = run_envlock({"doctor", "--prefix", healthy.root(), "--lock", healthy.dir.str("nope.yaml")});
    CHECK(no_lock.exit_code == 2);

    auto help = run_envlock({"--help"});
    CHECK(help.out.find("\n  doctor ") != std::string::npos);   // listed, no longer hidden
}

TEST_CASE("Debian's /usr: the system Python's packages are read, and every error doctor raises is one `pip check` raises too") {
    if (!fs::exists("/usr/lib/python3/dist-packages/pip")) {
        MESSAGE("skipped: Debian's python3-pip is not installed");
        return;
    }
    auto scan = install::scan_prefix("/usr");
    CHECK(scan.python_version.rfind("3.", 0) == 0);
    std::set<std::string> names;
    for (const auto& d : scan.dists) names.insert(d.normalized);
    CHECK(names.count("pip"));
    CHECK(names.count("setuptools"));   // Debian ships an .egg-info for it
    // Debian's functorch/_C is built against Debian's torch: every torch symbol it imports is
    // exported by libc10/libtorch* in /usr/lib/<triplet> (python3-torch 1.13).
    for (const auto& x : scan.extensions)
        if (x.path.find("functorch/_C") != std::string::npos) {
            CHECK(x.torch_checked);
            CHECK(x.torch_symbols > 10);
            CHECK_MESSAGE(x.missing_torch_symbols.empty(), x.missing_torch_symbols.front());
        }
    auto r = install::diagnose(scan, quiet_machine(), K());
    auto check = run_program({kDebianPython, "-m", "pip", "check"});
    for (const auto& f : r.findings) {
        if (f.severity == install::Severity::note) continue;
        REQUIRE_MESSAGE(f.check == "requirement", describe(r));
        std::string dist = f.what.substr(0, f.what.find(' '));
        for (auto& c : dist) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        std::string lower = check.out;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        CHECK_MESSAGE(lower.find(dist) != std::string::npos, f.what << " is not in pip check's output: " << check.out);
    }
}
