#include <doctest/doctest.h>

#include <zstd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "fetch/conda_repodata.hpp"
#include "fetch/http_cache.hpp"
#include "resolver/specs/errors.hpp"
#include "temp_tree.hpp"

using namespace envlock;
using namespace envlock::fetch;

namespace {

const char* kRepodata = R"({
  "info": {"subdir": "linux-64"},
  "packages": {
    "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2": {
      "build": "py3.8_cuda11.1_cudnn8.0.5_0", "build_number": 0,
      "depends": ["blas * mkl", "cudatoolkit >=11.1,<11.2", "python >=3.8,<3.9.0a0"],
      "license": "BSD 3-Clause", "md5": "0123456789abcdef0123456789abcdef",
      "name": "pytorch", "sha256": "aa11", "size": 123456, "subdir": "linux-64",
      "timestamp": 1623352345000, "version": "1.9.0", "track_features": ""
    },
    "cudatoolkit-11.1.1-h6406543_8.tar.bz2": {
      "build": "h6406543_8", "build_number": 8, "depends": [], "license": null,
      "name": "cudatoolkit", "version": "11.1.1", "timestamp": 1600000000,
      "constrains": ["__cuda >=11.1"], "track_features": "cuda111 feat2"
    }
  },
  "packages.conda": {
    "pytorch-2.0.1-py3.10_cpu_0.conda": {
      "build": "py3.10_cpu_0", "build_number": 0, "depends": ["python >=3.10,<3.11.0a0"],
      "name": "pytorch", "version": "2.0.1", "noarch": null
    }
  },
  "removed": [], "repodata_version": 1
})";

const IndexRecord& by_file(const IndexRecords& rs, const std::string& f) {
    auto it = std::find_if(rs.begin(), rs.end(), [&](const IndexRecord& r) { return r.filename == f; });
    REQUIRE(it != rs.end());
    return *it;
}

}  // namespace

TEST_CASE("repodata.json records carry every field the solver reads, from packages and packages.conda") {
    auto rs = parse_repodata(kRepodata, "https://conda.anaconda.org/pytorch/", "pytorch/linux-64");
    REQUIRE(rs.size() == 3);
    const auto& t = by_file(rs, "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
    CHECK(t.ecosystem == Ecosystem::conda);
    CHECK(t.name == "pytorch");
    CHECK(t.version == "1.9.0");
    CHECK(t.build == "py3.8_cuda11.1_cudnn8.0.5_0");
    CHECK(t.depends == std::vector<std::string>{"blas * mkl", "cudatoolkit >=11.1,<11.2", "python >=3.8,<3.9.0a0"});
    CHECK(t.sha256 == "aa11");
    CHECK(t.md5 == "0123456789abcdef0123456789abcdef");
    CHECK(t.size == 123456);
    CHECK(t.timestamp == 1623352345000ULL);
    CHECK(t.license == "BSD 3-Clause");
    CHECK(t.subdir == "linux-64");
    CHECK(t.channel == "https://conda.anaconda.org/pytorch");
    CHECK(t.url == "https://conda.anaconda.org/pytorch/linux-64/pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
    CHECK(t.track_features.empty());

    const auto& c = by_file(rs, "cudatoolkit-11.1.1-h6406543_8.tar.bz2");
    CHECK(c.build_number == 8);
    CHECK(c.license.empty());
    CHECK(c.timestamp == 1600000000000ULL);  // seconds normalised to milliseconds
    CHECK(c.constrains == std::vector<std::string>{"__cuda >=11.1"});
    CHECK(c.track_features == std::vector<std::string>{"cuda111", "feat2"});
    CHECK(by_file(rs, "pytorch-2.0.1-py3.10_cpu_0.conda").url ==
          "https://conda.anaconda.org/pytorch/linux-64/pytorch-2.0.1-py3.10_cpu_0.conda");
}

TEST_CASE("a package filter keeps one name's records only") {
    auto rs = parse_repodata_for(kRepodata, {"https://c/pytorch", "linux-64", "x"}, "pytorch");
    CHECK(rs.size() == 2);
    for (const auto& r : rs) CHECK(r.name == "pytorch");
    CHECK(parse_repodata_for(kRepodata, {"https://c/pytorch", "linux-64", "x"}, "pytorch-cuda").empty());
}

TEST_CASE("base_url (repodata v2) sets download URLs, relative to the subdir or absolute") {
    std::string rel = R"({"info": {"subdir": "noarch", "base_url": "../../files/"},
      "packages.conda": {"six-1.16.0-pyh6c4a22f_0.conda": {"name": "six", "version": "1.16.0",
        "build": "pyh6c4a22f_0", "build_number": 0, "depends": ["python"], "noarch": "python"}}})";
    auto rs = parse_repodata(rel, "https://repo.example/conda-forge", "x");
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].url == "https://repo.example/files/six-1.16.0-pyh6c4a22f_0.conda");
    CHECK(rs[0].noarch == "python");
    CHECK(rs[0].subdir == "noarch");
    std::string abs = R"({"packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0"}},
      "info": {"subdir": "linux-64", "base_url": "https://cdn.example/a/linux-64"}})";
    rs = parse_repodata(abs, "https://repo.example/ch", "x");  // info after packages
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].url == "https://cdn.example/a/linux-64/a-1-0.tar.bz2");
    CHECK(rs[0].subdir == "linux-64");
}

