// Inference: which files are followed, in which order, and how their pieces merge into a Spec.
//
// Order: the install docs' shell blocks first (they are what the authors ran), then the repo's
// own requirements.txt, packaging metadata and environment.yml when no doc step read them, then
// extension builds found by scanning (make.sh, setup.py with CUDAExtension, .cu directories).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "resolver/infer.hpp"
#include "resolver/infer_parts.hpp"

namespace envlock {

namespace {

using namespace infer;

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string filename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A location inside the repo ("" is the root); outside ("../x", "/abs", "?") it has no files.
bool inside_repo(const std::string& dir) { return !starts_with(dir, "..") && !starts_with(dir, "/") && dir != "?"; }

std::string in_field(const std::string& dir) { return dir.empty() ? "." : dir; }

// Variables whose documented value describes the author's machine, not the environment.
bool machine_specific(const std::string& var) {
    static const std::set<std::string> names = {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "PYTHONPATH",
                                                "CUDA_VISIBLE_DEVICES", "CPATH", "LIBRARY_PATH", "HOME"};
    return names.count(var) != 0;
}

// Prose before a code block that says the block is not the main path.
std::string block_mode(const std::string& context) {
    auto c = lowercase(context);
    if (contains(c, "optional")) return "optional";
    if (contains(c, "alternativ")) return "alternative";
    return "";
}

bool shell_info(const std::string& info) {
    auto first = lowercase(info.substr(0, info.find_first_of(" \t{")));
    static const std::set<std::string> ok = {"",        "bash",          "sh",         "shell", "console", "zsh",
                                             "shell-session", "sh-session", "shellscript", "terminal", "cmd"};
    return ok.count(first) != 0;
}

struct DocState {
    std::string cwd;                       // relative to the repo root; "?" when unknown
    std::vector<std::string> self_dirs;    // where the docs clone the repo itself
    std::map<std::string, std::size_t> source_dirs;   // clone dir -> index in spec.sources

    std::string resolve(const std::string& rel) const {
        if (cwd == "?" || starts_with(rel, "/") || starts_with(rel, "~") || contains(rel, "$")) return "?";
        auto p = join_path(cwd, rel);
        for (const auto& self : self_dirs) {
            if (p == self) return "";
            if (starts_with(p, self + "/")) return p.substr(self.size() + 1);
        }
        return p;
    }
    // The clone a directory lies in, and the directory's path inside it.
    std::optional<std::pair<std::size_t, std::string>> source_of(const std::string& dir) const {
        for (const auto& [root, index] : source_dirs) {
            if (dir == root) return std::make_pair(index, std::string());
            if (starts_with(dir, root + "/")) return std::make_pair(index, dir.substr(root.size() + 1));
        }
        return std::nullopt;
    }
};

struct Inference {
    const RepoFiles& repo;
    std::string name;
    Spec spec;
    std::set<std::string> read_files;       // requirement files already followed
    std::set<std::string> installed_dirs;   // packages whose metadata was read
    std::set<std::string> extension_dirs;

    void used(const std::string& file) {
        if (std::find(spec.inferred_from.begin(), spec.inferred_from.end(), file) == spec.inferred_from.end())
            spec.inferred_from.push_back(file);
    }
    static void add_unique(std::vector<std::string>& list, const std::string& value) {
        if (std::find(list.begin(), list.end(), value) == list.end()) list.push_back(value);
    }
    void requirement(const SpecRequirement& r) {
        for (const auto& have : spec.requirements)
            if (have.text == r.text && have.ecosystem == r.ecosystem) return;
        spec.requirements.push_back(r);
        if (!r.from.file.empty()) used(r.from.file);
    }
    void note(const std::string& kind, const std::string& text, const std::string& why, const Provenance& from) {
        for (const auto& n : spec.notes)
            if (n.kind == kind && n.text == text && n.from.file == from.file && n.from.line == from.line) return;
        spec.notes.push_back({kind, text, why, from});
    }
    void python(const std::string& constraint, const Provenance& from) {
        if (spec.python.empty()) spec.python = constraint;
        std::string text = "python";
        for (char c : constraint)
            if (c != ' ') text += c;
        if (!constraint.empty() && std::isdigit(static_cast<unsigned char>(constraint[0]))) text = "python=" + constraint;
        requirement({text, "conda", from});
    }

