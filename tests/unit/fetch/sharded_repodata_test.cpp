// Sharded repodata (CEP 16, conda/ceps cep-0016.md) served over loopback HTTP, built here from
// the real records of ../shared/snapshots: a resolve's closure over the shards is the closure
// over the same channel's repodata.json, record for record.
#include <doctest/doctest.h>

#include <msgpack.h>
#include <zstd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "fetch/index_closure.hpp"
#include "fetch/index_sources.hpp"
#include "fetch/sharded_repodata.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
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

std::string unhex(const std::string& hex) {
    std::string out;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

// msgpack as CEP 16 writes it: JSON values as they are, sha256 and md5 as bytes.
struct Packer {
    msgpack_sbuffer buffer;
    msgpack_packer packer;
    Packer() {
        msgpack_sbuffer_init(&buffer);
        msgpack_packer_init(&packer, &buffer, msgpack_sbuffer_write);
    }
    ~Packer() { msgpack_sbuffer_destroy(&buffer); }
    std::string bytes() const { return std::string(buffer.data, buffer.size); }
    void str(const std::string& s) {
        msgpack_pack_str(&packer, s.size());
        msgpack_pack_str_body(&packer, s.data(), s.size());
    }
    void bin(const std::string& b) {
        msgpack_pack_bin(&packer, b.size());
        msgpack_pack_bin_body(&packer, b.data(), b.size());
    }
    void value(const nlohmann::json& v, const std::string& key = "") {
        if ((key == "sha256" || key == "md5") && v.is_string()) return bin(unhex(v.get<std::string>()));
        if (v.is_null()) msgpack_pack_nil(&packer);
        else if (v.is_boolean()) v.get<bool>() ? msgpack_pack_true(&packer) : msgpack_pack_false(&packer);
        else if (v.is_number_unsigned()) msgpack_pack_uint64(&packer, v.get<std::uint64_t>());
        else if (v.is_number_integer()) msgpack_pack_int64(&packer, v.get<std::int64_t>());
        else if (v.is_number_float()) msgpack_pack_double(&packer, v.get<double>());
        else if (v.is_string()) str(v.get<std::string>());
        else if (v.is_array()) {
            msgpack_pack_array(&packer, v.size());
            for (const auto& x : v) value(x);
        } else {
            msgpack_pack_map(&packer, v.size());
            for (const auto& [k, x] : v.items()) {
                str(k);
                value(x, k);
            }
        }
    }
};

std::string to_msgpack(const nlohmann::json& v) {
    Packer p;
    p.value(v);
    return p.bytes();
}

// Writes <dir>/repodata_shards.msgpack.zst and <dir>/shards/<sha256>.msgpack.zst from a
// repodata.json; base_url names where the packages are (absolute). Returns name -> shard path.
std::map<std::string, std::string> write_shards(const TempTree& t, const std::string& dir, const std::string& repodata_json,
                                                const std::string& base_url) {
    auto repodata = nlohmann::json::parse(repodata_json);
    std::map<std::string, nlohmann::json> by_name;
    for (const char* section : {"packages", "packages.conda"}) {
        if (!repodata.contains(section)) continue;
        for (const auto& [filename, record] : repodata[section].items()) {
            auto& shard = by_name[record.at("name").get<std::string>()];
            if (shard.is_null()) shard = {{"packages", nlohmann::json::object()}, {"packages.conda", nlohmann::json::object()}, {"removed", nlohmann::json::array()}};
            shard[section][filename] = record;
        }
    }
    std::map<std::string, std::string> paths;
    Packer index;
    msgpack_pack_map(&index.packer, 3);
    index.str("version");
    msgpack_pack_uint64(&index.packer, 1);
    index.str("info");
    msgpack_pack_map(&index.packer, 2);
    index.str("base_url");
    index.str(base_url);
    index.str("shards_base_url");
    index.str("./shards/");
    index.str("shards");
    msgpack_pack_map(&index.packer, by_name.size());
    for (const auto& [name, shard] : by_name) {
        std::string packed = zstd(to_msgpack(shard));
        std::string hash = sha256_hex(packed);
        paths[name] = dir + "/shards/" + hash + ".msgpack.zst";
        t.write(paths[name], packed);
        index.str(name);
        index.bin(unhex(hash));
    }
    t.write(dir + "/repodata_shards.msgpack.zst", zstd(index.bytes()));
    return paths;
}

std::string key_of(const IndexRecord& r) {
    std::string k = r.name + "|" + r.version + "|" + r.build + "|" + std::to_string(r.build_number) + "|" + r.filename + "|" +
                    r.url + "|" + r.sha256 + "|" + r.md5 + "|" + std::to_string(r.size) + "|" + std::to_string(r.timestamp) + "|" +
                    r.subdir + "|" + r.noarch + "|" + r.license;
    for (const auto* list : {&r.depends, &r.constrains, &r.track_features, &r.features}) {
        k += "|[";
        for (const auto& s : *list) k += s + ",";
        k += "]";
    }
    return k;
}

// The pytorch channel and conda-forge's python 3.9 subset, each as repodata.json under /json/
// and as shards under /sharded/ whose base_url points at /json/'s subdirs (so both give the same
// package URLs).
struct Site {
    TempTree tree;
    std::unique_ptr<HttpServer> server;
    std::map<std::string, std::string> shard_paths;   // "pytorch/linux-64/<name>" -> path under www

    Site() {
        server = std::make_unique<HttpServer>(tree.str() + "/www");
        struct Sub {
            std::string channel, subdir, file;
        };
        for (const Sub& s : {Sub{"pytorch", "linux-64", "rattler-pytorch-channel/linux-64/repodata.json"},
                             Sub{"cf", "linux-64", "conda-subchannel-demo-conda-forge-py39/linux-64/repodata.json"},
                             Sub{"cf", "noarch", "conda-subchannel-demo-conda-forge-py39/noarch/repodata.json"}}) {
            std::string json = slurp(kSnapshots + "/" + s.file);
            tree.write("www/json/" + s.channel + "/" + s.subdir + "/repodata.json", json);
            std::string dir = "www/sharded/" + s.channel + "/" + s.subdir;
            for (const auto& [name, path] : write_shards(tree, dir, json, server->url() + "/json/" + s.channel + "/" + s.subdir + "/"))
                shard_paths[s.channel + "/" + s.subdir + "/" + name] = path.substr(3);   // without "www"
        }
    }
    std::vector<std::string> channels(const std::string& form) const {
        return {server->url() + "/" + form + "/pytorch", server->url() + "/" + form + "/cf"};
    }
    FetchContext context() const {
        FetchContext ctx;
        ctx.cache_dir = tree.path() / "cache";
        return ctx;
    }
};

const std::vector<std::string> kRoots = {"python", "pytorch", "numpy", "setuptools", "pip", "torchvision", "cudatoolkit"};

std::vector<std::vector<std::string>> closure(const std::vector<std::string>& channels, const FetchContext& ctx,
                                              std::vector<std::string>* offered = nullptr) {
    ClosureRequest req;
    req.sources.channels = channels;
    req.conda_names = kRoots;
    auto c = collect_index_closure(req, ctx);
    if (offered) *offered = c.conda_names_offered;
    std::vector<std::vector<std::string>> out;
    for (const auto& ch : c.channels) {
        out.emplace_back();
        for (const auto& r : ch.records) out.back().push_back(key_of(r));
    }
    return out;
}

size_t shard_requests(const HttpServer& server) {
    size_t n = 0;
    for (const auto& r : server.requests()) n += r.path.find("/shards/") != std::string::npos;
    return n;
}

}  // namespace