TEST_CASE("the flat {filename: record} index form conda's tests use is read too") {
    std::string flat = R"({"numpy-1.7.1-py27_0.tar.bz2": {"name": "numpy", "version": "1.7.1", "build": "py27_0",
      "build_number": 0, "depends": ["python 2.7*"], "subdir": "linux-64"}})";
    auto rs = parse_repodata(flat, "https://repo.anaconda.com/pkgs/free", "index.json");
    REQUIRE(rs.size() == 1);
    CHECK(rs[0].url == "https://repo.anaconda.com/pkgs/free/linux-64/numpy-1.7.1-py27_0.tar.bz2");
}

TEST_CASE("malformed repodata is bad input naming the source and the record") {
    CHECK_THROWS_WITH_AS(parse_repodata("[1,2]", "https://c/x", "https://c/x/linux-64/repodata.json"),
                         doctest::Contains("https://c/x/linux-64/repodata.json: malformed repodata"), InputError);
    CHECK_THROWS_AS(parse_repodata("{\"packages\": {", "https://c/x", "src"), InputError);
    CHECK_THROWS_WITH_AS(
        parse_repodata(R"({"packages": {"a-1-0.tar.bz2": {"name": "a", "version": 1}}})", "https://c/x", "src"),
        doctest::Contains("a-1-0.tar.bz2"), InputError);
    CHECK_THROWS_WITH_AS(parse_repodata(R"({"packages": {"a-1-0.tar.bz2": 5}})", "https://c/x", "src"),
                         doctest::Contains("record 'a-1-0.tar.bz2' is not a JSON object"), InputError);
}

TEST_CASE("repodata.json.zst decompresses; damaged zstd is bad input") {
    std::string plain = kRepodata;
    std::string packed(ZSTD_compressBound(plain.size()), '\0');
    packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
    CHECK(decompress_zstd(packed, "x") == plain);
    CHECK_THROWS_AS(decompress_zstd("not zstd at all", "https://c/x/repodata.json.zst"), InputError);
    CHECK_THROWS_WITH(decompress_zstd(std::string_view(packed).substr(0, packed.size() / 2), "u"),
                      doctest::Contains("u: truncated zstd data"));
}

TEST_CASE("real snapshot: the pytorch channel has 19 pytorch versions, 1.9.0 with cuda11.1 builds") {
    std::filesystem::path file = envlock::test::shared_dir() + "/snapshots/rattler-pytorch-channel/linux-64/repodata.json";
    if (!std::filesystem::exists(file)) {
        MESSAGE("skipped: " << file << " is absent");
        return;
    }
    std::string json = read_file_padded(file);
    auto all = parse_repodata(json, "https://conda.anaconda.org/pytorch", file.string());
    CHECK(all.size() == 2181);
    auto torch = parse_repodata_for(json, {"https://conda.anaconda.org/pytorch", "", "x"}, "pytorch");
    std::set<std::string> versions;
    bool cuda111 = false;
    for (const auto& r : torch) {
        versions.insert(r.version);
        if (r.version == "1.9.0" && r.build.find("cuda11.1") != std::string::npos) cuda111 = true;
    }
    CHECK(versions.size() == 19);
    CHECK(versions.count("1.5.1") == 1);
    CHECK(versions.count("2.1.0") == 1);
    CHECK(cuda111);
}

TEST_CASE("real snapshot: the conda-forge subset has both packages and packages.conda") {
    std::filesystem::path dir = envlock::test::shared_dir() + "/snapshots/conda-subchannel-demo-conda-forge-py39";
    if (!std::filesystem::exists(dir)) {
        MESSAGE("skipped: " << dir << " is absent");
        return;
    }
    auto linux = parse_repodata(read_file_padded(dir / "linux-64/repodata.json"), "https://conda.anaconda.org/conda-forge", "x");
    CHECK(linux.size() == 2709);
    auto noarch = parse_repodata(read_file_padded(dir / "noarch/repodata.json"), "https://conda.anaconda.org/conda-forge", "x");
    CHECK(noarch.size() == 205);
    CHECK(std::all_of(noarch.begin(), noarch.end(), [](const IndexRecord& r) { return r.subdir == "noarch"; }));
    bool has_conda = std::any_of(linux.begin(), linux.end(), [](const IndexRecord& r) {
        return r.filename.size() > 6 && r.filename.substr(r.filename.size() - 6) == ".conda";
    });
    CHECK(has_conda);
}

