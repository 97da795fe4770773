// What `envlock resolve` prints and where it writes (the CLI issue): the change summary against
// the previous lock, `-o -`, --json, -c remembered in the spec, and a duplicate --mirror refused.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

// A small spec the demo mirror satisfies: a conda python and a PyPI yapf held below its newest.
const char* kSpec =
    "spec:\n  name: output\n  requirements:\n    - {conda: \"python 3.8.*\"}\n    - {pypi: \"yapf<=0.40.1\"}\n";

fs::path with_spec(const std::string& tag) {
    fs::path dir = temp_dir(tag);
    write_file(dir / "spec.yaml", kSpec);
    write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
    return dir;
}

}  // namespace

TEST_CASE("a re-resolve prints what moved (as uv does: 'Updated yapf 0.40.1 -> 0.40.2'), or that nothing did") {
    fs::path dir = with_spec("changes");
    auto first = resolve_with({(dir / "spec.yaml").string(), "-c", "conda-forge", "--target", (dir / "target.yaml").string()}, dir);
    REQUIRE_MESSAGE(first.exit_code == 0, first.err);
    std::string lock = (dir / "envlock.yaml").string();

    auto same = resolve_with({lock}, dir);
    REQUIRE_MESSAGE(same.exit_code == 0, same.err);
    CHECK(same.out.find("lock unchanged") != std::string::npos);

    std::string text = read_file(lock);
    auto at = text.find("yapf<=0.40.1");
    REQUIRE(at != std::string::npos);
    text.replace(at, 12, "yapf");
    write_file(lock, text);
    auto moved = resolve_with({lock, "--update", "yapf"}, dir);
    REQUIRE_MESSAGE(moved.exit_code == 0, moved.err);
    CHECK(moved.out.find("Updated yapf 0.40.1 -> 0.40.2") != std::string::npos);
    CHECK(moved.out.find("lock unchanged") == std::string::npos);
}

TEST_CASE("-c adds a channel to the spec, and the lock remembers it") {
    fs::path dir = with_spec("channel");
    auto r = resolve_with({(dir / "spec.yaml").string(), "-c", "conda-forge", "--target", (dir / "target.yaml").string()}, dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(read_file(dir / "envlock.yaml").find("channels: [conda-forge]") != std::string::npos);
}

TEST_CASE("-o - writes the lock to stdout, the summary to stderr, and no file") {
    fs::path dir = with_spec("stdout");
    auto r = resolve_with({(dir / "spec.yaml").string(), "-o", "-", "--target", (dir / "target.yaml").string()}, dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.rfind("version: 1\n", 0) == 0);
    CHECK(r.err.find("packages") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "envlock.yaml"));
    CHECK_FALSE(fs::exists(dir / "-"));
}

TEST_CASE("--json prints the result with the lock's keys; -q keeps it the only output") {
    fs::path dir = with_spec("json");
    auto r = resolve_with({(dir / "spec.yaml").string(), "--json", "-q", "--target", (dir / "target.yaml").string()}, dir);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["solved"] == true);
    CHECK(j["packages"].get<int>() > 0);
    CHECK(j["content-hash"].get<std::string>().rfind("sha256:", 0) == 0);
    CHECK(j["changes"].is_array());
}

TEST_CASE("one mirror prefix given twice is bad input naming both targets") {
    fs::path dir = with_spec("twice");
    auto r = resolve_with({(dir / "spec.yaml").string(), "--target", (dir / "target.yaml").string(),
                           "--mirror", "https://pypi.org/simple=file:///elsewhere"}, dir);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("given twice") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "envlock.yaml"));
}