TEST_CASE("a sharded channel gives the closure its repodata.json gives, record for record and in its order") {
    Site site;
    std::vector<std::string> offered_json, offered_sharded;
    auto expected = closure(site.channels("json"), site.context(), &offered_json);
    size_t n = 0;
    for (const auto& c : expected) n += c.size();
    REQUIRE(n > 100);
    auto sharded = closure(site.channels("sharded"), site.context(), &offered_sharded);
    CHECK(sharded == expected);
    CHECK(offered_sharded == offered_json);
    // Only the reached names' shards were fetched, not the channel.
    size_t fetched = shard_requests(*site.server);
    CHECK(fetched > 0);
    CHECK(fetched < site.shard_paths.size() / 2);
    // The shard index was read, not repodata.json.
    for (const auto& r : site.server->requests()) CHECK(r.path.find("/sharded/pytorch/linux-64/repodata.json") == std::string::npos);
}

TEST_CASE("cached shards are used without asking the server again (they are named by their hash); offline too") {
    Site site;
    auto first = closure(site.channels("sharded"), site.context());
    size_t fetched = shard_requests(*site.server);
    auto again = closure(site.channels("sharded"), site.context());
    CHECK(again == first);
    CHECK(shard_requests(*site.server) == fetched);
    auto offline = site.context();
    offline.offline = true;
    CHECK(closure(site.channels("sharded"), offline) == first);
}