TEST_CASE("escaped JSON strings in repodata are unescaped (the fast path reads raw text only when it is plain)") {
    std::string json = R"({"packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0",
      "license": "GPL \"v3\" \\ caf\u00e9 \ud83d\ude00", "depends": ["b >=1\t"]},
      "b\u002d2-0.tar.bz2": {"name": "b", "version": "2", "build": "0"}}})";
    auto rs = parse_repodata(json, "https://c/x", "src");
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].license == "GPL \"v3\" \\ caf\xc3\xa9 \xf0\x9f\x98\x80");
    CHECK(rs[0].depends == std::vector<std::string>{"b >=1\t"});
    CHECK(rs[1].filename == "b-2-0.tar.bz2");
}

namespace {

SparseRepodata sparse(const std::string& json, const std::string& channel = "https://conda.anaconda.org/pytorch") {
    return index_repodata(json, 0, {channel, "linux-64", "src"});
}

}  // namespace

TEST_CASE("sparse repodata: indexed by name, each name's records read only when asked for, equal to a full parse") {
    auto rd = sparse(kRepodata);
    CHECK(names_of(rd) == std::vector<std::string>{"cudatoolkit", "pytorch"});
    CHECK(rd.records_named("pytorch").size() == 2);
    IndexRecords read;
    visit_records_of(rd, "pytorch", [&](IndexRecord& r, size_t) { read.push_back(r); });
    auto full = parse_repodata_for(kRepodata, {"https://conda.anaconda.org/pytorch", "linux-64", "src"}, "pytorch");
    REQUIRE(read.size() == full.size());
    for (size_t i = 0; i < read.size(); ++i) {
        CHECK(read[i].filename == full[i].filename);
        CHECK(read[i].url == full[i].url);
        CHECK(read[i].depends == full[i].depends);
        CHECK(read[i].sha256 == full[i].sha256);
    }
    size_t none = 0;
    visit_records_of(rd, "torch", [&](IndexRecord&, size_t) { ++none; });
    CHECK(none == 0);
}

TEST_CASE("sparse repodata: records_of gives the records of several names in file order") {
    auto rd = sparse(kRepodata);
    auto rs = records_of(rd, {"pytorch", "cudatoolkit"});
    REQUIRE(rs.size() == 3);
    CHECK(rs[0].filename == "pytorch-1.9.0-py3.8_cuda11.1_cudnn8.0.5_0.tar.bz2");
    CHECK(rs[1].filename == "cudatoolkit-11.1.1-h6406543_8.tar.bz2");
    CHECK(rs[2].filename == "pytorch-2.0.1-py3.10_cpu_0.conda");
    CHECK(rs[1].track_features == std::vector<std::string>{"cuda111", "feat2"});
}

TEST_CASE("sparse repodata: base_url, info after packages, a name with dashes, an odd file name") {
    std::string json = R"({"packages": {
        "cuda-nvcc-11.1.105-0.tar.bz2": {"name": "cuda-nvcc", "version": "11.1.105", "build": "0"},
        "oddname.tar.bz2": {"name": "odd", "version": "1", "build": "0"}},
      "info": {"subdir": "linux-64", "base_url": "https://cdn.example/ch/linux-64"}})";
    auto rd = sparse(json);
    auto rs = records_of(rd, {"cuda-nvcc", "odd"});
    REQUIRE(rs.size() == 2);
    CHECK(rs[0].url == "https://cdn.example/ch/linux-64/cuda-nvcc-11.1.105-0.tar.bz2");
    CHECK(rs[1].name == "odd");
}

TEST_CASE("sparse repodata: malformed input is bad input naming the source; a bad field shows when its record is read") {
    CHECK_THROWS_WITH_AS(sparse("[1,2]"), doctest::Contains("src: malformed repodata"), InputError);
    CHECK_THROWS_WITH_AS(sparse(R"({"packages": {"a-1-0.tar.bz2": 5}})"),
                         doctest::Contains("record 'a-1-0.tar.bz2' is not a JSON object"), InputError);
    auto rd = sparse(R"({"packages": {"a-1-0.tar.bz2": {"name": "a", "version": 1}, "b-1-0.tar.bz2": {"name": "b", "version": "1"}}})");
    CHECK(records_of(rd, {"b"}).size() == 1);
    CHECK_THROWS_WITH_AS(records_of(rd, {"a"}), doctest::Contains("a-1-0.tar.bz2"), InputError);
}

