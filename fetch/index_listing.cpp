#include "fetch/index_listing.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>

namespace envlock::fetch {

namespace {

// Placeholder ordering until resolver/pep440.hpp and resolver/conda_version.hpp land:
// numeric runs compare as numbers, the public part before a "+local" part.
int fallback_compare(std::string_view a, std::string_view b) {
    auto next = [](std::string_view& s) -> std::pair<bool, std::string_view> {
        while (!s.empty() && !std::isalnum(static_cast<unsigned char>(s.front())) && s.front() != '+') s.remove_prefix(1);
        if (s.empty()) return {false, {}};
        size_t n = 1;
        bool digit = std::isdigit(static_cast<unsigned char>(s.front()));
        if (s.front() != '+')
            while (n < s.size() && std::isalnum(static_cast<unsigned char>(s[n])) &&
                   bool(std::isdigit(static_cast<unsigned char>(s[n]))) == digit)
                ++n;
        auto tok = s.substr(0, n);
        s.remove_prefix(n);
        return {digit, tok};
    };
    while (true) {
        auto [da, ta] = next(a);
        auto [db, tb] = next(b);
        if (ta.empty() && tb.empty()) return 0;
        if (ta.empty()) return (tb == "+" || !db) ? -1 : -1;
        if (tb.empty()) return 1;
        if (ta == "+" || tb == "+") {
            if (ta != tb) return ta == "+" ? 1 : -1;
            continue;
        }
        if (da && db) {
            while (ta.size() > 1 && ta.front() == '0') ta.remove_prefix(1);
            while (tb.size() > 1 && tb.front() == '0') tb.remove_prefix(1);
            if (ta.size() != tb.size()) return ta.size() < tb.size() ? -1 : 1;
            if (int c = ta.compare(tb)) return c < 0 ? -1 : 1;
        } else if (da != db) {
            return da ? 1 : -1;  // 1.0 > 1.0a
        } else if (int c = ta.compare(tb)) {
            return c < 0 ? -1 : 1;
        }
    }
}

}  // namespace

int compare_record_versions(const IndexRecord& a, const IndexRecord& b) { return fallback_compare(a.version, b.version); }

std::vector<VersionGroup> group_by_version(IndexRecords records) {
    std::vector<VersionGroup> groups;
    std::sort(records.begin(), records.end(), [](const IndexRecord& a, const IndexRecord& b) {
        if (int c = compare_record_versions(a, b)) return c > 0;
        if (a.version != b.version) return a.version < b.version;
        return std::tie(a.ecosystem, a.subdir, b.build_number, a.build, a.filename, a.url) <
               std::tie(b.ecosystem, b.subdir, a.build_number, b.build, b.filename, b.url);
    });
    for (auto& r : records) {
        if (groups.empty() || compare_record_versions(groups.back().files.front(), r) != 0)
            groups.push_back({r.version, {}});
        groups.back().files.push_back(std::move(r));
    }
    return groups;
}

}  // namespace envlock::fetch
