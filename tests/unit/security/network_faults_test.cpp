// What a user sees when the network lies (issue 20): DESIGN.md "Errors and safety" gives a
// network or environment failure exit 3, and the message names the URL.
#include <doctest/doctest.h>

#include "tests/unit/resolve/resolve_fixture.hpp"

using namespace envlock::test;
namespace fs = std::filesystem;

namespace {

struct Channel {
    fs::path dir = temp_dir("faults");
    std::unique_ptr<HttpServer> server;
    Channel() {
        write_file(dir / "www/ch/linux-64/repodata.json", "{\"packages\": {}}");
        write_file(dir / "www/ch/noarch/repodata.json", "{\"packages\": {}}");
        write_file(dir / "spec.yaml", "spec:\n  name: x\n  requirements: [{conda: zlib}]\n  channels: [CH]\n");
        write_file(dir / "target.yaml", target_yaml("NVIDIA GeForce RTX 3090", "sm_86", "470.82.01", "11.4"));
        server = std::make_unique<HttpServer>((dir / "www").string());
        auto spec = read_file(dir / "spec.yaml");
        spec.replace(spec.find("CH"), 2, server->url() + "/ch");
        write_file(dir / "spec.yaml", spec);
    }
    RunResult resolve() const {
        return run_envlock({"resolve", (dir / "spec.yaml").string(), "-o", (dir / "envlock.yaml").string(), "--target",
                            (dir / "target.yaml").string(), "--cache-dir", (dir / "cache").string()});
    }
};

}  // namespace

TEST_CASE("repodata answered by a login page is exit 3 naming the URL; no lock is written") {
    Channel c;
    c.server->add_fault("/ch/linux-64/repodata.json.zst", {Fault::html_body, -1});
    auto run = c.resolve();
    CHECK(run.exit_code == 3);
    CHECK(run.err.find(c.server->url() + "/ch/linux-64/repodata.json.zst: it answered an HTML page") != std::string::npos);
    CHECK_FALSE(fs::exists(c.dir / "envlock.yaml"));
}

TEST_CASE("a redirect loop on a channel is exit 3 naming the URL") {
    Channel c;
    c.server->add_fault("/ch/noarch/repodata.json.zst", {Fault::redirect_loop, -1});
    auto run = c.resolve();
    CHECK(run.exit_code == 3);
    CHECK(run.err.find(c.server->url() + "/ch/noarch/repodata.json.zst") != std::string::npos);
}
