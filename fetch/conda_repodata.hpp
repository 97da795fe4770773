#pragma once
// Reader of conda channel indexes: repodata.json (and its .zst), with both `packages`
// (.tar.bz2) and `packages.conda`, `info.subdir`, `info.base_url` (repodata v2; relative to
// the subdir or absolute), noarch, and the flat {filename: record} form conda's own test
// indexes use. simdjson's on-demand parser does the reading: this is the hot path
// (conda-forge linux-64 is ~250 MB and ~465k records).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fetch/padded_buffer.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

struct RepodataSource {
    std::string channel_url;   // channel root, no subdir: "https://conda.anaconda.org/pytorch"
    std::string subdir;        // used when the file has no info.subdir and a record no subdir
    std::string name;          // how errors name the file, usually its URL
};

// Every record. Throws InputError "<name>: malformed repodata: ..." for anything that is not
// repodata (not JSON, a record that is not an object, a field of the wrong type).
IndexRecords parse_repodata(std::string_view json, std::string_view channel_url,
                            std::string_view source_name_for_errors);
IndexRecords parse_repodata(std::string_view json, const RepodataSource& source);

// Only the records of one package; the others are skipped without being built.
IndexRecords parse_repodata_for(std::string_view json, const RepodataSource& source, std::string_view package);

// Streams records to `visit` (the record is reused between calls: move from it to keep it).
// `package` empty: all. When `json` is a std::string with at least 64 bytes of spare
// capacity (see read_file_padded), it is parsed in place without a copy.
void visit_repodata(std::string_view json, const RepodataSource& source, std::string_view package,
                    const std::function<void(IndexRecord&)>& visit);
void visit_repodata(const std::string& json, const RepodataSource& source, std::string_view package,
                    const std::function<void(IndexRecord&)>& visit);

// For a view whose 64 bytes after the end are readable (a cache entry's body, say).
void visit_repodata_padded(std::string_view json, const RepodataSource& source, std::string_view package,
                           const std::function<void(IndexRecord&)>& visit);

// A repodata document indexed by package name, each record left as raw JSON until asked for
// (rattler's "sparse repodata" does the same): a solve reaches a few hundred of a big
// channel's ~465k records, and only those are ever read into IndexRecords. Indexing costs
// one structural pass over the file and no record parsing; an index saved beside a cached
// body (see repodata_names.hpp) costs no pass at all.
struct SparseRepodata {
    // Positions count from the document's first byte (json[offset]).
    struct Raw {
        std::uint64_t key;           // the file name: its raw JSON text, between the quotes
        std::uint64_t record;        // the record object: its raw JSON text
        std::uint32_t key_size;
        std::uint32_t record_size;
    };
    struct Name {
        std::uint64_t text;          // into `strings`
        std::uint32_t size;
        std::uint32_t first;         // into `raws`: this name's records, in file order
        std::uint32_t count;
        std::uint32_t unused;
    };
    RepodataSource source;
    PaddedBuffer json;       // owns what every Raw points into
    std::size_t offset = 0;  // where the document starts in `json`
    std::string subdir;      // info.subdir
    std::string base_url;    // info.base_url
    // Names sorted bytewise (the name a file name carries, else the record's own), each with
    // its run of records in `raws`. The spans point into `index_storage`.
    std::span<const Name> names;
    std::span<const Raw> raws;
    std::string_view strings;
    std::shared_ptr<const void> index_storage;
    bool saved = false;      // the index was read from a file, not built from `json` now

    std::string_view document() const { return json.view().substr(offset); }
    std::string_view name_of(const Name& n) const { return strings.substr(n.text, n.size); }
    // The records of `name`; empty when the document has none.
    std::span<const Raw> records_named(std::string_view name) const;
};

// The document is `json` from `offset` on. Throws InputError "<name>: malformed repodata: ..."
// when it is not repodata or a record is not an object; a record's fields are checked when
// it is read.
SparseRepodata index_repodata(PaddedBuffer json, std::size_t offset, const RepodataSource& source);
SparseRepodata index_repodata(std::string json, std::size_t offset, const RepodataSource& source);

// Every package name the document has a record for, sorted.
std::vector<std::string> names_of(const SparseRepodata& repodata);

// Thrown by visit_records_of when a saved index does not fit its document (a position that
// is not a record of that name): the index is stale or damaged, and must be built again.
struct StaleNameIndex {
    std::string what;
};

// The records of one package name, in file order (the record is reused between calls), each
// with its position in the file, so records of several names can be put back in file order.
void visit_records_of(const SparseRepodata& repodata, const std::string& name,
                      const std::function<void(IndexRecord&, std::size_t position)>& visit);

// Records gathered with their positions, in file order.
IndexRecords in_file_order(std::vector<std::pair<std::size_t, IndexRecord>> records);

// The records of all the given names, in file order.
IndexRecords records_of(const SparseRepodata& repodata, const std::set<std::string>& names);

// repodata.json.zst -> repodata.json. Throws InputError naming `source_name` when damaged, and
// when it would decode to more than `max_size` bytes (a zstd bomb), before holding that much.
std::string decompress_zstd(std::string_view compressed, std::string_view source_name,
                            std::size_t max_size = std::size_t(1) << 30);

}  // namespace envlock::fetch