    std::size_t source(const std::string& url, const std::string& source_name, const std::string& rev,
                       const Provenance& from) {
        auto git = normalize_git_url(url);
        for (std::size_t i = 0; i < spec.sources.size(); ++i) {
            if (spec.sources[i].git == git) {
                if (spec.sources[i].rev.empty() && !rev.empty()) {
                    spec.sources[i].rev = rev;
                    spec.sources[i].from = from;
                }
                return i;
            }
        }
        spec.sources.push_back({source_name.empty() ? repo_basename(url) : source_name, git, rev, from, ""});
        used(from.file);
        return spec.sources.size() - 1;
    }

    // --- requirement files -------------------------------------------------------------------

    void requirements_file(const std::string& path, const Provenance& via, bool constraint, int depth = 0) {
        if (depth > 10) return;
        if (path == "?" || !inside_repo(path) || !repo.has(path)) {
            note("missing", path, "referenced by an install step but not in the checkout", via);
            return;
        }
        if (!read_files.insert(path).second) return;
        used(path);
        auto base = parent_dir(path);
        for (const auto& item : read_requirements_txt(*repo.get(path))) {
            Provenance from{path, item.line};
            if (constraint && item.kind == PipItem::Kind::requirement) {
                note("constraint", item.value, "pip constraint (-c): limits the version if installed, does not require it",
                     from);
                continue;
            }
            pip_item(item, base, from, depth, nullptr);
        }
    }

    // One requirement or location from a requirements file, environment.yml or a pip command line.
    void pip_item(const PipItem& item, const std::string& base_dir, const Provenance& from, int depth,
                  const DocState* doc) {
        using K = PipItem::Kind;
        auto resolve = [&](const std::string& rel) { return doc ? doc->resolve(rel) : join_path(base_dir, rel); };
        switch (item.kind) {
            case K::requirement:
                requirement({item.value, "pypi", from});
                break;
            case K::include:
                requirements_file(resolve(item.value), from, false, depth + 1);
                break;
            case K::constraint:
                requirements_file(resolve(item.value), from, true, depth + 1);
                break;
            case K::find_links:
                if (contains(item.value, "://")) {
                    add_unique(spec.find_links, item.value);
                    used(from.file);
                } else {
                    note("ignored", "--find-links " + item.value, "a local directory of the author's machine", from);
                }
                break;
            case K::index_url:
                if (std::find(spec.indexes.begin(), spec.indexes.end(), item.value) == spec.indexes.end())
                    spec.indexes.insert(spec.indexes.begin(), item.value);
                used(from.file);
                break;
            case K::extra_index_url:
                if (spec.indexes.empty()) spec.indexes.push_back("https://pypi.org/simple");
                add_unique(spec.indexes, item.value);
                used(from.file);
                break;
            case K::vcs: {
                auto i = source(item.value, item.egg, item.rev, from);
                if (spec.sources[i].install.empty()) spec.sources[i].install = item.editable ? "pip install -e ." : "pip install .";
                break;
            }
            case K::local: {
                auto dir = resolve(item.value);
                install_dir(dir, item.editable ? "pip install -e ." : "pip install .", from, doc);
                break;
            }
            case K::url:
                note("ignored", item.value, "a direct archive URL; envlock locks index packages and git sources", from);
                break;
            case K::ignored:
                break;
        }
    }

    // --- installing a directory (pip install ., python setup.py develop, make.sh) -------------

    bool has_files_under(const std::string& dir) const {
        if (dir.empty()) return !repo.files.empty();
        auto it = repo.files.lower_bound(dir + "/");
        return it != repo.files.end() && starts_with(it->first, dir + "/");
    }

