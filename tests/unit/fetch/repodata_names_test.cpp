// The saved name index of a cached repodata body (issue 21 item 3): a warm resolve reads only
// the records of the names it reaches, and must see exactly the records a full read gives. Run
// on the real snapshots in ../shared/snapshots, over a loopback HTTP server and the HTTP cache.
#include <doctest/doctest.h>

#include <zstd.h>

#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "fetch/conda_repodata.hpp"
#include "fetch/http_cache.hpp"
#include "fetch/index_closure.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/padded_buffer.hpp"
#include "fetch/repodata_names.hpp"
#include "repodata_fixture.hpp"
#include "temp_tree.hpp"
#include "tests/support/http_server.hpp"
#include "tests/support/run_envlock.hpp"

using namespace envlock;
using namespace envlock::fetch;
using envlock::test::HttpServer;
using envlock::test::TempTree;
using envlock::test::slurp;
using envlock::test::zstd;

namespace {

const std::string kSnapshots = envlock::test::shared_dir() + "/snapshots";

// Every field the solver or the lock reads.
std::string key_of(const IndexRecord& r) {
    std::string k = r.name + "|" + r.version + "|" + r.build + "|" + std::to_string(r.build_number) + "|" + r.filename + "|" +
                    r.url + "|" + r.sha256 + "|" + r.md5 + "|" + std::to_string(r.size) + "|" + std::to_string(r.timestamp) + "|" +
                    r.channel + "|" + r.subdir + "|" + r.noarch + "|" + r.license;
    for (const auto* list : {&r.depends, &r.constrains, &r.track_features, &r.features}) {
        k += "|[";
        for (const auto& s : *list) k += s + ",";
        k += "]";
    }
    return k;
}

std::vector<std::string> keys(const IndexRecords& rs) {
    std::vector<std::string> out;
    for (const auto& r : rs) out.push_back(key_of(r));
    return out;
}

// "cudatoolkit >=11.1,<11.2" -> "cudatoolkit", as conda names a dependency.
std::string dep_name(const std::string& spec) {
    std::string n = spec.substr(0, spec.find_first_of(" =<>!~[;"));
    auto colons = n.rfind("::");
    return colons == std::string::npos ? n : n.substr(colons + 2);
}

struct Snapshot {
    std::string file, channel, subdir;
};

const std::vector<Snapshot> kRealRepodata = {
    {"rattler-pytorch-channel/linux-64/repodata.json", "https://conda.anaconda.org/pytorch", "linux-64"},
    {"conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json", "https://conda.anaconda.org/conda-forge", "linux-64"},
    {"conda-subchannel-demo-conda-forge-py39/noarch/repodata.json", "https://conda.anaconda.org/conda-forge", "noarch"},
    {"mamba-tests-conda-forge-numpy/conda-forge-numpy-linux-64.json", "https://conda.anaconda.org/conda-forge", "linux-64"},
    {"conda-tests-defaults-2013-2018/index.json", "https://repo.anaconda.com/pkgs/main", "linux-64"},
    {"conda-tests-defaults-2013-2018/index2.json", "https://repo.anaconda.com/pkgs/main", "linux-64"},
    {"conda-tests-defaults-2013-2018/index4.json", "https://repo.anaconda.com/pkgs/main", "linux-64"},
    {"conda-tests-defaults-2013-2018/index5.json", "https://repo.anaconda.com/pkgs/main", "linux-64"},
    {"conda-tests-defaults-2013-2018/repodata_r_linux-64.json", "https://repo.anaconda.com/pkgs/r", "linux-64"},
    {"conda-tests-defaults-2013-2018/repodata_main_noarch.json", "https://repo.anaconda.com/pkgs/main", "noarch"},
};

// A body cached as the HTTP cache stores it, and its saved index mapped back.
struct Cached {
    CacheEntry entry;
    SparseRepodata built, saved;
};

Cached cache_and_index(const TempTree& t, const std::string& url, const std::string& body, const RepodataSource& source) {
    std::string header;
    REQUIRE(cache_write(t.path(), url, "", {}, body, &header));
    auto entry = cache_read(t.path(), url);
    REQUIRE(entry);
    CHECK(entry->header == header);
    CHECK(entry->data.mapped());
    auto built = index_repodata(entry->data, entry->body_offset, source);
    std::string path = name_index_path(cache_entry_path(t.path(), url).string());
    REQUIRE(save_name_index(path, built, entry->header, entry->body(), false));
    auto saved = load_name_index(path, entry->header, entry->data, entry->body_offset, source);
    REQUIRE(saved);
    CHECK(saved->saved);
    return {std::move(*entry), std::move(built), std::move(*saved)};
}

}  // namespace

