#pragma once
// Git sources of a spec: pinning a tag or branch to its commit, and cloning a recipe's repo.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace envlock {

// A full 40-hex commit id.
bool is_git_commit(const std::string& rev);

// The commit `rev` names in the repository at `url` (a tag, a branch, HEAD, or a commit
// itself); nullopt when the remote cannot be reached or has no such ref.
std::optional<std::string> resolve_git_rev(const std::string& url, const std::string& rev);

// Whether a path inside a package directory is one of its packaging files: setup.py,
// setup.cfg, pyproject.toml, PKG-INFO, requirements*.txt and requirements/*.txt.
bool is_packaging_file(const std::string& relative_path);

// The packaging files of the package in `dir` ("" = the repository root) at `commit` of the
// repository at `url`, by path relative to `dir`; read without a checkout, from a bare
// repository kept under `cache_dir`/git (a shallow fetch of the commit, else of `rev`, else
// of everything). nullopt when the commit cannot be had.
std::optional<std::map<std::string, std::string>> git_packaging_files(const std::string& url, const std::string& commit,
                                                                      const std::string& rev, const std::string& dir,
                                                                      const std::filesystem::path& cache_dir);

// Makes the bare repository `bare_dir` hold `commit` of the repository at `url` with its
// history (the commit alone where the server allows it, else `rev`, else every branch and
// tag), under the branch locked/<commit>, so a plain `git clone` of the folder has it, and
// `rev` (a tag or branch name) as a tag where the folder has none of that name yet; HEAD
// names a locked branch, and `git update-server-info` lets a static HTTP server serve it
// (git's dumb protocol). A new repository is made beside `bare_dir` and renamed into place.
// EnvironmentError naming the URL when the commit cannot be had.
void mirror_git_commit(const std::string& url, const std::string& commit, const std::string& rev,
                       const std::filesystem::path& bare_dir);

// git clone URL DIR, then check out REV. EnvironmentError (exit 3) naming the URL on failure;
// an existing non-empty DIR is left alone and used as it is.
void clone_at(const std::string& url, const std::string& rev, const std::string& dir);

}  // namespace envlock
