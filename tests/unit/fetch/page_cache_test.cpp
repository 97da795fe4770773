// The records of an index page kept in the cache (fetch/page_cache.hpp, issue 21): a re-resolve
// reads the records of an unchanged page instead of its HTML, as uv reads its cached simple-API
// responses. They must be exactly the records a read of the page gives, and nothing kept for
// another body, key or binary, or damaged, may ever be used.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "fetch/index_sources.hpp"
#include "fetch/page_cache.hpp"
#include "fetch/pypi_readers.hpp"
#include "temp_tree.hpp"

using namespace envlock;
using namespace envlock::fetch;
using envlock::test::TempTree;

namespace {

std::string bytes_of(const IndexRecords& records) { return page_records_bytes({"k", "u", "p", "i"}, records); }

// A record with every field set, strings holding the bytes a length-prefixed format could trip on.
IndexRecord full_record(int n) {
    IndexRecord r;
    r.ecosystem = n % 2 ? Ecosystem::pypi : Ecosystem::source;
    r.name = "name" + std::to_string(n);
    r.version = "1.0+cu111";
    r.build = std::string("cp38\0x", 6);
    r.build_number = -n;
    r.filename = "f.whl";
    r.url = "https://host/f.whl";
    r.sha256 = std::string(64, 'a');
    r.md5 = "m";
    r.size = ~std::uint64_t(0) - n;
    r.timestamp = 1234567890123ull;
    r.channel = "c";
    r.subdir = "linux-64";
    r.index = "https://host/simple/";
    r.depends = {"a>=1", "", "b; python_version<'3.8'"};
    r.constrains = {"x"};
    r.track_features = {};
    r.features = {"mkl", "blas"};
    r.noarch = "python";
    r.license = "MIT\n";
    r.requires_python = ">=3.6";
    r.yanked = n % 3 == 0;
    r.yanked_reason = "bad";
    r.metadata_url = "https://host/f.whl.metadata";
    r.depends_known = n % 2 == 0;
    r.git = "https://github.com/x/y";
    r.rev = "v1";
    return r;
}

std::string read(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

}  // namespace

TEST_CASE("page records read back as written, every field of every record") {
    IndexRecords records;
    for (int n = 0; n < 5; ++n) records.push_back(full_record(n));
    PageKey key{"k", "u", "p", "i"};
    std::string bytes = page_records_bytes(key, records);
    auto back = page_records_from_bytes(bytes, key);
    REQUIRE(back);
    REQUIRE(back->size() == records.size());
    CHECK(bytes_of(*back) == bytes_of(records));
    CHECK((*back)[1].build == std::string("cp38\0x", 6));
    CHECK((*back)[4].depends == records[4].depends);
    CHECK(page_records_from_bytes(page_records_bytes(key, {}), key)->empty());
}

TEST_CASE("page records of another body, page, project or kind are not used") {
    IndexRecords records = {full_record(1)};
    PageKey key{"simple-html", "https://pypi.org/simple/torch/", "torch", "http {id 1}"};
    std::string bytes = page_records_bytes(key, records);
    for (auto other : {PageKey{"simple-json", key.url, key.project, key.identity}, PageKey{key.kind, key.url + "x", key.project, key.identity},
                       PageKey{key.kind, key.url, "", key.identity}, PageKey{key.kind, key.url, key.project, "http {id 2}"}})
        CHECK_FALSE(page_records_from_bytes(bytes, other));
    CHECK(page_records_from_bytes(bytes, key));
}

TEST_CASE("damaged page records are not used: every truncation, a byte appended, the length trailer changed") {
    IndexRecords records = {full_record(1), full_record(2)};
    PageKey key{"k", "u", "p", "i"};
    std::string bytes = page_records_bytes(key, records);
    for (size_t n = 0; n < bytes.size(); ++n) {
        CAPTURE(n);
        CHECK_FALSE(page_records_from_bytes(std::string_view(bytes).substr(0, n), key));
    }
    CHECK_FALSE(page_records_from_bytes(bytes + "x", key));
    std::string trailer = bytes;
    trailer[trailer.size() - 8] ^= 1;
    CHECK_FALSE(page_records_from_bytes(trailer, key));
    // A count far beyond what the file holds is refused before anything is allocated for it.
    std::string counted = page_records_bytes(key, {});
    size_t count_at = counted.size() - 16;
    counted[count_at + 7] = '\x7f';
    CHECK_FALSE(page_records_from_bytes(counted, key));
}

// The real pages: download.pytorch.org's torch_stable.html (2021-03, 1,499 links) and
// openmmlab's mmcv page, each a find-links page on file://, read three times with a cache: the
// first reads the HTML and keeps the records, the second reads the kept records, and they are
// the same; a page written again (same bytes, new identity) is read from its HTML again.
TEST_CASE("find-links pages read from their kept records give exactly the records the HTML gives") {
    TempTree t;
    std::vector<std::filesystem::path> pages;
    for (const char* rel : {"snapshots/pytorch-torch_stable-html-2021-03/torch_stable.html",
                            "snapshots/poetry-fixture-openmmlab-mmcv-index/mmcv_torch_releases.html"}) {
        auto src = std::filesystem::path(envlock::test::shared_dir()) / rel;
        if (!std::filesystem::exists(src)) {
            MESSAGE("skipped: " << src << " is absent");
            return;
        }
        pages.push_back(t.write(src.filename().string(), read(src)));
    }
    FetchContext ctx;
    ctx.cache_dir = t.path() / "cache";
    IndexSources sources;
    for (const auto& p : pages) sources.find_links.push_back("file://" + p.string());

    auto first = find_pypi_records(sources, {""}, ctx).front();
    REQUIRE(first.size() > 1499);
    size_t kept = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(ctx.cache_dir / "pages")) kept += e.is_regular_file();
    CHECK(kept == pages.size());
    auto second = find_pypi_records(sources, {""}, ctx).front();
    CHECK(bytes_of(second) == bytes_of(first));

    // Without a cache, the HTML is all there is: the same records again.
    FetchContext uncached;
    CHECK(bytes_of(find_pypi_records(sources, {""}, uncached).front()) == bytes_of(first));

    // The torch page rewritten with one link fewer: its kept records are not used.
    std::string html = read(pages[0]);
    html.erase(html.find("<a "), html.find("<br>") + 4);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    t.write(pages[0].filename().string(), html);
    auto third = find_pypi_records(sources, {""}, ctx).front();
    CHECK(third.size() == first.size() - 1);
    CHECK(bytes_of(third) == bytes_of(find_pypi_records(sources, {""}, uncached).front()));
}