TEST_CASE("a mapped file reads as written with zeroed padding after it, at every page-boundary case") {
    TempTree t;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    for (size_t size : {size_t(1), page - 65, page - 64, page - 63, page - 1, page, page + 1, 2 * page, 3 * page + 5}) {
        CAPTURE(size);
        std::string text(size, 'x');
        for (size_t i = 0; i < size; ++i) text[i] = static_cast<char>('a' + i % 26);
        auto path = t.write("f" + std::to_string(size), text);
        std::error_code ec;
        auto b = PaddedBuffer::map_file(path, ec);
        REQUIRE_FALSE(ec);
        CHECK(b.mapped());
        CHECK(b.view() == text);
        // simdjson reads SIMDJSON_PADDING bytes past the end: they exist and are zero.
        CHECK(std::string_view(b.data() + b.size(), PaddedBuffer::kPadding) == std::string(PaddedBuffer::kPadding, '\0'));
    }
    std::error_code ec;
    CHECK(PaddedBuffer::map_file(t.path() / "absent", ec).empty());
    CHECK(ec);
}

TEST_CASE("repodata exactly one page long is parsed from its mapping (simdjson's padding past a page end)") {
    TempTree t;
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    std::string json = R"({"info": {"subdir": "linux-64"}, "packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0", "depends": ["b"]}}, "x": ")";
    json += std::string(page - json.size() - 3, 'p') + "\"}\n";
    REQUIRE(json.size() == page);
    auto path = t.write("repodata.json", json);
    std::error_code ec;
    auto b = PaddedBuffer::map_file(path, ec);
    REQUIRE_FALSE(ec);
    auto sparse = index_repodata(b, 0, {"https://c/x", "linux-64", "repodata.json"});
    auto rs = records_of(sparse, {"a"});
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].depends == std::vector<std::string>{"b"});
    size_t n = 0;
    visit_repodata_padded(b.view(), {"https://c/x", "linux-64", "repodata.json"}, "", [&](IndexRecord&) { ++n; });
    CHECK(n == 1);
}

TEST_CASE("the saved name index gives every name of every real snapshot exactly the records the full read gives") {
    TempTree t;
    for (const auto& s : kRealRepodata) {
        CAPTURE(s.file);
        std::string body = slurp(kSnapshots + "/" + s.file);
        RepodataSource source{s.channel, s.subdir, s.file};
        auto c = cache_and_index(t, "https://example.invalid/" + s.file, body, source);
        auto full = parse_repodata(c.entry.body(), source);
        REQUIRE(!full.empty());

        // Name by name: the saved index, the index built now and the full read agree.
        std::map<std::string, IndexRecords> full_by_name;
        for (const auto& r : full) full_by_name[r.name].push_back(r);
        auto names = names_of(c.saved);
        CHECK(names == names_of(c.built));
        std::set<std::string> listed(names.begin(), names.end());
        for (const auto& [name, records] : full_by_name) {
            CAPTURE(name);
            CHECK(listed.count(name) == 1);   // no name the full read has is missing from the index
            auto saved = records_of(c.saved, {name});
            CHECK(keys(saved) == keys(records));
            CHECK(keys(saved) == keys(records_of(c.built, {name})));
        }
        // And all names at once: the whole file, in file order, not one record more or less.
        auto all = records_of(c.saved, std::set<std::string>(names.begin(), names.end()));
        CHECK(keys(all) == keys(full));
    }
}

TEST_CASE("records with track_features and features, and names with dashes, come through the saved index") {
    TempTree t;
    const auto& s = kRealRepodata[0];   // the pytorch channel: cuda80 … track_features packages
    RepodataSource source{s.channel, s.subdir, s.file};
    auto c = cache_and_index(t, "https://example.invalid/pytorch/linux-64/repodata.json", slurp(kSnapshots + "/" + s.file), source);
    size_t tracking = 0, featured = 0;
    for (const auto& r : parse_repodata(c.entry.body(), source)) {
        auto via_index = records_of(c.saved, {r.name});
        bool found = false;
        for (const auto& v : via_index) found = found || key_of(v) == key_of(r);
        CHECK(found);
        tracking += !r.track_features.empty();
        featured += !r.features.empty();
    }
    CHECK(tracking > 0);
    CHECK(featured > 0);
    CHECK(records_of(c.saved, {"torchvision-cpu"}).size() == 8);
}

