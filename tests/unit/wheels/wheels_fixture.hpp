#pragma once
// Fixtures for the Python-side installer tests: real wheels built by Debian's `pip wheel` from
// small projects written here, a venv on Debian's python, hand-made (malicious) wheels, and the
// oracles (`python3 -m installer`, Debian's pip) run for real.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "install/python_env.hpp"
#include "install/record.hpp"
#include "tests/support/run_envlock.hpp"
#include "tests/support/scratch.hpp"

namespace envlock::test {

namespace fs = std::filesystem;

// Debian's interpreter: python3-pip, python3-installer and python3-venv serve it (the python3
// first on PATH may be another build).
inline const char* kDebianPython = "/usr/bin/python3";

struct TempDir {
    fs::path path;
    TempDir() : path(scratch_dir("wheels")) {}
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string str(const std::string& rel = "") const { return rel.empty() ? path.string() : (path / rel).string(); }
};

inline void write_text(const fs::path& p, const std::string& text, bool executable = false) {
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    if (executable) fs::permissions(p, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                           fs::perms::others_read | fs::perms::others_exec);
}

inline std::string read_text(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

inline RunResult sh(const std::string& command) { return run_program({"sh", "-c", command}); }

// Every file and symlink under `root`, relative, sorted.
inline std::set<std::string> tree(const fs::path& root) {
    std::set<std::string> out;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); ++it)
        if (!it->is_directory() || it->is_symlink()) out.insert(fs::relative(it->path(), root).generic_string());
    return out;
}

// The fixture projects, built once per test run by Debian's pip (setuptools, gcc for the C
// extension): console and GUI entry points, .data/scripts (one #!python, one shell), .data/headers,
// .data/data, a C extension, and a PEP 420 namespace package.
struct FixtureWheels {
    TempDir dir;
    std::string fix_pkg;      // fix_pkg-1.2.0-cp311-cp311-linux_x86_64.whl (python minor of Debian's python)
    std::string ns_pkg;       // nsroot.alpha-0.1-py3-none-any.whl
    std::string python_version;   // "3.11"
};

inline const FixtureWheels& fixture_wheels() {
    static FixtureWheels w = [] {
        FixtureWheels f;
        fs::path fix = f.dir.path / "fix", ns = f.dir.path / "ns";
        write_text(fix / "setup.py",
                   "from setuptools import setup, Extension\n"
                   "setup(name='fix-pkg', version='1.2.0', packages=['fixpkg'],\n"
                   "      entry_points={'console_scripts': ['fix-hello = fixpkg.cli:main'], 'gui_scripts': ['fix-gui = fixpkg.cli:gui']},\n"
                   "      scripts=['scripts/fix-legacy', 'scripts/fix-shell'], headers=['include/fixpkg.h'],\n"
                   "      data_files=[('share/fixpkg', ['data/notes.txt'])],\n"
                   "      ext_modules=[Extension('fixpkg._speed', ['src/speed.c'])])\n");
        write_text(fix / "fixpkg/__init__.py", "from fixpkg._speed import add\n");
        write_text(fix / "fixpkg/cli.py", "def main():\n    print('hello from fixpkg')\n    return 0\n\ndef gui():\n    return 0\n");
        write_text(fix / "scripts/fix-legacy", "#!/usr/bin/env python\nprint('legacy script')\n", true);
        write_text(fix / "scripts/fix-shell", "#!/bin/sh\necho shell script\n", true);
        write_text(fix / "include/fixpkg.h", "#define FIXPKG 1\n");
        write_text(fix / "data/notes.txt", "notes\n");
        write_text(fix / "src/speed.c",
                   "#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n"
                   "static PyObject* add(PyObject* s, PyObject* a) { long x, y; if (!PyArg_ParseTuple(a, \"ll\", &x, &y)) return NULL; return PyLong_FromLong(x + y); }\n"
                   "static PyMethodDef m[] = {{\"add\", add, METH_VARARGS, \"\"}, {NULL, NULL, 0, NULL}};\n"
                   "static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, \"_speed\", NULL, -1, m};\n"
                   "PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&d); }\n");
        write_text(ns / "setup.py",
                   "from setuptools import setup, find_namespace_packages\n"
                   "setup(name='nsroot.alpha', version='0.1', packages=find_namespace_packages(include=['nsroot.*']))\n");
        write_text(ns / "nsroot/alpha/__init__.py", "X = 1\n");
        auto r = run_program({kDebianPython, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                              "-w", f.dir.str("out"), fix.string(), ns.string()});
        REQUIRE_MESSAGE(r.exit_code == 0, "pip wheel failed: " << r.out << r.err);
        for (const auto& e : fs::directory_iterator(f.dir.path / "out")) {
            std::string n = e.path().filename().string();
            if (n.rfind("fix_pkg-", 0) == 0) f.fix_pkg = e.path().string();
            if (n.rfind("nsroot.alpha-", 0) == 0) f.ns_pkg = e.path().string();
        }
        auto v = run_program({kDebianPython, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"});
        f.python_version = v.out.substr(0, v.out.find('\n'));
        return f;
    }();
    return w;
}

// A venv made by envlock on Debian's python.
inline install::BaseInterpreter debian_base() {
    return install::find_interpreter(fixture_wheels().python_version, {"/usr/bin"});
}

// Writes a wheel (zip) with Python's zipfile: `files` name -> content; RECORD is generated with
// correct hashes unless `record` is given. `modes` sets unix modes (a symlink: 0120777).
inline void make_wheel(const std::string& path, const std::map<std::string, std::string>& files,
                       const std::string& record = "", const std::map<std::string, int>& modes = {}) {
    TempDir d;
    std::string spec;
    int i = 0;
    for (const auto& [name, content] : files) {
        write_text(d.path / std::to_string(i), content);
        int mode = modes.count(name) ? modes.at(name) : 0100644;
        spec += name + "\t" + std::to_string(i) + "\t" + std::to_string(mode) + "\n";
        ++i;
    }
    write_text(d.path / "spec", spec);
    write_text(d.path / "record", record);
    auto r = run_program({kDebianPython, "-c",
        "import base64, hashlib, sys, zipfile\n"
        "d, out = sys.argv[1], sys.argv[2]\n"
        "rows, entries = [], []\n"
        "for line in open(d + '/spec').read().splitlines():\n"
        "    name, idx, mode = line.split('\\t')\n"
        "    data = open(d + '/' + idx, 'rb').read()\n"
        "    entries.append((name, data, int(mode)))\n"
        "    if not name.endswith('/RECORD'):\n"
        "        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()\n"
        "        rows.append('%s,sha256=%s,%d' % (name, h, len(data)))\n"
        "record = open(d + '/record').read()\n"
        "with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:\n"
        "    for name, data, mode in entries:\n"
        "        info = zipfile.ZipInfo(name)\n"
        "        info.external_attr = mode << 16\n"
        "        info.compress_type = zipfile.ZIP_DEFLATED\n"
        "        if name.endswith('/RECORD'):\n"
        "            data = (record or '\\n'.join(rows + [name + ',,']) + '\\n').encode()\n"
        "        z.writestr(info, data)\n",
        d.str(), path});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
}

// The minimal metadata of a wheel named demo 1.0.
inline std::map<std::string, std::string> demo_wheel_files() {
    return {{"demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"},
            {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
            {"demo-1.0.dist-info/RECORD", ""},
            {"demo/__init__.py", "VALUE = 42\n"}};
}

}  // namespace envlock::test