    void install_dir(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc) {
        if (doc) {
            if (auto src = doc->source_of(dir)) {
                auto& s = spec.sources[src->first];
                if (s.install.empty()) s.install = src->second.empty() ? command : "cd " + src->second + " && " + command;
                // A clone that is not in the checkout: its install command is all we know.
                if (!has_files_under(dir)) return;
            }
        }
        if (dir == "?" || !inside_repo(dir)) return;
        if (!installed_dirs.insert(dir).second) {
            // A second build of an already-built extension directory is another way to do the same.
            if (extension_dirs.count(dir) && !from.file.empty())
                note("alternative", command, "another build of " + in_field(dir) + "; the first one documented is used",
                     from);
            return;
        }
        package(dir, command, from, doc);
    }

    void package(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc) {
        auto at = [&](const char* file) { return dir.empty() ? std::string(file) : dir + "/" + file; };
        std::vector<std::pair<std::string, PackageInfo>> infos;
        if (auto* t = repo.get(at("pyproject.toml"))) infos.emplace_back(at("pyproject.toml"), read_pyproject(*t, at("pyproject.toml")));
        if (auto* t = repo.get(at("setup.cfg"))) infos.emplace_back(at("setup.cfg"), read_setup_cfg(*t, at("setup.cfg")));
        if (auto* t = repo.get(at("setup.py"))) infos.emplace_back(at("setup.py"), read_setup_py(*t, at("setup.py")));
        if (infos.empty() && !from.file.empty())
            note("ignored", command, "no setup.py, setup.cfg or pyproject.toml in " + in_field(dir), from);
        for (auto& [file, info] : infos) {
            bool contributed = false;
            for (auto& r : info.install_requires) {
                requirement(r);
                contributed = true;
            }
            for (const auto& [txt, line] : info.requirement_files) {
                auto path = join_path(dir, txt);
                if (repo.has(path)) requirements_file(path, {file, line}, false);
                contributed = true;
            }
            if (!info.python_requires.empty()) {
                python(info.python_requires, info.python_from);
                contributed = true;
            }
            for (auto& e : info.extras) note(e.kind, e.text, e.why, e.from);
            for (auto& b : info.build_requires)
                note("build", b.text, "build requirement; pip installs it in an isolated build environment", b.from);
            if (!info.name.empty() && doc) {
                if (auto src = doc->source_of(dir); src && src->second.empty()) spec.sources[src->first].name = info.name;
            }
            if (!info.extensions.empty()) {
                extension(dir, info, command, from.file.empty() ? Provenance{file, info.extension_line} : from);
                contributed = true;
            }
            if (contributed) used(file);
        }
        // A package of this checkout with no compiled code is still built and installed here
        // (EchoFusion's vendored evaluator): record it so the installer runs its command.
        bool in_source = doc && doc->source_of(dir);
        if (!infos.empty() && !extension_dirs.count(dir) && !in_source) {
            PackageInfo plain;
            for (const auto& [file, info] : infos)
                if (plain.name.empty()) plain.name = info.name;
            if (plain.name.empty()) plain.name = dir.empty() ? name : filename_of(dir);
            extension_dirs.insert(dir);
            spec.extensions.push_back({plain.name, in_field(dir), command, "",
                                       from.file.empty() ? Provenance{infos.front().first, 1} : from});
            used(spec.extensions.back().from.file);
        }
    }

    void extension(const std::string& dir, const PackageInfo& info, const std::string& command, const Provenance& from) {
        if (!extension_dirs.insert(dir).second) return;
        SpecExtension e;
        e.name = info.extensions.size() == 1 || info.name.empty() ? info.extensions.front().module : info.name;
        e.in = in_field(dir);
        e.build = command;
        for (std::size_t i = 0; i < info.extensions.size(); ++i)
            e.import += (i ? ", " : "") + info.extensions[i].module;
        e.cuda = info.cuda;
        e.from = from;
        spec.extensions.push_back(e);
        used(from.file);
    }

    // --- install docs ------------------------------------------------------------------------

