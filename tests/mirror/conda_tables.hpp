#pragma once
// The conda side of the mirror: records for the pytorch, nvidia, conda-forge and main
// (defaults-like) channels, generated from the tables plus the dependency shapes the real
// channels publish.
#include <string>
#include <vector>

#include "tests/mirror/model.hpp"

namespace envlock::mirror {

// Every record the mirror publishes, from the tables alone (no snapshot).
std::vector<CondaRecord> conda_records(const Tables& tables);

// Replaces the built-in pytorch-channel linux-64 records with the real ones from
// snapshots/rattler-pytorch-channel/linux-64/repodata.json (names, versions, builds,
// depends, constrains, features, timestamps kept; archives and digests are the mirror's).
// Returns false, leaving `records` untouched, when the snapshot file is absent.
bool layer_pytorch_snapshot(const std::string& shared_dir, std::vector<CondaRecord>& records);

// Names some record depends on that no record provides (virtual `__` packages excepted).
std::vector<std::string> missing_conda_names(const std::vector<CondaRecord>& records);

// A conda-forge stand-in record for each missing name, at the lowest version some
// dependency asks for, so name-level closure holds. Each is marked as a filler in its
// source. Returns how many were added.
int fill_conda_closure(std::vector<CondaRecord>& records);

// conda's `defaults` on the mirror: pkgs/main gets a copy of every conda-forge record whose
// name pkgs/main does not define itself (each marked as such in its source), so a
// `defaults`-only solve closes; pkgs/r gets a few R records. Returns how many were added.
int publish_defaults_stand_ins(std::vector<CondaRecord>& records);

}  // namespace envlock::mirror
