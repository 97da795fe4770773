#pragma once
// Requires-Dist for PyPI files whose index offers no core metadata (find-links pages such
// as download.pytorch.org's torch_stable.html): first the PEP 658 file beside the artifact
// (URL + ".metadata", which many servers publish without announcing it), else the wheel
// itself, whose *.dist-info/METADATA is read from the downloaded archive, as pip does.
#include <string>
#include <string_view>

#include "fetch/settings.hpp"
#include "resolver/specs/record.hpp"

namespace envlock::fetch {

// The METADATA member of a wheel held in memory; InputError naming `source` when the bytes
// are not a zip or hold no *.dist-info/METADATA.
std::string metadata_from_wheel(std::string_view wheel_bytes, std::string_view source);

// Fills depends/requires_python/depends_known of each record that lacks them; records whose
// metadata cannot be had are left with depends_known false.
void fill_metadata_any_way(IndexRecords& records, const FetchContext& ctx);

}  // namespace envlock::fetch
