#pragma once
// What `envlock index list` shows: the records of one name grouped by version, newest first
// (PEP 440 order for PyPI files, conda VersionOrder for conda packages), each version's
// files in a stable order (conda before PyPI, then subdir, build number newest first, build).
#include <string>
#include <vector>

#include "resolver/specs/record.hpp"

namespace envlock::fetch {

struct VersionGroup {
    std::string version;
    IndexRecords files;
};

std::vector<VersionGroup> group_by_version(IndexRecords records);

// -1, 0, 1: `a` older than, same as, newer than `b`. Same-ecosystem records compare by that
// ecosystem's rules; across ecosystems PEP 440 is tried first, then conda's order.
int compare_record_versions(const IndexRecord& a, const IndexRecord& b);

}  // namespace envlock::fetch
