#pragma once
// A source repository the way the paper repos pin one: a git repository with one commit
// and tag per mmdet3d release, a setup.py building a small CUDA extension with
// torch.utils.cpp_extension, and requirements files carrying the facts' pins.
#include <string>
#include <vector>

#include "tests/mirror/model.hpp"

namespace envlock::mirror {

// Creates `dir` as a git repository (needs `git` on PATH; throws EnvironmentError when it
// is missing or fails). Commits are made with fixed authors and dates, so the commit ids
// are the same on every build. Returns the tags created ("v0.17.1", …).
std::vector<std::string> make_mmdet3d_repo(const std::string& dir, const std::vector<Mmdet3dRelease>& releases);

// Stand-in repositories for the other git sources the built-in recipes name (detectron2 at
// v0.6, panopticapi, cityscapesScripts, RADIal with its DBReader package, pypcd), each under
// `git_root`/<name> with a setup.py declaring its install_requires. Returns their names.
std::vector<std::string> make_source_repos(const std::string& git_root);

// Where each git repository under git/ stands in for: {upstream URL, folder under git/}, for
// the mirrors file (mmdetection3d and the stand-ins; boxops has no upstream).
std::vector<std::pair<std::string, std::string>> git_upstreams();

// The files of the tree at one release (relative path -> content), for tests.
std::vector<std::pair<std::string, std::string>> mmdet3d_tree(const Mmdet3dRelease& release);

// `boxops`: a CUDA extension that does not link torch (a CPython module whose setup.py sends
// its .cu to nvcc, -gencode per entry of CMake's CUDAARCHS, the CUDA runtime linked statically).
// make_boxops_repo creates `dir` as a git repository tagged v0.1.0; boxops_tree is its files.
std::vector<std::pair<std::string, std::string>> boxops_tree();
void make_boxops_repo(const std::string& dir);

}  // namespace envlock::mirror
