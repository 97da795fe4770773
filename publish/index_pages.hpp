#pragma once
// The index pages of a mirror folder, written from the files it holds: a conda channel's
// repodata.json per subdir (each record the package's own info/index.json with its digests),
// PEP 503 HTML and PEP 691 JSON simple pages (with PEP 658 metadata advertised), find-links
// pages. Pure functions of values: the folder's I/O is lock_mirror's.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "resolver/specs/record.hpp"

namespace envlock::publish {

// One artifact in the mirror, as the mirror's pages list it.
struct MirroredFile {
    Ecosystem kind = Ecosystem::conda;   // conda or pypi
    std::string url;              // as the locks record it
    std::string path;             // under the mirror folder, '/'-separated: mirror_path(url)
    std::string name, version;    // the lock's
    std::string sha256, md5;
    std::uint64_t size = 0;
    std::string channel;          // conda: the channel; pypi: the simple project page or find-links page ("" = none)
    std::string subdir;           // conda
    bool find_links = false;      // pypi: `channel` is a find-links page (a spec's find-links)
    nlohmann::json record;        // conda: info/index.json + sha256, md5, size (what repodata.json lists)
    std::string metadata_sha256;  // a wheel's PEP 658 file, <path>.metadata; "" when there is none
    std::string requires_python;  // the wheel's Requires-Python
};

struct Page {
    std::string path;             // under the mirror folder
    std::string text;
};

// Where a URL's file lies in a mirror folder: its host (with a port when it has one) and its
// percent-decoded path, "https://pypi.org/simple/six/" -> "pypi.org/simple/six/", so one rule
// per origin maps every URL of it (mirror_rules). A file:// URL goes under "file/". Userinfo,
// query and fragment are dropped. InputError naming the URL for a path with "." or ".." parts.
std::string mirror_path(std::string_view url);

// "https://pypi.org" for every URL of that origin; "file://" for local ones.
std::string url_origin(std::string_view url);

// Every page the files need, sorted by path; deterministic (same files, same bytes):
//   <channel>/<subdir>/repodata.json, and <channel>/noarch/repodata.json for every channel
//   <index>/<project>/index.html and index.json, <index>/index.html and index.json
//   each find-links page (index.html where its URL ends in '/')
// Links are relative, so the folder works under any URL and as file://.
std::vector<Page> index_pages(const std::vector<MirroredFile>& files);

}  // namespace envlock::publish