TEST_CASE("a saved index is not used for another write of its entry, even one of the same size") {
    TempTree t;
    std::string a = R"({"packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0"}}})";
    std::string b = R"({"packages": {"b-1-0.tar.bz2": {"name": "b", "version": "1", "build": "0"}}})";
    REQUIRE(a.size() == b.size());
    RepodataSource source{"https://c/x", "linux-64", "x"};
    auto c = cache_and_index(t, "https://c/x/linux-64/repodata.json", a, source);
    std::string path = name_index_path(cache_entry_path(t.path(), "https://c/x/linux-64/repodata.json").string());
    REQUIRE(cache_write(t.path(), "https://c/x/linux-64/repodata.json", "", {}, b));
    auto again = cache_read(t.path(), "https://c/x/linux-64/repodata.json");
    REQUIRE(again);
    CHECK_FALSE(load_name_index(path, again->header, again->data, again->body_offset, source));
    // Nor for bytes that differ from those it was made from under the same header.
    std::string other = a;
    other[other.size() - 5] = 'X';
    CHECK_FALSE(load_name_index(path, c.entry.header, PaddedBuffer(other), c.entry.body_offset - 0, source));
    // A damaged file (cut short) is no index.
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 1);
    CHECK_FALSE(load_name_index(path, c.entry.header, c.entry.data, c.entry.body_offset, source));
}

namespace {

// Three channels served over loopback HTTP: the pytorch channel (plain JSON), conda-forge's
// python 3.9 subset (linux-64 as .zst only, noarch plain) and 2018 defaults (a flat index).
struct Channels {
    TempTree tree;
    std::unique_ptr<HttpServer> server;
    std::vector<std::string> urls;

    Channels() {
        tree.write("www/pytorch/linux-64/repodata.json", slurp(kSnapshots + "/rattler-pytorch-channel/linux-64/repodata.json"));
        tree.write("www/cf/linux-64/repodata.json.zst",
                   zstd(slurp(kSnapshots + "/conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json")));
        tree.write("www/cf/noarch/repodata.json", slurp(kSnapshots + "/conda-subchannel-demo-conda-forge-py39/noarch/repodata.json"));
        tree.write("www/main/linux-64/repodata.json", slurp(kSnapshots + "/conda-tests-defaults-2013-2018/index4.json"));
        server = std::make_unique<HttpServer>(tree.str() + "/www");
        urls = {server->url() + "/pytorch", server->url() + "/cf", server->url() + "/main"};
    }

    FetchContext context(bool cache = true) const {
        FetchContext ctx;
        if (cache) ctx.cache_dir = tree.path() / "cache";
        return ctx;
    }

    size_t saved_indexes() const {
        size_t n = 0;
        std::error_code ec;
        if (std::filesystem::exists(tree.path() / "cache", ec))
            for (const auto& e : std::filesystem::recursive_directory_iterator(tree.path() / "cache"))
                n += e.path().extension() == ".names";
        return n;
    }
};

const std::vector<std::string> kRoots = {"python", "pytorch", "numpy", "setuptools", "pip", "torchvision", "cudatoolkit"};

// The closure computed the plain way: every record of every document read in full, then the
// names reached from the roots through depends, then their records in file order.
std::vector<std::vector<std::string>> closure_by_full_read(const std::vector<std::string>& channels, const FetchContext& ctx) {
    std::vector<std::pair<std::string, IndexRecords>> docs;
    for (auto& d : fetch_repodata(channels, {"linux-64", "noarch"}, ctx)) docs.emplace_back(d.channel, parse_repodata(d.body(), d.source));
    std::set<std::string> reached;
    std::deque<std::string> queue;
    for (const auto& r : kRoots)
        if (reached.insert(r).second) queue.push_back(r);
    while (!queue.empty()) {
        std::string name = queue.front();
        queue.pop_front();
        for (const auto& [channel, records] : docs)
            for (const auto& r : records)
                if (r.name == name)
                    for (const auto& d : r.depends)
                        if (reached.insert(dep_name(d)).second) queue.push_back(dep_name(d));
    }
    std::vector<std::vector<std::string>> out(channels.size());
    for (const auto& [channel, records] : docs) {
        size_t i = std::find(channels.begin(), channels.end(), channel) - channels.begin();
        for (const auto& r : records)
            if (reached.count(r.name)) out[i].push_back(key_of(r));
    }
    return out;
}

std::vector<std::vector<std::string>> closure_keys(const std::vector<std::string>& channels, const FetchContext& ctx) {
    ClosureRequest req;
    req.sources.channels = channels;
    req.conda_names = kRoots;
    auto closure = collect_index_closure(req, ctx);
    std::vector<std::vector<std::string>> out;
    for (const auto& c : closure.channels) out.push_back(keys(c.records));
    return out;
}

}  // namespace

