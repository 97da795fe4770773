#pragma once
// Broken prefixes for doctor's tests, made the way users make them: wheels (zipfile, real RECORD)
// installed by Debian's pip with --target into a prefix's site-packages, conda-meta records of the
// shape conda writes, `setup.py develop` egg-links, and a compiled module linked against a
// libcudart soname by gcc.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "install/doctor.hpp"
#include "install/prefix_scan.hpp"
#include "tests/unit/wheels/wheels_fixture.hpp"

namespace envlock::test {

struct Prefix {
    TempDir dir;
    std::string python = "3.8";   // what pyvenv.cfg / the conda python record says
    std::string root() const { return dir.str(); }
    std::string site() const { return dir.str("lib/python" + python + "/site-packages"); }

    // A venv's marker: pyvenv.cfg naming the interpreter's version.
    void make_venv(const std::string& full_version = "3.8.18") {
        write_text(dir.path / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = " + full_version + "\n");
        fs::create_directories(site());
    }
};

struct WheelSpec {
    std::string name, version;
    std::vector<std::string> requires_dist;
    std::map<std::string, std::string> files;   // extra members: path -> content
    std::map<std::string, int> modes;
};

// A wheel file in `out` for `w` (tag py3-none-any), its RECORD with real hashes.
inline std::string build_test_wheel(const fs::path& out, const WheelSpec& w) {
    std::string escaped = w.name;
    for (auto& c : escaped)
        if (c == '-') c = '_';
    std::string di = escaped + "-" + w.version + ".dist-info/";
    std::string meta = "Metadata-Version: 2.1\nName: " + w.name + "\nVersion: " + w.version + "\n";
    for (const auto& r : w.requires_dist) meta += "Requires-Dist: " + r + "\n";
    std::map<std::string, std::string> files = w.files;
    files[di + "METADATA"] = meta;
    files[di + "WHEEL"] = "Wheel-Version: 1.0\nGenerator: envlock-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
    files[di + "RECORD"] = "";
    if (w.files.empty()) files[escaped + "/__init__.py"] = "__version__ = '" + w.version + "'\n";
    std::string path = (out / (escaped + "-" + w.version + "-py3-none-any.whl")).string();
    make_wheel(path, files, "", w.modes);
    return path;
}

// Debian's pip installs the wheels into `site` (--target; --upgrade replaces same-named top-level
// entries, as a user's second `pip install --target` does).
inline void pip_install(const std::string& site, const std::vector<WheelSpec>& wheels, bool upgrade = false) {
    TempDir out;
    std::vector<std::string> argv = {kDebianPython, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--no-compile",
                                     "--disable-pip-version-check", "--target", site};
    if (upgrade) argv.push_back("--upgrade");
    for (const auto& w : wheels) argv.push_back(build_test_wheel(out.path, w));
    auto r = run_program(argv);
    REQUIRE_MESSAGE(r.exit_code == 0, "pip install --target failed: " << r.out << r.err);
}

// conda-meta/<name>-<version>-<build>.json as conda writes it (the fields doctor reads, plus
// the usual neighbours), and the files it lists, written under the prefix.
inline void conda_record(const Prefix& p, const std::string& name, const std::string& version, const std::string& build,
                         const std::vector<std::string>& depends, const std::map<std::string, std::string>& files) {
    nlohmann::json j = {{"name", name}, {"version", version}, {"build", build}, {"build_number", 0},
                        {"channel", "https://conda.anaconda.org/pkgs/main/linux-64"}, {"subdir", "linux-64"},
                        {"depends", depends}, {"files", nlohmann::json::array()}, {"fn", name + "-" + version + "-" + build + ".conda"},
                        {"requested_spec", name}, {"paths_data", {{"paths", nlohmann::json::array()}, {"paths_version", 1}}}};
    for (const auto& [rel, content] : files) {
        j["files"].push_back(rel);
        write_text(p.dir.path / rel, content);
    }
    write_text(p.dir.path / "conda-meta" / (name + "-" + version + "-" + build + ".json"), j.dump(2));
}

// A conda python record (doctor reads the interpreter's version from it) with lib/pythonX.Y.
inline void conda_python(Prefix& p, const std::string& version) {
    p.python = version.substr(0, version.rfind('.'));
    conda_record(p, "python", version, "h7a1cb2a_0", {}, {{"lib/python" + p.python + "/os.py", ""}});
    fs::create_directories(p.site());
}

// The metadata a conda Python package carries in site-packages, owned by its record.
inline std::map<std::string, std::string> conda_dist_files(const Prefix& p, const std::string& name, const std::string& version,
                                                           const std::string& module) {
    std::string sp = "lib/python" + p.python + "/site-packages/";
    return {{sp + name + "-" + version + ".dist-info/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"},
            {sp + name + "-" + version + ".dist-info/INSTALLER", "conda\n"},
            {sp + module + "/__init__.py", "__version__ = '" + version + "'\n"}};
}

// A machine with nothing to complain about: no GPU, no toolkit, a generous open-file limit.
inline install::DoctorMachine quiet_machine() {
    install::DoctorMachine m;
    m.target.platform = "linux-64";
    m.nofile_soft = m.nofile_hard = 65536;
    return m;
}

inline install::DoctorReport doctor_of(const Prefix& p, const install::DoctorMachine& m = quiet_machine()) {
    static const knowledge::Knowledge k = knowledge::load_builtin();
    return install::diagnose(install::scan_prefix(p.root()), m, k);
}

inline const install::Finding* find_check(const install::DoctorReport& r, const std::string& check) {
    for (const auto& f : r.findings)
        if (f.check == check) return &f;
    return nullptr;
}

inline std::string describe(const install::DoctorReport& r) {
    std::string s;
    for (const auto& f : r.findings) s += install::severity_name(f.severity) + " [" + f.check + "] " + f.what + " | fix: " + f.fix + "\n";
    return s;
}

// A shared object whose DT_NEEDED names `soname` (gcc links it against a stub carrying that soname).
inline std::string build_linked_so(const fs::path& dir, const std::string& soname) {
    fs::create_directories(dir);
    write_text(dir / "stub.c", "int cudaRuntimeGetVersion(int* v) { *v = 0; return 0; }\n");
    write_text(dir / "ext.c", "int cudaRuntimeGetVersion(int*);\nint ext_version(void) { int v; cudaRuntimeGetVersion(&v); return v; }\n");
    auto a = sh("cd " + dir.string() + " && gcc -shared -fPIC -o " + soname + " -Wl,-soname," + soname + " stub.c && "
                "gcc -shared -fPIC -o ext.so ext.c -Wl,--no-as-needed " + soname);
    REQUIRE_MESSAGE(a.exit_code == 0, a.out << a.err);
    return (dir / "ext.so").string();
}

}  // namespace envlock::test
