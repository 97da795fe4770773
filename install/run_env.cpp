#include "install/run_env.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "fetch/files.hpp"
#include "install/installed.hpp"
#include "install/python_env.hpp"
#include "fetch/process.hpp"
#include "resolver/knowledge/knowledge.hpp"
#include "resolver/specs/errors.hpp"

extern char** environ;

namespace envlock::install {

namespace fs = std::filesystem;

namespace {

std::string major_minor(const std::string& v) {
    size_t a = v.find('.');
    if (a == std::string::npos) return v;
    size_t b = v.find('.', a + 1);
    return v.substr(0, b);
}

// The CUDA release a toolkit directory holds: version.json (CUDA >= 11.1), version.txt (older),
// else what its nvcc prints.
std::string toolkit_version(const fs::path& dir) {
    std::error_code ec;
    if (fs::exists(dir / "version.json", ec)) {
        try {
            auto j = nlohmann::json::parse(read_text_file((dir / "version.json").string()));
            if (j.contains("cuda") && j["cuda"].contains("version")) return j["cuda"]["version"].get<std::string>();
        } catch (const std::exception&) {
        }
    }
    if (fs::exists(dir / "version.txt", ec)) {
        std::string t = read_text_file((dir / "version.txt").string());   // "CUDA Version 10.2.89"
        auto pos = t.find_first_of("0123456789");
        if (pos != std::string::npos) return t.substr(pos, t.find_first_not_of("0123456789.", pos) - pos);
    }
    if (fs::exists(dir / "bin/nvcc", ec)) {
        auto r = run_process({(dir / "bin/nvcc").string(), "--version"}, 20);
        auto pos = r.out.find("release ");
        if (r.exit_code == 0 && pos != std::string::npos) {
            pos += 8;
            return r.out.substr(pos, r.out.find_first_not_of("0123456789.", pos) - pos);
        }
    }
    return "";
}

std::string sh_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'') out += "'\\''";
        else out.push_back(c);
    }
    return out + "'";
}

void set_var(RunEnvironment& env, const std::string& key, const std::string& value) {
    for (auto& [k, v] : env.set)
        if (k == key) {
            v = value;
            return;
        }
    env.set.emplace_back(key, value);
    env.unset.erase(std::remove(env.unset.begin(), env.unset.end(), key), env.unset.end());
}

void unset_var(RunEnvironment& env, const std::string& key) {
    env.set.erase(std::remove_if(env.set.begin(), env.set.end(), [&](const auto& kv) { return kv.first == key; }), env.set.end());
    if (std::find(env.unset.begin(), env.unset.end(), key) == env.unset.end()) env.unset.push_back(key);
}

}  // namespace

std::string cmake_cuda_archs(const std::string& torch_cuda_arch_list) {
    auto list = knowledge::parse_arch_list(torch_cuda_arch_list);
    std::string out;
    for (int sm : list.sass) {
        bool ptx = std::find(list.ptx.begin(), list.ptx.end(), sm) != list.ptx.end();
        out += (out.empty() ? "" : ";") + std::to_string(sm) + (ptx ? "" : "-real");
    }
    return out;
}

std::string pypi_nvcc_home_in(const std::string& prefix, const Lock& lock) {
    const auto& tc = lock.toolchain;
    if (tc.nvcc_from.rfind("pypi:", 0) != 0 || prefix.empty()) return "";
    std::string home = knowledge::pypi_nvcc_home(tc.nvcc_from.substr(5), tc.nvcc);
    if (home.empty()) return "";
    // The venv's or conda python's purelib: lib/pythonX.Y/site-packages, whichever X.Y is there.
    std::error_code ec;
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(fs::path(prefix) / "lib", ec))
        if (e.path().filename().string().rfind("python3", 0) == 0 && fs::is_directory(e.path() / "site-packages", ec))
            found.push_back(e.path() / "site-packages" / home);
    std::sort(found.begin(), found.end());
    for (const auto& f : found)
        if (fs::exists(f / "bin/nvcc", ec)) return f.string();
    return found.empty() ? "" : found.front().string();
}

