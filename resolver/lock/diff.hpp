#pragma once
// What moved between two locks of one spec: packages added, removed, upgraded, downgraded or
// rebuilt (same version, another build or file), and the toolchain, in the lock's package
// order. `resolve` prints it after a re-resolve, as uv and pixi do; nothing moved = empty.
#include <string>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock {

struct PackageChange {
    enum class Kind { added, removed, upgraded, downgraded, rebuilt };
    Kind kind = Kind::added;
    Ecosystem ecosystem = Ecosystem::conda;
    std::string name;
    std::string before;   // version (and build, for a rebuild); empty when added
    std::string after;    // empty when removed
};

struct ToolchainChange {
    std::string field;    // "nvcc", "gcc", "cuda-arch-list"
    std::string before, after;
};

struct LockDiff {
    std::vector<PackageChange> packages;
    std::vector<ToolchainChange> toolchain;
    bool empty() const { return packages.empty() && toolchain.empty(); }
};

// Packages are matched by ecosystem and name (PyPI names as PEP 503 normalizes them); versions
// are ordered by the ecosystem's own rules (conda VersionOrder, PEP 440).
LockDiff diff_locks(const Lock& before, const Lock& after);

// One line a change: "Updated scipy 1.7.3 -> 1.10.1", "Added yapf 0.40.1", "Removed tqdm 4.62.0".
std::vector<std::string> describe(const LockDiff& diff);

std::string to_string(PackageChange::Kind kind);   // "added", "removed", "upgraded" …

}  // namespace envlock