    void markdown(const std::string& path) {
        DocState doc;
        for (const auto& block : markdown_code_blocks(*repo.get(path))) {
            // The working directory carries over from block to block, as for a reader who
            // runs them in order in one terminal (EchoFusion's `cd mmdetection3d` and its
            // `pip install -v -e .` sit in separate blocks).
            if (!shell_info(block.info)) continue;
            auto mode = block_mode(block.context);
            for (const auto& cmd : shell_commands(block.text, block.first_line)) {
                Provenance from{path, cmd.line};
                if (cmd.commented_out) {
                    if (install_step(cmd)) note("alternative", cmd.text, "commented out in the doc", from);
                    continue;
                }
                if (!mode.empty() && install_step(cmd)) {
                    note(mode, cmd.text, "the doc presents this step as " + mode + ": \"" + trimmed(block.context) + "\"",
                         from);
                    continue;
                }
                if (install_step(cmd) && contains(lowercase(cmd.comment), "optional")) {
                    note("optional", cmd.text, "the doc's comment says optional", from);
                    continue;
                }
                run(cmd, doc, from);
            }
        }
    }

    static std::string trimmed(std::string s) {
        auto b = s.find_first_not_of(" \t*_#");
        auto e = s.find_last_not_of(" \t*_#.:");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    }

    // pip/conda/git/setup.py/make.sh/export: the commands that change the environment.
    static std::vector<std::string> program(const ShellCommand& cmd) {
        std::vector<std::string> w = cmd.words;
        while (!w.empty() && (w[0] == "sudo" || w[0] == "time")) w.erase(w.begin());
        if (w.size() >= 3 && starts_with(w[0], "python") && w[1] == "-m" && w[2] == "pip") {
            w.erase(w.begin(), w.begin() + 2);
            w[0] = "pip";
        }
        if (!w.empty() && (w[0] == "pip3" || starts_with(w[0], "pip3."))) w[0] = "pip";
        if (!w.empty() && (w[0] == "mamba" || w[0] == "micromamba")) w[0] = "conda";
        return w;
    }

    static bool install_step(const ShellCommand& cmd) {
        auto w = program(cmd);
        if (w.empty()) return false;
        if (w[0] == "pip" && w.size() > 1 && w[1] == "install") return true;
        if (w[0] == "conda" && w.size() > 1 && (w[1] == "install" || w[1] == "create")) return true;
        if (w[0] == "git" && w.size() > 1 && (w[1] == "clone" || w[1] == "checkout")) return true;
        if (starts_with(w[0], "python") && w.size() > 1 && ends_with(w[1], "setup.py")) return true;
        if (make_script(w)) return true;
        if (w[0] == "export") return true;
        return false;
    }

    static bool make_script(const std::vector<std::string>& w) {
        if (w.empty()) return false;
        if ((w[0] == "sh" || w[0] == "bash") && w.size() > 1 && ends_with(w[1], ".sh")) return true;
        return ends_with(w[0], "make.sh");
    }

    void run(const ShellCommand& cmd, DocState& doc, const Provenance& from) {
        auto w = program(cmd);
        if (w.empty()) return;
        const auto& p = w[0];
        if (p == "cd") {
            doc.cwd = w.size() > 1 ? doc.resolve(w[1]) : "?";
        } else if (p == "export") {
            for (std::size_t i = 1; i < w.size(); ++i) {
                auto eq = w[i].find('=');
                if (eq == std::string::npos) continue;
                auto var = w[i].substr(0, eq);
                if (machine_specific(var)) {
                    note("ignored", cmd.text, var + " describes the author's machine; envlock sets it for the lock", from);
                } else {
                    spec.env[var] = w[i].substr(eq + 1);
                    used(from.file);
                }
            }
        } else if (p == "pip" && w.size() > 1 && w[1] == "install") {
            pip_install(cmd, w, doc, from);
        } else if (p == "conda" && w.size() > 1) {
            conda(cmd, w, doc, from);
        } else if (p == "git" && w.size() > 1) {
            git(w, doc, from);
        } else if (starts_with(p, "python") && w.size() > 1 && ends_with(w[1], "setup.py")) {
            auto dir = doc.resolve(parent_dir(w[1]));
            std::string command = env_prefix(cmd) + "python setup.py";
            for (std::size_t i = 2; i < w.size(); ++i) command += " " + w[i];
            install_dir(dir, command, from, &doc);
        } else if (make_script(w)) {
            auto script_arg = w[0] == "sh" || w[0] == "bash" ? w[1] : w[0];
            auto script = doc.resolve(script_arg);
            auto dir = parent_dir(script);
            auto* text = repo.get(script);
            if (text && !contains(*text, "setup.py")) {
                note("ignored", cmd.text, "the script does not run a setup.py build", from);
                return;
            }
            install_dir(dir, env_prefix(cmd) + "sh " + filename_of(script), from, &doc);
        } else if ((p == "rm" || p == "cp" || p == "mv" || p == "sed" || p == "patch") && doc.source_of(doc.cwd)) {
            note("ignored", cmd.text, "modifies a cloned source; envlock builds the source as published", from);
        }
    }

