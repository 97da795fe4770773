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
#include <string>
#include <string_view>
#include <vector>

#include "fetch/conda_repodata.hpp"
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

// One subdir's repodata, decompressed, its JSON starting at `offset` in `json` (a cache
// entry keeps its header in front) with simdjson's padding after it.
struct RepodataDocument {
    std::string channel;    // as asked for
    RepodataSource source;
    std::string json;
    std::size_t offset = 0;
};

// The repodata of every channel x subdir (a channel URL that names a subdir: that one only),
// fetched in parallel, .zst preferred; in channel order. Errors as find_records'.
std::vector<RepodataDocument> fetch_repodata(const std::vector<std::string>& channels,
                                             const std::vector<std::string>& subdirs, const FetchContext& ctx);

// Removes user:password from every URL of a record (they would end up in the lock).
void strip_credentials(IndexRecord& r);

// The PyPI records (indexes and find-links, not channels) of each of `names`, all pages
// fetched at once; out[i] belongs to names[i]. Errors as find_records'.
std::vector<IndexRecords> find_pypi_records(const IndexSources& sources, const std::vector<std::string>& names,
                                            const FetchContext& ctx);

// A channel as the user wrote it -> {channel root URL, subdir or ""}.
std::pair<std::string, std::string> split_channel(std::string_view channel);

// PEP 658: reads the core-metadata file of each record that has a metadata_url and unknown
// depends, filling depends (Requires-Dist), requires_python and depends_known.
void fill_core_metadata(IndexRecords& records, const FetchContext& ctx);

}  // namespace envlock::fetch
