#pragma once
// `envlock check` proves a lock, not only its inputs: every package entry is complete and
// agrees with its own file name, every requirement of the spec and every dependency of every
// locked package names a package the lock has, and the files the spec was inferred from
// still have the content they had. Each problem names the package (or file) and why.
#include <string>
#include <vector>

#include "resolver/knowledge/knowledge.hpp"
#include "resolver/lock/lock.hpp"
#include "resolver/lock/lock_entries.hpp"

namespace envlock {

// incomplete_entries (entries that are incomplete or contradict their URL's file name) lives in
// resolver/lock/lock_entries.hpp, so that install refuses the same entries.

// Requirements of the spec and dependencies of locked packages that no package of the lock
// provides (a deleted or truncated entry). Markers are evaluated for the locked Python.
std::vector<std::string> unprovided_names(const Lock& lock);

// The solve's own self-check (resolver/solve/self_check) run on the locked packages: the spec's
// requirements, every package's depends and the targets' facts hold. Channel priority is not
// re-checked (the lock does not carry the records a channel did not contribute).
std::vector<std::string> self_check_problems(const Lock& lock, const knowledge::Knowledge& knowledge);

// Everything above, plus the inferred-from files (read relative to `lock_dir`) that changed.
std::vector<std::string> lock_problems(const Lock& lock, const std::string& lock_dir, const knowledge::Knowledge& knowledge);

}  // namespace envlock
