#pragma once
// The one call the solver and `envlock index list` make: every record a set of sources
// offers for one package name, fetched in parallel through mirrors and the HTTP cache.
//   channels:   conda channel URLs ("https://conda.anaconda.org/pytorch", "file:///srv/ch"),
//               bare names ("pytorch" -> https://conda.anaconda.org/pytorch), or a subdir URL
//               (".../linux-64"). A channel without a subdir is read for each of `subdirs`;
//               repodata.json.zst is used when the server has it, else repodata.json.
//               A missing noarch is fine; a missing platform subdir is an error.
//   index_urls: simple-API roots (PEP 691 JSON preferred, PEP 503 HTML accepted), or a JSON
//               API root ending in "/pypi" (then ROOT/NAME/json is read).
//   find_links: HTML pages of links, or file:// directories of distributions.
// Errors: a network failure or an answer other than 2xx/404 -> EnvironmentError (exit 3)
// naming the URL; an index that is not what its format promises -> InputError (exit 2)
// naming the URL and what was expected; offline and not cached -> EnvironmentError naming
// every missing URL.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "fetch/conda_repodata.hpp"
#include "fetch/documents.hpp"
#include "fetch/settings.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

struct IndexSources {
    std::vector<std::string> channels;
    std::vector<std::string> index_urls;
    std::vector<std::string> find_links;
    std::vector<std::string> subdirs = {"linux-64", "noarch"};
};

// Conda records are matched by exact conda name, PyPI records by normalised project name.
IndexRecords find_records(const IndexSources& sources, std::string_view name, const FetchContext& ctx);

// One subdir's repodata, its JSON starting at `offset` in `json` (a cache entry keeps its
// header in front) with simdjson's padding after it; or, when `zstd`, its zstd form there
// (fetch_repodata with decode = false; decode_repodata decodes it).
struct RepodataDocument {
    std::string channel;    // as asked for
    RepodataSource source;
    PaddedBuffer json;
    std::size_t offset = 0;
    bool zstd = false;
    // A CEP 16 shard index (repodata_shards.msgpack.zst, zstd in `json`) instead of repodata.
    bool sharded = false;
    // The HTTP cache entry holding the body as fetched, and its header line (empty: none).
    std::string cache_path, cache_header;

    std::string_view body() const { return json.view().substr(offset); }
};

// The repodata of every channel x subdir (a channel URL that names a subdir: that one only),
// fetched in parallel, .zst preferred; in channel order. Errors as find_records'.
// With `shards`, a subdir that offers a CEP 16 shard index gives that instead (sharded: true);
// one that has none (404, or not cached offline) gives its repodata.
std::vector<RepodataDocument> fetch_repodata(const std::vector<std::string>& channels,
                                             const std::vector<std::string>& subdirs, const FetchContext& ctx,
                                             bool decode = true, bool shards = false);

// A .zst document decoded in place (json becomes the decoded document, offset 0).
void decode_repodata(RepodataDocument& doc);

// The document indexed by package name: from the name index saved beside its cache entry
// when there is a current one (no pass over the body, nothing decoded), else built by one
// pass and saved for the next time.
SparseRepodata open_sparse_repodata(RepodataDocument doc);

// Builds the index again from the document and saves it (after StaleNameIndex).
SparseRepodata rebuild_sparse_repodata(RepodataDocument doc);

// The project names a simple index lists at its root (PEP 503 HTML or PEP 691 JSON; a file://
// folder tree without a root page: its folders), to name the nearest ones to a project it does
// not have. An index that cannot be read is an EnvironmentError naming it; a JSON API root
// ("…/pypi") lists nothing.
std::vector<std::string> index_project_names(const std::string& index_url, const FetchContext& ctx);

// Removes user:password from every URL of a record (they would end up in the lock).
void strip_credentials(IndexRecord& r);

// The PyPI records (indexes and find-links, not channels) of each of `names`, all pages
// fetched at once; out[i] belongs to names[i]. Errors as find_records'.
std::vector<IndexRecords> find_pypi_records(const IndexSources& sources, const std::vector<std::string>& names,
                                            const FetchContext& ctx);

// find_pypi_records in its two steps: the pages fetched (every fetch error thrown here), then
// read into records, which is CPU only and may run on another thread (a find-links page of a
// thousand links is read while the next pages are fetched). Errors of the pages' formats are
// thrown by the read.
struct PypiPages {
    struct Target {
        std::size_t name;                 // index into `names`
        std::string url;
        enum Kind { simple, json_api, find_links, directory } kind;
        std::size_t document = 0;         // index into `documents`; unused for a directory
        std::string listing, listing_base;   // a directory's files as links, and its URL
    };
    std::vector<std::string> names;
    std::vector<Target> targets;
    std::vector<DocumentRequest> requests;   // one per page to fetch (a find-links page once)
    std::vector<Document> documents;         // their answers, in the same order
    std::filesystem::path cache_dir;   // where each page's records are kept (fetch/page_cache)
};
PypiPages fetch_pypi_pages(const IndexSources& sources, const std::vector<std::string>& names, const FetchContext& ctx);
// fetch_pypi_pages in its steps, for a caller that streams the pages' transfers: the pages to
// fetch (`requests`; the caller fills `documents`), then the failures among them thrown as
// fetch_pypi_pages throws them, every failed page of every set named.
PypiPages plan_pypi_pages(const IndexSources& sources, const std::vector<std::string>& names, const FetchContext& ctx);
void throw_pypi_page_failures(const std::vector<const PypiPages*>& fetched);
std::vector<IndexRecords> read_pypi_pages(const PypiPages& pages);

// A channel as the user wrote it -> {channel root URL, subdir or ""}. Names follow conda
// (conda/base/constants.py): "pkgs/main", "pkgs/r" and "pkgs/msys2" live under
// https://repo.anaconda.com; any other bare name is joined onto the channel alias
// https://conda.anaconda.org ("conda-forge" -> https://conda.anaconda.org/conda-forge).
std::pair<std::string, std::string> split_channel(std::string_view channel);

// A channel list with conda's multichannel spelled out: "defaults" is pkgs/main then pkgs/r
// (DEFAULT_CHANNELS_UNIX, in that priority order); "nodefaults" is environment.yml's way of
// saying "no defaults" and names no channel. Duplicates keep their first place.
std::vector<std::string> expand_channels(const std::vector<std::string>& channels);

// PEP 658: reads the core-metadata file of each record that has a metadata_url and unknown
// depends, filling depends (Requires-Dist), requires_python and depends_known.
void fill_core_metadata(IndexRecords& records, const FetchContext& ctx);

}  // namespace envlock::fetch