std::string locked_system_cc(const Lock& lock, const std::string& path_env) {
    const auto& tc = lock.toolchain;
    if (tc.gcc_from.rfind("system:", 0) != 0) return "";
    std::error_code ec;
    std::string named = tc.gcc_from.substr(7);
    if (!named.empty()) return fs::exists(named, ec) ? named : "";
    std::string major = tc.gcc.substr(0, tc.gcc.find('.'));
    for (const std::string name : {"gcc-" + major, std::string("gcc")}) {
        size_t pos = 0;
        while (pos <= path_env.size()) {
            size_t end = path_env.find(':', pos);
            if (end == std::string::npos) end = path_env.size();
            fs::path candidate = fs::path(path_env.substr(pos, end - pos)) / name;
            pos = end + 1;
            if (candidate.parent_path().empty() || ::access(candidate.c_str(), X_OK) != 0) continue;
            auto r = run_process({candidate.string(), "-dumpfullversion"}, 30);
            std::string v = r.exit_code == 0 ? r.out.substr(0, r.out.find_first_of("\r\n")) : "";
            if (v.substr(0, v.find('.')) == major) return candidate.string();
        }
    }
    return "";
}

std::string locked_cuda_home(const std::string& prefix, const Lock& lock) {
    const auto& tc = lock.toolchain;
    if (tc.nvcc.empty()) return "";
    if (tc.nvcc_from.rfind("conda:", 0) == 0) return prefix;
    if (tc.nvcc_from.rfind("pypi:", 0) == 0) return pypi_nvcc_home_in(prefix, lock);
    std::string want = major_minor(tc.nvcc);
    std::vector<fs::path> candidates;
    if (tc.nvcc_from.rfind("system:", 0) == 0) candidates.emplace_back(tc.nvcc_from.substr(7));
    candidates.emplace_back("/usr/local/cuda-" + want);
    candidates.emplace_back("/usr/local/cuda");
    candidates.emplace_back("/opt/cuda");
    std::error_code ec;
    for (const auto& c : candidates)
        if (fs::exists(c / "bin/nvcc", ec) && major_minor(toolkit_version(c)) == want) return c.lexically_normal().string();
    return "";
}

