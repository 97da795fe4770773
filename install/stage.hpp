#pragma once
// The transaction's moving parts on disk: where the stage, journal and lock sit (in the
// `.envlock/` folder beside a prefix), copying the live prefix into the stage (hardlinks), the atomic swap, and recovery
// of an interrupted swap. transaction.cpp strings them together.
#include <filesystem>
#include <functional>
#include <string>
#include <unordered_set>

namespace envlock::install {

struct StagePaths {
    std::filesystem::path prefix;    // absolute, normalized
    // The folder of the files below: `.envlock/` beside the prefix (the prefix's parent itself
    // where that is the default `.envlock/`), so a project's `git status` shows none of them.
    // Beside, not inside: the prefix is what the swap renames, and the stage must be on its
    // filesystem.
    std::filesystem::path helpers;
    std::filesystem::path lock, journal, stage, scratch, old;
};

// EnvironmentError-free: InputError when the prefix is "/" or has no name.
StagePaths stage_paths(const std::filesystem::path& prefix);

// Creates p.helpers with a `.gitignore` of "*" in it (as uv does in a venv), so the helper
// files, and the default prefix inside, stay out of git.
void make_helper_dir(const StagePaths& p);

// A fresh random id for a transaction (16 hex digits).
std::string new_generation();

// The generation recorded in a tree's .envlock/state.json, "" when none can be read.
std::string generation_of(const std::filesystem::path& tree);

// Journal: written (fsync'd, renamed in) before the stage exists, removed after cleanup.
void write_journal(const StagePaths& p, const std::string& generation, const std::string& command);

// Copies the tree at `from` into `to` (created) with hardlinks (copies where links are
// refused), symlinks as symlinks; skips the prefix-relative paths in `omit` and the
// __pycache__ entries of omitted .py files; a directory emptied only by omissions is not
// re-created. `warn` hears about special files it skips.
void copy_tree(const std::filesystem::path& from, const std::filesystem::path& to,
               const std::unordered_set<std::string>& omit, const std::function<void(const std::string&)>& warn);

// Flushes the stage to disk, then swaps it with the prefix in one rename (renameat2
// RENAME_EXCHANGE; the first install is a plain rename; filesystems without exchange get
// two renames, which recovery also understands). Afterwards the old tree is at p.stage.
void swap_in(const StagePaths& p);

// See recover_prefix() in transaction.hpp.
std::string recover(const StagePaths& p);

// Deletes the tree and everything in it, ignoring what is already gone.
void remove_tree_quietly(const std::filesystem::path& dir);

}  // namespace envlock::install