    static std::string env_prefix(const ShellCommand& cmd) {
        std::string out;
        for (const auto& [k, v] : cmd.assignments) out += k + "=" + v + " ";
        return out;
    }

    void pip_install(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
        for (const auto& arg : w)
            if (contains(arg, "{") && contains(arg, "}")) {
                note("template", cmd.text, "a template with placeholders to fill in; a concrete example is followed", from);
                return;
            }
        static const std::set<std::string> with_value = {"-t", "--target", "--prefix", "--root", "--src",
                                                         "--upgrade-strategy", "--progress-bar", "--cache-dir", "--log",
                                                         "--config-settings", "-C", "--global-option", "--install-option",
                                                         "--only-binary", "--no-binary", "--platform", "--python-version",
                                                         "--implementation", "--abi", "--trusted-host", "--timeout",
                                                         "--retries", "--proxy"};
        for (std::size_t i = 2; i < w.size(); ++i) {
            auto arg = w[i];
            if (arg.empty()) continue;
            if (arg[0] != '-') {
                pip_item(classify_pip_argument(arg, false), doc.cwd, from, 0, &doc);
                continue;
            }
            std::string opt = arg, value;
            bool inline_value = false;
            if (starts_with(arg, "--") && contains(arg, "=")) {
                opt = arg.substr(0, arg.find('='));
                value = arg.substr(arg.find('=') + 1);
                inline_value = true;
            } else if (!starts_with(arg, "--") && arg.size() > 2 && std::string("rcfie").find(arg[1]) != std::string::npos) {
                opt = arg.substr(0, 2);   // -rrequirements.txt
                value = arg.substr(2);
                inline_value = true;
            }
            auto take = [&]() -> std::string {
                if (inline_value) return value;
                return i + 1 < w.size() ? w[++i] : std::string();
            };
            PipItem item;
            using K = PipItem::Kind;
            if (opt == "-r" || opt == "--requirement") {
                item.kind = K::include;
            } else if (opt == "-c" || opt == "--constraint") {
                item.kind = K::constraint;
            } else if (opt == "-f" || opt == "--find-links") {
                item.kind = K::find_links;
            } else if (opt == "-i" || opt == "--index-url") {
                item.kind = K::index_url;
            } else if (opt == "--extra-index-url") {
                item.kind = K::extra_index_url;
            } else if (opt == "-e" || opt == "--editable") {
                pip_item(classify_pip_argument(take(), true), doc.cwd, from, 0, &doc);
                continue;
            } else {
                if (with_value.count(opt) && !inline_value) ++i;
                continue;
            }
            item.value = take();
            pip_item(item, doc.cwd, from, 0, &doc);
        }
    }

