// Core metadata by the cheapest means: range reads of a wheel's zip directory and METADATA
// member, the file's sha256 as a cache key for good, a failed read as an error naming the file.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include "fetch/pypi_readers.hpp"
#include "fetch/settings.hpp"
#include "fetch/wheel_metadata.hpp"
#include "fetch/zip_directory.hpp"
#include "resolver/lock/sha256.hpp"
#include "resolver/specs/errors.hpp"
#include "resolver/specs/wheel.hpp"
#include "temp_tree.hpp"
#include "tests/mirror/archive.hpp"
#include "tests/support/http_server.hpp"

using namespace envlock;
using namespace envlock::fetch;
using envlock::test::HttpServer;
using envlock::test::TempTree;

namespace {

const std::string kMetadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Python: >=3.8\n"
                              "Requires-Dist: numpy (>=1.22)\nRequires-Dist: pyyaml ; extra == \"yaml\"\n\nLong description.\n";

// A real wheel (libarchive's zip writer) whose METADATA sits behind `padding` bytes of another member.
std::string demo_wheel(std::size_t padding, bool stored) {
    std::string noise;
    for (std::size_t i = 0; i < padding; ++i) noise += static_cast<char>((i * 2654435761u) >> 24);
    return mirror::write_zip({{"demo/big.bin", noise}, {"demo-1.0.dist-info/METADATA", kMetadata},
                              {"demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n"}, {"demo-1.0.dist-info/RECORD", ""}},
                             stored);
}

IndexRecord record_for(const std::string& url, const std::string& bytes) {
    IndexRecord r;
    r.ecosystem = Ecosystem::pypi;
    r.name = "demo";
    r.version = "1.0";
    r.filename = url.substr(url.rfind('/') + 1);
    r.url = url;
    r.sha256 = sha256_hex(bytes);
    r.depends_known = false;
    return r;
}

FetchContext context(const TempTree& tree) {
    FetchContext ctx;
    ctx.cache_dir = tree.path() / "cache";
    ctx.transport.retries = 1;
    ctx.transport.backoff_ms = 10;
    ctx.transport.tally = std::make_shared<FetchTally>();
    return ctx;
}

}  // namespace

TEST_CASE("zip directory: the METADATA member of a real wheel is found from its end and read, stored or deflated") {
    for (bool stored : {true, false}) {
        std::string wheel = demo_wheel(50000, stored);
        auto place = find_zip_directory(wheel, 0, "demo.whl");
        REQUIRE(place);
        auto members = read_zip_directory(std::string_view(wheel).substr(place->offset, place->size), "demo.whl");
        auto meta = find_wheel_metadata(members);
        REQUIRE(meta);
        CHECK(meta->name == "demo-1.0.dist-info/METADATA");
        CHECK(read_zip_member(std::string_view(wheel).substr(meta->local_offset), *meta, "demo.whl") == kMetadata);
    }
}

TEST_CASE("zip directory: bytes that end in no end-of-directory record are not a wheel") {
    CHECK_FALSE(find_zip_directory(std::string(100, 'x'), 0, "x.whl"));
    CHECK_THROWS_AS(read_zip_directory("PK\x01\x02 cut short", "x.whl"), InputError);
}

TEST_CASE("metadata source: the wheel the target installs best, never another platform's while one fits") {
    IndexRecords files(4);
    files[0].filename = "torch-2.1.2-cp310-none-macosx_11_0_arm64.whl";
    files[1].filename = "torch-2.1.2-cp311-cp311-manylinux1_x86_64.whl";
    files[2].filename = "torch-2.1.2-cp310-cp310-manylinux1_x86_64.whl";
    files[3].filename = "torch-2.1.2.tar.gz";
    const wheel::TagRanks ranks(wheel::compatible_tags("3.10", "linux-64", "2.28"));
    auto rank = [&](const IndexRecord& r) { return ranks.best(wheel::WheelName::parse(r.filename)); };
    CHECK(metadata_source(files, rank) == 2);
    IndexRecords others{files[0], files[1], files[3]};
    CHECK(metadata_source(others, rank) == 0);   // none fits: another wheel of the version, not the sdist
}

TEST_CASE("range read: a wheel's metadata costs its end and its METADATA member, never the whole file") {
    TempTree tree;
    std::string wheel = demo_wheel(3 << 20, true);
    tree.write("files/demo-1.0-py3-none-any.whl", wheel);
    HttpServer server(tree.str());
    auto ctx = context(tree);
    IndexRecords records{record_for(server.url() + "/files/demo-1.0-py3-none-any.whl", wheel)};
    auto notes = fill_metadata_any_way(records, ctx);
    CHECK(notes.empty());
    REQUIRE(records[0].depends_known);
    CHECK(records[0].depends == std::vector<std::string>{"numpy (>=1.22)", "pyyaml ; extra == \"yaml\""});
    CHECK(records[0].requires_python == ">=3.8");
    auto seen = server.requests_for("/files/demo-1.0-py3-none-any.whl");
    CHECK(seen.size() <= 3);
    for (const auto& s : seen) CHECK(s.header("Range").rfind("bytes=", 0) == 0);
    CHECK(ctx.transport.tally->bytes < 64 * 1024);
    CHECK(ctx.transport.tally->metadata_reads == 1);
}

