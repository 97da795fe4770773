#include "fetch/index_listing.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

#include "resolver/specs/conda_version.hpp"
#include "resolver/specs/pep440.hpp"

namespace envlock::fetch {

namespace {

// Sort keys parsed once per record: parsing is the costly part of a comparison.
struct Key {
    std::optional<pep440::Version> pypi;
    std::optional<conda::Version> conda;
};

Key key_of(const IndexRecord& r) {
    Key k;
    if (r.ecosystem == Ecosystem::conda) {
        k.conda = conda::Version::try_parse(r.version);
        if (!k.conda) k.pypi = pep440::Version::try_parse(r.version);
    } else {
        k.pypi = pep440::Version::try_parse(r.version);
        if (!k.pypi) k.conda = conda::Version::try_parse(r.version);
    }
    return k;
}

int compare_keys(const Key& a, const Key& b, std::string_view va, std::string_view vb) {
    if (a.pypi && b.pypi) {
        auto c = *a.pypi <=> *b.pypi;
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    auto ca = a.conda ? a.conda : conda::Version::try_parse(va);
    auto cb = b.conda ? b.conda : conda::Version::try_parse(vb);
    if (ca && cb) {
        int c = ca->compare(*cb);
        return c < 0 ? -1 : c > 0 ? 1 : 0;
    }
    // Unparseable versions sort below parseable ones, then by text.
    if (bool(ca) != bool(cb)) return ca ? 1 : -1;
    return va < vb ? -1 : va > vb ? 1 : 0;
}

}  // namespace

int compare_record_versions(const IndexRecord& a, const IndexRecord& b) {
    return compare_keys(key_of(a), key_of(b), a.version, b.version);
}

std::vector<VersionGroup> group_by_version(IndexRecords records) {
    std::vector<VersionGroup> groups;
    std::vector<std::pair<Key, IndexRecord>> keyed;
    keyed.reserve(records.size());
    for (auto& r : records) keyed.emplace_back(key_of(r), std::move(r));
    std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
        const IndexRecord& a = x.second;
        const IndexRecord& b = y.second;
        if (int c = compare_keys(x.first, y.first, a.version, b.version)) return c > 0;
        if (a.version != b.version) return a.version < b.version;
        return std::tie(a.ecosystem, a.subdir, b.build_number, a.build, a.filename, a.url) <
               std::tie(b.ecosystem, b.subdir, a.build_number, b.build, b.filename, b.url);
    });
    const Key* group_key = nullptr;
    for (auto& [k, r] : keyed) {
        if (!group_key || compare_keys(*group_key, k, groups.back().version, r.version) != 0) {
            groups.push_back({r.version, {}});
            group_key = &k;
        }
        groups.back().files.push_back(std::move(r));
    }
    return groups;
}

}  // namespace envlock::fetch
