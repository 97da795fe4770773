#pragma once
// resolver/infer/ owns reading a checkout or a built-in recipe into a Spec with file:line
// provenance. It must not fetch indexes, solve, or know the knowledge base: a Spec says what the
// repo asks for, not whether it can be had.
//
// Inference: a paper repo's documented install (requirements files, setup.py, setup.cfg,
// pyproject.toml, environment.yml and the shell in its install docs) turned into a Spec whose
// every entry cites the file and line it came from. Nothing here solves; the solver reads
// the Spec. Commands the docs mark as optional or leave commented out are kept as notes,
// not followed.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "resolver/lock/spec.hpp"

namespace envlock {

// The files inference reads, by path relative to the repo root ('/'-separated). `.cu`
// sources are listed with empty content: only their location matters.
struct RepoFiles {
    std::map<std::string, std::string> files;
    std::vector<std::string> remotes;   // the checkout's git remote URLs, as .git/config has them

    bool has(const std::string& path) const { return files.count(path) != 0; }
    const std::string* get(const std::string& path) const {
        auto it = files.find(path);
        return it == files.end() ? nullptr : &it->second;
    }
};

// Collects README*, INSTALL*, docs/**/*.md, requirements*.txt, requirements/*.txt, setup.py,
// setup.cfg, pyproject.toml, environment.yml/.yaml and make.sh at any depth, and the paths
// of *.cu files. Skips .git, build/, dist/, node_modules and hidden directories.
// Throws InputError when `root` is not a readable directory.
RepoFiles collect_repo_files(const std::filesystem::path& root);

// A Python package's own requirements and distribution name, read statically the way
// inference reads a checkout: pyproject.toml [project] (or the files its setuptools dynamic
// dependencies name), setup.cfg [options], setup.py's setup(...) with the requirements files
// its install_requires reads. `files` are the package's packaging files by relative path.
// `known` is false when none of them declares the requirements in a way this can follow.
struct PackageRequirements {
    std::string name;                      // "mmdet3d"; "" when no file names it statically
    std::vector<std::string> requires_dist;   // PEP 508
    std::string requires_python;
    bool known = false;
};
PackageRequirements read_package_requirements(const std::map<std::string, std::string>& files);

// `name` is the repo's name (its directory name); a doc's `git clone` of a URL whose last
// part is this name is the repo itself, not a source to add.
Spec infer_spec(const RepoFiles& repo, const std::string& name);

}  // namespace envlock
