#pragma once
// Requires-Dist for PyPI files whose index offers no core metadata (find-links pages such
// as download.pytorch.org's torch_stable.html): first the PEP 658 file beside the artifact
// (URL + ".metadata", which many servers publish without announcing it), else the wheel
// itself, whose *.dist-info/METADATA is read from the downloaded archive, as pip does.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fetch/settings.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

// The METADATA member of a wheel held in memory; InputError naming `source` when the bytes
// are not a zip or hold no *.dist-info/METADATA.
std::string metadata_from_wheel(std::string_view wheel_bytes, std::string_view source);

// Fills depends/requires_python/depends_known of each record that lacks them; records whose
// metadata cannot be had are left with depends_known false.
void fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx);

// The packaging files of an sdist held in memory (.tar.gz, .tar.bz2, .zip), by path below
// its top folder: PKG-INFO, setup.py, setup.cfg, pyproject.toml, requirements*.txt,
// requirements/*.txt. InputError naming `source` when the bytes are no such archive.
std::map<std::string, std::string> sdist_packaging_files(std::string_view bytes, std::string_view source);

// Reads a package's requirements statically from its packaging files; nullopt when they stay
// unknown. The caller supplies it (reading setup.py is inference's job, not fetch's).
using PackageReader = std::function<std::optional<std::vector<std::string>>(const std::map<std::string, std::string>&)>;

// For each sdist record whose depends are unknown: downloads it and takes its requirements
// from PKG-INFO when that lists Requires-Dist, else from `read` over its packaging files.
// Records that stay unknown keep depends_known false.
void fill_metadata_from_sdists(IndexRecords& records, const FetchContext& ctx, const PackageReader& read);

}  // namespace envlock::fetch
