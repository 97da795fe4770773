#pragma once
// The name index of a cached repodata body, saved once beside its HTTP cache entry
// ("<entry>.names"): for each package name, where its records lie in the body. A warm resolve
// maps it and reads only the records of the names it reaches, as sharded repodata (CEP 16)
// does over the network; the body's other pages are never touched. For a .zst body the
// decoded document is saved in the same file, so a warm resolve decodes nothing.
//
// An index is used only for the one write of the entry it was made from: it keeps the
// entry's header line (whose random id changes with every write, see cache_write), the
// body's size and a sample of its bytes, and each position it gives is checked to land on a
// quoted file name of the right package and on one JSON object (else StaleNameIndex).
#include <optional>
#include <string>
#include <string_view>

#include "fetch/conda_repodata.hpp"
#include "fetch/padded_buffer.hpp"

namespace envlock::fetch {

// "<entry path>.names".
std::string name_index_path(const std::string& cache_entry_path);

// Saves the index of `repodata` for the cache entry whose header line is `entry_header` and
// whose body is `entry_body` (the repodata itself, or its zstd form when `decoded` is true:
// then repodata.document() is saved in the file too). Atomic (temp + rename); false when it
// cannot be written (the cache may be read-only: nothing is lost but time).
bool save_name_index(const std::string& path, const SparseRepodata& repodata, std::string_view entry_header,
                     std::string_view entry_body, bool decoded);

// The saved index for the entry whose header line is `entry_header` and whose bytes are
// `entry` (body from `body_offset`), when there is one made from that very entry and intact;
// nullopt otherwise (missing, another write of the entry, another format, damaged).
std::optional<SparseRepodata> load_name_index(const std::string& path, std::string_view entry_header,
                                              const PaddedBuffer& entry, std::size_t body_offset,
                                              const RepodataSource& source);

}  // namespace envlock::fetch
