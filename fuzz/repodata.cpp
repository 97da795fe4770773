// Conda repodata reader (fetch/conda_repodata): parse_repodata (every record), the sparse
// index (index_repodata + records_of, what a resolve uses), and decompress_zstd for inputs
// that start like a zstd frame. Property: the sparse reader never yields a record the full
// reader does not (same URL, version, build, sha256 and depends).
#include <set>
#include <tuple>

#include "fetch/conda_repodata.hpp"
#include "fuzz/fuzz.hpp"
#include "resolver/specs/errors.hpp"

using namespace envlock;
using envlock::fuzz::property;

namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, std::vector<std::string>>;
Key key_of(const IndexRecord& r) { return {r.url, r.version, r.build, r.sha256, r.depends}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fetch::RepodataSource source{"https://conda.anaconda.org/conda-forge", "linux-64",
                                              "conda-forge/linux-64/repodata.json"};
    auto input = fuzz::text(data, size);
    if (size >= 4 && data[0] == 0x28 && data[1] == 0xb5 && data[2] == 0x2f && data[3] == 0xfd) {
        try {
            (void)fetch::decompress_zstd(input, "repodata.json.zst");
        } catch (const Error&) {
        }
        return 0;
    }
    std::optional<IndexRecords> full;
    try {
        full = fetch::parse_repodata(input, source);
    } catch (const Error&) {
    }
    try {
        auto sparse = fetch::index_repodata(std::string(input), 0, source);
        auto listed = fetch::names_of(sparse);
        std::set<std::string> names(listed.begin(), listed.end());
        auto some = fetch::records_of(sparse, names);
        if (full) {
            std::set<Key> all;
            for (const auto& r : *full) all.insert(key_of(r));
            for (const auto& r : some)
                property(all.count(key_of(r)) == 1, "the sparse reader yields only records the full reader reads",
                         r.url, r.version);
        }
    } catch (const Error&) {
    }
    return 0;
}
