#pragma once
// Git sources of a spec: pinning a tag or branch to its commit, and cloning a recipe's repo.
#include <optional>
#include <string>

namespace envlock {

// A full 40-hex commit id.
bool is_git_commit(const std::string& rev);

// The commit `rev` names in the repository at `url` (a tag, a branch, HEAD, or a commit
// itself); nullopt when the remote cannot be reached or has no such ref.
std::optional<std::string> resolve_git_rev(const std::string& url, const std::string& rev);

// git clone URL DIR, then check out REV. EnvironmentError (exit 3) naming the URL on failure;
// an existing non-empty DIR is left alone and used as it is.
void clone_at(const std::string& url, const std::string& rev, const std::string& dir);

}  // namespace envlock
