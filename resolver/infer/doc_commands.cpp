// The shell in install docs: which commands count, and what each one adds to the spec
// (pip install, conda create/install, git clone/checkout, cd, export, setup.py, make.sh).
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <utility>

#include "resolver/infer/context.hpp"
#include "resolver/specs/cuda_build.hpp"
#include "resolver/specs/pep508.hpp"

namespace envlock::infer {

namespace {

// Variables whose documented value describes the author's machine, not the environment.
bool machine_specific(const std::string& var) {
    static const std::set<std::string> names = {"PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "PYTHONPATH",
                                                "CUDA_VISIBLE_DEVICES", "CPATH", "LIBRARY_PATH", "HOME"};
    return names.count(var) != 0;
}

// Prose or a heading that presents a block for CPU-only machines ("On CPU platforms",
// "CPU only"): another way, not the one for a GPU target.
bool cpu_only(const std::string& lower) {
    // ("Building without a GPU" is a cross-build of CUDA code, not a CPU-only install.)
    for (const char* p : {"cpu only", "cpu-only", "cpuonly", "cpu platform", "only cpu", "for cpu", "on cpu", "cpu version"})
        if (contains(lower, p)) return true;
    return false;
}

// Prose before a code block, or the heading above it, that says the block is not the main
// path: {kind, how the doc puts it}.
std::pair<std::string, std::string> block_mode(const CodeBlock& block) {
    auto c = lowercase(block.context), h = lowercase(block.heading);
    auto quoted = [](const std::string& s) { return "\"" + Inference::trimmed(s) + "\""; };
    if (contains(c, "optional")) return {"optional", "the doc presents this step as optional: " + quoted(block.context)};
    if (contains(h, "optional")) return {"optional", "under the doc's heading " + quoted(block.heading)};
    if (contains(c, "alternativ")) return {"alternative", "the doc presents this step as alternative: " + quoted(block.context)};
    if (contains(h, "alternativ")) return {"alternative", "under the doc's heading " + quoted(block.heading)};
    if (cpu_only(c)) return {"alternative", "the doc gives this step for CPU-only machines: " + quoted(block.context)};
    if (cpu_only(h)) return {"alternative", "the doc gives this step for CPU-only machines, under " + quoted(block.heading)};
    return {"", ""};
}

// A word that stands for a choice the reader makes: "spconv-cuxxx", "cumm-cu1xx",
// "<CUDA_VERSION>", "${CUDA}", "{cu_version}".
bool placeholder(const std::string& word) {
    auto w = lowercase(word);
    if (contains(w, "cuxx") || contains(w, "cu1xx") || contains(w, "cu11x") || contains(w, "cu12x")) return true;
    auto lt = w.find('<');
    if (lt != std::string::npos && w.find('>', lt) != std::string::npos) return true;
    if (contains(w, "${") || (contains(w, "{") && contains(w, "}"))) return true;
    return false;
}

// A placeholder that stands for a CUDA variant of a project ("spconv-cuxxx", "cumm-cu1xx",
// "cupy-cuda<CUDA_VERSION>"): the requirement as the solver reads it, a choice among the
// projects that fill it ("spconv-cuxxx", "cupy-cudaxxx"); nullopt for any other placeholder.
std::optional<std::string> cuda_choice(const std::string& word) {
    static const std::regex slot(R"((<[^>]*>|\$\{[^}]*\}|\{[^}]*\}))");
    std::string w = std::regex_replace(word, slot, "xxx");
    auto end = w.find_first_of("=<>!~[;@ ");
    std::string name = pep508::normalize_name(w.substr(0, end));
    if (!cuda_placeholder(name)) return std::nullopt;
    return name + (end == std::string::npos ? "" : w.substr(end));
}

// OpenMMLab's wheel index, one page per CUDA and torch: `mim install` and the docs' template
// pick the page for the torch and CUDA at hand; envlock lets the solver pick (workflow expands
// the placeholders into the pages the knowledge base lists).
const char* kOpenMMLabPages = "https://download.openmmlab.com/mmcv/dist/{cu_version}/{torch_version}/index.html";

bool openmmlab_template(const std::string& url) {
    return contains(url, "download.openmmlab.com/mmcv/dist/") && contains(url, "{") && contains(url, "}");
}

// Prose that introduces installing, building or setting up: scripts run under it are read.
bool install_words(const std::string& text) {
    auto c = lowercase(text);
    for (const char* w : {"install", "setup", "set up", "environment", "env", "build", "compile", "requirement", "prerequisite",
                          "dependenc", "docker", "conda", "extension", "cuda", "getting started", "get started", "quick start"})
        if (contains(c, w)) return true;
    return false;
}

// `sh x.sh`, `bash -e x.sh`, `./x.sh`, `source x.sh`, `. x.sh` -> "x.sh"; "" otherwise.
std::string script_argument(const std::vector<std::string>& w) {
    if (w.empty()) return "";
    if (w[0] == "sh" || w[0] == "bash" || w[0] == "source" || w[0] == ".") {
        for (std::size_t i = 1; i < w.size(); ++i) {
            if (!w[i].empty() && w[i][0] == '-') continue;
            return ends_with(w[i], ".sh") ? w[i] : "";   // not `source activate env`
        }
        return "";
    }
    return ends_with(w[0], ".sh") ? w[0] : "";
}

// A path whose first part is a placeholder for the checkout ("ROOT_DIR/det3d/ops",
// "PATH_TO_REPO/x"): upper-case letters, digits and '_' only.
bool placeholder_part(const std::string& part) {
    if (part.size() < 3) return false;
    bool letter = false;
    for (char c : part) {
        if (std::islower(static_cast<unsigned char>(c))) return false;
        if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_')) return false;
        letter = letter || std::isupper(static_cast<unsigned char>(c));
    }
    return letter;
}

bool shell_info(const std::string& info) {
    auto first = lowercase(info.substr(0, info.find_first_of(" \t{")));
    static const std::set<std::string> ok = {"",        "bash",          "sh",         "shell", "console", "zsh",
                                             "shell-session", "sh-session", "shellscript", "terminal", "cmd"};
    return ok.count(first) != 0;
}

}  // namespace

void Inference::markdown(const std::string& path) {
    DocState doc;
    // A page about installing (INSTALL.md, docs/install.md) is install context throughout;
    // elsewhere the prose before a block decides whether scripts it runs are followed.
    bool install_page = install_words(filename_of(path)) && !starts_with(lowercase(filename_of(path)), "readme");
    for (const auto& block : markdown_code_blocks(*repo.get(path))) {
        doc.install_context = install_page || block.context.empty() || install_words(block.context);
        // The working directory carries over from block to block, as for a reader who
        // runs them in order in one terminal (EchoFusion's `cd mmdetection3d` and its
        // `pip install -v -e .` sit in separate blocks).
        if (!shell_info(block.info)) continue;
        auto [mode, mode_why] = block_mode(block);
        for (const auto& cmd : shell_commands(block.text, block.first_line)) {
            Provenance from{path, cmd.line};
            if (cmd.commented_out) {
                if (install_step(cmd)) note("alternative", cmd.text, "commented out in the doc", from);
                continue;
            }
            if (!mode.empty() && install_step(cmd)) {
                note(mode, cmd.text, mode_why, from);
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

std::string Inference::trimmed(std::string s) {
    auto b = s.find_first_not_of(" \t*_#");
    auto e = s.find_last_not_of(" \t*_#.:");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// pip/conda/git/setup.py/make.sh/export: the commands that change the environment.
std::vector<std::string> Inference::program(const ShellCommand& cmd) {
    std::vector<std::string> w = cmd.words;
    while (!w.empty() && (w[0] == "sudo" || w[0] == "time")) w.erase(w.begin());
    if (w.size() >= 3 && starts_with(w[0], "python") && w[1] == "-m" && w[2] == "pip") {
        w.erase(w.begin(), w.begin() + 2);
        w[0] = "pip";
    }
    if (!w.empty() && (w[0] == "pip3" || starts_with(w[0], "pip3."))) w[0] = "pip";
    if (!w.empty() && (w[0] == "mamba" || w[0] == "micromamba")) w[0] = "conda";
    // Inside a script's `if …; then pip install …; fi` the command follows the keyword.
    while (!w.empty() && (w[0] == "then" || w[0] == "do" || w[0] == "else" || w[0] == "{")) w.erase(w.begin());
    // `mim install X` is pip with OpenMMLab's wheel index for the torch and CUDA at hand.
    if (w.size() >= 2 && w[0] == "mim" && w[1] == "install") {
        w[0] = "pip";
        w.push_back("-f");
        w.push_back(kOpenMMLabPages);
    }
    return w;
}

bool Inference::install_step(const ShellCommand& cmd) {
    auto w = program(cmd);
    if (w.empty()) return false;
    if (w[0] == "pip" && w.size() > 1 && w[1] == "install") return true;   // `mim install` too (program())
    if (w[0] == "conda" && w.size() > 1 && (w[1] == "install" || w[1] == "create")) return true;
    if (w[0] == "git" && w.size() > 1 && (w[1] == "clone" || w[1] == "checkout")) return true;
    if (starts_with(w[0], "python") && w.size() > 1 && ends_with(w[1], "setup.py")) return true;
    // A script is an install step when its name says so (install.sh, make.sh, setup_env.sh),
    // not every `./tools/dist_train.sh` a doc shows.
    if (make_script(w) && install_words(filename_of(script_argument(w)))) return true;
    if (w[0] == "export") return true;
    return false;
}

bool Inference::make_script(const std::vector<std::string>& w) { return !script_argument(w).empty(); }

void Inference::run(const ShellCommand& cmd, DocState& doc, const Provenance& from) {
    auto w = program(cmd);
    // DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd), DIR=$(dirname "$0"): the script's own
    // folder. The words split the substitution, so its text decides; the rest is not a command.
    for (const auto& [name, value] : cmd.assignments)
        if ((starts_with(value, "$(") || starts_with(value, "`")) && doc.script_dir != "?" && contains(cmd.text, "dirname") &&
            (contains(cmd.text, "BASH_SOURCE") || contains(cmd.text, "$0"))) {
            doc.vars[name] = doc.script_dir;
            return;
        }
    // DIR=$(pwd), ROOT=`pwd`, SRC=/opt/src: a variable later commands use as a directory.
    for (const auto& [name, value] : cmd.assignments)
        if (w.empty()) {
            if (value == "$(pwd)" || value == "`pwd`" || value == "$PWD") doc.vars[name] = doc.cwd;
            else if (!value.empty() && value[0] == '/' && !contains(value, "$")) doc.vars[name] = join_path("", value);
        }
    if (w.empty()) return;
    const auto& p = w[0];
    current_text = cmd.text;
    if (p == "cd") {
        doc.cwd = w.size() > 1 ? doc.resolve(w[1]) : "?";
        // `cd ~` then `git clone <this repo>` and `cd <this repo>`: the checkout, wherever it is.
        if (doc.cwd == "?" && w.size() > 1 && lowercase(join_path("", w[1])) == lowercase(name)) doc.cwd = "";
        // `cd ROOT_DIR/det3d/ops/x` (a placeholder for the checkout), or `cd Repo/ext/x` from
        // wherever an earlier step left the shell: a path the checkout has.
        if (w.size() > 1 && doc.cwd != "?" && inside_repo(doc.cwd) && !has_files_under(doc.cwd)) {
            auto slash = w[1].find('/');
            auto head = w[1].substr(0, slash);
            auto rest = slash == std::string::npos ? std::string() : join_path("", w[1].substr(slash + 1));
            bool self = lowercase(head) == lowercase(name);
            if ((placeholder_part(head) || self) && (rest.empty() || has_files_under(rest))) doc.cwd = rest;
        }
    } else if (p == "docker") {
        docker(w, doc, from);
    } else if (p == "export") {
        for (std::size_t i = 1; i < w.size(); ++i) {
            auto eq = w[i].find('=');
            if (eq == std::string::npos) continue;
            env_var(w[i].substr(0, eq), w[i].substr(eq + 1), cmd.text, from, false);
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
        auto script_path = doc.resolve(script_argument(w));
        // Docs often leave the shell where an earlier section took it (`cd docker/`) and mean
        // the checkout's root: a script the checkout has there is that script, run from there.
        bool from_root = false;
        if (!repo.has(script_path) && !starts_with(script_argument(w), "/") && repo.has(join_path("", script_argument(w)))) {
            script_path = join_path("", script_argument(w));
            from_root = true;
        }
        auto dir = parent_dir(script_path);
        auto* text = repo.get(script_path);
        if (!text) {
            if (script_path != "?" && inside_repo(script_path) && doc.install_context)
                note("ignored", cmd.text, "the script is not in the checkout (an earlier step may download it)", from);
            return;
        }
        // An ops folder's make.sh that runs the setup.py beside it: that package is the build.
        auto setup = dir.empty() ? std::string("setup.py") : dir + "/setup.py";
        if (contains(*text, "setup.py") && repo.has(setup) && !read_setup_py(*repo.get(setup), setup).extensions.empty()) {
            install_dir(dir, env_prefix(cmd) + "sh " + filename_of(script_path), from, &doc);
            return;
        }
        if (!doc.install_context && !install_words(filename_of(script_path))) return;   // a training or data script
        if (from_root) doc.cwd = "";
        if (w[0] == "source" || w[0] == ".") {
            script(script_path, doc, from, 0);   // sourced: its cd and exports stay
        } else {
            DocState sub = doc;                  // a child shell: its cd does not come back
            script(script_path, sub, from, 0);
        }
    } else if ((p == "rm" || p == "cp" || p == "mv" || p == "sed" || p == "patch") && doc.source_of(doc.cwd)) {
        note("ignored", cmd.text, "modifies a cloned source; envlock builds the source as published", from);
    }
}

std::string Inference::env_prefix(const ShellCommand& cmd) {
    std::string out;
    for (const auto& [k, v] : cmd.assignments) out += k + "=" + v + " ";
    return out;
}

void Inference::pip_install(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
    // OpenMMLab's page template (`-f …/{cu_version}/{torch_version}/index.html`, and `mim
    // install`): one page per CUDA x torch. A concrete example in the docs is what they ran;
    // without one, the solver picks the page (Inference::openmmlab_templates).
    for (std::size_t i = 2; i < w.size(); ++i) {
        bool flag = (w[i] == "-f" || w[i] == "--find-links") && i + 1 < w.size() && openmmlab_template(w[i + 1]);
        bool joined = starts_with(w[i], "--find-links=") && openmmlab_template(w[i]);
        if (!flag && !joined) continue;
        note("template", cmd.text, "a template with placeholders; a concrete example is followed if the docs give one, "
             "else envlock picks OpenMMLab's page for the locked torch and CUDA", from);
        std::vector<std::string> packages;
        for (std::size_t j = 2; j < w.size(); ++j) {
            if (j == i || (flag && j == i + 1)) continue;
            if (!w[j].empty() && w[j][0] != '-') packages.push_back(w[j]);
        }
        templates.push_back({packages, from});
        return;
    }
    std::vector<std::string> chosen = w;
    for (std::size_t i = 2; i < w.size(); ++i) {
        const auto& arg = w[i];
        if (!placeholder(arg) || openmmlab_template(arg)) continue;
        // A CUDA variant to fill in ("spconv-cuxxx"): a choice the solver makes for the CUDA it
        // locks (Deliver 5). Any other slot (a path, a URL to fill in) is not a requirement.
        if (auto choice = cuda_choice(arg)) {
            chosen[i] = *choice;
            continue;
        }
        note("template", cmd.text, "'" + arg + "' is a placeholder for a choice the docs leave to the reader; "
             "put the one for the target in the spec", from);
        return;
    }
    if (chosen != w) {
        pip_install(cmd, chosen, doc, from);
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
        if (item.value.empty()) item = {K::missing_value, opt};   // "pip install -r" and the line ends
        pip_item(item, doc.cwd, from, 0, &doc);
    }
}

void Inference::conda(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
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
    bool override_channels = false;
    for (std::size_t i = 2; i < w.size(); ++i) {
        const auto& arg = w[i];
        if (arg == "--override-channels") {
            override_channels = true;
        } else if (arg == "-c" || arg == "--channel") {
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
    if (std::find(packages.begin(), packages.end(), "cpuonly") != packages.end()) {
        // conda's CPU-only pytorch builds: the doc's way for machines without a GPU.
        note("alternative", cmd.text, "installs cpuonly (CPU-only pytorch builds); envlock picks builds for the target's GPUs", from);
        return;
    }
    // conda searches the -c channels first, then the configured ones (`defaults` out of the
    // box) unless --override-channels (conda docs, "Managing channels").
    for (const auto& c : channels)
        if (c != "nodefaults") add_unique(spec.channels, c);
    if (!override_channels) implied_defaults = true;
    if (!channels.empty()) used(from.file);
    for (const auto& pkg : packages) {
        if (starts_with(pkg, "python=") || starts_with(pkg, "python==")) {
            auto v = pkg.substr(pkg.find_first_not_of("=", 6));
            if (spec.python.empty()) spec.python = v;
        }
        requirement({pkg, "conda", from});
    }
}

void Inference::openmmlab_templates() {
    for (const auto& link : spec.find_links)
        if (contains(link, "download.openmmlab.com/mmcv/dist/")) return;   // the docs' concrete page wins
    for (const auto& [packages, from] : templates) {
        add_unique(spec.find_links, kOpenMMLabPages);
        used(from.file);
        for (const auto& p : packages) requirement({p, "pypi", from});
    }
}

void Inference::git(const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
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
        if (is_self(url)) {
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

void Inference::env_var(const std::string& name, const std::string& value, const std::string& text, const Provenance& from, bool image) {
    if (machine_specific(name)) {
        note("ignored", text, name + " describes the author's machine; envlock sets it for the lock", from);
        return;
    }
    // An image's ENV also sets its locale, time zone, conda paths …: only build settings are kept.
    bool build_setting = starts_with(name, "TORCH_") || starts_with(name, "MMCV_") || name == "FORCE_CUDA" ||
                         contains(name, "CUDA_ARCH") || name == "MAX_JOBS";
    if (image && !build_setting) return;
    spec.env[name] = value;
    used(from.file);
}

void Inference::script(const std::string& path, DocState& doc, const Provenance& via, int) {
    if (script_depth > 4 || !followed.insert(path).second) return;
    ++script_depth;
    bool outer = doc.install_context;
    doc.install_context = true;   // what an install step runs is part of the install
    std::string outer_dir = doc.script_dir;
    doc.script_dir = parent_dir(path);
    for (const auto& cmd : shell_commands(*repo.get(path), 1)) {
        Provenance from{path, cmd.line};
        if (cmd.commented_out) {
            if (install_step(cmd)) note("alternative", cmd.text, "commented out in the script", from);
            continue;
        }
        run(cmd, doc, from);
    }
    doc.install_context = outer;
    doc.script_dir = outer_dir;
    --script_depth;
    (void)via;
}

void Inference::docker(const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
    if (w.size() < 2 || w[1] != "build") return;   // pull/run: a prebuilt image, nothing to read
    static const std::set<std::string> with_value = {"-t", "--tag", "--build-arg", "--network", "--target", "--platform", "--label",
                                                     "--cache-from", "--progress", "--secret", "--ssh", "-o", "--output",
                                                     "--iidfile", "--shm-size", "-m", "--memory"};
    std::string file, context;
    for (std::size_t i = 2; i < w.size(); ++i) {
        const auto& a = w[i];
        if (a == "-f" || a == "--file") {
            if (i + 1 < w.size()) file = w[++i];
        } else if (starts_with(a, "--file=")) {
            file = a.substr(7);
        } else if (with_value.count(a)) {
            ++i;
        } else if (!a.empty() && a[0] != '-' && context.empty()) {
            context = a;
        }
    }
    if (context.empty() || contains(context, "://")) return;
    auto ctx = doc.resolve(context);
    std::string path;
    if (!file.empty()) {
        path = doc.resolve(file);
    } else {
        for (const char* name : {"Dockerfile", "dockerfile"})
            if (path.empty() && repo.has(join_path(ctx, name))) path = join_path(ctx, name);
        if (path.empty()) path = join_path(ctx, "Dockerfile");
    }
    if (path == "?" || !inside_repo(path) || !repo.has(path)) {
        note("missing", path, "a Dockerfile an install step builds, but not in the checkout", from);
        return;
    }
    dockerfiles.push_back({path, ctx == "?" ? std::string() : ctx, from});
}

void Inference::source_ops(std::size_t index, const std::string& text, const Provenance& from) {
    const auto& s = spec.sources[index];
    auto project = lowercase(repo_basename(s.git));
    SpecExtension e;
    e.in = s.name;
    e.build = text;
    e.cuda = true;
    e.from = from;
    if (project == "mmcv") {
        // mmcv 1.x builds its CUDA ops (as mmcv-full) only with MMCV_WITH_OPS=1; 2.x always does.
        bool v1 = starts_with(s.rev, "v1.") || starts_with(s.rev, "1.");
        auto env = spec.env.find("MMCV_WITH_OPS");
        bool in_text = contains(text, "MMCV_WITH_OPS=1");
        if (v1 && !in_text && (env == spec.env.end() || env->second != "1")) return;
        if (v1 && !in_text) e.build = "MMCV_WITH_OPS=1 " + text;
        e.name = v1 ? "mmcv-full" : "mmcv";
        e.import = "mmcv._ext";
    } else if (project == "apex") {
        if (!contains(text, "cuda_ext")) return;   // without --cuda_ext apex is pure Python
        e.name = "apex";
        e.import = "amp_C";
    } else if (project == "spconv") {
        e.name = "spconv";
        e.import = "spconv";
    } else if (project == "detectron2") {
        e.name = "detectron2";
        e.import = "detectron2._C";
    } else if (project == "pytorch3d") {
        e.name = "pytorch3d";
        e.import = "pytorch3d._C";
    } else if (project == "kaolin") {
        e.name = "kaolin";
        e.import = "kaolin._C";
    } else {
        return;
    }
    for (const auto& have : spec.extensions)
        if (have.in == e.in) return;
    spec.extensions.push_back(e);
    used(from.file);
}

}  // namespace envlock::infer