// Found by fuzz/repodata under ASan (issue 20): a record whose `depends` list is never closed
// was indexed (the indexing pass skips records without validating them), and reading it then
// ran the on-demand parser past the record (SEGV). The record is refused as malformed.
TEST_CASE("the sparse reader refuses a record that is not well-formed JSON") {
    std::string json = R"({"packages": {
      "a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0", "depends": ["b",
        "sha256": "d32f78bfaac282cfe5205f46d558704ad737b8dbf71f9227788a5ca80facaba4", "size": 1},
      "c-1-0.tar.bz2": {"name": "c", "version": "1", "build": "0", "depends": []}}})";
    RepodataSource source{"https://c/x", "linux-64", "x/linux-64/repodata.json"};
    CHECK_THROWS_AS(parse_repodata(json, source), InputError);
    CHECK_THROWS_AS(records_of(index_repodata(json, 0, source), {"a", "c"}), InputError);
}

// Found by fuzz/repodata (issue 20): a flat {filename: record} index whose file name key holds
// a JSON escape ("b\u002d2-0.tar.bz2") was read unescaped by the sparse reader but with the
// raw escape by the full reader, so the two gave different URLs for one record.
TEST_CASE("a flat index's escaped file name reads the same in the full and the sparse reader") {
    std::string json = R"({"b\u002d2-0.tar.bz2": {"name": "b", "version": "2", "build": "0"}})";
    RepodataSource source{"https://c/x", "linux-64", "index.json"};
    auto full = parse_repodata(json, source);
    REQUIRE(full.size() == 1);
    CHECK(full[0].filename == "b-2-0.tar.bz2");
    CHECK(full[0].url == "https://c/x/linux-64/b-2-0.tar.bz2");
    auto sparse = records_of(index_repodata(json, 0, source), {"b"});
    REQUIRE(sparse.size() == 1);
    CHECK(sparse[0].url == full[0].url);
}

// Found by fuzz/repodata (issue 20, session 5): with "info" given twice, the full reader applied
// the first base_url to the records read before the second and the sparse reader the last one
// to all, so the two gave different URLs. JSON leaves duplicate keys undefined (RFC 8259 §4);
// no channel writes them, so both readers refuse the file, naming the key.
TEST_CASE("repodata with a top-level section given twice is refused by the full and the sparse reader") {
    RepodataSource source{"https://c/x", "linux-64", "x/linux-64/repodata.json"};
    for (std::string json : {std::string(R"({"info": {"base_url": "a"}, "packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0"}}, "info": {"base_url": "b"}})"),
                             std::string(R"({"packages": {}, "info": {}, "packages": {"a-1-0.tar.bz2": {"name": "a", "version": "1", "build": "0"}}})"),
                             std::string(R"({"packages.conda": {}, "packages.conda": {}})")}) {
        CAPTURE(json);
        CHECK_THROWS_WITH_AS(parse_repodata(json, source), doctest::Contains("appears twice"), InputError);
        CHECK_THROWS_WITH_AS(index_repodata(json, 0, source), doctest::Contains("appears twice"), InputError);
    }
    CHECK(parse_repodata(R"({"info": {}, "packages": {}, "packages.conda": {}})", source).empty());
}

// Found by fuzz/repodata (issue 20, session 5; minimised): simdjson's on-demand reader checks
// only what it reads, so in `"info": {"":}` the missing value was skipped as if it closed the
// object, and the two readers parted there: the full one stopped with no record, the sparse one
// went on to read "r.conda". A value that is missing, and anything after the top-level object,
// are malformed input for both.
TEST_CASE("repodata with a missing value in 'info' or text after the top-level object is refused by both readers") {
    RepodataSource source{"https://c/x", "linux-64", "x/linux-64/repodata.json"};
    const std::string missing = R"({"packages":{},"info":{"":}},"r.conda":{"name":"s","version":"4"}})";
    CHECK_THROWS_WITH_AS(parse_repodata(missing, source), doctest::Contains("'info' has no value for ''"), InputError);
    CHECK_THROWS_WITH_AS(index_repodata(missing, 0, source), doctest::Contains("'info' has no value for ''"), InputError);
    const std::string trailing = R"({"info": {}, "packages": {}} {"packages": {}})";
    CHECK_THROWS_WITH_AS(parse_repodata(trailing, source), doctest::Contains("ends before the file does"), InputError);
    CHECK_THROWS_WITH_AS(index_repodata(trailing, 0, source), doctest::Contains("ends before the file does"), InputError);
    CHECK(parse_repodata("{\"info\": {\"x\": [1, {}]}, \"packages\": {}}\n", source).empty());
}