TEST_CASE("metadata cache: a file named by its sha256 is read once per machine, then never asked again") {
    TempTree tree;
    std::string wheel = demo_wheel(100000, false);
    tree.write("files/demo-1.0-py3-none-any.whl", wheel);
    HttpServer server(tree.str());
    auto ctx = context(tree);
    IndexRecords first{record_for(server.url() + "/files/demo-1.0-py3-none-any.whl", wheel)};
    fill_metadata_any_way(first, ctx);
    server.clear_requests();
    IndexRecords again{record_for(server.url() + "/files/demo-1.0-py3-none-any.whl", wheel)};
    fill_metadata_any_way(again, ctx);
    CHECK(again[0].depends == first[0].depends);
    CHECK(server.requests().empty());
    // Offline, the kept metadata is all it needs.
    ctx.offline = true;
    IndexRecords offline{record_for(server.url() + "/files/demo-1.0-py3-none-any.whl", wheel)};
    fill_metadata_any_way(offline, ctx);
    CHECK(offline[0].depends_known);
}

TEST_CASE("a wheel whose metadata cannot be read is an environment error naming the file, not a silent unknown") {
    TempTree tree;
    tree.write("files/not-a-zip-1.0-py3-none-any.whl", "this is no zip file at all");
    HttpServer server(tree.str());
    auto ctx = context(tree);
    IndexRecords missing{record_for(server.url() + "/files/gone-1.0-py3-none-any.whl", "x")};
    try {
        fill_metadata_any_way(missing, ctx);
        FAIL("expected an EnvironmentError");
    } catch (const EnvironmentError& e) {
        CHECK(std::string(e.what()).find("gone-1.0-py3-none-any.whl") != std::string::npos);
        CHECK(std::string(e.what()).find("404") != std::string::npos);
    }
    IndexRecords damaged{record_for(server.url() + "/files/not-a-zip-1.0-py3-none-any.whl", "x")};
    try {
        fill_metadata_any_way(damaged, ctx);
        FAIL("expected an EnvironmentError");
    } catch (const EnvironmentError& e) {
        CHECK(std::string(e.what()).find("not-a-zip-1.0-py3-none-any.whl") != std::string::npos);
    }
}

TEST_CASE("offline, a file whose metadata was never read is named, not left unknown") {
    TempTree tree;
    auto ctx = context(tree);
    ctx.offline = true;
    IndexRecords records{record_for("http://127.0.0.1:9/files/demo-1.0-py3-none-any.whl", "x")};
    CHECK_THROWS_WITH_AS(fill_metadata_any_way(records, ctx), doctest::Contains("demo-1.0-py3-none-any.whl"), EnvironmentError);
}

TEST_CASE("zip directory: a big directory's end alone gives the METADATA entry, which wheel builders write last") {
    std::vector<mirror::ArchiveMember> members;
    for (int i = 0; i < 3000; ++i) members.push_back({"demo/module_" + std::to_string(i) + ".py", ""});
    members.push_back({"demo-1.0.dist-info/METADATA", kMetadata});
    members.push_back({"demo-1.0.dist-info/RECORD", ""});
    std::string wheel = mirror::write_zip(members, false);
    std::uint64_t tail_start = wheel.size() - 16384;
    std::string_view tail = std::string_view(wheel).substr(tail_start);
    auto place = find_zip_directory(tail, tail_start, "demo.whl");
    REQUIRE(place);
    REQUIRE(place->offset < tail_start);   // the directory is bigger than the tail
    auto end = read_zip_directory_end(tail, tail_start, *place);
    auto meta = find_wheel_metadata(end);
    REQUIRE(meta);
    CHECK(read_zip_member(std::string_view(wheel).substr(meta->local_offset), *meta, "demo.whl") == kMetadata);
}

namespace {

// argparse 0.8.0's sdist as the live index serves it (argparse-0.8.0.zip, 2007): its setup.py
// declares utf-8 but its copyright line is Latin-1 ("\xA9" is the copyright sign), and its
// PKG-INFO is Metadata 1.0 without requirements, so the setup.py is what gets read. These are
// the file's own first lines and setup() call (CRLF as written), cut to what a reader looks at.
const std::string kArgparseSetupPy =
    "# -*- coding: utf-8 -*-\r\n\r\n# Copyright \xA9 2006 Steven J. Bethard <steven.berthard@gmail.com>.\r\n#\r\n"
    "import textwrap\r\nimport distutils.core\r\n\r\ndistutils.core.setup(\r\n    name='argparse',\r\n"
    "    version='0.8.0',\r\n    author='Steven Bethard',\r\n    license='BSD',\r\n    py_modules=['argparse'],\r\n)";
const std::string kArgparsePkgInfo =
    "Metadata-Version: 1.0\r\nName: argparse\r\nVersion: 0.8.0\r\n"
    "Summary: An optparse-inspired command-line parsing library\r\nAuthor: Steven Bethard\r\nLicense: BSD\r\n";

}  // namespace

