#pragma once
// The state of one inference run, shared by its two halves: infer.cpp (files, packages,
// extension scan) and infer_doc_commands.cpp (the shell commands in install docs).
// Private to resolver/infer*.cpp.
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "resolver/infer/infer.hpp"
#include "resolver/infer/parts.hpp"

namespace envlock::infer {

inline bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

inline bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

inline std::string filename_of(const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A location inside the repo ("" is the root); outside ("../x", "/abs", "?") it has no files.
inline bool inside_repo(const std::string& dir) { return !starts_with(dir, "..") && !starts_with(dir, "/") && dir != "?"; }

inline std::string in_field(const std::string& dir) { return dir.empty() ? "." : dir; }

struct DocState {
    std::string cwd;                       // relative to the repo root, absolute ("/ws", in an image); "?" when unknown
    std::vector<std::string> self_dirs;    // where the docs clone (or an image copies) the repo itself
    std::map<std::string, std::string> copies;        // image path -> repo path (a Dockerfile's COPY)
    std::map<std::string, std::size_t> source_dirs;   // clone dir -> index in spec.sources
    bool install_context = true;           // the block sits under prose about installing (scripts are followed)

    std::map<std::string, std::string> vars;          // shell variables a script set to a directory (DIR=$(pwd))
    std::string script_dir = "?";          // directory of the script being read ("?" in a doc's own blocks)

    // $NAME and ${NAME} of the variables above; "?" for any other expansion.
    std::string expand(const std::string& text) const {
        std::string out;
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] != '$') {
                out += text[i];
                continue;
            }
            bool braced = i + 1 < text.size() && text[i + 1] == '{';
            std::size_t b = i + (braced ? 2 : 1), e = b;
            while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
            auto it = vars.find(text.substr(b, e - b));
            if (e == b || it == vars.end() || (braced && (e >= text.size() || text[e] != '}'))) return "?";
            out += it->second;
            i = braced ? e : e - 1;
            // the checkout's root is "": `$DIR/mycpp` is "mycpp", not "/mycpp"
            if (it->second.empty() && out.empty() && i + 1 < text.size() && text[i + 1] == '/') ++i;
        }
        return out;
    }

    std::string resolve(const std::string& raw) const {
        auto rel = contains(raw, "$") ? expand(raw) : raw;
        if (starts_with(rel, "~") || rel == "?") return "?";
        // `${ROOT}/x` is where ROOT points, wherever the shell is now.
        bool from_var = starts_with(raw, "$");
        if (cwd == "?" && !starts_with(rel, "/") && !from_var) return "?";
        auto p = join_path(starts_with(rel, "/") || from_var ? std::string() : cwd, rel);
        for (const auto& [image_path, repo_path] : copies) {
            if (p == image_path) return repo_path;
            if (starts_with(p, image_path + "/")) return join_path(repo_path, p.substr(image_path.size() + 1));
        }
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
    std::set<std::string> extension_dirs;   // directories already recorded as a build
    // A `conda install/create` without --override-channels, or an environment.yml without
    // `nodefaults`, searches conda's `defaults` after the channels it names.
    bool implied_defaults = false;
    // `pip install X -f …/{cu_version}/{torch_version}/…` and `mim install X`: X and where.
    std::vector<std::pair<std::vector<std::string>, Provenance>> templates;

    // Whether a git URL is this repo itself: one of the checkout's remotes, or a repo of the
    // checkout's name. A checkout is never a source of itself.
    bool is_self(const std::string& url) const;
    // Bookkeeping: inferred-from, de-duplicated requirements and notes.
    void used(const std::string& file);
    static void add_unique(std::vector<std::string>& list, const std::string& value);
    void requirement(const SpecRequirement& r);
    void note(const std::string& kind, const std::string& text, const std::string& why, const Provenance& from);
    // A Python version the repo states. Packaging metadata and a python image's tag constrain
    // whatever Python the env gets (either ecosystem: a venv's interpreter, or conda's python);
    // prose passes "conda", as before.
    void python(const std::string& constraint, const Provenance& from, const std::string& ecosystem = "");
    void python_version_file();   // .python-version (uv, pyenv): the venv's interpreter
    // A git source (deduplicated by URL); returns its index in spec.sources.
    std::size_t source(const std::string& url, const std::string& source_name, const std::string& rev, const Provenance& from);
    // One requirement or location from a requirements file, environment.yml or pip command line.
    void pip_item(const PipItem& item, const std::string& base_dir, const Provenance& from, int depth, const DocState* doc);
    // Requirement files, package metadata and builds (infer.cpp).
    void requirements_file(const std::string& path, const Provenance& via, bool constraint, int depth = 0);
    bool has_files_under(const std::string& dir) const;
    void install_dir(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc);
    void package(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc);
    // A directory of .gitmodules the checkout lacks: its repository becomes a git source. True if it was one.
    bool submodule(const std::string& dir, const std::string& command, const Provenance& from);
    void extension(const std::string& dir, const PackageInfo& info, const std::string& command, const Provenance& from);
    // Install docs and their shell commands (infer_doc_commands.cpp).
    void markdown(const std::string& path);
    static std::string trimmed(std::string s);
    static std::vector<std::string> program(const ShellCommand& cmd);
    static bool install_step(const ShellCommand& cmd);
    static bool make_script(const std::vector<std::string>& w);
    void run(const ShellCommand& cmd, DocState& doc, const Provenance& from);
    static std::string env_prefix(const ShellCommand& cmd);
    void pip_install(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from);
    void conda(const ShellCommand& cmd, const std::vector<std::string>& w, DocState& doc, const Provenance& from);
    void git(const std::vector<std::string>& w, DocState& doc, const Provenance& from);
    // A shell script an install step runs or sources, read the way a doc's shell block is.
    void script(const std::string& path, DocState& doc, const Provenance& via, int depth);
    // A Dockerfile the docs point to (infer_dockerfile.cpp): FROM, RUN, ENV, WORKDIR, COPY.
    // `context` is the build context inside the repo (COPY sources are relative to it).
    void dockerfile(const std::string& path, const std::string& context, const Provenance& via);
    void base_image(const std::string& args, const Provenance& from);
    // `docker build [-f FILE] CONTEXT` in a doc: the Dockerfile it builds (read after the docs).
    void docker(const std::vector<std::string>& w, DocState& doc, const Provenance& from);
    void pending_dockerfiles();
    // A cloned project whose build compiles CUDA ops (mmcv, apex, spconv, detectron2 …):
    // `text` is the documented command that builds it.
    void source_ops(std::size_t source, const std::string& text, const Provenance& from);
    // An environment variable set by `export` or a Dockerfile's ENV.
    void env_var(const std::string& name, const std::string& value, const std::string& text, const Provenance& from, bool image);

    struct PendingDockerfile { std::string path, context; Provenance via; };
    std::vector<PendingDockerfile> dockerfiles;   // pointed to by docs, read once the docs are done
    std::set<std::string> followed;         // scripts and Dockerfiles already read
    std::string current_text;               // the doc command being followed, as written
    int script_depth = 0;
    // Files no doc step mentioned, and what scanning finds (infer.cpp).
    void environment_file(const std::string& path, const Provenance& via);
    void root_files();
    void scan_extensions();
    void unreferenced_requirement_files();
    void unpinned_sources();
    // The OpenMMLab templates, followed when the docs give no concrete page (doc_commands.cpp).
    void openmmlab_templates();
    // torch and Python versions the docs state in prose, when no command pins them (prose.cpp).
    void prose_versions(const std::vector<std::string>& docs);
};

}  // namespace envlock::infer
