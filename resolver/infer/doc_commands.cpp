// The shell in install docs: which commands count, and what each one adds to the spec
// (pip install, conda create/install, git clone/checkout, cd, export, setup.py, make.sh).
#include <algorithm>
#include <set>
#include <utility>

#include "resolver/infer/context.hpp"

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
    for (const char* p : {"cpu only", "cpu-only", "cpuonly", "cpu platform", "only cpu", "for cpu", "on cpu", "cpu version",
                          "without gpu", "without a gpu", "no gpu"})
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

// OpenMMLab's wheel index, one page per CUDA and torch: `mim install` and the docs' template
// pick the page for the torch and CUDA at hand; envlock lets the solver pick (workflow expands
// the placeholders into the pages the knowledge base lists).
const char* kOpenMMLabPages = "https://download.openmmlab.com/mmcv/dist/{cu_version}/{torch_version}/index.html";

bool openmmlab_template(const std::string& url) {
    return contains(url, "download.openmmlab.com/mmcv/dist/") && contains(url, "{") && contains(url, "}");
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
    for (const auto& block : markdown_code_blocks(*repo.get(path))) {
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
    if (make_script(w)) return true;
    if (w[0] == "export") return true;
    return false;
}

bool Inference::make_script(const std::vector<std::string>& w) {
    if (w.empty()) return false;
    if ((w[0] == "sh" || w[0] == "bash") && w.size() > 1 && ends_with(w[1], ".sh")) return true;
    return ends_with(w[0], "make.sh");
}

void Inference::run(const ShellCommand& cmd, DocState& doc, const Provenance& from) {
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

std::string Inference::env_prefix(const ShellCommand& cmd) {
    std::string out;
    for (const auto& [k, v] : cmd.assignments) out += k + "=" + v + " ";
    return out;
}

void Inference::pip_install(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from) {
    for (std::size_t i = 2; i < w.size(); ++i) {
        const auto& arg = w[i];
        if (!placeholder(arg) || openmmlab_template(arg)) continue;
        // A package or URL to fill in ("spconv-cuxxx"): not a requirement as written.
        note("template", cmd.text, "'" + arg + "' is a placeholder for a choice (the CUDA variant …); "
             "put the one for the target in the spec", from);
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
            if (!inline_value && i + 1 < w.size() && openmmlab_template(w[i + 1])) {
                // One page per CUDA x torch. A concrete example in the docs is what they ran;
                // without one, the solver picks the page (Inference::openmmlab_templates).
                note("template", cmd.text, "a template with placeholders; a concrete example is followed if the docs give one, "
                     "else envlock picks OpenMMLab's page for the locked torch and CUDA", from);
                std::vector<std::string> packages;
                for (std::size_t j = 2; j < w.size(); ++j) {
                    if (j == i || j == i + 1) continue;
                    if (!w[j].empty() && w[j][0] != '-') packages.push_back(w[j]);
                }
                templates.push_back({packages, from});
                return;
            }
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

}  // namespace envlock::infer
