// `envlock spec PATH [--json]` as a user runs it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "fixture.hpp"
#include "resolver/lock/spec_io.hpp"
#include "tests/support/run_envlock.hpp"

using namespace envlock;
using namespace envlock::test;

TEST_CASE("envlock spec PATH prints the inferred spec as an envlock.yaml spec: block") {
    FixtureRepo repo("tinyrepo");
    repo.write("requirements.txt", "numpy==1.19.5\n-f https://download.pytorch.org/whl/torch_stable.html\ntorch==1.9.1+cu111\n");
    auto r = run_envlock({"spec", repo.root().string()});
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("spec:\n  name: tinyrepo\n") == 0);
    CHECK(r.out.find("{pypi: torch==1.9.1+cu111, from: requirements.txt:3}") != std::string::npos);
    auto spec = spec_from_yaml_text(r.out, "out.yaml");
    CHECK(spec.find_links == std::vector<std::string>{"https://download.pytorch.org/whl/torch_stable.html"});
}

TEST_CASE("envlock spec PATH --json gives every entry with file and line") {
    FixtureRepo repo("tinyrepo");
    repo.write("requirements.txt", "numpy==1.19.5\n");
    auto r = run_envlock({"spec", repo.root().string(), "--json"});
    REQUIRE(r.exit_code == 0);
    auto j = nlohmann::json::parse(r.out);
    CHECK(j["requirements"][0]["text"] == "numpy==1.19.5");
    CHECK(j["requirements"][0]["from"]["file"] == "requirements.txt");
    CHECK(j["requirements"][0]["from"]["line"] == 1);
}

TEST_CASE("envlock spec on a missing path that is no recipe exits 2 with a message") {
    auto r = run_envlock({"spec", "/nonexistent/envlock-test-repo"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("no such directory, and no recipe of that name") != std::string::npos);
}

TEST_CASE("envlock spec on a file exits 2") {
    FixtureRepo repo("tinyrepo");
    repo.write("a.txt", "x");
    auto r = run_envlock({"spec", (repo.root() / "a.txt").string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("not a directory") != std::string::npos);
}

TEST_CASE("envlock spec NAME prints an embedded recipe's spec") {
    auto r = run_envlock({"spec", "BEVFormer"});
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.find("recipe BEVFormer: https://github.com/fundamentalvision/BEVFormer") != std::string::npos);
    auto spec = spec_from_yaml_text(r.out, "out.yaml");
    CHECK(spec.sources.at(0).rev == "v0.17.1");
}

TEST_CASE("envlock spec: a malformed environment.yml is bad input naming file and line") {
    FixtureRepo repo("tinyrepo");
    repo.write("environment.yml", "channels:\n  - pytorch\ndependencies:\n  - [oops]\n");
    auto r = run_envlock({"spec", repo.root().string()});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("environment.yml:4:") != std::string::npos);
}
