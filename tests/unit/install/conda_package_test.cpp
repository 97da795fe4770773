// Reading an extracted conda package's manifest (install/conda_package.hpp): info/paths.json's
// fields as CEP 34 and conda's PathData define them (_path, path_type, file_mode,
// prefix_placeholder, no_link, sha256, size_in_bytes), and what is refused.
#include <doctest/doctest.h>

#include "install/conda_package.hpp"
#include "tests/unit/install/install_fixture.hpp"

using namespace envlock;
using namespace envlock::install;
namespace fs = std::filesystem;

namespace {

fs::path tree_with(const std::string& paths_json) {
    fs::path tree = test::make_temp_dir("manifest");
    test::write_bytes(tree / "info/index.json", R"({"name": "pkg", "version": "1.0", "build": "h0_0", "build_number": 0})");
    test::write_bytes(tree / "info/paths.json", paths_json);
    return tree;
}

}  // namespace

TEST_CASE("paths.json: every field conda's PathData has is read") {
    auto info = read_conda_package(tree_with(R"({"paths_version": 1, "paths": [
        {"_path": "bin/tool", "path_type": "hardlink", "sha256": "aa", "size_in_bytes": 12},
        {"_path": "etc/conf", "path_type": "hardlink", "file_mode": "text",
         "prefix_placeholder": "/opt/anaconda1anaconda2anaconda3", "sha256": "bb", "size_in_bytes": 40},
        {"_path": "lib/libx.so", "file_mode": "binary", "prefix_placeholder": "/placeholder", "no_link": true},
        {"_path": "lib/libx.so.1", "path_type": "softlink"},
        {"_path": "share/empty", "path_type": "directory"},
        {"_path": "caf\u00e9 \"q\".txt", "size_in_bytes": 3}
    ]})"));
    REQUIRE(info.paths.size() == 6);
    CHECK(info.paths[0].path == "bin/tool");
    CHECK(info.paths[0].type == PathType::hardlink);
    CHECK(info.paths[0].sha256 == "aa");
    CHECK(info.paths[0].size == 12);
    CHECK(info.paths[0].placeholder.empty());
    CHECK(info.paths[1].placeholder == "/opt/anaconda1anaconda2anaconda3");
    CHECK(info.paths[1].file_mode == FileMode::text);
    CHECK(info.paths[2].file_mode == FileMode::binary);   // path_type defaults to hardlink
    CHECK(info.paths[2].type == PathType::hardlink);
    CHECK(info.paths[2].no_link);
    CHECK(info.paths[3].type == PathType::softlink);
    CHECK(info.paths[4].type == PathType::directory);
    CHECK(info.paths[5].path == "caf\xc3\xa9 \"q\".txt");
}

TEST_CASE("paths.json: malformed manifests are refused with the file named") {
    auto refused = [](const std::string& text) {
        fs::path tree = tree_with(text);
        try {
            read_conda_package(tree);
        } catch (const InputError& e) {
            CHECK(std::string(e.what()).find("paths.json") != std::string::npos);
            return std::string(e.what());
        }
        FAIL("accepted: " << text);
        return std::string();
    };
    CHECK(refused("[1, 2]").find("expected a JSON object") != std::string::npos);
    CHECK(refused("{\"paths\": ").find("expected a JSON object") != std::string::npos);
    CHECK(refused("{\"paths\": {}}").find("'paths' array") != std::string::npos);
    CHECK(refused("{\"paths\": [{\"path_type\": \"hardlink\"}]}").find("'_path' string") != std::string::npos);
    CHECK(refused("{\"paths\": [\"bin/x\"]}").find("'_path' string") != std::string::npos);
    CHECK(refused("{\"paths\": [{\"_path\": \"bin/x\", \"path_type\": \"fifo\"}]}").find("unknown path_type 'fifo'") != std::string::npos);
    CHECK(refused("{\"paths\": [{\"_path\": \"bin/x\", \"path_type\": 3}]}").find("must be a string") != std::string::npos);
}

TEST_CASE("paths.json: a path leading out of the package is refused (CEP 34 paths are relative)") {
    for (const char* bad : {"../../etc/passwd", "/etc/passwd", "lib/../../x"}) {
        fs::path tree = tree_with(std::string("{\"paths\": [{\"_path\": \"") + bad + "\"}]}");
        CHECK_THROWS_AS(read_conda_package(tree), InputError);
    }
}