    void conda(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
        const auto& sub = w[1];
        if (sub == "env" && w.size() > 2 && (w[2] == "create" || w[2] == "update")) {
            for (std::size_t i = 3; i + 1 < w.size(); ++i)
                if (w[i] == "-f" || w[i] == "--file") environment_file(doc.resolve(w[i + 1]), from);
            return;
        }
        if (sub != "install" && sub != "create") {
            if (sub == "update" || sub == "upgrade")
                note("ignored", cmd.text, "updates whatever the author had installed; the lock pins versions instead", from);
            return;
        }
        static const std::set<std::string> with_value = {"-n", "--name", "-p", "--prefix", "--solver", "--repodata-fn",
                                                         "--platform", "--subdir"};
        std::vector<std::string> channels;
        std::vector<std::string> packages;
        for (std::size_t i = 2; i < w.size(); ++i) {
            const auto& arg = w[i];
            if (arg == "-c" || arg == "--channel") {
                if (i + 1 < w.size()) channels.push_back(w[++i]);
            } else if (starts_with(arg, "--channel=")) {
                channels.push_back(arg.substr(10));
            } else if (arg == "--file") {
                if (i + 1 < w.size()) note("ignored", cmd.text, "conda --file lists are not read", from);
                ++i;
            } else if (with_value.count(arg)) {
                ++i;
            } else if (!arg.empty() && arg[0] == '-') {
                continue;
            } else {
                packages.push_back(arg);
            }
        }
        for (const auto& c : channels) add_unique(spec.channels, c);
        if (!channels.empty()) used(from.file);
        for (const auto& pkg : packages) {
            if (starts_with(pkg, "python=") || starts_with(pkg, "python==")) {
                auto v = pkg.substr(pkg.find_first_not_of("=", 6));
                if (spec.python.empty()) spec.python = v;
            }
            requirement({pkg, "conda", from});
        }
    }

    void git(const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
        if (w[1] == "clone") {
            std::string url, dir, branch;
            for (std::size_t i = 2; i < w.size(); ++i) {
                const auto& a = w[i];
                if (a == "-b" || a == "--branch") {
                    if (i + 1 < w.size()) branch = w[++i];
                } else if (a == "--depth" || a == "-o" || a == "--origin" || a == "-c" || a == "--config" ||
                           a == "--reference") {
                    ++i;
                } else if (!a.empty() && a[0] == '-') {
                    continue;
                } else if (url.empty()) {
                    url = a;
                } else if (dir.empty()) {
                    dir = a;
                }
            }
            if (url.empty()) return;
            auto base = repo_basename(url);
            auto target = doc.resolve(dir.empty() ? base : dir);
            if (lowercase(base) == lowercase(name)) {
                // The docs clone the repo itself: that directory is the checkout we are reading.
                if (target != "?") doc.self_dirs.push_back(join_path(doc.cwd, dir.empty() ? base : dir));
                return;
            }
            auto index = source(url, "", branch, from);
            if (target != "?") doc.source_dirs[target] = index;
        } else if (w[1] == "checkout" && w.size() > 2) {
            auto rev = w[2];
            if (rev == "-b" || rev == "-B" || rev == "--" || rev[0] == '-') return;
            if (auto src = doc.source_of(doc.cwd)) {
                spec.sources[src->first].rev = rev;
                spec.sources[src->first].from = from;
            }
        }
    }

    // --- environment.yml ---------------------------------------------------------------------

    void environment_file(const std::string& path, const Provenance& via) {
        if (!inside_repo(path) || !repo.has(path)) {
            note("missing", path, "referenced by an install step but not in the checkout", via);
            return;
        }
        if (!read_files.insert(path).second) return;
        auto env = read_environment_yml(*repo.get(path), path);
        used(path);
        for (const auto& c : env.channels) add_unique(spec.channels, c);
        for (const auto& r : env.conda) {
            if (starts_with(r.text, "python=") || starts_with(r.text, "python ")) {
                if (spec.python.empty()) spec.python = r.text.substr(r.text.find_first_not_of("= ", 6));
            }
            requirement(r);
        }
        for (const auto& item : env.pip) pip_item(item, parent_dir(path), {path, item.line}, 0, nullptr);
    }

    // --- what the docs did not mention -------------------------------------------------------

    void root_files() {
        if (repo.has("requirements.txt")) requirements_file("requirements.txt", {}, false);
        for (const char* env : {"environment.yml", "environment.yaml"})
            if (repo.has(env)) environment_file(env, {});
        if (!installed_dirs.count("") &&
            (repo.has("setup.py") || repo.has("pyproject.toml") || repo.has("setup.cfg"))) {
            installed_dirs.insert("");
            package("", "pip install -e .", {}, nullptr);
        }
    }