TEST_CASE("a shard whose bytes do not hash to its name is refused naming it, and not kept") {
    Site site;
    std::string path = site.shard_paths.at("pytorch/linux-64/pytorch");
    site.tree.write("www" + path, zstd(to_msgpack({{"packages", nlohmann::json::object()}})));
    CHECK_THROWS_WITH_AS(closure(site.channels("sharded"), site.context()),
                         doctest::Contains((path + ": the shard's bytes do not hash to the sha256 that names it").c_str()), InputError);
    // Nothing under that name in the cache: the next try asks the server again.
    size_t before = shard_requests(*site.server);
    CHECK_THROWS_AS(closure(site.channels("sharded"), site.context()), InputError);
    CHECK(shard_requests(*site.server) > before);
}

TEST_CASE("a shard index that is not one is bad input naming it; a subdir without one reads repodata.json") {
    RepodataSource source{"https://c/x", "linux-64", "https://c/x/linux-64/repodata_shards.msgpack.zst"};
    CHECK_THROWS_WITH_AS(parse_shard_index("not msgpack", source, source.name),
                         doctest::Contains("repodata_shards.msgpack.zst: expected a sharded repodata index (CEP 16)"), InputError);
    CHECK_THROWS_AS(parse_shard_index(to_msgpack({{"version", 1}}), source, source.name), InputError);
    CHECK_THROWS_AS(parse_shard_index(to_msgpack({{"version", 2}, {"shards", nlohmann::json::object()}}), source, source.name),
                    InputError);
    auto index = parse_shard_index(to_msgpack({{"version", 1}, {"info", {{"base_url", "../pkgs/"}, {"shards_base_url", "https://cdn/s"}}},
                                               {"shards", nlohmann::json::object()}}),
                                   source, source.name);
    CHECK(index.base_url == "https://c/x/pkgs/");
    CHECK(index.shards_base_url == "https://cdn/s/");

    Site site;   // the json channels have no shard index: their repodata is read
    auto docs = fetch_repodata(site.channels("json"), {"linux-64", "noarch"}, site.context(), false, true);
    for (const auto& d : docs) CHECK_FALSE(d.sharded);
}

TEST_CASE("index list's lookup of one name reads that name's shard: the records repodata.json gives") {
    Site site;
    for (const char* name : {"pytorch", "python", "setuptools", "no-such-package"}) {
        CAPTURE(name);
        IndexSources json_sources, sharded_sources;
        json_sources.channels = site.channels("json");
        sharded_sources.channels = site.channels("sharded");
        std::vector<std::string> expected, got;
        for (const auto& r : find_records(json_sources, name, site.context())) expected.push_back(key_of(r));
        size_t before = shard_requests(*site.server);
        for (const auto& r : find_records(sharded_sources, name, site.context())) got.push_back(key_of(r));
        std::sort(expected.begin(), expected.end());
        std::sort(got.begin(), got.end());
        CHECK(got == expected);
        CHECK(shard_requests(*site.server) - before <= 3);   // at most one shard per subdir
    }
}

// Every resolve probes each subdir for a CEP 16 shard index before reading its repodata; a
// subdir that answered 404 is not asked again for a day (the answer is cached), so a channel
// without shards costs no extra round trip on a warm run.
TEST_CASE("a subdir without a shard index is not probed again while its cached 404 is young") {
    Site site;
    auto probes = [&] {
        size_t n = 0;
        for (const auto& r : site.server->requests())
            n += r.path.find("repodata_shards.msgpack.zst") != std::string::npos;
        return n;
    };
    fetch_repodata(site.channels("json"), {"linux-64", "noarch"}, site.context(), false, true);
    size_t first = probes();
    CHECK(first > 0);
    auto docs = fetch_repodata(site.channels("json"), {"linux-64", "noarch"}, site.context(), false, true);
    CHECK(probes() == first);
    for (const auto& d : docs) CHECK_FALSE(d.sharded);
}
