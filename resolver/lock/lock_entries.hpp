#pragma once
// What a lock's entries say of themselves, checked without any index: each entry is complete
// (a URL, a sha256 or md5, a commit for a git source) and agrees with its own file name (a
// version edited by hand is caught). `check` and `install` both refuse what this finds.
#include <string>
#include <vector>

#include "resolver/lock/lock.hpp"

namespace envlock {

// Why one entry is incomplete or contradicts its URL's file name; empty when it is sound.
std::vector<std::string> entry_problems(const LockedPackage& package);

// Every entry's problems, each as "<name> <version>: <why>".
std::vector<std::string> incomplete_entries(const Lock& lock);

// How a message names an entry: "<lock_file>:<line>: <name> <version>" (the line where read_lock
// found the entry; left out for a lock not read from a file).
std::string lock_entry_where(const std::string& lock_file, const LockedPackage& package);

}  // namespace envlock
