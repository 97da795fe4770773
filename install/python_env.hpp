#pragma once
// Python environments: where an env's Python files go (its install scheme), which base
// interpreters the machine has, and creating a virtual environment (PEP 405) on one of them.
#include <string>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock::install {

// The install scheme of one env, as sysconfig names the paths. All absolute.
struct PythonLayout {
    std::string prefix;
    std::string version;       // "3.11"
    std::string interpreter;   // what shebangs name: <prefix>/bin/python
    std::string purelib, platlib, scripts, data;
    std::string headers;       // a wheel's .data/headers go to <headers>/<project name>
};

// A venv, as pip and uv lay it out: lib/pythonX.Y/site-packages, bin, headers in include/site/pythonX.Y.
PythonLayout venv_layout(const std::string& prefix, const std::string& version);
// A conda prefix (posix_prefix scheme): headers in include/pythonX.Y[m]; site-packages moved by the
// python record's python_site_packages_path (CEP 17) when it has one.
PythonLayout conda_layout(const std::string& prefix, const std::string& version,
                          const std::string& python_site_packages_path = "");

struct BaseInterpreter {
    std::string executable;      // real path of a CPython that is not itself a venv's
    std::string version;         // "3.11.2"
    std::string implementation;  // "CPython"
};

// Where to look for interpreters, in order: $PATH, /usr/local/bin, /usr/bin, pyenv's and uv's
// managed versions.
std::vector<std::string> default_interpreter_dirs();

// Every distinct base interpreter found as python3.X / python3 / python in `dirs` (each asked once
// for its version; venv interpreters are followed to their base). With `probe_cache` (a directory),
// each answer is kept there and reused while the interpreter's file (and pyvenv.cfg) is unchanged.
std::vector<BaseInterpreter> find_interpreters(const std::vector<std::string>& dirs, const std::string& probe_cache = "");

// The first interpreter whose version matches `version` ("3.11" any patch, "3.11.2" exactly).
// EnvironmentError (exit 3) naming the version, where it looked and what it found otherwise.
BaseInterpreter find_interpreter(const std::string& version, const std::vector<std::string>& dirs,
                                 const std::string& probe_cache = "");

// A venv at `prefix` on `base`, laid out as uv does: pyvenv.cfg, bin/python -> base (absolute),
// python3 and python3.X -> python, lib/pythonX.Y/site-packages, lib64 -> lib, .gitignore.
// An existing pyvenv.cfg on another base is replaced; existing site-packages are kept.
void create_venv(const std::string& prefix, const BaseInterpreter& base);

// `install --seed` (as `uv venv --seed`): pip for a venv that has none. The wheel is the newest
// pip-*.whl among `find_links` (local folders the spec names), then the base interpreter's own
// ensurepip wheels, then the distribution's (/usr/share/python-wheels, Debian's python3-pip-whl);
// pip installs itself from it (`python pip.whl/pip install pip.whl`, no index). Returns what it
// did ("pip 23.0.1 from /usr/share/python-wheels/…"), "" when the venv has pip already;
// EnvironmentError naming where it looked when there is no such wheel or pip fails.
std::string seed_pip(const std::string& prefix, const std::vector<std::string>& find_links);

// The Python version a lock wants: its conda python's version; without one, the spec's python
// ("3.8"), else the one CPython minor its cpXY wheels agree on. "" when the lock says nothing.
std::string locked_python(const Lock& lock);

}  // namespace envlock::install