std::map<std::string, std::string> current_environment() {
    std::map<std::string, std::string> out;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        size_t eq = kv.find('=');
        if (eq != std::string::npos) out[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return out;
}

RunEnvironment run_environment(const std::string& prefix_in, const Lock* lock, const std::map<std::string, std::string>& parent) {
    std::error_code ec;
    fs::path prefix = fs::absolute(prefix_in, ec).lexically_normal();
    if (prefix.has_filename() == false) prefix = prefix.parent_path();
    bool conda = fs::is_directory(prefix / "conda-meta", ec);
    bool venv = fs::exists(prefix / "pyvenv.cfg", ec);
    if (!conda && !venv && !fs::is_directory(prefix / "bin", ec))
        throw InputError(prefix.string() + " is not an environment envlock installed (no conda-meta/, pyvenv.cfg or bin/); "
                         "run `envlock install` first or pass --prefix");
    RunEnvironment env;
    env.prefix = prefix.string();

    // PATH: the env's bin first; a previously active env's bin is dropped so its tools do not
    // shadow this one's.
    std::vector<std::string> drop;
    for (const char* k : {"CONDA_PREFIX", "VIRTUAL_ENV"})
        if (auto it = parent.find(k); it != parent.end() && !it->second.empty()) drop.push_back(it->second + "/bin");
    std::vector<std::string> path = {(prefix / "bin").string()};
    std::string cuda_home = lock ? locked_cuda_home(prefix.string(), *lock) : "";
    if (!cuda_home.empty() && cuda_home != prefix.string()) path.push_back(cuda_home + "/bin");
    if (auto it = parent.find("PATH"); it != parent.end()) {
        size_t pos = 0;
        const std::string& p = it->second;
        while (pos <= p.size()) {
            size_t end = p.find(':', pos);
            if (end == std::string::npos) end = p.size();
            std::string part = p.substr(pos, end - pos);
            if (!part.empty() && std::find(drop.begin(), drop.end(), part) == drop.end() &&
                std::find(path.begin(), path.end(), part) == path.end())
                path.push_back(part);
            pos = end + 1;
        }
    }
    std::string joined;
    for (const auto& p : path) joined += (joined.empty() ? "" : ":") + p;
    set_var(env, "PATH", joined);

    if (conda) {
        set_var(env, "CONDA_PREFIX", prefix.string());
        set_var(env, "CONDA_DEFAULT_ENV", prefix.string());
        unset_var(env, "VIRTUAL_ENV");
    } else {
        set_var(env, "VIRTUAL_ENV", prefix.string());
        unset_var(env, "CONDA_PREFIX");
    }
    unset_var(env, "PYTHONHOME");   // would point the env's python at another stdlib

    // conda's per-env variables: conda-meta/state (CEP 32) and etc/conda/env_vars.d/*.json.
    auto apply_vars = [&](const fs::path& file, bool nested) {
        try {
            auto j = nlohmann::json::parse(read_text_file(file.string()));
            const auto& vars = nested ? j.value("env_vars", nlohmann::json::object()) : j;
            for (auto it = vars.begin(); it != vars.end(); ++it)
                if (it.value().is_string()) set_var(env, it.key(), it.value().get<std::string>());
        } catch (const std::exception& e) {
            env.notes.push_back("ignored " + file.string() + ": not the JSON object conda writes");
        }
    };
    std::vector<fs::path> var_files;
    for (const auto& e : fs::directory_iterator(prefix / "etc/conda/env_vars.d", ec))
        if (e.path().extension() == ".json") var_files.push_back(e.path());
    std::sort(var_files.begin(), var_files.end());
    for (const auto& f : var_files) apply_vars(f, false);
    if (fs::exists(prefix / "conda-meta/state", ec)) apply_vars(prefix / "conda-meta/state", true);

    if (lock) {
        for (const auto& [k, v] : lock->spec.env) set_var(env, k, v);
        const auto& tc = lock->toolchain;
        if (!tc.nvcc.empty()) {
            if (cuda_home.empty())
                env.notes.push_back("the lock builds with CUDA " + tc.nvcc + " (" + tc.nvcc_from +
                                    "), which is not on this machine: CUDA_HOME is not set");
            else
                set_var(env, "CUDA_HOME", cuda_home);
        }
        if (!tc.cuda_arch_list.empty()) {
            set_var(env, "TORCH_CUDA_ARCH_LIST", tc.cuda_arch_list);
            try {
                set_var(env, "CUDAARCHS", cmake_cuda_archs(tc.cuda_arch_list));
            } catch (const Error& e) {
                env.notes.push_back(std::string("CUDAARCHS is not set: ") + e.what());
            }
        }
        if (tc.gcc_from.rfind("system:", 0) == 0) {
            std::string found = locked_system_cc(*lock, parent.count("PATH") ? parent.at("PATH") : std::string());
            fs::path cc = found.empty() ? fs::path(tc.gcc_from.substr(7).empty() ? "gcc " + tc.gcc : tc.gcc_from.substr(7)) : fs::path(found);
            std::string name = cc.filename().string();
            fs::path cxx = cc.parent_path() / (name.rfind("gcc", 0) == 0 ? "g++" + name.substr(3) : name);
            if (!fs::exists(cc, ec)) {
                env.notes.push_back("the lock's host compiler " + cc.string() + " is not on this machine: CC/CXX are not set");
            } else {
                set_var(env, "CC", cc.string());
                if (fs::exists(cxx, ec)) {
                    set_var(env, "CXX", cxx.string());
                    set_var(env, "NVCC_CCBIN", cxx.string());   // nvcc's default -ccbin (CUDA >= 11.5 reads it)
                } else {
                    env.notes.push_back("no " + cxx.string() + " beside the lock's " + cc.string() + ": CXX is not set");
                }
            }
        }
        // conda compilers (gcc_from "conda:…") set CC/CXX in their own activate.d scripts.
    }

    std::vector<fs::path> scripts;
    for (const auto& e : fs::directory_iterator(prefix / "etc/conda/activate.d", ec))
        if (e.path().extension() == ".sh") scripts.push_back(e.path());
    std::sort(scripts.begin(), scripts.end());
    for (const auto& s : scripts) env.activate_scripts.push_back(s.string());
    std::vector<fs::path> undo;
    for (const auto& e : fs::directory_iterator(prefix / "etc/conda/deactivate.d", ec))
        if (e.path().extension() == ".sh") undo.push_back(e.path());
    std::sort(undo.begin(), undo.end());
    for (const auto& s : undo) env.deactivate_scripts.push_back(s.string());
    return env;
}

std::map<std::string, std::string> before_activation(std::map<std::string, std::string> current) {
    auto listed = current.find("_ENVLOCK_VARS");
    if (listed == current.end()) return current;
    // Names separated by spaces (fish exports a list that way; its *PATH lists with colons, as PATH itself).
    std::istringstream in(listed->second);
    for (std::string k; in >> k;) {
        if (auto old = current.find("_ENVLOCK_OLD_" + k); old != current.end()) current[k] = old->second;
        else current.erase(k);
    }
    for (auto it = current.begin(); it != current.end();)
        it = it->first.rfind("_ENVLOCK_", 0) == 0 ? current.erase(it) : std::next(it);
    return current;
}

Shell parse_shell(const std::string& name) {
    if (name == "bash") return Shell::bash;
    if (name == "zsh") return Shell::zsh;
    if (name == "fish") return Shell::fish;
    if (name == "posix" || name == "sh" || name == "dash") return Shell::posix;
    throw InputError("--shell " + name + ": expected bash, zsh, fish or posix");
}

namespace {

// Every variable the hook touches, once, in order: those it sets, then those it unsets.
std::vector<std::string> touched_vars(const RunEnvironment& env) {
    std::vector<std::string> out;
    for (const auto& [k, v] : env.set)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    for (const auto& k : env.unset)
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    return out;
}

std::string fish_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\\' || c == '\'') out += '\\';
        out += c;
    }
    return out + "'";
}