TEST_CASE("an sdist whose setup.py is Latin-1 is read as packaging reads it, kept as UTF-8, never a crash") {
    TempTree tree;
    std::string sdist = mirror::write_zip({{"argparse-0.8.0/PKG-INFO", kArgparsePkgInfo},
                                           {"argparse-0.8.0/setup.py", kArgparseSetupPy},
                                           {"argparse-0.8.0/argparse.py", "# the module\n"}},
                                          false);
    tree.write("files/argparse-0.8.0.zip", sdist);
    HttpServer server(tree.str());
    auto ctx = context(tree);
    IndexRecord r = record_for(server.url() + "/files/argparse-0.8.0.zip", sdist);
    r.name = "argparse";
    r.version = "0.8.0";
    IndexRecords records{r};
    std::string seen_setup_py;
    auto reader = [&](const std::map<std::string, std::string>& files) -> std::optional<std::vector<std::string>> {
        seen_setup_py = files.at("setup.py");
        return std::vector<std::string>{};
    };
    fill_metadata_from_sdists(records, ctx, reader);
    CHECK(records[0].depends_known);
    CHECK(records[0].depends.empty());
    // The copyright sign arrives as U+00A9 in UTF-8, the rest byte for byte.
    CHECK(seen_setup_py.find("# Copyright \xC2\xA9 2006 Steven J. Bethard") != std::string::npos);
    CHECK(seen_setup_py.find("name='argparse'") != std::string::npos);
    // A second run reads the kept packaging files (valid JSON), not the network.
    server.clear_requests();
    IndexRecords again{r};
    seen_setup_py.clear();
    fill_metadata_from_sdists(again, ctx, reader);
    CHECK(server.requests().empty());
    CHECK(seen_setup_py.find("\xC2\xA9") != std::string::npos);
}

TEST_CASE("core metadata: a header line that is not UTF-8 is Latin-1, as packaging's parser falls back") {
    auto m = parse_core_metadata("Metadata-Version: 2.1\nName: caf\xE9\nVersion: 1.0\nAuthor: Jos\xE9\n"
                                 "Requires-Dist: numpy ; extra == \"caf\xE9\"\nRequires-Dist: caf\xC3\xA9-utils\n\nbody \xFF\n");
    CHECK(m.name == "caf\xC3\xA9");
    CHECK(m.requires_dist == std::vector<std::string>{"numpy ; extra == \"caf\xC3\xA9\"", "caf\xC3\xA9-utils"});
}

TEST_CASE("a shared cache: an sdist streams to a temp of this host and process, removed once read; a download a "
          "killed process left an hour ago is swept; the kept packaging files lie only under their final name") {
    TempTree tree;
    std::string sdist = mirror::write_zip({{"argparse-0.8.0/PKG-INFO", kArgparsePkgInfo},
                                           {"argparse-0.8.0/setup.py", kArgparseSetupPy}},
                                          false);
    tree.write("files/argparse-0.8.0.zip", sdist);
    HttpServer server(tree.str());
    auto ctx = context(tree);
    const auto downloads = ctx.cache_dir / "downloads";
    auto old = tree.write("cache/downloads/0123456789abcdef-x-1.0.tar.gz.tmp-node3-5-00ff", "killed halfway");
    std::filesystem::last_write_time(old, std::filesystem::file_time_type::clock::now() - std::chrono::hours(2));
    auto fresh = tree.write("cache/downloads/0123456789abcdef-x-1.0.tar.gz.tmp-node3-6-00ff", "node3 is reading it");
    IndexRecord r = record_for(server.url() + "/files/argparse-0.8.0.zip", sdist);
    r.name = "argparse";
    r.version = "0.8.0";
    IndexRecords records{r};
    fill_metadata_from_sdists(records, ctx, [](const auto&) { return std::optional<std::vector<std::string>>(std::vector<std::string>{}); });
    CHECK(records[0].depends_known);
    CHECK_FALSE(std::filesystem::exists(old));
    CHECK(std::filesystem::exists(fresh));
    int in_downloads = 0;
    for (const auto& e : std::filesystem::directory_iterator(downloads)) in_downloads += e.path() != fresh;
    CHECK(in_downloads == 0);
    int kept = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(ctx.cache_dir / "metadata")) {
        if (!e.is_regular_file()) continue;
        CHECK(e.path().filename().string() == r.sha256 + ".sdist.json");
        ++kept;
    }
    CHECK(kept == 1);
}