TEST_CASE("a warm closure from the HTTP cache's saved indexes equals a cold one and the full read, .zst included") {
    Channels ch;
    auto expected = closure_by_full_read(ch.urls, ch.context(false));
    size_t reached = 0;
    for (const auto& c : expected) reached += c.size();
    CHECK(reached > 100);   // names reached only through depends are in it (cudatoolkit's, python's)

    CHECK(closure_keys(ch.urls, ch.context(false)) == expected);   // no cache: indexed in memory
    CHECK(ch.saved_indexes() == 0);
    CHECK(closure_keys(ch.urls, ch.context()) == expected);        // cold: fetched, indexed, saved
    CHECK(ch.saved_indexes() == 4);
    // Warm: every document's index is the saved one, a .zst one with its decoded document.
    for (auto& d : fetch_repodata(ch.urls, {"linux-64", "noarch"}, ch.context(), false)) {
        CAPTURE(d.source.name);
        CHECK(open_sparse_repodata(d).saved);
    }
    CHECK(closure_keys(ch.urls, ch.context()) == expected);
    auto offline = ch.context();
    offline.offline = true;
    CHECK(closure_keys(ch.urls, offline) == expected);
}

TEST_CASE("a saved index whose positions do not fit its body is built again, and the closure is still whole") {
    Channels ch;
    auto expected = closure_by_full_read(ch.urls, ch.context(false));
    REQUIRE(closure_keys(ch.urls, ch.context()) == expected);
    // Shift every record position of every saved index by one byte (the header's raw_count
    // and raws_at are its 8th and 10th fields): each still lies inside the body.
    for (const auto& e : std::filesystem::recursive_directory_iterator(ch.tree.path() / "cache")) {
        if (e.path().extension() != ".names") continue;
        std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
        std::uint64_t raw_count = 0, raws_at = 0;
        f.seekg(16 + 6 * 8);
        f.read(reinterpret_cast<char*>(&raw_count), 8);
        f.seekg(16 + 8 * 8);
        f.read(reinterpret_cast<char*>(&raws_at), 8);
        REQUIRE(raw_count > 0);
        for (std::uint64_t i = 0; i < raw_count; ++i) {
            std::uint64_t record = 0;
            f.seekg(static_cast<std::streamoff>(raws_at + i * 24 + 8));
            f.read(reinterpret_cast<char*>(&record), 8);
            record += 1;
            f.seekp(static_cast<std::streamoff>(raws_at + i * 24 + 8));
            f.write(reinterpret_cast<const char*>(&record), 8);
        }
    }
    CHECK(closure_keys(ch.urls, ch.context()) == expected);
    // And saved again, right this time.
    for (auto& d : fetch_repodata(ch.urls, {"linux-64", "noarch"}, ch.context(), false)) CHECK(open_sparse_repodata(d).saved);
    CHECK(closure_keys(ch.urls, ch.context()) == expected);
}

TEST_CASE("a large file:// repodata is mapped in place and gets a saved index too, keyed by the file's identity") {
    TempTree t;
    // The pytorch channel grown past the mapping threshold (16 MiB) by a key readers ignore.
    std::string json = slurp(kSnapshots + "/rattler-pytorch-channel/linux-64/repodata.json");
    auto with_padding = [](std::string body) {
        body.insert(body.rfind('}'), ", \"padding\": \"" + std::string(17 << 20, 'p') + "\"");
        return body;
    };
    auto file = t.write("ch/linux-64/repodata.json", with_padding(json));
    std::vector<std::string> channels = {"file://" + t.str() + "/ch"};
    FetchContext ctx;
    ctx.cache_dir = t.path() / "cache";
    auto expected = closure_by_full_read(channels, FetchContext{});
    REQUIRE(expected[0].size() > 50);
    CHECK(closure_keys(channels, ctx) == expected);
    auto docs = fetch_repodata(channels, {"linux-64", "noarch"}, ctx, false);
    REQUIRE(docs.size() == 1);
    CHECK(docs[0].json.mapped());
    CHECK(open_sparse_repodata(docs[0]).saved);
    CHECK(closure_keys(channels, ctx) == expected);

    // Rewritten in place (same inode): python's records gone. The identity changed, so the
    // saved index is not used, and the closure is the new file's.
    auto changed = nlohmann::json::parse(json);
    for (auto it = changed["packages"].begin(); it != changed["packages"].end();)
        it = it.value()["name"] == "pytorch" && it.key().find("1.9.0") != std::string::npos ? changed["packages"].erase(it) : std::next(it);
    {
        std::ofstream out(file, std::ios::binary | std::ios::in | std::ios::trunc);
        out << with_padding(changed.dump(1));
    }
    auto after = closure_by_full_read(channels, FetchContext{});
    CHECK(after != expected);
    CHECK(closure_keys(channels, ctx) == after);
    CHECK(open_sparse_repodata(fetch_repodata(channels, {"linux-64", "noarch"}, ctx, false)[0]).saved);
}