std::vector<std::string> split_path(const std::string& p) {
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= p.size()) {
        size_t end = p.find(':', pos);
        if (end == std::string::npos) end = p.size();
        if (end > pos) out.push_back(p.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

std::string posix_hook(const RunEnvironment& env) {
    auto vars = touched_vars(env);
    std::string out = "# envlock: " + env.prefix + "\n";
    out += "if command -v envlock_deactivate >/dev/null 2>&1; then envlock_deactivate; fi\n";
    // The values before this env, kept to put back: _ENVLOCK_OLD_X, absent when X was unset.
    for (const auto& k : vars)
        out += "if [ -n \"${" + k + "+x}\" ]; then export _ENVLOCK_OLD_" + k + "=\"$" + k + "\"; else unset _ENVLOCK_OLD_" + k + "; fi\n";
    std::string names;
    for (const auto& k : vars) names += (names.empty() ? "" : " ") + k;
    out += "export _ENVLOCK_VARS=" + sh_quote(names) + "\n";
    for (const auto& k : env.unset) out += "unset " + k + "\n";
    for (const auto& [k, v] : env.set) out += "export " + k + "=" + sh_quote(v) + "\n";
    out += "envlock_deactivate() {\n";
    for (const auto& sc : env.deactivate_scripts) out += "  . " + sh_quote(sc) + "\n";
    for (const auto& k : vars)
        out += "  if [ -n \"${_ENVLOCK_OLD_" + k + "+x}\" ]; then export " + k + "=\"$_ENVLOCK_OLD_" + k + "\"; else unset " + k +
               "; fi; unset _ENVLOCK_OLD_" + k + "\n";
    out += "  unset _ENVLOCK_VARS\n  unset -f envlock_deactivate\n  hash -r 2>/dev/null || true\n}\n";
    for (const auto& sc : env.activate_scripts) out += ". " + sh_quote(sc) + "\n";
    out += "hash -r 2>/dev/null || true\n";
    return out;
}

std::string fish_hook(const RunEnvironment& env) {
    auto vars = touched_vars(env);
    auto value = [](const std::string& k, const std::string& v) {
        if (k != "PATH") return fish_quote(v);
        std::string list;   // fish's PATH is a list
        for (const auto& part : split_path(v)) list += (list.empty() ? "" : " ") + fish_quote(part);
        return list;
    };
    std::string out = "# envlock: " + env.prefix + "\n";
    out += "functions -q envlock_deactivate; and envlock_deactivate\n";
    for (const auto& k : vars)
        out += "if set -q " + k + "; set -gx _ENVLOCK_OLD_" + k + " $" + k + "; else; set -e _ENVLOCK_OLD_" + k + "; end\n";
    std::string names;
    for (const auto& k : vars) names += " " + fish_quote(k);
    out += "set -gx _ENVLOCK_VARS" + names + "\n";
    for (const auto& k : env.unset) out += "set -e " + k + "\n";
    for (const auto& [k, v] : env.set) out += "set -gx " + k + " " + value(k, v) + "\n";
    out += "function envlock_deactivate\n";
    for (const auto& k : vars)
        out += "    if set -q _ENVLOCK_OLD_" + k + "; set -gx " + k + " $_ENVLOCK_OLD_" + k + "; else; set -e " + k + "; end; set -e _ENVLOCK_OLD_" +
               k + "\n";
    out += "    set -e _ENVLOCK_VARS\n    functions -e envlock_deactivate\nend\n";
    // conda's activate.d scripts are POSIX shell: fish cannot source them.
    for (const auto& sc : env.activate_scripts) out += "# not sourced (POSIX shell, not fish): " + sc + "\n";
    return out;
}

}  // namespace

std::string shell_hook(const RunEnvironment& env, Shell shell) {
    return shell == Shell::fish ? fish_hook(env) : posix_hook(env);
}

std::string shell_hook_json(const RunEnvironment& env) {
    nlohmann::json vars = nlohmann::json::object();
    for (const auto& [k, v] : env.set) vars[k] = v;
    nlohmann::json j = {{"prefix", env.prefix}, {"environment-variables", vars}, {"unset", env.unset},
                        {"activate-scripts", env.activate_scripts}, {"deactivate-scripts", env.deactivate_scripts}};
    return j.dump(2) + "\n";
}

bool environment_current(const std::string& prefix, const Lock& lock) {
    std::optional<PrefixState> state;
    try {
        state = read_state(prefix);
    } catch (const Error&) {
        return false;   // a damaged record: install repairs it
    }
    if (!state) return false;
    std::set<std::string> installed, wanted;
    std::string venv;
    for (const auto& p : state->packages) {
        if (p.kind == "venv") venv = p.version;
        else installed.insert(p.id);
    }
    for (const auto& p : lock.packages) wanted.insert(package_id(p));
    if (installed != wanted) return false;
    // A venv lock: the venv's base interpreter must be of the lock's Python.
    std::string python = locked_python(lock);
    bool has_conda_python = std::any_of(lock.packages.begin(), lock.packages.end(),
                                        [](const LockedPackage& p) { return p.kind == Ecosystem::conda && p.name == "python"; });
    if (!has_conda_python && !python.empty() && venv.rfind(python, 0) != 0) return false;
    return true;
}

std::string missing_in_environment(const RunEnvironment& env, const std::vector<std::string>& argv) {
    if (argv.empty()) return "";
    const std::string& cmd = argv[0];
    if (cmd.find('/') != std::string::npos) return "";
    auto tool = [&](const std::string& stem) {
        if (cmd.rfind(stem, 0) != 0) return false;
        std::string rest = cmd.substr(stem.size());
        return rest.empty() || std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
    };
    if (!tool("pip") && !tool("python")) return "";
    std::error_code ec;
    if (fs::exists(fs::path(env.prefix) / "bin" / cmd, ec)) return "";
    if (tool("pip"))
        return cmd + ": the environment " + env.prefix + " has no pip (a venv gets none: `envlock install --seed` adds one, or add pip to the requirements and resolve again), "
               "and the host's would install into another Python";
    return cmd + ": the environment " + env.prefix + " has no " + cmd + ", and the host's is another Python";
}

int exec_in_environment(const RunEnvironment& env, const std::map<std::string, std::string>& parent,
                        const std::vector<std::string>& argv) {
    if (argv.empty()) throw InputError("run: no command given (envlock run [--prefix DIR] -- COMMAND [ARGS…])");
    std::map<std::string, std::string> vars = parent;
    for (const auto& k : env.unset) vars.erase(k);
    for (const auto& [k, v] : env.set) vars[k] = v;
    std::vector<std::string> storage;
    for (const auto& [k, v] : vars) storage.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : storage) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::vector<std::string> args;
    if (!env.activate_scripts.empty()) {
        // Activation scripts are shell code meant to be sourced (conda sources them in the
        // user's shell); bash sources them, then becomes the command.
        args = {"bash", "-c", "while [ \"$1\" != -- ]; do . \"$1\" || exit $?; shift; done; shift; exec \"$@\"", "envlock-run"};
        args.insert(args.end(), env.activate_scripts.begin(), env.activate_scripts.end());
        args.push_back("--");
    }
    args.insert(args.end(), argv.begin(), argv.end());
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    // The command is looked up in the new PATH (execvpe would search the caller's).
    std::string exe = args[0];
    if (exe.find('/') == std::string::npos) {
        std::string found;
        const std::string& path = vars["PATH"];
        size_t pos = 0;
        while (pos <= path.size() && found.empty()) {
            size_t end = path.find(':', pos);
            if (end == std::string::npos) end = path.size();
            std::string dir = end > pos ? path.substr(pos, end - pos) : ".";
            std::string candidate = dir + "/" + exe;
            if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) found = candidate;
            pos = end + 1;
        }
        if (found.empty()) {
            std::fprintf(stderr, "envlock run: %s: command not found in the environment's PATH\n", exe.c_str());
            return 127;
        }
        exe = found;
    }
    ::execve(exe.c_str(), cargv.data(), envp.data());
    std::fprintf(stderr, "envlock run: cannot execute %s: %s\n", exe.c_str(), std::strerror(errno));
    return 126;
}

}  // namespace envlock::install
