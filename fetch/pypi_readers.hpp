#pragma once
// Readers of the PyPI wire formats into IndexRecords (one record per distribution file):
//   - the JSON API, /pypi/NAME/json
//   - the simple repository API: PEP 691 JSON and PEP 503 HTML (data-requires-python,
//     data-core-metadata / data-dist-info-metadata, data-yanked, #sha256= fragments)
//   - find-links pages (any HTML page of links: download.pytorch.org/whl/torch_stable.html,
//     download.openmmlab.com/mmcv/dist/cu111/torch1.9.0/index.html), relative hrefs allowed
//   - PEP 658 core-metadata files (Requires-Dist, Requires-Python)
// A record's `depends` is only known (depends_known) when the format carries it; otherwise
// `metadata_url` says where PEP 658 metadata lives, if the index offers it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/specs/record.hpp"

namespace envlock::fetch {

// PEP 503 normalisation: lower case, runs of "-", "_", "." become one "-".
std::string normalize_project_name(std::string_view name);

// HTML character references: &amp; &lt; &gt; &quot; &apos; &#NN; &#xHH; (unknown ones kept).
std::string html_unescape(std::string_view text);

// A wheel or sdist file name: {name as written, version, build = wheel tag triple
// "cp38-cp38-linux_x86_64" (empty for an sdist)}. nullopt for anything else (.egg, .exe...).
// `project`, when given, disambiguates sdists whose names contain dashes ("mmcv-full-1.7.0.tar.gz").
struct DistFilename {
    std::string name;
    std::string version;
    std::string build;
    bool wheel = false;
};
std::optional<DistFilename> parse_dist_filename(std::string_view filename, std::string_view project = {});

// One <a> of an HTML page, attributes decoded, href resolved against the page (and <base>).
struct Link {
    std::string url;              // absolute, without the fragment
    std::string filename;         // last path segment, %-decoded
    std::string text;             // the anchor text, decoded
    std::string sha256;           // from "#sha256=..."
    std::string requires_python;  // data-requires-python
    std::string core_metadata;    // data-core-metadata / data-dist-info-metadata: "", "true", "sha256=..."
    bool yanked = false;
    std::string yanked_reason;
};
std::vector<Link> parse_html_links(std::string_view html, std::string_view page_url);

// `project` empty: every distribution on the page; otherwise only that project's
// (compared normalised). `page_url` is the URL the page was fetched from.
IndexRecords parse_simple_html(std::string_view html, std::string_view page_url, std::string_view project = {});
IndexRecords parse_find_links(std::string_view html, std::string_view page_url, std::string_view project = {});
// PEP 691. Throws InputError naming page_url when it is not a PEP 691 project page.
IndexRecords parse_simple_json(std::string_view json, std::string_view page_url, std::string_view project = {});
// /pypi/NAME/json. Requires-Dist is known for the files of info.version only.
IndexRecords parse_pypi_json(std::string_view json, std::string_view url, std::string_view project = {});

struct CoreMetadata {
    std::string metadata_version;
    std::string name;
    std::string version;
    std::string requires_python;
    std::vector<std::string> requires_dist;
    std::vector<std::string> dynamic;   // Metadata 2.2+: fields the sdist leaves to the build
};
// RFC 822-style METADATA / PKG-INFO headers (continuation lines joined); the body is ignored. A line
// that is not UTF-8 is read as Latin-1, as packaging reads it: the values are always UTF-8.
CoreMetadata parse_core_metadata(std::string_view text);

}  // namespace envlock::fetch
