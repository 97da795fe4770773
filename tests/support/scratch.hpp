#pragma once
// Scratch folders for tests. Every folder a test makes lives under one root per test process
// in $TMPDIR, removed when the process exits: a suite run leaves nothing behind (it once left
// 29 GB in /tmp and filled a CI runner's disk). ENVLOCK_KEEP_SCRATCH=1 keeps the root and says where.
#include <filesystem>
#include <string_view>

namespace envlock::test {

// A new empty folder whose name starts with `tag`, e.g. scratch_dir("install-prefix").
std::filesystem::path scratch_dir(std::string_view tag);

}  // namespace envlock::test