    void scan_extensions() {
        // make.sh scripts that run a setup.py build, then setup.py files that build torch extensions.
        for (const auto& [path, text] : repo.files) {
            if (filename_of(path) != "make.sh" || !contains(text, "setup.py")) continue;
            auto dir = parent_dir(path);
            if (installed_dirs.count(dir)) continue;
            if (auto* setup = repo.get(dir.empty() ? "setup.py" : dir + "/setup.py")) {
                auto info = read_setup_py(*setup, dir.empty() ? "setup.py" : dir + "/setup.py");
                if (!info.extensions.empty()) {
                    installed_dirs.insert(dir);
                    extension(dir, info, "sh make.sh", {path, 1});
                }
            }
        }
        for (const auto& [path, text] : repo.files) {
            if (filename_of(path) != "setup.py") continue;
            auto dir = parent_dir(path);
            if (installed_dirs.count(dir) || extension_dirs.count(dir)) continue;
            auto info = read_setup_py(text, path);
            if (info.extensions.empty()) continue;
            extension(dir, info, "python setup.py install", {path, info.extension_line});
        }
        // .cu sources that no build found above compiles.
        std::map<std::string, int> uncovered;
        for (const auto& [path, text] : repo.files) {
            if (!ends_with(lowercase(path), ".cu")) continue;
            bool covered = false;
            for (const auto& e : spec.extensions) {
                if (e.in == "." || starts_with(path, e.in + "/")) covered = true;
            }
            for (const auto& s : spec.sources)
                if (starts_with(path, s.name + "/")) covered = true;
            if (!covered) ++uncovered[parent_dir(path)];
        }
        for (const auto& [dir, count] : uncovered)
            note("ignored", in_field(dir),
                 std::to_string(count) + " .cu file(s) that no setup.py or make.sh found here builds", {dir, 0});
    }

    void unreferenced_requirement_files() {
        for (const auto& [path, text] : repo.files) {
            auto file = filename_of(path);
            bool is_req = (starts_with(file, "requirements") && ends_with(file, ".txt")) ||
                          ((starts_with(path, "requirements/") || contains(path, "/requirements/")) && ends_with(file, ".txt"));
            if (is_req && !read_files.count(path))
                note("ignored", path, "not referenced by any install step envlock followed", {path, 0});
        }
    }

    void unpinned_sources() {
        for (const auto& s : spec.sources)
            if (s.rev.empty())
                note("unpinned", s.git, "git source without a tag or commit: the lock pins the commit found at resolve time",
                     s.from);
    }
};

// Install docs in the order a reader meets them: README, INSTALL, then docs/ about installing.
std::vector<std::string> install_docs(const RepoFiles& repo) {
    std::vector<std::string> readme, install, docs;
    for (const auto& [path, text] : repo.files) {
        auto lower = lowercase(path);
        bool top = path.find('/') == std::string::npos;
        bool markdown = ends_with(lower, ".md") || ends_with(lower, ".markdown") || lower == "install";
        if (!markdown) continue;
        if (top && starts_with(lower, "readme")) readme.push_back(path);
        else if (top && starts_with(lower, "install")) install.push_back(path);
        else if (starts_with(lower, "docs/")) {
            auto file = filename_of(lower);
            if (contains(file, "install") || contains(file, "get_started") || contains(file, "getting_started") ||
                contains(file, "setup") || contains(file, "quick"))
                docs.push_back(path);
        }
    }
    std::vector<std::string> out = readme;
    out.insert(out.end(), install.begin(), install.end());
    out.insert(out.end(), docs.begin(), docs.end());
    return out;
}

}  // namespace

Spec infer_spec(const RepoFiles& repo, const std::string& name) {
    Inference inf{repo, name, {}, {}, {}, {}};
    inf.spec.name = name;
    for (const auto& doc : install_docs(repo)) inf.markdown(doc);
    inf.root_files();
    inf.scan_extensions();
    inf.unreferenced_requirement_files();
    inf.unpinned_sources();
    find_contradictions(inf.spec);
    return inf.spec;
}

}  // namespace envlock
