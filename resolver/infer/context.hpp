#pragma once
// The state of one inference run, shared by its two halves: infer.cpp (files, packages,
// extension scan) and infer_doc_commands.cpp (the shell commands in install docs).
// Private to resolver/infer*.cpp.
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
    void python(const std::string& constraint, const Provenance& from);
    // A git source (deduplicated by URL); returns its index in spec.sources.
    std::size_t source(const std::string& url, const std::string& source_name, const std::string& rev, const Provenance& from);
    // One requirement or location from a requirements file, environment.yml or pip command line.
    void pip_item(const PipItem& item, const std::string& base_dir, const Provenance& from, int depth, const DocState* doc);
    // Requirement files, package metadata and builds (infer.cpp).
    void requirements_file(const std::string& path, const Provenance& via, bool constraint, int depth = 0);
    bool has_files_under(const std::string& dir) const;
    void install_dir(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc);
    void package(const std::string& dir, const std::string& command, const Provenance& from, const DocState* doc);
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
    // Files no doc step mentioned, and what scanning finds (infer.cpp).
    void environment_file(const std::string& path, const Provenance& via);
    void root_files();
    void scan_extensions();
    void unreferenced_requirement_files();
    void unpinned_sources();
    // The OpenMMLab templates, followed when the docs give no concrete page (doc_commands.cpp).
    void openmmlab_templates();
};

}  // namespace envlock::infer
